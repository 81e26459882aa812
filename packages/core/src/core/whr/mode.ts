/**
 * Coulom's inference: the maximum a posteriori skills, by Newton's method
 * over one player's whole timeline at a time (its Hessian is tridiagonal,
 * so a step costs O(nodes)), the other players held fixed; whole sweeps run
 * over a compiled, player-major layout of the history.
 */
import { gameTermsOf, probitTerms } from './link.js';
import { WhrHistoryBase, type WhrConvergeOptions } from './history.js';

const CONVERGE_RELAXATION = 1.7;

/**
 * Solves (−H) δ = g for one timeline, −H = tridiag(−c, a, −c) positive
 * definite (Thomas algorithm, O(count)), and adds relax · δ to
 * r[base … base + count) (each step clamped to ±4, a guard against a wild
 * first step far from the mode, never active near it). Returns the larger of
 * `largest` and the largest |δ|.
 */
function solveTimeline(
  count: number,
  a: Float64Array,
  b: Float64Array,
  c: Float64Array,
  dp: Float64Array,
  y: Float64Array,
  r: Float64Array,
  base: number,
  relax: number,
  largest: number,
): number {
  dp[0] = a[0]!;
  y[0] = b[0]!;
  for (let j = 1; j < count; j++) {
    const m = c[j - 1]! / dp[j - 1]!;
    dp[j] = a[j]! - c[j - 1]! * m;
    y[j] = b[j]! + m * y[j - 1]!;
  }
  let delta = y[count - 1]! / dp[count - 1]!;
  for (let j = count - 1; j >= 0; j--) {
    if (j < count - 1) delta = (y[j]! + c[j]! * delta) / dp[j]!;
    const step = delta > 4 ? 4 : delta < -4 ? -4 : delta;
    r[base + j] = r[base + j]! + relax * step;
    const size = step < 0 ? -step : step;
    if (size > largest) largest = size;
    delta = step;
  }
  return largest;
}

/** The history laid out for whole sweeps (see WhrHistory.compile): positions are player-major. */
interface Compiled {
  playerStart: Int32Array;
  /** Position → node id, and node id → position. */
  nodeOf: Int32Array;
  pos: Int32Array;
  /** The Wiener link to the player's node before: 1/(w² Δt) and w² Δt; for a first node, the prior's precision and 0. */
  linkPrecision: Float64Array;
  linkVariance: Float64Array;
  entryStart: Int32Array;
  /** The one opponent's position, or −1 − entry (the original entry) for a general or ranked game. */
  opp: Int32Array;
  score: Float64Array;
  offset: Float64Array;
  /** The games' node lists, as positions. */
  gamePos: Int32Array;
  /** Skills and forward precisions by position. */
  r: Float64Array;
  f: Float64Array;
  /** The first nodes' prior means by position, when some player has a frozen past (else every prior mean is 0). */
  priorMean: Float64Array | undefined;
}

/** The history with the posterior's mode (`inference: 'map'`). */
export abstract class WhrMode extends WhrHistoryBase {
  /** The player of the largest step of the last sweep. */
  protected largestPlayer = -1;

  /**
   * The gradient and curvature of a ranked game's log-likelihood in the skill
   * of one player of its team t, into out[0], out[1]: the comparisons of
   * team t with the team above (t as side B) and with the team below (t as
   * side A), each a game of two sides, over the team's size (a team's
   * strength is its players' mean).
   */
  protected rankedTerms(g: number, t: number, nodes: Int32Array, r: Float64Array, out: Float64Array): void {
    const { rankBound, rankTie, probit } = this;
    const b = this.gameRank[g]! + t;
    const start = rankBound[b]!;
    const end = rankBound[b + 1]!;
    let grad = 0;
    let curv = 0;
    if (t > 0) {
      gameTermsOf(rankBound[b - 1]!, start, end, rankTie[b - 1] === 1 ? 0.5 : 1, this.rankedOffset(g, t - 1), nodes, r, probit, out);
      grad -= out[0]!;
      curv += out[1]!;
    }
    if (end < this.gameEnd[g]!) {
      gameTermsOf(start, end, rankBound[b + 2]!, rankTie[b] === 1 ? 0.5 : 1, this.rankedOffset(g, t), nodes, r, probit, out);
      grad += out[0]!;
      curv += out[1]!;
    }
    const size = end - start;
    out[0] = grad / size;
    out[1] = curv / (size * size);
  }

