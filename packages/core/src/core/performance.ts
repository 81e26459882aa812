/**
 * Performance ratings of a game record, after Prismata's "Performance rating
 * formula" post (shared/seeds/prismata-performance-rating.txt): the algorithm
 * of 400 with weighted games, maximum likelihood, netzero and unordered
 * netzero. See docs/PERFORMANCE.md for the formulas and the choices made.
 *
 * Every function returns a plain rating number on the Elo/Glicko scale and
 * never NaN or Infinity: records with no finite answer (only wins or only
 * losses) get a documented clamped value, or an UnboundedRatingError when the
 * caller asks for `unbounded: 'throw'`.
 */
import { ConvergenceError, InvalidInputError, UnboundedRatingError } from './errors.js';
import { eloExpected } from './elo.js';
import { glicko2Update, type Glicko2Options } from './glicko2.js';

export type GameResult = 'win' | 'loss' | 'draw';

/** One game of the record, from the rated player's side. */
export interface PerformanceGame {
  /** The opponent's rating when the game was played. */
  opponent: number;
  result: GameResult;
  /**
   * How much the game counts; Prismata weighs a blitz game a third of a long
   * one. Zero-weight games are accepted and ignored. @default 1
   */
  weight?: number;
  /**
   * The opponent's rating deviation, used only by Glicko-2 replays.
   * @default the replay's `opponentRd` option
   */
  opponentRd?: number;
}

/**
 * A rating update rule as netzero replays it: the rated player's new rating
 * after one game, given the rating before it.
 */
export type RatingUpdate = (rating: number, game: PerformanceGame) => number;

/**
 * A rating update with state that moves along the record (Glicko-2's RD and
 * volatility). `begin` is called once per replay and returns a fresh update,
 * so trial ratings of the root finder never share state.
 */
export interface StatefulRatingUpdate {
  begin(): RatingUpdate;
}

/** What netzero accepts as its update rule. */
export type ReplayRule = RatingUpdate | StatefulRatingUpdate;

export type UnboundedPolicy = 'clamp' | 'throw';

export interface PerformanceOptions {
  /**
   * Rating update that netzero and unordered netzero replay.
   * @default eloReplayRule(32)
   */
  update?: ReplayRule;
  /**
   * What to do with a record that has no finite rating (only wins or only
   * losses, counting games of positive weight) under maximum likelihood or
   * either netzero: 'clamp' returns a finite stand-in (see `unboundedMargin`),
   * 'throw' raises UnboundedRatingError. @default 'clamp'
   */
  unbounded?: UnboundedPolicy;
  /**
   * Clamp distance: an all-wins record is rated at least the highest opponent
   * plus this margin, an all-losses record at most the lowest opponent minus
   * it. At 800 points a 400-point logistic expects a win 99% of the time.
   * The clamp is pushed further out when needed to keep ratings monotone in
   * the results (docs/PERFORMANCE.md). @default 800
   */
  unboundedMargin?: number;
}

/** The four performance ratings of one record. */
export interface PerformanceRatings {
  algo400: number;
  maxLikelihood: number;
  netzero: number;
  netzeroUnordered: number;
}

/** Score of a result: 1 for a win, 0.5 for a draw, 0 for a loss. */
export function resultScore(result: GameResult): number {
  return result === 'win' ? 1 : result === 'draw' ? 0.5 : 0;
}

/**
 * Expected score against `opponent` on the 400-point logistic,
 * 1 / (1 + 10^((opponent - rating) / 400)). Saturates to exactly 0 or 1 far
 * from the opponent instead of producing NaN.
 */
export function expectedScore(rating: number, opponent: number): number {
  return eloExpected(rating, opponent);
}

/**
 * Elo's update with factor `k`: rating + k * weight * (score - expected).
 * A game's weight scales its step, so a third-weight blitz game moves the
 * rating a third as far.
 */
export function eloReplayRule(k = 32): RatingUpdate {
  if (!(Number.isFinite(k) && k >= 0)) {
    throw new InvalidInputError(`must be a finite number >= 0, got ${String(k)}`, { field: 'k' });
  }
  return (rating, game) => rating + k * (game.weight ?? 1) * (resultScore(game.result) - expectedScore(rating, game.opponent));
}

export interface Glicko2ReplayOptions extends Glicko2Options {
  /**
   * RD assumed for opponents whose game has no `opponentRd`. 50 is a settled
   * regular player. @default 50
   */
  opponentRd?: number;
}

