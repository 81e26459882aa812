/**
 * A player's general skill and context deviations smoothed as one state
 * (`contextInference: 'joint'`). Skill in context k is g + c_k; each is a
 * Wiener process, and a game in context k sees only the sum. Kept as
 * separate timelines with a message each (ep.ts, `factorised`), the
 * posterior drops the correlation a game puts between g and c_k, so the
 * variance of the sum comes out larger than it is (by 2abβ after one game,
 * worked in whr.test.ts). Here the player is one Kalman filter and
 * Rauch–Tung–Striebel smoother over the state x = (g, c_1, …, c_K) (the
 * deviations the player has nodes in, or a frozen joint prior of, in the
 * order first played), at the
 * days of their general timeline; each game is one message on a·x with a =
 * e_g (no context) or e_g + e_k (context k), kept in the game's general slot,
 * whose cavity is the posterior of a·x without it. With one context for every
 * match the sum is then exactly the model without contexts with σ0² + σc²
 * and w² + wc² (property tests check the predictions to 1e-12, with and
 * without a horizon; a freeze keeps the state whole, horizon.ts).
 *
 * A deviation's first node is its entry into the state: until that day it
 * stays at its prior (no drift), as the factorised timeline's first node
 * starts from its prior. Its node days are its player's general node days
 * (history.ts folds a late match's deviation node into the general node's
 * day). The deviation nodes keep the marginals (nodeR, the precision nodeP, the filter in
 * nodeMF and nodeF, which a freeze reads) and their covariance with the
 * general node (nodeCov), which a game's cavity needs.
 *
 * Cost: the filter is O(D²) per node and message and the smoother O(D³) per
 * node, D = 1 + K. A smoother over the last nodes needs the filter at the
 * node before them: the filter is stored at every JOINT_CHECKPOINT-th node of
 * the last `window` or so, and the forward pass runs from the stored one
 * before (the messages of the nodes in between are as they were when that
 * filter was made, so the result is the one a filter stored at every node
 * would give).
 */
import { WhrEp } from './ep.js';

/** Node positions between two stored joint filters: a stored filter is D² + 2D + 1 numbers. */
export const JOINT_CHECKPOINT = 16;

/** The history with jointly smoothed deviations (see the module's comment); WhrHorizon extends it. */
export abstract class WhrJoint extends WhrEp {
  /** Scratch: each forward node's filter mean and covariance, its deviation nodes, and the smoother's vectors and matrices. */
  private filterScratch = new Float64Array(0);
  private devAtScratch = new Int32Array(0);
  private readonly tauK: number[] = [];
  private readonly nuK: number[] = [];

  protected override epSmooth(p: number, from: number): number {
    if (!this.joint) return super.epSmooth(p, from);
    const timeline = this.players[p]!;
    // A deviation moves with its player's state.
    if (timeline.owner >= 0) return 0;
    const components = this.jointComponents(p);
    return components.length > 0 ? this.jointSmooth(p, from, components) : super.epSmooth(p, from);
  }

  /**
   * The deviations in player p's joint state, in the order the player first played them: those with a node, and those
   * of a frozen joint prior (whose covariance with the general skill carries on without a node).
   */
  protected jointComponents(p: number): number[] {
    const timeline = this.players[p]!;
    const components: number[] = [];
    if (timeline.contexts === undefined) return components;
    const prior = timeline.jointPrior;
    for (const d of timeline.contexts.values()) if (this.players[d]!.nodeLength > 0 || prior?.components.includes(d)) components.push(d);
    return components;
  }

  /** Where each component enters the state (a frozen joint prior's: its day; else its first node's day, before which it stays at its prior), and its drift. */
  private entries(p: number, components: readonly number[]): { start: number[]; drift: number[] } {
    const prior = this.players[p]!.jointPrior;
    const start = components.map((d) => (prior?.components.includes(d) ? prior.day : this.nodeDay[this.nodeAt(this.players[d]!, 0)]!));
    return { start, drift: components.map((d) => this.players[d]!.w2) };
  }