  /**
   * Newton sweeps over every player's whole timeline until no skill moves
   * more than `tolerance`, or `maxSweeps`. Nodes that never had a Newton step
   * (added by `addMatches`) first get a forward (filtering) pass. Returns
   * the sweeps taken.
   */
  protected modeConverge(tolerance: number, maxSweeps: number, options: WhrConvergeOptions): number {
    const relaxation = options.relaxation ?? CONVERGE_RELAXATION;
    const compiled = this.compile();
    if (this.unfittedFrom < this.nodeCount) this.forwardPass(compiled, this.unfittedFrom);
    this.unfittedFrom = this.nodeCount;
    let sweeps = maxSweeps;
    for (let sweep = 1; sweep <= maxSweeps; sweep++) {
      // Over-relaxed Gauss–Seidel over players (SOR): plain sweeps creep along
      // the slow collective modes (pools of players who mostly meet each
      // other). The first sweep is plain, as the start may be far from the mode.
      const moved = this.sweepCompiled(compiled, sweep === 1 ? 1 : relaxation, false);
      options.onSweep?.(sweep, moved);
      if (moved < tolerance) {
        sweeps = sweep;
        break;
      }
    }
    // A last plain step, so the forward precisions belong to the final skills.
    this.sweepCompiled(compiled, 1);
    this.writeBack(compiled);
    return sweeps === maxSweeps ? maxSweeps : sweeps + 1;
  }

  /** One Newton step on every player's whole timeline, relaxed by `relax`; returns [largest step, its player]. */
  protected modeSweepOnce(relax: number): [number, number] {
    const compiled = this.compile();
    const moved = this.sweepCompiled(compiled, relax);
    this.writeBack(compiled);
    return [moved, this.largestPlayer];
  }

  /**
   * The history laid out for whole sweeps: each player's nodes at
   * consecutive positions, each node's games as a contiguous run of entries
   * (compressed sparse rows), so a sweep reads memory in order but for the
   * opponents' skills.
   */
  protected compile(): Compiled {
    const players = this.players.length;
    const nodes = this.nodeCount;
    const playerStart = new Int32Array(players + 1);
    const nodeOf = new Int32Array(nodes);
    const pos = new Int32Array(nodes);
    let k = 0;
    for (let p = 0; p < players; p++) {
      playerStart[p] = k;
      const timeline = this.players[p]!;
      for (let j = 0; j < timeline.nodeLength; j++) {
        const n = this.nodeAt(timeline, j);
        nodeOf[k] = n;
        pos[n] = k++;
      }
    }
    playerStart[players] = k;
    const linkPrecision = new Float64Array(nodes);
    const linkVariance = new Float64Array(nodes);
    const r = new Float64Array(nodes);
    const f = new Float64Array(nodes);
    let priorMean: Float64Array | undefined;
    for (let p = 0; p < players; p++) {
      for (let k = playerStart[p]!; k < playerStart[p + 1]!; k++) {
        const n = nodeOf[k]!;
        r[k] = this.nodeR[n]!;
        f[k] = this.nodeF[n]!;
        if (k === playerStart[p]!) {
          this.firstPrior(p, this.nodeDay[n]!, this.prior);
          linkPrecision[k] = 1 / this.prior[1]!;
          if (this.players[p]!.prior !== undefined) {
            priorMean ??= new Float64Array(nodes);
            priorMean[k] = this.prior[0]!;
          }
        } else {
          const variance = this.w2 * (this.nodeDay[n]! - this.nodeDay[nodeOf[k - 1]!]!);
          linkVariance[k] = variance;
          linkPrecision[k] = 1 / variance;
        }
      }
    }
    const entryStart = new Int32Array(nodes + 1);
    const opp = new Int32Array(this.entryCount);
    const score = new Float64Array(this.entryCount);
    const offset = new Float64Array(this.entryCount);
    let e = 0;
    for (let k = 0; k < nodes; k++) {
      entryStart[k] = e;
      for (let x = this.nodeHead[nodeOf[k]!]!; x !== -1; x = this.entryNext[x]!) {
        const o = this.entryOpp[x]!;
        // A general or ranked game is −1 − its entry (which names the game and the side or team).
        opp[e] = o >= 0 ? pos[o]! : -1 - x;
        score[e] = this.entryScore(x);
        offset[e] = this.entryOffset(x);
        e++;
      }
    }
    entryStart[nodes] = e;
    const gamePos = new Int32Array(this.gameNodeCount);
    for (let i = 0; i < this.gameNodeCount; i++) gamePos[i] = pos[this.gameNodes[i]!]!;
    this.ensureScratch(1);
    for (let p = 0; p < players; p++) this.ensureScratch(playerStart[p + 1]! - playerStart[p]!);
    return { playerStart, nodeOf, pos, linkPrecision, linkVariance, entryStart, opp, score, offset, gamePos, r, f, priorMean };
  }