/** What a named replay rule is built from (each rule reads the fields it has). */
export interface ReplayRuleOptions {
  /** Elo: K. @default 32 */
  k?: number;
  /** Glicko-2: RD of opponents whose game has none. @default 50 */
  opponentRd?: number;
  /** Glicko-2: the rated player's starting RD. @default 350 */
  rd?: number;
  /** Glicko-2: the rated player's starting volatility. @default 0.06 */
  volatility?: number;
}

/** The update rules netzero can replay, by name: `elo` (eloReplayRule) and `glicko2` (glicko2ReplayRule). */
export const REPLAY_RULES: Readonly<Record<string, (options: ReplayRuleOptions) => ReplayRule>> = Object.freeze({
  elo: (options: ReplayRuleOptions) => eloReplayRule(options.k ?? 32),
  glicko2: (options: ReplayRuleOptions) =>
    glicko2ReplayRule({
      ...(options.opponentRd !== undefined && { opponentRd: options.opponentRd }),
      ...(options.rd !== undefined && { rd: options.rd }),
      ...(options.volatility !== undefined && { volatility: options.volatility }),
    }),
});

/** The replay rule named `name` (REPLAY_RULES); an unknown name is an InvalidInputError naming `field`. */
export function replayRuleNamed(name: string, options: ReplayRuleOptions = {}, field = 'update'): ReplayRule {
  const make = Object.hasOwn(REPLAY_RULES, name) ? REPLAY_RULES[name] : undefined;
  if (!make) throw new InvalidInputError(`must be ${Object.keys(REPLAY_RULES).join(' or ')}, got ${JSON.stringify(name)}`, { field });
  return make(options);
}

/**
 * Glicko-2 as a netzero replay: every game is its own rating period (the
 * record is replayed game by game), the rated player starts with the options'
 * `rd` and `volatility` (Glicko-2 defaults 350 and 0.06) whatever the trial
 * rating, and carries RD and volatility from game to game. A game's weight
 * multiplies the step (Glicko-2's `k`); a zero-weight game is skipped.
 */
export function glicko2ReplayRule(options: Glicko2ReplayOptions = {}): StatefulRatingUpdate {
  const { opponentRd = 50, ...glicko2Options } = options;
  if (!(Number.isFinite(opponentRd) && opponentRd > 0)) {
    throw new InvalidInputError(`must be a positive number, got ${String(opponentRd)}`, { field: 'opponentRd' });
  }
  const startRd = glicko2Options.rd ?? 350;
  const startVolatility = glicko2Options.volatility ?? 0.06;
  const baseK = glicko2Options.k ?? 1;
  // Validates the options once, up front, rather than on the first replayed game.
  glicko2Update({ rating: 1500, rd: startRd, volatility: startVolatility }, [], glicko2Options);
  return {
    begin() {
      let rd = startRd;
      let volatility = startVolatility;
      return (rating, game) => {
        const weight = game.weight ?? 1;
        if (weight === 0) return rating;
        const next = glicko2Update({ rating, rd, volatility }, [{ opponent: { rating: game.opponent, rd: game.opponentRd ?? opponentRd }, score: resultScore(game.result) }], {
          ...glicko2Options,
          k: baseK * weight,
        });
        rd = next.rd;
        volatility = next.volatility;
        return next.rating;
      };
    },
  };
}

function beginReplay(rule: ReplayRule): RatingUpdate {
  return typeof rule === 'function' ? rule : rule.begin();
}

// ---------------------------------------------------------------------------
// Validation

interface CheckedGame {
  opponent: number;
  score: number;
  weight: number;
  game: PerformanceGame;
}

/** Validates a record and returns its games of positive weight. */
function checkRecord(games: readonly PerformanceGame[]): CheckedGame[] {
  if (!Array.isArray(games)) throw new InvalidInputError('must be an array of games', { field: 'games' });
  if (games.length === 0) throw new InvalidInputError('a performance rating needs at least one game', { field: 'games' });
  const checked: CheckedGame[] = [];
  games.forEach((game, index) => {
    if (typeof game !== 'object' || game === null) {
      throw new InvalidInputError('must be a game object', { field: `games[${index}]` });
    }
    if (typeof game.opponent !== 'number' || !Number.isFinite(game.opponent)) {
      throw new InvalidInputError(`must be a finite number, got ${String(game.opponent)}`, { field: `games[${index}].opponent` });
    }
    if (game.result !== 'win' && game.result !== 'loss' && game.result !== 'draw') {
      throw new InvalidInputError(`must be "win", "loss" or "draw", got ${JSON.stringify(game.result) ?? 'undefined'}`, {
        field: `games[${index}].result`,
      });
    }
    const weight = game.weight ?? 1;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
      throw new InvalidInputError(`must be a finite number >= 0, got ${String(game.weight)}`, { field: `games[${index}].weight` });
    }
    if (game.opponentRd !== undefined && !(typeof game.opponentRd === 'number' && Number.isFinite(game.opponentRd) && game.opponentRd > 0)) {
      throw new InvalidInputError(`must be a positive number, got ${String(game.opponentRd)}`, { field: `games[${index}].opponentRd` });
    }
    if (weight > 0) checked.push({ opponent: game.opponent, score: resultScore(game.result), weight, game });
  });
  if (checked.length === 0) throw new InvalidInputError('total weight must be positive', { field: 'games' });
  return checked;
}