  /** epSmooth for a player with a joint state: new messages on nodes [from, end), the joint filter forward and the smoother back over them. */
  private jointSmooth(p: number, from: number, components: readonly number[]): number {
    const timeline = this.players[p]!;
    // The timeline's nodes are nodes[listAt … listAt + count) (no node is added meanwhile).
    const nodes = this.timelineNodes;
    const listAt = timeline.nodeStart;
    const count = timeline.nodeLength;
    if (count - from <= 0) return 0;
    this.noteMoved(p);
    const { nodeR, nodeDay, nodeCov } = this;
    const K = components.length;
    const D = K + 1;
    const stride = D + D * D;
    const { start, drift } = this.entries(p, components);
    const trended = this.options.newcomerTrend > 0;
    const first = this.jointForward(p, components, start, drift, from, count);
    const span = count - first;
    const filters = this.filterScratch;
    const devAt = this.devAtScratch;
    // Checkpoints too old for any later window go.
    const keepFrom = count - this.options.window - JOINT_CHECKPOINT - 1;
    if (timeline.checkpoints !== undefined) for (const j of timeline.checkpoints.keys()) if (j < keepFrom) timeline.checkpoints.delete(j);
    // The covariance of each deviation with the general skill at the last node: the filter's there (it is the smoother's).
    const last = (count - 1 - first) * stride;
    const lastDay = nodeDay[nodes[listAt + count - 1]!]!;
    for (let k = 0; k < K; k++) {
      const deviation = this.players[components[k]!]!;
      deviation.lastCov = filters[last + D + k + 1]!;
      // A deviation with no node (a frozen joint prior's): its posterior there, for estimates and predictions.
      if (deviation.nodeLength === 0) deviation.lastState = { mean: filters[last + k + 1]!, variance: filters[last + D + (k + 1) * D + k + 1]!, day: lastDay };
    }
    // The smoother back over the general skill and the deviations with a node in [from, count) only: the others have
    // no message there, so leaving them out (a Gaussian's marginal) changes nothing of the rest, and the cost is
    // (1 + active)³ a node, not D³ (a player's last game in one context is 2³).
    const active = [0];
    for (let k = 0; k < K; k++) {
      for (let j = from; j < count; j++) {
        if (devAt[(j - first) * K + k]! >= 0) {
          active.push(k + 1);
          break;
        }
      }
    }
    const A = active.length;
    const strideA = A + A * A;
    const backSpan = count - from;
    const needed = span * stride + backSpan * strideA + 5 * A * A + 3 * A;
    if (this.filterScratch.length < needed) {
      const bigger = new Float64Array(needed);
      bigger.set(filters.subarray(0, span * stride));
      this.filterScratch = bigger;
    }
    const all = this.filterScratch;
    const sub = span * stride;
    for (let j = from; j < count; j++) {
      const o = (j - first) * stride;
      const so = sub + (j - from) * strideA;
      for (let a = 0; a < A; a++) {
        all[so + a] = all[o + active[a]!]!;
        for (let b = 0; b < A; b++) all[so + A + a * A + b] = all[o + D + active[a]! * D + active[b]!]!;
      }
    }
    const subStart = active.slice(1).map((i) => start[i - 1]!);
    const subDrift = active.slice(1).map((i) => drift[i - 1]!);
    // Backward: x̂_j = m_j + G (x̂_{j+1} − m⁻_{j+1}), P̂_j = P_j + G (P̂_{j+1} − P⁻_{j+1}) Gᵀ, G = P_j (P⁻_{j+1})⁻¹.
    const nextMean = sub + backSpan * strideA;
    const nextCov = nextMean + A;
    const predictedMean = nextCov + A * A;
    const predictedCov = predictedMean + A;
    const gainAt = predictedCov + A * A;
    const work = gainAt + A * A;
    const smoothedMean = work + A * A;
    const smoothedCov = smoothedMean + A;
    let largest = 0;
    for (let j = count - 1; j >= from; j--) {
      const n = nodes[listAt + j]!;
      const o = sub + (j - from) * strideA;
      if (j === count - 1) {
        for (let i = 0; i < strideA; i++) all[smoothedMean + i] = all[o + i]!;
      } else {
        this.predict(p, all, o, predictedMean, A, nodeDay[n]!, nodeDay[nodes[listAt + j + 1]!]!, subStart, subDrift, trended);
        this.gain(all, o + A, predictedCov, gainAt, work, A);
        for (let i = 0; i < A; i++) {
          let sum = 0;
          for (let l = 0; l < A; l++) sum += all[gainAt + i * A + l]! * (all[nextMean + l]! - all[predictedMean + l]!);
          all[smoothedMean + i] = all[o + i]! + sum;
        }
        // Δ = P̂_{j+1} − P⁻_{j+1} in place of P̂_{j+1} (read no more), work = G Δ, then P̂_j = P_j + work Gᵀ, symmetric.
        for (let i = 0; i < A * A; i++) all[nextCov + i]! -= all[predictedCov + i]!;
        for (let i = 0; i < A; i++) {
          for (let l = 0; l < A; l++) {
            let sum = 0;
            for (let r = 0; r < A; r++) sum += all[gainAt + i * A + r]! * all[nextCov + r * A + l]!;
            all[work + i * A + l] = sum;
          }
        }
        for (let i = 0; i < A; i++) {
          for (let l = i; l < A; l++) {
            let sum = 0;
            for (let r = 0; r < A; r++) sum += all[work + i * A + r]! * all[gainAt + l * A + r]!;
            const value = all[o + A + i * A + l]! + sum;
            all[smoothedCov + i * A + l] = value;
            all[smoothedCov + l * A + i] = value;
          }
        }
      }
      // The general node's posterior, and each deviation node's with its covariance with the general one.
      const mean = all[smoothedMean]!;
      if (j === 0 && timeline.entry !== undefined) this.entrySum[timeline.entry]! += mean - nodeR[n]!;
      const moved = this.setPosterior(n, mean, all[smoothedCov]!);
      if (moved > largest) largest = moved;
      const at = (j - first) * K;
      for (let a = 1; a < A; a++) {
        const dn = devAt[at + active[a]! - 1]!;
        if (dn < 0) continue;
        const step = this.setPosterior(dn, all[smoothedMean + a]!, all[smoothedCov + a * A + a]!);
        if (step > largest) largest = step;
        nodeCov[dn] = all[smoothedCov + a]!;
      }
      for (let i = 0; i < strideA; i++) all[nextMean + i] = all[smoothedMean + i]!;
    }
    return largest;
  }