  protected writeBack(c: Compiled): void {
    for (let k = 0; k < c.nodeOf.length; k++) {
      const n = c.nodeOf[k]!;
      this.nodeR[n] = c.r[k]!;
      this.nodeF[n] = c.f[k]!;
    }
  }

  /**
   * A filter in time order over nodes `from` on, as an online system would
   * rate them: each day's nodes start from the player's skill of the node
   * before and take Newton steps on the day's games, three Gauss–Seidel
   * rounds over the day, with the past as a Gaussian message (the forward
   * precision). A start for the sweeps far closer to the MAP than zero.
   */
  // The loop over a node's games is written out here and in sweepCompiled: as a shared method it cost
  // 3–19 % more converge time on the ATP history (not inlined), with the same result.
  protected forwardPass(c: Compiled, from: number): void {
    const { pos, r, f, linkPrecision, linkVariance, entryStart, opp, score, offset, priorMean } = c;
    const out = this.terms;
    const probit = this.probit;
    let start = from;
    while (start < this.nodeCount) {
      const day = this.nodeDay[start]!;
      let end = start + 1;
      while (end < this.nodeCount && this.nodeDay[end] === day) end++;
      for (let n = start; n < end; n++) {
        const k = pos[n]!;
        r[k] = linkVariance[k]! > 0 ? r[k - 1]! : priorMean === undefined ? 0 : priorMean[k]!;
      }
      for (let round = 0; round < 3; round++) {
        for (let n = start; n < end; n++) {
          const k = pos[n]!;
          const first = !(linkVariance[k]! > 0);
          const mean = first ? (priorMean === undefined ? 0 : priorMean[k]!) : r[k - 1]!;
          const message = first ? linkPrecision[k]! : 1 / (1 / f[k - 1]! + linkVariance[k]!);
          const rk = r[k]!;
          let grad = -message * (rk - mean);
          let curv = message;
          for (let e = entryStart[k]!; e < entryStart[k + 1]!; e++) {
            const o = opp[e]!;
            if (o >= 0) {
              const d = rk - r[o]! + offset[e]!;
              if (!probit) {
                const q = 1 / (1 + Math.exp(-d));
                grad += score[e]! - q;
                curv += q * (1 - q);
              } else {
                probitTerms(d, score[e]!, out);
                grad += out[0]!;
                curv += out[1]!;
              }
            } else {
              this.generalTerms(c, -1 - o, out);
              grad += out[0]!;
              curv += out[1]!;
            }
          }
          const step = grad / curv;
          r[k] = rk + (step > 4 ? 4 : step < -4 ? -4 : step);
          f[k] = curv;
        }
      }
      start = end;
    }
  }

