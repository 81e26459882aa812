/**
 * Expectation propagation on the same model (as TrueSkill Through Time and
 * kickscore): each game sends each of its nodes a Gaussian message,
 * moment-matched against the cavity of both sides, and each timeline is a
 * Kalman filter and Rauch–Tung–Striebel smoother over its messages, so the
 * estimates are posterior means and variances.
 */
import { inverseMillsRatio } from './link.js';
import type { WhrConvergeOptions } from './history.js';
import { WhrMode } from './mode.js';

/** The history with expectation propagation (`inference: 'ep'`). */
export abstract class WhrEp extends WhrMode {
  /**
   * Expectation propagation: a new message from game g to the node at
   * `slot`, the game's other messages held. Each node's cavity is its
   * posterior without this game's message; d = Σ c_j x_j + offset (c_j =
   * ±1/side size) is then N(m, v) with m = Σ c_j m_j, v = Σ c_j² v_j, and
   * Z(m, v) = E[P(score | d)]: probit Φ(m/√(1 + v)) (exact), logistic
   * σ(m/√(1 + πv/8)) (MacKay). With α = ∂ln Z/∂m and β = −∂²ln Z/∂m², the
   * posterior of the node's x is matched to mean m_i + v_i c_i α and variance
   * v_i − v_i² c_i² β; the message is that posterior over the cavity:
   * precision τ = c_i² β/(1 − c_i² β v_i), precision × mean
   * ν = (c_i α + c_i² β m_i)/(1 − c_i² β v_i).
   */
  protected epSite(g: number, slot: number): void {
    this.epComparison(
      this.gameStart[g]!,
      this.gameSplit[g]!,
      this.gameEnd[g]!,
      this.gameScore[g]!,
      this.gameOffsetOf(g),
      slot,
      this.siteTau,
      this.siteNu,
      this.siteTau,
      this.siteNu,
      this.gamePerPlayer[g]!,
    );
  }

  /**
   * epSite for one comparison of two sides, gameNodes[start, split) against
   * gameNodes[split, end), scored `score` for side A with home offset
   * `offset`: side A's messages of this comparison are in tauA/nuA, side B's
   * in tauB/nuB (the same arrays for a game of two sides; in a ranked game a
   * team's message from the team below and from the team above are kept
   * apart).
   */
  protected epComparison(
    start: number,
    split: number,
    end: number,
    s: number,
    offset: number,
    slot: number,
    tauA: Float64Array,
    nuA: Float64Array,
    tauB: Float64Array,
    nuB: Float64Array,
    perPlayer: number,
  ): void {
    const { gameNodes, nodeR, nodeP, nodeCov } = this;
    // Each player's nodes (one, or general and deviation in a context) weigh 1/side size.
    const ca = perPlayer / (split - start);
    const cb = -perPlayer / (end - split);
    // contextInference 'joint': a player in a context is a pair of slots, general node then deviation node, seen as
    // their sum; the pair's message, on the sum, is kept in the general slot (the deviation slot's stays 0).
    const pairs = perPlayer === 2 && this.joint;
    const step = pairs ? 2 : 1;
    let m = offset;
    let v = 0;
    let mi = 0;
    let vi = 0;
    for (let j = start; j < end; j += step) {
      const n = gameNodes[j]!;
      const c = j < split ? ca : cb;
      const siteTau = j < split ? tauA : tauB;
      const siteNu = j < split ? nuA : nuB;
      // The posterior of what the game sees: the node, or the pair's sum (mean R_g + R_c, variance V_g + V_c + 2 cov).
      let postMean = nodeR[n]!;
      let postPrecision = nodeP[n]!;
      if (pairs) {
        const dn = gameNodes[j + 1]!;
        postMean += nodeR[dn]!;
        postPrecision = 1 / (1 / nodeP[n]! + 1 / nodeP[dn]! + 2 * nodeCov[dn]!);
      }
      // The cavity: that posterior without this game's message.
      let precision = postPrecision - siteTau[j]!;
      let mean: number;
      if (precision > 1e-12) mean = (postMean * postPrecision - siteNu[j]!) / precision;
      else {
        precision = postPrecision;
        mean = postMean;
      }
      m += c * mean;
      v += (c * c) / precision;
      if (j === slot) {
        mi = mean;
        vi = 1 / precision;
      }
    }
    let alpha: number;
    let beta: number;
    if (this.probit) {
      const root = Math.sqrt(1 + v);
      const z = m / root;
      alpha = 0;
      beta = 0;
      if (s > 0) {
        const l = inverseMillsRatio(z);
        alpha += (s * l) / root;
        beta += (s * l * (l + z)) / (1 + v);
      }
      if (s < 1) {
        const l = inverseMillsRatio(-z);
        alpha -= ((1 - s) * l) / root;
        beta += ((1 - s) * l * (l - z)) / (1 + v);
      }
    } else {
      const kappa = 1 / Math.sqrt(1 + (Math.PI * v) / 8);
      const q = 1 / (1 + Math.exp(-kappa * m));
      alpha = kappa * (s - q);
      beta = kappa * kappa * q * (1 - q);
    }
    const c = slot < split ? ca : cb;
    const bi = c * c * beta;
    const shrink = 1 - bi * vi;
    if (!(shrink > 1e-9)) return;
    if (slot < split) {
      tauA[slot] = bi / shrink;
      nuA[slot] = (c * alpha + bi * mi) / shrink;
    } else {
      tauB[slot] = bi / shrink;
      nuB[slot] = (c * alpha + bi * mi) / shrink;
    }
  }