/**
 * One game from untrusted input (a parsed JSON object). Errors name the field
 * (`opponent`, `result`, `weight`, `opponentRd`); unknown fields are ignored.
 */
export function parsePerformanceGame(value: unknown): PerformanceGame {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInputError('must be an object like {"opponent":1500,"result":"win","weight":1}', { field: 'game' });
  }
  const record = value as Record<string, unknown>;
  const { opponent, result, weight, opponentRd } = record;
  if (typeof opponent !== 'number' || !Number.isFinite(opponent)) {
    throw new InvalidInputError(`must be a finite number, got ${JSON.stringify(opponent) ?? 'nothing'}`, { field: 'opponent' });
  }
  if (result !== 'win' && result !== 'loss' && result !== 'draw') {
    throw new InvalidInputError(`must be "win", "loss" or "draw", got ${JSON.stringify(result) ?? 'nothing'}`, { field: 'result' });
  }
  if (weight !== undefined && !(typeof weight === 'number' && Number.isFinite(weight) && weight >= 0)) {
    throw new InvalidInputError(`must be a finite number >= 0, got ${JSON.stringify(weight)}`, { field: 'weight' });
  }
  if (opponentRd !== undefined && !(typeof opponentRd === 'number' && Number.isFinite(opponentRd) && opponentRd > 0)) {
    throw new InvalidInputError(`must be a positive number, got ${JSON.stringify(opponentRd)}`, { field: 'opponentRd' });
  }
  const game: PerformanceGame = { opponent, result };
  if (weight !== undefined) game.weight = weight;
  if (opponentRd !== undefined) game.opponentRd = opponentRd;
  return game;
}

interface ResolvedOptions {
  update: ReplayRule;
  unbounded: UnboundedPolicy;
  unboundedMargin: number;
}

function resolveOptions(options: PerformanceOptions): ResolvedOptions {
  const unbounded = options.unbounded ?? 'clamp';
  if (unbounded !== 'clamp' && unbounded !== 'throw') {
    throw new InvalidInputError(`must be "clamp" or "throw", got ${String(unbounded)}`, { field: 'unbounded' });
  }
  const unboundedMargin = options.unboundedMargin ?? 800;
  if (!(Number.isFinite(unboundedMargin) && unboundedMargin >= 0)) {
    throw new InvalidInputError(`must be a finite number >= 0, got ${String(unboundedMargin)}`, { field: 'unboundedMargin' });
  }
  const update = options.update ?? eloReplayRule(32);
  if (typeof update !== 'function' && typeof update?.begin !== 'function') {
    throw new InvalidInputError('must be a rating update function or have a begin() method', { field: 'update' });
  }
  return { update, unbounded, unboundedMargin };
}

// ---------------------------------------------------------------------------
// Root finding

/**
 * Root of a non-increasing function by bisection. The bracket starts around
 * the opponents and doubles outwards until the sign changes, then halves until
 * the floating-point interval cannot shrink further, so equal records give
 * bit-identical answers.
 */
function findDecreasingRoot(f: (rating: number) => number, low: number, high: number): number {
  let step = 400;
  let fLow = f(low);
  for (let i = 0; fLow < 0; i++) {
    if (i > 60) throw new ConvergenceError('no rating below the opponents makes the record balance');
    high = low;
    low -= step;
    step *= 2;
    fLow = f(low);
  }
  if (fLow === 0) return low;
  step = 400;
  let fHigh = f(high);
  for (let i = 0; fHigh > 0; i++) {
    if (i > 60) throw new ConvergenceError('no rating above the opponents makes the record balance');
    low = high;
    high += step;
    step *= 2;
    fHigh = f(high);
  }
  if (fHigh === 0) return high;
  for (let i = 0; i < 200; i++) {
    const middle = low + (high - low) / 2;
    if (middle <= low || middle >= high) break;
    const fMiddle = f(middle);
    if (fMiddle === 0) return middle;
    if (fMiddle > 0) low = middle;
    else high = middle;
  }
  return low + (high - low) / 2;
}