  /** A general or ranked game's gradient and curvature for the side or team of entry x, on the compiled skills. */
  protected generalTerms(c: Compiled, x: number, out: Float64Array): void {
    const g = this.entryGame[x]!;
    const side = this.entrySide[x]!;
    if (this.gameRank[g]! >= 0) {
      this.rankedTerms(g, side, c.gamePos, c.r, out);
      return;
    }
    gameTermsOf(this.gameStart[g]!, this.gameSplit[g]!, this.gameEnd[g]!, this.gameScore[g]!, this.gameOffsetOf(g), c.gamePos, c.r, this.probit, out);
    const size = side === 0 ? this.gameSplit[g]! - this.gameStart[g]! : this.gameEnd[g]! - this.gameSplit[g]!;
    out[0] = (side === 0 ? out[0]! : -out[0]!) / size;
    out[1] = out[1]! / (size * size);
  }

  /** One Newton step on every player's whole timeline in the compiled layout; returns the largest step. */
  protected sweepCompiled(c: Compiled, relax: number, precisions = true): number {
    const { playerStart, r, f, linkPrecision, linkVariance, entryStart, opp, score, offset, priorMean } = c;
    const { a, b, c: upper, dp, y, terms: out } = this;
    const probit = this.probit;
    let largest = 0;
    this.largestPlayer = -1;
    const players = playerStart.length - 1;
    for (let p = 0; p < players; p++) {
      const base = playerStart[p]!;
      const count = playerStart[p + 1]! - base;
      let previousF = 0;
      for (let j = 0; j < count; j++) {
        const k = base + j;
        const rk = r[k]!;
        let grad = 0;
        let curv = 0;
        const end = entryStart[k + 1]!;
        for (let e = entryStart[k]!; e < end; e++) {
          const o = opp[e]!;
          if (o >= 0) {
            const d = rk - r[o]! + offset[e]!;
            if (!probit) {
              const q = 1 / (1 + Math.exp(-d));
              grad += score[e]! - q;
              curv += q * (1 - q);
            } else {
              probitTerms(d, score[e]!, out);
              grad += out[0]!;
              curv += out[1]!;
            }
          } else {
            this.generalTerms(c, -1 - o, out);
            grad += out[0]!;
            curv += out[1]!;
          }
        }
        if (precisions) {
          const message = j === 0 ? linkPrecision[k]! : 1 / (1 / previousF + linkVariance[k]!);
          previousF = curv + message;
          f[k] = previousF;
        }
        if (j === 0) {
          // The prior: N(0, σ0²), or the player's frozen past.
          const precision = linkPrecision[k]!;
          curv += precision;
          grad -= precision * (rk - (priorMean === undefined ? 0 : priorMean[k]!));
        } else {
          const link = linkPrecision[k]!;
          const diff = r[k - 1]! - rk;
          upper[j - 1] = link;
          a[j - 1] += link;
          b[j - 1] -= link * diff;
          curv += link;
          grad += link * diff;
        }
        a[j] = curv;
        b[j] = grad;
      }
      const step = solveTimeline(count, a, b, upper, dp, y, r, base, relax, 0);
      if (step > largest) {
        largest = step;
        this.largestPlayer = p;
      }
    }
    return largest;
  }