  /**
   * The joint filter forward over player p's nodes [first, end) into filterScratch (each node's mean and covariance,
   * stride D + D²) and each node's deviation nodes into devAtScratch, new messages computed for nodes from `from` on
   * (the nodes before keep theirs); first is the node after the stored filter nearest before `from` (0: none, from the
   * priors). Returns first.
   */
  private jointForward(p: number, components: readonly number[], start: readonly number[], drift: readonly number[], from: number, end: number, checkpoints = true): number {
    const timeline = this.players[p]!;
    // The timeline's nodes are nodes[listAt …) (no node is added meanwhile), a deviation's nodes[its nodeStart …).
    const nodes = this.timelineNodes;
    const listAt = timeline.nodeStart;
    const { nodeF, nodeMF, nodeDay, siteTau, siteNu, siteTauUp, siteNuUp, entryGame, entryNext, nodeHead, gameNodes, gamePerPlayer, gameRank } = this;
    const K = components.length;
    const D = K + 1;
    const stride = D + D * D;
    const trended = this.options.newcomerTrend > 0;
    // The forward pass starts after the stored filter nearest before `from` (none: at the first node, from the priors).
    let before = -1;
    let stored: Float64Array | undefined;
    for (let j = checkpoints ? from - 1 : -1; j >= 0; j--) {
      if ((j + 1) % JOINT_CHECKPOINT !== 0) continue;
      const candidate = timeline.checkpoints?.get(j);
      if (candidate !== undefined && this.compatible(candidate, components, start, nodeDay[nodes[listAt + j]!]!)) {
        before = j;
        stored = candidate;
        break;
      }
    }
    const first = before + 1;
    const span = end - first;
    if (this.filterScratch.length < span * stride) this.filterScratch = new Float64Array(span * stride);
    if (this.devAtScratch.length < span * K) this.devAtScratch = new Int32Array(span * K);
    const filters = this.filterScratch;
    const devAt = this.devAtScratch;
    // Each deviation's next node (a cursor into its nodes, by day).
    const cursor = components.map((d) => {
      const deviation = this.players[d]!;
      if (before < 0) return 0;
      const day = nodeDay[nodes[listAt + before]!]!;
      let lo = 0;
      let hi = deviation.nodeLength;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (nodeDay[nodes[deviation.nodeStart + mid]!]! <= day) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    });
    const tauK = this.tauK;
    const nuK = this.nuK;
    const terms = this.terms;
    for (let j = first; j < end; j++) {
      const n = nodes[listAt + j]!;
      const day = nodeDay[n]!;
      const at = (j - first) * K;
      for (let k = 0; k < K; k++) {
        const deviation = this.players[components[k]!]!;
        const next = cursor[k]! < deviation.nodeLength ? nodes[deviation.nodeStart + cursor[k]!]! : -1;
        if (next >= 0 && nodeDay[next]! === day) {
          devAt[at + k] = next;
          cursor[k]!++;
        } else devAt[at + k] = -1;
      }
      // The node's messages, summed by the vector they are on: e_g (index 0) or e_g + e_k (index k + 1).
      for (let k = 0; k < D; k++) {
        tauK[k] = 0;
        nuK[k] = 0;
      }
      for (let e = nodeHead[n]!; e !== -1; e = entryNext[e]!) {
        const g = entryGame[e]!;
        const slot = e; // an entry is its game slot (history.ts)
        let tau: number;
        let nu: number;
        if (gameRank[g]! >= 0) {
          if (j >= from) this.epRanked(g, this.entrySide[e]!, slot, terms);
          else {
            terms[0] = siteTau[slot]! + (siteTauUp.length > 0 ? siteTauUp[slot]! : 0);
            terms[1] = siteNu[slot]! + (siteNuUp.length > 0 ? siteNuUp[slot]! : 0);
          }
          tau = terms[0]!;
          nu = terms[1]!;
        } else {
          if (j >= from) this.epSite(g, slot);
          tau = siteTau[slot]!;
          nu = siteNu[slot]!;
        }
        let index = 0;
        if (gamePerPlayer[g] === 2) {
          const dn = gameNodes[slot + 1]!;
          for (let k = 0; k < K; k++) if (devAt[at + k] === dn) index = k + 1;
          if (index === 0) throw new Error(`whr: joint smoother found no deviation node ${dn} on day ${day} of ${this.ids[p]}`);
        }
        tauK[index]! += tau;
        nuK[index]! += nu;
      }
      const o = (j - first) * stride;
      const mean = o;
      const cov = o + D;
      if (j === first) {
        if (stored !== undefined) this.loadFilter(stored, components, start, filters, o, D);
        else this.initialState(p, components, start, day, filters, o, D);
        if (stored !== undefined) this.predict(p, filters, o, o, D, nodeDay[nodes[listAt + before]!]!, day, start, drift, trended);
      } else this.predict(p, filters, o - stride, o, D, nodeDay[nodes[listAt + j - 1]!]!, day, start, drift, trended);
      // The messages, one rank-one update per vector: x ← x + P a (ν − τ a·x)/(1 + τ a·P a), P ← P − τ (P a)(P a)ᵀ/(1 + τ a·P a).
      for (let index = 0; index < D; index++) {
        const tau = tauK[index]!;
        const nu = nuK[index]!;
        if (tau === 0 && nu === 0) continue;
        const u = this.jointU;
        for (let i = 0; i < D; i++) u[i] = filters[cov + i * D]! + (index > 0 ? filters[cov + i * D + index]! : 0);
        const s = u[0]! + (index > 0 ? u[index]! : 0);
        const am = filters[mean]! + (index > 0 ? filters[mean + index]! : 0);
        const denominator = 1 + tau * s;
        const gain = (nu - tau * am) / denominator;
        const shrink = tau / denominator;
        for (let i = 0; i < D; i++) {
          filters[mean + i]! += u[i]! * gain;
          const ui = u[i]! * shrink;
          for (let l = 0; l < D; l++) filters[cov + i * D + l]! -= ui * u[l]!;
        }
      }
      // The marginal filters (a freeze reads them) of the general node and the deviation nodes of the day.
      nodeF[n] = 1 / filters[cov]!;
      nodeMF[n] = filters[mean]!;
      for (let k = 0; k < K; k++) {
        const dn = devAt[at + k]!;
        if (dn < 0) continue;
        nodeF[dn] = 1 / filters[cov + (k + 1) * D + k + 1]!;
        nodeMF[dn] = filters[mean + k + 1]!;
      }
      if ((j + 1) % JOINT_CHECKPOINT === 0) this.storeCheckpoint(timeline, j, components, filters, o, D);
    }
    return first;
  }

