/**
 * WhrHistory: the history with the inference its options name, Coulom's
 * posterior mode (`inference: 'map'`, mode.ts) or expectation propagation
 * (`inference: 'ep'`, ep.ts). The layers are one class chain,
 * WhrHistoryBase ← WhrMode ← WhrEp ← WhrJoint (joint.ts) ← WhrHorizon (horizon.ts) ← WhrHistory, so the inner loops read
 * the history's arrays as fields of one object.
 */
import type { WhrConvergeOptions } from './history.js';
import { WhrHorizon } from './horizon.js';

/**
 * The whole history of a population: nodes (one per player per day), games
 * between sides of nodes, and the skills: the MAP with its Laplace
 * variances, or the posterior means and variances of expectation propagation.
 */
export class WhrHistory extends WhrHorizon {
  protected smooth(p: number, from: number): number {
    return this.ep ? this.epSmooth(p, from) : this.newton(p, from);
  }

  /**
   * Smooths every player's whole timeline to the fixed point: Newton sweeps
   * over all players to the MAP (nodes added by `addMatches` first get a
   * forward, filtering pass), or passes of expectation propagation, until no
   * skill moves more than `tolerance`, or `maxSweeps`. Returns the sweeps taken.
   */
  converge(tolerance = 1e-4, maxSweeps = 500, options: WhrConvergeOptions = {}): number {
    this.settleFreeze();
    this.touched = [];
    this.noteAllMoved();
    return this.ep ? this.epConverge(tolerance, maxSweeps, options) : this.modeConverge(tolerance, maxSweeps, options);
  }

  /** One Newton step on every player's whole timeline (relaxed by `relax`; with `inference: 'ep'`, one pass of messages and smoothing, unrelaxed); returns [largest step, its player]. */
  sweepOnce(relax = 1): [number, number] {
    this.settleFreeze();
    this.noteAllMoved();
    return this.ep ? this.epSweepOnce() : this.modeSweepOnce(relax);
  }
}