  /**
   * One Newton step on nodes [from, end) of player p's timeline, the node
   * before `from` held fixed. Updates the forward precisions of those nodes.
   * Returns the largest |step|.
   */
  protected newton(p: number, from: number, relax = 1): number {
    // The timeline's nodes are nodes[at … at + length) (no node is added meanwhile).
    const timeline = this.players[p]!;
    const nodes = this.timelineNodes;
    const at = timeline.nodeStart;
    const count = timeline.nodeLength - from;
    if (count <= 0) return 0;
    this.noteMoved(p);
    this.ensureScratch(count);
    const { a, b, c, dp, y, terms, nodeR, nodeDay, nodeF, w2 } = this;
    // Each node's games: gradient into b, curvature into a; the forward precision alongside.
    let previousF = 0;
    for (let j = 0; j < count; j++) {
      const n = nodes[at + from + j]!;
      let grad = 0;
      let curv = 0;
      for (let e = this.nodeHead[n]!; e !== -1; e = this.entryNext[e]!) {
        const opp = this.entryOpp[e]!;
        if (opp >= 0 && !this.probit) {
          // One against one, logistic: the common case, inline.
          const q = 1 / (1 + Math.exp(nodeR[opp]! - nodeR[n]! - this.entryOffset(e)));
          grad += this.entryScore(e) - q;
          curv += q * (1 - q);
          continue;
        }
        if (opp >= 0) {
          probitTerms(nodeR[n]! - nodeR[opp]! + this.entryOffset(e), this.entryScore(e), terms);
          grad += terms[0]!;
          curv += terms[1]!;
          continue;
        }
        const g = this.entryGame[e]!;
        if (this.gameRank[g]! >= 0) {
          this.rankedTerms(g, this.entrySide[e]!, this.gameNodes, nodeR, terms);
          grad += terms[0]!;
          curv += terms[1]!;
          continue;
        }
        gameTermsOf(this.gameStart[g]!, this.gameSplit[g]!, this.gameEnd[g]!, this.gameScore[g]!, this.gameOffsetOf(g), this.gameNodes, nodeR, this.probit, terms);
        const size = this.entrySide[e] === 0 ? this.gameSplit[g]! - this.gameStart[g]! : this.gameEnd[g]! - this.gameSplit[g]!;
        const sign = this.entrySide[e] === 0 ? 1 : -1;
        grad += (sign * terms[0]!) / size;
        curv += terms[1]! / (size * size);
      }
      a[j] = curv;
      b[j] = grad;
      // Forward precision: this node's games plus the past's message.
      let message: number;
      if (j === 0) {
        if (from === 0) {
          this.firstPrior(p, nodeDay[n]!, this.prior);
          message = 1 / this.prior[1]!;
        } else {
          const before = nodes[at + from - 1]!;
          message = 1 / (1 / nodeF[before]! + w2 * (nodeDay[n]! - nodeDay[before]!));
        }
      } else {
        message = 1 / (1 / previousF + w2 * (nodeDay[n]! - nodeDay[nodes[at + from + j - 1]!]!));
      }
      previousF = curv + message;
      nodeF[n] = previousF;
    }
    // The prior on the first node, or the Wiener link to the fixed node before the window.
    const first = nodes[at + from]!;
    if (from === 0) {
      this.firstPrior(p, nodeDay[first]!, this.prior);
      const precision = 1 / this.prior[1]!;
      a[0] += precision;
      b[0] -= precision * (nodeR[first]! - this.prior[0]!);
    } else {
      const before = nodes[at + from - 1]!;
      const link = 1 / (w2 * (nodeDay[first]! - nodeDay[before]!));
      a[0] += link;
      b[0] -= link * (nodeR[first]! - nodeR[before]!);
    }
    // Wiener links inside the window.
    for (let j = 0; j + 1 < count; j++) {
      const n0 = nodes[at + from + j]!;
      const n1 = nodes[at + from + j + 1]!;
      const link = 1 / (w2 * (nodeDay[n1]! - nodeDay[n0]!));
      c[j] = link;
      a[j] += link;
      a[j + 1] += link;
      const diff = nodeR[n0]! - nodeR[n1]!;
      b[j] -= link * diff;
      b[j + 1] += link * diff;
    }
    // The Newton step δ = (−H)⁻¹ g on the window's nodes, in place.
    for (let j = 0; j < count; j++) this.scratchR[j] = nodeR[nodes[at + from + j]!]!;
    const largest = solveTimeline(count, a, b, c, dp, y, this.scratchR, 0, relax, 0);
    for (let j = 0; j < count; j++) nodeR[nodes[at + from + j]!] = this.scratchR[j]!;
    return largest;
  }
}