/** The root of a decreasing `f`, searched from 400 below the weakest opponent to 400 above the strongest. */
function rootNearOpponents(games: readonly CheckedGame[], f: (rating: number) => number): number {
  const [lowest, highest] = opponentRange(games);
  return findDecreasingRoot(f, lowest - 400, highest + 400);
}

function opponentRange(games: readonly CheckedGame[]): [number, number] {
  let low = Infinity;
  let high = -Infinity;
  for (const g of games) {
    if (g.opponent < low) low = g.opponent;
    if (g.opponent > high) high = g.opponent;
  }
  return [low, high];
}

/** 'above' for a record of only wins, 'below' for only losses, else undefined. */
function unboundedDirection(games: readonly CheckedGame[]): 'above' | 'below' | undefined {
  if (games.every((g) => g.score === 1)) return 'above';
  if (games.every((g) => g.score === 0)) return 'below';
  return undefined;
}

/**
 * Whether a record's maximum-likelihood and netzero ratings are clamped
 * stand-ins: 'above' when every game of positive weight is a win (the
 * rating is at least the best opponent + the margin), 'below' when every one
 * is a loss, null otherwise. The algorithm of 400 is never clamped.
 */
export function clampedDirection(games: readonly PerformanceGame[]): 'above' | 'below' | null {
  return unboundedDirection(checkRecord(games)) ?? null;
}

type Solver = (games: readonly CheckedGame[]) => number;

/**
 * The finite stand-in for an unbounded record. At least `margin` beyond the
 * extreme opponent (the lead's rule), and never closer than the rating of any
 * record one result worse (an all-wins record with one win made a draw): a
 * fixed margin alone would let e.g. 101 wins and 1 loss at 1500 (ML 2301.7)
 * outrank 102 wins (1500 + 800), breaking monotonicity.
 */
function unboundedRating(games: readonly CheckedGame[], direction: 'above' | 'below', options: ResolvedOptions, method: string, nearestFinite: () => number): number {
  if (options.unbounded === 'throw') {
    const what = direction === 'above' ? 'only wins' : 'only losses';
    throw new UnboundedRatingError(`a record of ${what} has no finite ${method} rating`, direction);
  }
  const [lowest, highest] = opponentRange(games);
  const nearest = nearestFinite();
  return direction === 'above' ? Math.max(highest + options.unboundedMargin, nearest) : Math.min(lowest - options.unboundedMargin, nearest);
}

/**
 * The most extreme finite rating among the records that differ from an
 * unbounded one by a single draw, by trying each game (order matters to the
 * replay, so no shortcut in general).
 */
function mostExtremeWithOneDraw(games: readonly CheckedGame[], direction: 'above' | 'below', solve: Solver, orderMatters = true): number {
  let extreme = direction === 'above' ? -Infinity : Infinity;
  const tried = new Set<string>();
  games.forEach((g, index) => {
    if (!orderMatters) {
      // Without order, games alike in opponent, weight and RD give the same variant.
      const key = `${g.opponent}/${g.weight}/${g.game.opponentRd}`;
      if (tried.has(key)) return;
      tried.add(key);
    }
    const variant = games.map((other, i) => (i === index ? { ...other, score: 0.5, game: { ...other.game, result: 'draw' as const } } : other));
    const value = solve(variant);
    extreme = direction === 'above' ? Math.max(extreme, value) : Math.min(extreme, value);
  });
  return extreme;
}

// ---------------------------------------------------------------------------
// The four ratings

/**
 * The algorithm of 400, weighted:
 * (sum w_i * opponent_i + 400 * (sum_wins w_i - sum_losses w_i)) / sum w_i.
 * Draws add their opponent and nothing else. Always finite.
 */
export function algo400(games: readonly PerformanceGame[]): number {
  const checked = checkRecord(games);
  // Weights divided by the largest so huge weights cannot overflow the sums.
  const scale = Math.max(...checked.map((g) => g.weight));
  let total = 0;
  let sum = 0;
  for (const g of checked) {
    const w = g.weight / scale;
    total += w;
    sum += w * (g.opponent + 400 * (2 * g.score - 1));
  }
  return sum / total;
}

function solveMaxLikelihood(games: readonly CheckedGame[]): number {
  const scale = Math.max(...games.map((g) => g.weight));
  // d/dR of sum w_i log P(result_i) is (ln 10 / 400) * sum w_i (s_i - E_i(R)).
  return rootNearOpponents(games, (rating) => {
    let slope = 0;
    for (const g of games) slope += (g.weight / scale) * (g.score - expectedScore(rating, g.opponent));
    return slope;
  });
}