  private readonly jointU: number[] = [];

  /**
   * Player p's joint state on `day` (a freeze, horizon.ts): the filter at their last node on or before it (the games
   * after it are not in it), drifted to `day`, over the general skill and the deviations with a past by then (a node on
   * or before it, or a frozen joint prior). Undefined without contexts inferred jointly, without deviations, or without a
   * node or joint prior on or before `day`.
   */
  protected jointFrozen(p: number, day: number): { components: number[]; mean: Float64Array; cov: Float64Array } | undefined {
    if (!this.joint) return undefined;
    const all = this.jointComponents(p);
    if (all.length === 0) return undefined;
    const timeline = this.players[p]!;
    const nodes = this.timelineNodes;
    const listAt = timeline.nodeStart;
    let last = -1;
    for (let j = 0; j < timeline.nodeLength && this.nodeDay[nodes[listAt + j]!]! <= day; j++) last = j;
    const { start, drift } = this.entries(p, all);
    const D = all.length + 1;
    const stride = D + D * D;
    const state = new Float64Array(stride);
    if (last >= 0) {
      // The filter as the last smoother left it: no message is made anew (from = last + 1), from the priors on.
      const first = this.jointForward(p, all, start, drift, last + 1, last + 1, false);
      const o = (last - first) * stride;
      state.set(this.filterScratch.subarray(o, o + stride));
      this.predict(p, state, 0, 0, D, this.nodeDay[nodes[listAt + last]!]!, day, start, drift, this.options.newcomerTrend > 0);
    } else if (timeline.jointPrior !== undefined && timeline.jointPrior.day <= day) this.initialState(p, all, start, day, state, 0, D);
    else return undefined;
    // The deviations that have entered the state by `day`.
    const kept = [0];
    for (let k = 0; k < all.length; k++) if (start[k]! <= day) kept.push(k + 1);
    const J = kept.length;
    const mean = new Float64Array(J);
    const cov = new Float64Array(J * J);
    for (let a = 0; a < J; a++) {
      mean[a] = state[kept[a]!]!;
      for (let b = 0; b < J; b++) cov[a * J + b] = state[D + kept[a]! * D + kept[b]!]!;
    }
    return { components: kept.slice(1).map((i) => all[i - 1]!), mean, cov };
  }

