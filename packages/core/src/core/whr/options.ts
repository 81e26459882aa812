/** Whole-History Rating's options (each with its default and range) and its rating scale. */
import { booleanOption, choiceOption, defaultsOf, numberOption, type OptionsOf, resolveOptions, type ResolvedOptionsOf } from '../options.js';

/** Rating points per natural unit of skill: the Elo scale, 400 / ln 10. */
export const WHR_SCALE = 400 / Math.LN10;
const DAY_MS = 86_400_000;

export type WhrLink = 'logistic' | 'probit';

/** Whole-History Rating's options: what each means, its default and range. */
export const WHR_OPTIONS = {
  /** Displayed rating of skill 0. @default 1500 */
  rating: numberOption({ default: 1500, description: 'displayed rating of skill 0' }),
  /** σ0², the variance of a new player's skill, in natural units² (logits² for the logistic link). @default 0.7989 (fitted with the default inference on the training part of the ATP KDD 2019 split; see docs/EVALUATION.md) */
  priorVariance: numberOption({ default: 0.7989, min: 0, exclusiveMin: true, description: "σ0², the variance of a new player's skill, in natural units²" }),
  /** w², the variance the skill drifts by per period (a day), in natural units². @default 0.001331 (fitted as priorVariance) */
  dailyVariance: numberOption({ default: 0.001331, min: 0, exclusiveMin: true, description: 'w², the variance the skill drifts by per period, in natural units²' }),
  /**
   * σc², the prior variance of a player's deviation in a context (a match's
   * `context`: a map, a level): skill in a context is the general skill plus
   * a deviation with its own timeline, which starts at N(0, σc²) on the
   * player's first match in the context. 0 leaves contexts out (every match
   * rates the general skill alone). Expectation propagation only. @default 0
   */
  contextPriorVariance: numberOption({
    default: 0,
    min: 0,
    description: "σc², the prior variance of a player's deviation in a context (skill in a context = general + deviation); 0 leaves contexts out",
  }),
  /** wc², the variance a context deviation drifts by per period, in natural units² (read when contextPriorVariance > 0). @default 0 */
  contextDailyVariance: numberOption({ default: 0, min: 0, description: 'wc², the variance a context deviation drifts by per period (with contextPriorVariance > 0)' }),
  /**
   * How expectation propagation treats a player's general skill and their
   * deviations: `joint` smooths them as one Gaussian state per player (a
   * Kalman smoother over the general skill and every deviation the player
   * has, each game one message on the sum it sees), so the posterior keeps
   * their correlation and one context for every match is exactly the model
   * without contexts with σ0² + σc² and w² + wc²; `factorised` keeps each a
   * timeline of its own with its own messages (cheaper for players in many
   * contexts, a state of 1 + K dimensions costs (1 + K)³ per node, but the
   * variance of a skill in a context comes out too large). @default 'joint'
   */
  contextInference: choiceOption(
    ['joint', 'factorised'],
    'joint',
    'joint: general skill and deviations smoothed as one state per player (exact sums); factorised: each its own timeline (cheaper, variances too large)',
  ),
  /**
   * A new player's prior mean: `zero` (N(0, σ0²), Coulom's); `entrants`:
   * the mean skill, at their first node (its current posterior mean), of
   * every player who entered before; `context`: the same over the players
   * whose first match had the same context (a match without one is a group
   * of its own), e.g. players entering at futures level start where earlier
   * futures entrants started. No parameter: the offsets are learnt from the
   * history as it stands. Expectation propagation only. @default 'zero'
   */
  newcomerMean: choiceOption(
    ['zero', 'entrants', 'context'],
    'zero',
    "a new player's prior mean: 0, the mean first skill of earlier entrants, or of earlier entrants in the context of the player's first match",
  ),
  /**
   * a, a newcomer's expected improvement per period (a learning curve): the
   * Wiener process of a player's general skill gets a mean, a·e^(−t/τ) per
   * period at t periods after their first day, so between two of their days
   * t1 < t2 the skill is expected to rise by a·τ·(e^(−t1/τ) − e^(−t2/τ)),
   * a·τ over a career. 0 leaves the process without a mean. Expectation
   * propagation only. @default 0
   */
  newcomerTrend: numberOption({ default: 0, min: 0, description: "a, a newcomer's expected improvement per period, decaying as e^(−t/τ) after their first day (0: none)" }),
  /** τ, the periods over which a newcomer's expected improvement decays by e (read when newcomerTrend > 0). @default 730 */
  newcomerTrendPeriods: numberOption({
    default: 730,
    min: 0,
    exclusiveMin: true,
    description: "τ, the periods over which a newcomer's expected improvement decays by e (with newcomerTrend > 0)",
  }),
  /** P(A wins) = σ(d) (Bradley–Terry) or Φ(d). @default 'logistic' */
  link: choiceOption(['logistic', 'probit'], 'logistic', 'P(A wins) = σ(d) (logistic, Bradley–Terry) or Φ(d) (probit)'),
  /** Length of one period of the Wiener process, in ms. @default 86 400 000 (a day) */
  periodMs: numberOption({ default: DAY_MS, min: 0, exclusiveMin: true, description: 'length of one period of the Wiener process, in ms' }),
  /** Nodes at the end of each player's timeline re-smoothed when a day closes. @default 64 */
  window: numberOption({ default: 64, min: 1, integer: true, description: "nodes at the end of each player's timeline re-smoothed when a day closes" }),
  /** Passes (Newton steps, or messages and smoothing) over the players of a closed day. @default 1 */
  sweeps: numberOption({ default: 1, min: 0, integer: true, description: 'passes (Newton steps, or messages and smoothing) over the players of a closed day' }),
  /**
   * Closed days over which every player's whole timeline is re-smoothed once,
   * a slice of the players at each closed day, round robin (0: never): what a
   * day's results teach reaches the players who did not play, and the past
   * of those who did. @default 8
   */
  cycle: numberOption({
    default: 8,
    min: 0,
    integer: true,
    description: "closed days over which every player's whole timeline is re-smoothed once, a slice at each closed day (0: never)",
  }),
  /** The cycle skips players whose last day is more than this many periods before the latest day (retired players' timelines no longer move the active ones much). @default 730 */
  cycleHorizon: numberOption({ default: 730, min: 0, description: 'the cycle skips players whose last day is more than this many periods before the latest day' }),
  /**
   * Periods after which a player's past freezes into a prior (0: never): at
   * every ⌈horizon / 4⌉ periods, the nodes more than `horizon` periods
   * before the latest day are replaced by each player's skill on the freeze
   * day, so memory grows with the players and the horizon, not with the
   * matches (see horizon.ts). @default 0
   */
  horizon: numberOption({ default: 0, min: 0, description: "periods after which a player's past freezes into a prior, every horizon/4 periods (0: never)" }),
  /**
   * With a horizon: periods a freeze is rebuilt beside the history before it
   * takes effect. The match that reaches a freeze point takes the frozen
   * priors and starts the rebuild; the history goes on rating matches as the
   * whole history does, and the rebuild takes them in too, a slice at a time
   * when its owner runs one (`advanceFreeze`) and the rest at the first match
   * this many periods later (or at the next freeze point, if sooner), which
   * then finds the history the rebuild reached. From then on every state is
   * the one a freeze in the reaching match (0) gives, to the last bit; only
   * the ratings in between differ (they come from the whole history). A
   * writer thus never waits for a freeze that replays a large window
   * (horizon.ts). @default 1
   */
  freezeLag: numberOption({
    default: 1,
    min: 0,
    integer: true,
    description: 'with a horizon, periods a freeze is rebuilt beside the history before it takes effect (0: at once, in the match that reaches the freeze point)',
  }),
  /**
   * With a horizon and the cycle: passes over every player's whole timeline
   * in the first close after a freeze's replay, which then replays its days
   * without the cycle (0: the replay runs the cycle at each day it closes,
   * as the history did). The cycle is about half the cost of each replayed
   * match; three passes at the end are the fewest that do as well as the
   * cycle in the replay on the ATP file's validation part, at horizons of
   * 730 and 365 days (docs/RATING.md, "Horizon"). @default 3
   */
  freezeSweeps: numberOption({
    default: 3,
    min: 0,
    integer: true,
    description: "with a horizon and the cycle, passes over every player's whole timeline after a freeze's replay, which skips the cycle (0: the replay runs the cycle)",
  }),
  /** Newton passes over a player's last `window` nodes before their first match of a day (see `WhrHistory.prepare`; 0: none). @default 0 */
  refresh: numberOption({ default: 0, min: 0, integer: true, description: "Newton passes over a player's last window nodes before their first match of a day (0: none)" }),
  /**
   * How the skills are inferred: `map` is Coulom's (the posterior's mode by
   * Newton's method, a Laplace variance per player); `ep` is expectation
   * propagation (each game a Gaussian message to each of its players, each
   * timeline a Kalman filter and smoother over its messages: posterior means
   * and variances, as TrueSkill Through Time and kickscore). @default 'ep'
   */
  inference: choiceOption(['map', 'ep'], 'ep', 'map: the posterior mode (Newton, Laplace variances); ep: expectation propagation (posterior means and variances)'),
  /** Predictions integrate over both sides' uncertainty (else they use the modes only). @default true */
  integrate: booleanOption(true, "predictions integrate over both sides' uncertainty (else they use the modes only)"),
};

export type WhrOptions = OptionsOf<typeof WHR_OPTIONS>;
export type ResolvedWhrOptions = ResolvedOptionsOf<typeof WHR_OPTIONS>;

export const WHR_DEFAULTS: Readonly<ResolvedWhrOptions> = defaultsOf(WHR_OPTIONS);

/**
 * Coulom's inference with the defaults it had before expectation propagation
 * became the default: the posterior's mode, two Newton passes over the last
 * 32 nodes of a closed day's players, no cycle, σ0² = 0.6 and w² = 0.0025. `{ ...WHR_MAP_OPTIONS }`
 * gives that model's numbers exactly.
 */
export const WHR_MAP_OPTIONS: Readonly<WhrOptions> = Object.freeze({ inference: 'map', window: 32, sweeps: 2, cycle: 0, priorVariance: 0.6, dailyVariance: 0.0025 });

export function resolveWhrOptions(options: WhrOptions = {}): ResolvedWhrOptions {
  return resolveOptions(WHR_OPTIONS, options);
}