/**
 * Maximum-likelihood rating: the R that maximises
 * sum w_i log P(result_i | R), with P(win) = 1 / (1 + 10^((opp - R)/400)) and
 * a draw counting as half a win and half a loss. It solves
 * sum w_i (s_i - E_i(R)) = 0. Unbounded records follow `options.unbounded`.
 */
export function maxLikelihood(games: readonly PerformanceGame[], options: PerformanceOptions = {}): number {
  const resolved = resolveOptions(options);
  const checked = checkRecord(games);
  const direction = unboundedDirection(checked);
  if (direction === undefined) return solveMaxLikelihood(checked);
  return unboundedRating(checked, direction, resolved, 'maximum-likelihood', () => {
    // The ML equation with one game drawn depends only on that game's weight,
    // and the lightest game moves the root furthest: one solve suffices.
    const lightest = checked.reduce((a, b) => (b.weight < a.weight ? b : a));
    return solveMaxLikelihood(checked.map((g) => (g === lightest ? { ...g, score: 0.5 } : g)));
  });
}

function replayEnd(games: readonly CheckedGame[], start: number, rule: ReplayRule): number {
  const update = beginReplay(rule);
  let rating = start;
  for (const g of games) rating = update(rating, g.game);
  return rating;
}

function solveNetzero(games: readonly CheckedGame[], rule: ReplayRule): number {
  return rootNearOpponents(games, (start) => replayEnd(games, start, rule) - start);
}

/**
 * Netzero rating: the starting rating from which replaying the record, in its
 * order, with `options.update` (Elo K = 32 by default) ends where it began.
 * Zero-weight games are dropped before the replay.
 */
export function netzero(games: readonly PerformanceGame[], options: PerformanceOptions = {}): number {
  const resolved = resolveOptions(options);
  const checked = checkRecord(games);
  const direction = unboundedDirection(checked);
  if (direction === undefined) return solveNetzero(checked, resolved.update);
  return unboundedRating(checked, direction, resolved, 'netzero', () => mostExtremeWithOneDraw(checked, direction, (variant) => solveNetzero(variant, resolved.update)));
}

function solveUnorderedNetzero(games: readonly CheckedGame[], rule: ReplayRule): number {
  return rootNearOpponents(games, (rating) => {
    let change = 0;
    // Every game starts from the same rating and fresh state: nothing carries over.
    for (const g of games) change += beginReplay(rule)(rating, g.game) - rating;
    return change;
  });
}

/**
 * Unordered netzero rating: the X such that a player who stayed at X for
 * every game would gain and lose points that sum to zero, each game's change
 * taken from `options.update` applied at X (with fresh state for stateful
 * rules). With Elo this is the maximum-likelihood equation, so the two agree.
 */
export function netzeroUnordered(games: readonly PerformanceGame[], options: PerformanceOptions = {}): number {
  const resolved = resolveOptions(options);
  const checked = checkRecord(games);
  const direction = unboundedDirection(checked);
  if (direction === undefined) return solveUnorderedNetzero(checked, resolved.update);
  return unboundedRating(checked, direction, resolved, 'unordered netzero', () =>
    mostExtremeWithOneDraw(checked, direction, (variant) => solveUnorderedNetzero(variant, resolved.update), false),
  );
}

/** All four performance ratings of a record with the same options. */
export function performanceRatings(games: readonly PerformanceGame[], options: PerformanceOptions = {}): PerformanceRatings {
  return {
    algo400: algo400(games),
    maxLikelihood: maxLikelihood(games, options),
    netzero: netzero(games, options),
    netzeroUnordered: netzeroUnordered(games, options),
  };
}

/** Method names as the CLI and services spell them. */
export const PERFORMANCE_METHODS = ['algo400', 'ml', 'netzero', 'netzero-unordered'] as const;
export type PerformanceMethod = (typeof PERFORMANCE_METHODS)[number];

/** One performance rating by method name. */
export function performanceRating(method: PerformanceMethod, games: readonly PerformanceGame[], options: PerformanceOptions = {}): number {
  switch (method) {
    case 'algo400':
      return algo400(games);
    case 'ml':
      return maxLikelihood(games, options);
    case 'netzero':
      return netzero(games, options);
    case 'netzero-unordered':
      return netzeroUnordered(games, options);
    default:
      throw new InvalidInputError(`must be one of ${PERFORMANCE_METHODS.join(', ')}, got ${String(method)}`, { field: 'method' });
  }
}