  /** Whether a stored filter (made at a node of `day`) can start the forward pass: every deviation it lacks entered the state after `day`. */
  private compatible(stored: Float64Array, components: readonly number[], start: readonly number[], day: number): boolean {
    const storedK = stored[0]!;
    for (let k = 0; k < components.length; k++) {
      let found = false;
      for (let s = 0; s < storedK; s++) if (stored[1 + s] === components[k]) found = true;
      if (!found && !(start[k]! > day)) return false;
    }
    return true;
  }

  /** Copies the filter at node position j (mean and covariance at filters[o …]) into the timeline's checkpoints: [K, the deviations' timelines, mean, covariance]. */
  private storeCheckpoint(timeline: { checkpoints?: Map<number, Float64Array> }, j: number, components: readonly number[], filters: Float64Array, o: number, D: number): void {
    const K = D - 1;
    let out = timeline.checkpoints?.get(j);
    if (out === undefined || out.length !== 1 + K + D + D * D) out = new Float64Array(1 + K + D + D * D);
    out[0] = K;
    for (let k = 0; k < K; k++) out[1 + k] = components[k]!;
    out.set(filters.subarray(o, o + D + D * D), 1 + K);
    (timeline.checkpoints ??= new Map()).set(j, out);
  }

  /** A stored filter as the state (filters[o …]) over `components`: a deviation it lacks enters at its prior, independent. */
  private loadFilter(stored: Float64Array, components: readonly number[], start: readonly number[], filters: Float64Array, o: number, D: number): void {
    const storedK = stored[0]!;
    const storedD = storedK + 1;
    const meanAt = 1 + storedK;
    const covAt = meanAt + storedD;
    // Index 0 is the general skill in both; the deviations by timeline.
    const map = [0];
    for (let k = 0; k < components.length; k++) {
      let index = -1;
      for (let s = 0; s < storedK; s++) if (stored[1 + s] === components[k]) index = s + 1;
      map.push(index);
    }
    for (let i = 0; i < D; i++) {
      const si = map[i]!;
      if (si >= 0) filters[o + i] = stored[meanAt + si]!;
      else {
        this.firstPrior(components[i - 1]!, start[i - 1]!, this.prior);
        filters[o + i] = this.prior[0]!;
      }
      for (let l = 0; l < D; l++) {
        const sl = map[l]!;
        filters[o + D + i * D + l] = si >= 0 && sl >= 0 ? stored[covAt + si * storedD + sl]! : i === l ? this.prior[1]! : 0;
      }
    }
  }

