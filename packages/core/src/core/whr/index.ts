/**
 * Whole-History Rating (Coulom 2008, "Whole-History Rating: A Bayesian
 * Rating System for Players of Time-Varying Strength").
 *
 * Each player has one skill per day on which they played (a "node"). The
 * skills follow a Wiener process: the first has a Gaussian prior N(0, σ0²),
 * and the change between two of a player's days Δt apart is N(0, w²·Δt).
 * A game between sides A and B (a side's strength is the mean of its
 * players' skills) is won by A with probability σ(d) (logistic,
 * Bradley–Terry) or Φ(d) (probit), d = s_A − s_B (+ a home offset). Skills
 * are in natural units (logits for the logistic link); displayed ratings
 * are 1500 + r · 400/ln 10, as on Elo's scale.
 *
 * Two inferences of that model. `inference: 'map'` is Coulom's: the
 * maximum a posteriori skills, by Newton's method over one player's whole
 * timeline at a time (its Hessian is tridiagonal, so a step costs
 * O(nodes)), the other players held fixed, sweeping players until no skill
 * moves more than a tolerance; the uncertainty of a player's current skill
 * is the Laplace approximation, the last diagonal element of the inverse of
 * minus the Hessian, got by forward elimination (a Kalman filter's
 * precision) along the timeline. `inference: 'ep'`, the default, is
 * expectation propagation (as TrueSkill Through Time and kickscore): each
 * game sends each of its nodes a Gaussian message, moment-matched against
 * the cavity of both sides, and each timeline is a Kalman filter and
 * Rauch–Tung–Striebel smoother over its messages, so the estimates are
 * posterior means and variances. The default configuration (expectation
 * propagation, one pass over a window of 64 a closed day, a cycle of 8
 * days, the variances) was
 * chosen on the training part of the ATP KDD 2019 split only
 * (docs/EVALUATION.md); `WHR_MAP_OPTIONS` is the mode as it was the default.
 *
 * Incremental use: a new match appends a game to each player's node of its
 * day and smooths those last nodes; when the day changes, the last `window`
 * nodes of each player who played on it are re-smoothed for `sweeps`
 * passes. `converge()` smooths everything, every node of every player, to
 * the fixed point. With `cycle`, each closed day also re-smooths the whole
 * timelines of a slice of all active players, round robin.
 *
 * One concern a file: options.ts (the options and the scale), link.ts (the
 * game model's links), history.ts (players, nodes, games, adding matches,
 * estimates), mode.ts (Newton's method to the MAP), ep.ts (expectation
 * propagation), inference.ts (WhrHistory, which picks one) and system.ts
 * (the rating system, its registry entry and its evaluation hooks).
 */
export type { WhrConvergeOptions, WhrEstimate } from './history.js';
export type { WhrFrozen, WhrFrozenContext, WhrFrozenPlayer } from './horizon.js';
export { WhrHistory } from './inference.js';
export { inverseMillsRatio, normalCdf, whrWinProbability } from './link.js';
export { type ResolvedWhrOptions, resolveWhrOptions, WHR_DEFAULTS, WHR_MAP_OPTIONS, WHR_OPTIONS, WHR_SCALE, type WhrLink, type WhrOptions } from './options.js';
export { createWhrSystem, WHR, type WhrSystem } from './system.js';