  /** A ranked game's new messages to the player at `slot` of team t, from the comparisons with the team above and below; returns their summed precision into out[0], precision × mean into out[1]. */
  protected epRanked(g: number, t: number, slot: number, out: Float64Array): void {
    const { rankBound, rankTie, siteTau, siteNu, siteTauUp, siteNuUp } = this;
    const b = this.gameRank[g]! + t;
    const start = rankBound[b]!;
    const end = rankBound[b + 1]!;
    let tau = 0;
    let nu = 0;
    if (t > 0) {
      // Against the team above, as side B: the team above's messages of this comparison are its "below" ones.
      this.epComparison(
        rankBound[b - 1]!,
        start,
        end,
        rankTie[b - 1] === 1 ? 0.5 : 1,
        this.rankedOffset(g, t - 1),
        slot,
        siteTau,
        siteNu,
        siteTauUp,
        siteNuUp,
        this.gamePerPlayer[g]!,
      );
      tau += siteTauUp[slot]!;
      nu += siteNuUp[slot]!;
    }
    if (end < this.gameEnd[g]!) {
      this.epComparison(start, end, rankBound[b + 2]!, rankTie[b] === 1 ? 0.5 : 1, this.rankedOffset(g, t), slot, siteTau, siteNu, siteTauUp, siteNuUp, this.gamePerPlayer[g]!);
      tau += siteTau[slot]!;
      nu += siteNu[slot]!;
    }
    out[0] = tau;
    out[1] = nu;
  }