  /**
   * The state at the player's first node (on `day`): the general skill's prior, each deviation of a frozen joint prior
   * drifted to `day` with its covariances from it, and each other deviation at its prior on its first day, independent.
   */
  private initialState(p: number, components: readonly number[], start: readonly number[], day: number, filters: Float64Array, o: number, D: number): void {
    for (let i = 0; i < D * D; i++) filters[o + D + i] = 0;
    this.firstPrior(p, day, this.prior);
    filters[o] = this.prior[0]!;
    filters[o + D] = this.prior[1]!;
    const joint = this.players[p]!.jointPrior;
    // Each component's place in the frozen joint prior (−1: none), the general skill at 0.
    const place = [0];
    for (let k = 0; k < components.length; k++) {
      const index = joint === undefined ? -1 : joint.components.indexOf(components[k]!);
      place.push(index < 0 ? -1 : index + 1);
      this.firstPrior(components[k]!, index < 0 ? start[k]! : day, this.prior);
      filters[o + k + 1] = this.prior[0]!;
      filters[o + D + (k + 1) * D + k + 1] = this.prior[1]!;
    }
    if (joint === undefined) return;
    // The covariances of the frozen state (drift adds to the variances only).
    const J = joint.components.length + 1;
    for (let i = 0; i < D; i++) {
      for (let l = 0; l < D; l++) {
        if (i === l || place[i]! < 0 || place[l]! < 0) continue;
        filters[o + D + i * D + l] = joint.cov[place[i]! * J + place[l]!]!;
      }
    }
  }

  /**
   * The state at filters[from …] carried from day t1 to t2 into filters[to …] (they may be the same): the general
   * skill drifts by w² a period (and rises by the learning curve), a deviation by its wc² once it has entered.
   */
  private predict(
    p: number,
    filters: Float64Array,
    from: number,
    to: number,
    D: number,
    t1: number,
    t2: number,
    start: readonly number[],
    drift: readonly number[],
    trended: boolean,
  ): void {
    if (from !== to) for (let i = 0; i < D + D * D; i++) filters[to + i] = filters[from + i]!;
    const gap = t2 - t1;
    if (trended) filters[to]! += this.trend(p, t1, t2);
    const cov = to + D;
    filters[cov]! += this.players[p]!.w2 * gap;
    for (let k = 0; k < D - 1; k++) if (start[k]! <= t1) filters[cov + (k + 1) * D + k + 1]! += drift[k]! * gap;
  }

  /**
   * The smoother's gain G = P (P⁻)⁻¹ into filters[gainAt …], P at filters[filterCov …] and P⁻ at
   * filters[predictedCov …] (symmetric): Gᵀ = (P⁻)⁻¹ P by a Cholesky factor of P⁻ (in filters[work …]).
   */
  private gain(filters: Float64Array, filterCov: number, predictedCov: number, gainAt: number, work: number, D: number): void {
    // Cholesky: P⁻ = L Lᵀ, L lower in work.
    for (let i = 0; i < D; i++) {
      for (let l = 0; l <= i; l++) {
        let sum = filters[predictedCov + i * D + l]!;
        for (let r = 0; r < l; r++) sum -= filters[work + i * D + r]! * filters[work + l * D + r]!;
        if (i === l) filters[work + i * D + i] = Math.sqrt(sum > 1e-300 ? sum : 1e-300);
        else filters[work + i * D + l] = sum / filters[work + l * D + l]!;
      }
    }
    // Each column c of P: solve L y = P[:, c], then Lᵀ x = y; x is column c of Gᵀ, so row c of G.
    for (let c = 0; c < D; c++) {
      const row = gainAt + c * D;
      for (let i = 0; i < D; i++) {
        let sum = filters[filterCov + i * D + c]!;
        for (let r = 0; r < i; r++) sum -= filters[work + i * D + r]! * filters[row + r]!;
        filters[row + i] = sum / filters[work + i * D + i]!;
      }
      for (let i = D - 1; i >= 0; i--) {
        let sum = filters[row + i]!;
        for (let r = i + 1; r < D; r++) sum -= filters[work + r * D + i]! * filters[row + r]!;
        filters[row + i] = sum / filters[work + i * D + i]!;
      }
    }
  }
}