  /**
   * Expectation propagation on nodes [from, end) of player p's timeline: new
   * messages from each of their games, then the Kalman filter forward (from
   * the filter of the node before `from`, or the prior) and the
   * Rauch–Tung–Striebel smoother back, which give each node's posterior mean
   * (into nodeR) and variance. Returns the largest change of a mean.
   */
  protected epSmooth(p: number, from: number): number {
    const timeline = this.players[p]!;
    // The timeline's nodes are nodes[at … at + count) (no node is added meanwhile).
    const nodes = this.timelineNodes;
    const at = timeline.nodeStart;
    const count = timeline.nodeLength;
    if (count - from <= 0) return 0;
    this.noteMoved(p);
    // The timeline's own drift and prior: the general skill's, or a context deviation's.
    const w2 = timeline.w2;
    const trended = this.options.newcomerTrend > 0 && timeline.owner < 0;
    const { nodeR, nodeP, nodeF, nodeMF, nodeDay, siteTau, siteNu, entryOpp, entrySide, entryGame, entryNext, nodeHead } = this;
    this.ensureScratch(count - from);
    const sumTau = this.a;
    const sumNu = this.b;
    const probit = this.probit;
    const pi8 = Math.PI / 8;
    // New messages from each node's games, summed per node.
    for (let j = from; j < count; j++) {
      const n = nodes[at + j]!;
      let tau = 0;
      let nu = 0;
      // The posterior as precision and precision × mean (the latter computed, not kept: history.ts, nodeP).
      const pn = nodeP[n]!;
      const hn = nodeR[n]! * pn;
      for (let e = nodeHead[n]!; e !== -1; e = entryNext[e]!) {
        const slot = e; // an entry is its game slot (history.ts)
        const o = entryOpp[e]!;
        if (o >= 0 && !probit) {
          // One against one, logistic: epSite written out, the cavities from the posteriors, as precisions.
          const other = entrySide[e] === 0 ? slot + 1 : slot - 1;
          let pi = pn - siteTau[slot]!;
          let hi = hn - siteNu[slot]!;
          if (!(pi > 1e-12)) {
            pi = pn;
            hi = hn;
          }
          const po0 = nodeP[o]!;
          const ho0 = nodeR[o]! * po0;
          let po = po0 - siteTau[other]!;
          let ho = ho0 - siteNu[other]!;
          if (!(po > 1e-12)) {
            po = po0;
            ho = ho0;
          }
          const vi = 1 / pi;
          const vo = 1 / po;
          const mi = hi * vi;
          const kappa = 1 / Math.sqrt(1 + pi8 * (vi + vo));
          const q = 1 / (1 + Math.exp(-kappa * (mi - ho * vo + (this.offsets ? this.entryOffset(e) : 0))));
          const beta = kappa * kappa * q * (1 - q);
          const shrink = 1 - beta * vi;
          if (shrink > 1e-9) {
            const inverse = 1 / shrink;
            siteTau[slot] = beta * inverse;
            siteNu[slot] = (kappa * (this.entryScore(e) - q) + beta * mi) * inverse;
          }
        } else {
          const g = entryGame[e]!;
          if (this.gameRank[g]! >= 0) {
            this.epRanked(g, entrySide[e]!, slot, this.terms);
            tau += this.terms[0]!;
            nu += this.terms[1]!;
            continue;
          }
          this.epSite(g, slot);
        }
        tau += siteTau[slot]!;
        nu += siteNu[slot]!;
      }
      sumTau[j - from] = tau;
      sumNu[j - from] = nu;
    }
    // Forward: the past's message, times the node's own messages.
    for (let j = from; j < count; j++) {
      const n = nodes[at + j]!;
      let messageMean: number;
      let messageVariance: number;
      if (j === 0) {
        this.firstPrior(p, nodeDay[n]!, this.prior);
        messageMean = this.prior[0]!;
        messageVariance = this.prior[1]!;
      } else {
        const before = nodes[at + j - 1]!;
        // The past's message: the filter of the node before, drifted (and risen by newcomerTrend's mean, 0 without).
        messageMean = nodeMF[before]! + (trended ? this.trend(p, nodeDay[before]!, nodeDay[n]!) : 0);
        messageVariance = 1 / nodeF[before]! + w2 * (nodeDay[n]! - nodeDay[before]!);
      }
      const precision = 1 / messageVariance + sumTau[j - from]!;
      nodeF[n] = precision;
      nodeMF[n] = (messageMean / messageVariance + sumNu[j - from]!) / precision;
    }
    // Backward: the last node's posterior is its filter; each earlier one is corrected by the one after.
    let largest = 0;
    let nextMean = 0;
    let nextVariance = 0;
    for (let j = count - 1; j >= from; j--) {
      const n = nodes[at + j]!;
      const filterVariance = 1 / nodeF[n]!;
      let mean: number;
      let variance: number;
      if (j === count - 1) {
        mean = nodeMF[n]!;
        variance = filterVariance;
      } else {
        const predicted = filterVariance + w2 * (nodeDay[nodes[at + j + 1]!]! - nodeDay[n]!);
        const gain = filterVariance / predicted;
        // The next node's mean as predicted from this one: its filter mean, plus the trend's rise (newcomerTrend).
        const rise = trended ? this.trend(p, nodeDay[n]!, nodeDay[nodes[at + j + 1]!]!) : 0;
        mean = nodeMF[n]! + gain * (nextMean - nodeMF[n]! - rise);
        variance = filterVariance + gain * gain * (nextVariance - predicted);
      }
      // A first node's mean is its player's entry skill (newcomerMean): its group's sum follows it.
      if (j === 0 && timeline.entry !== undefined) this.entrySum[timeline.entry]! += mean - nodeR[n]!;
      const moved = this.setPosterior(n, mean, variance);
      if (moved > largest) largest = moved;
      nextMean = mean;
      nextVariance = variance;
    }
    return largest;
  }

  /** Sets node n's posterior N(mean, variance); returns how far its mean moved. */
  protected setPosterior(n: number, mean: number, variance: number): number {
    const moved = Math.abs(mean - this.nodeR[n]!);
    this.nodeR[n] = mean;
    this.nodeP[n] = 1 / variance;
    return moved;
  }

  /** Expectation propagation over every player's whole timeline, until no mean moves more than `tolerance`. */
  protected epConverge(tolerance: number, maxSweeps: number, options: WhrConvergeOptions): number {
    this.unfittedFrom = this.nodeCount;
    for (let sweep = 1; sweep <= maxSweeps; sweep++) {
      let moved = 0;
      for (let p = 0; p < this.players.length; p++) {
        const step = this.epSmooth(p, 0);
        if (step > moved) moved = step;
      }
      options.onSweep?.(sweep, moved);
      if (moved < tolerance) return sweep;
    }
    return maxSweeps;
  }

  /** One pass of messages and smoothing over every whole timeline (no relaxation); returns [largest change of a mean, its player]. */
  protected epSweepOnce(): [number, number] {
    let moved = 0;
    let who = -1;
    for (let p = 0; p < this.players.length; p++) {
      const step = this.epSmooth(p, 0);
      if (step > moved) {
        moved = step;
        who = p;
      }
    }
    return [moved, who];
  }
}
