/**
 * The one shape every rating system takes, so replay, evaluation and the
 * service can drive any of them from the same match records, and the small
 * helpers the systems share.
 */
import type { Match } from './match.js';
import type { SystemName } from './registry.js';

/** A player's state in any system: team rank keeps its rank in `rating`. */
export interface PlayerState {
  rating: number;
  rd?: number;
  volatility?: number;
  /** Matches rated so far. */
  matches: number;
  /** Epoch ms of the last rated match, when matches carry times. */
  lastAt?: number;
  /**
   * Per-context offsets by context (Elo and Glicko-2 with the option on):
   * the player's skill in a context is `rating` plus the offset. A context
   * the player has not played is absent (offset 0).
   */
  contexts?: Record<string, ContextOffset>;
}

/** A player's deviation from their general rating in one context. */
export interface ContextOffset {
  /** Added to the rating in this context, on the rating's scale. */
  offset: number;
  /** The offset's own deviation (Glicko-2), on the rating's scale. */
  rd?: number;
  /**
   * The offset's covariance with the rating, on the rating's scale squared, where the two are estimated jointly
   * (whole-history rating with `contextInference: 'joint'`): the rating in the context then has variance
   * rd² + offset rd² + 2 · covariance.
   */
  covariance?: number;
  /** Matches rated in this context. */
  matches: number;
}

export interface PlayerChange {
  id: string;
  /** Index of the player's team in the match. */
  team: number;
  before: PlayerState;
  after: PlayerState;
  /**
   * The terms that moved the rating. Glicko-2, WvW and Elo: `score` and
   * `expected` (mean over the player's battles) and `surprise` = score -
   * expected; Glicko-2 also `idlePeriods`. Team rank: `averageModifier`,
   * `quitterModifier` (rounded to six significant digits for reading:
   * roundForDisplay) and `outcome`. Each system's descriptor lists the
   * ones worth a column (`dashboard.terms`).
   */
  terms: Record<string, number | string>;
}

export interface MatchRating {
  matchId?: string;
  players: PlayerChange[];
}

export interface RatePeriodOptions {
  /**
   * Grow each player's uncertainty for the time since their last match
   * before rating (continuous time; systems with idle growth only). @default true
   */
  timeIdle?: boolean;
}

export interface RatingSystem {
  readonly name: SystemName;
  /** The resolved options, defaults filled in. */
  readonly options: Readonly<object>;
  /** A new player's state. */
  initial(): PlayerState;
  /**
   * Rates one rating period: every match is rated from the states at the
   * period's start (team rank, which has no periods, rates them in order).
   * Players missing from `states` start at `initial()`. Returns one rating per
   * match; a player in several matches shows their state after the period.
   */
  ratePeriod(matches: readonly Match[], states: ReadonlyMap<string, PlayerState>, options?: RatePeriodOptions): MatchRating[];
  rateMatch(match: Match, states: ReadonlyMap<string, PlayerState>, options?: RatePeriodOptions): MatchRating;
  /**
   * Probability that each team wins. Two teams: [p, 1 - p] with draws
   * counting half. More teams: each team's chance of placing first, taken as
   * the normalised product of its pairwise chances. `context`, where the
   * system keeps per-context offsets, is the match's context.
   */
  predict(teams: ReadonlyArray<readonly PlayerState[]>, context?: string): number[];
  /** Idle growth for `periods` idle rating periods (Glicko-2 and WvW: step 6 alone); systems without it return the state unchanged. */
  idle(state: PlayerState, periods: number): PlayerState;
  /**
   * A rating as the system holds it, for ratings made outside it (a
   * season's soft reset): team rank rounds to its decimals and never goes
   * below its floor. Absent where any number is a rating.
   */
  holdRating?(rating: number): number;
}

/**
 * A system that keeps the whole history of the one log it rates
 * (`capabilities.wholeHistory`): each `rateMatch`/`ratePeriod` adds its
 * matches to the object, and a match may move the estimates of players
 * outside it (Whole-History Rating re-smooths the players of a day when the
 * day closes).
 */
export interface WholeHistorySystem extends RatingSystem {
  /** Every player's current state. */
  states(): Map<string, PlayerState>;
  /**
   * The current states of the players whose estimate may have moved since
   * the last call (the players of the matches rated since among them), in
   * the order they first moved; the next call starts afresh.
   */
  takeMoved(): Map<string, PlayerState>;
  /**
   * Adds the match to the history as `rateMatch` does, without its rating:
   * no before and after states are built. For a derivation from a log,
   * which needs only the states at its end (`takeMoved`): building a state
   * for every player a match moves was most of a derivation's garbage.
   */
  absorb(match: Match): void;
  /**
   * Room for about `matches` more matches, made at once: for a derivation
   * that knows how long its log is. A history grown match by match copies
   * its arrays as it goes, and the allocator may keep the old copies.
   */
  reserve?(matches: number): void;
  /**
   * The close of the latest day that a match at `at` would run first (a
   * history re-smooths the day's players when the first match of a later
   * day comes: tens of milliseconds in one piece on a large history), as
   * steps a caller runs with other work between them; undefined when the
   * match closes nothing or a freeze comes first (`horizon.freezeAhead`).
   * Until the steps end the system must not be used; after them, the next
   * match rated must be one for which `closeHolds` says yes, and it reaches
   * what rating it alone reaches.
   */
  closeAhead?(at: number): Iterable<void> | undefined;
  /** After `closeAhead`, whether a match at `at` may be the next one rated (of a later day, and making no freeze first). */
  closeHolds?(at: number): boolean;
  /** Present when the history freezes its past (a horizon): what a restart needs to start from the last freeze. */
  readonly horizon?: HistoryHorizon;
}

/** One player's deviation in a context, frozen: N(mean, variance) on the freeze day (natural units), and its matches and last match time up to the freeze. */
export interface FrozenContext {
  context: string;
  mean: number;
  variance: number;
  matches: number;
  lastAt?: number;
  /** Estimated jointly with the general skill: its covariance with it, then with each earlier context of the player's list (absent: independent). */
  covariance?: number[];
}

/**
 * One player's frozen past: their skill N(mean, variance) on the freeze day (natural units), and their matches and last match
 * time up to the freeze; with context deviations, those frozen with it (absent: none).
 */
export interface FrozenPlayer {
  id: string;
  mean: number;
  variance: number;
  matches: number;
  lastAt?: number;
  contexts?: FrozenContext[];
  /** The day (in the system's periods) of the player's first match: a learning curve counts from it (present when the system has one). */
  firstDay?: number;
}

/** An entry group's frozen entrants: the sum of their first skills (natural units) and their number (a newcomer's prior mean is the group's mean). */
export interface FrozenEntrants {
  /** The group: the context of the entrants' first match, or '' (all entrants in one group). */
  group: string;
  sum: number;
  count: number;
}

/** A history's last freeze: its day (in the system's periods) and the players' frozen pasts, in the history's order. */
export interface FrozenPast {
  day: number;
  players: FrozenPlayer[];
  /** With a newcomer's prior mean from earlier entrants: the entrants frozen so far, by group, in the order the groups were made. */
  entrants?: FrozenEntrants[];
}

/**
 * A whole history with a horizon: at fixed points its past freezes into one
 * prior per player, after which its state is a function of those priors and
 * the matches of days after the freeze only. A system restored from the
 * last freeze and given those matches in the order they were first given
 * (then every later one) reaches the same states to the last bit.
 */
export interface HistoryHorizon {
  /** Freezes since the system was made (or restored): a caller learns of a freeze by its change. */
  freezes(): number;
  /** The last freeze (undefined before the first). Builds a prior per player: for the day alone, `frozenDay`. */
  frozen(): FrozenPast | undefined;
  /** The last freeze's day (undefined before the first), at no cost: a writer asks it of every match. */
  frozenDay(): number | undefined;
  /** Starts an empty system from a freeze (as `frozen` gave it). */
  restoreFrozen(past: FrozenPast): void;
  /** Whether a match at `at` falls on a day on or before `day`: in a past frozen at `day`. */
  onOrBefore(at: number | undefined, day: number): boolean;
  /** The day (period) a match at `at` falls on. */
  dayOf(at: number): number;
  /** When `day` begins (a time, as a match's `at`). */
  timeOf(day: number): number;
  /**
   * The freeze a match at `at` would make first (undefined when it would
   * make none), as steps a caller runs to the end with other work between
   * them; then it rates the match, reaching what rating it alone reaches.
   * Until the steps end the system is half rebuilt and must not be used.
   */
  freezeAhead(at: number): Iterable<void> | undefined;
  /**
   * The latest freeze day, the freeze in effect or one still being rebuilt
   * (undefined before the first): a new match dated on or before it cannot
   * be rated as the whole history would rate it.
   */
  refusedThrough(): number | undefined;
  /**
   * Whether a freeze is being rebuilt beside the history, not in effect yet
   * (a lag between the match that reaches a freeze point and the freeze's
   * effect): `advanceFreeze` does its work a slice at a time meanwhile.
   */
  freezePending(): boolean;
  /**
   * Does up to `games` games of a pending freeze's rebuild; says whether it
   * has caught up with every match rated so far. Optional (the freeze's
   * effect does what is left), changes no number, and may run between any
   * two other calls.
   */
  advanceFreeze(games?: number): boolean;
}

/**
 * The later of two times. A player's `lastAt` only moves forward: a match
 * reported late (its `at` before the player's last match) is rated in
 * arrival order and leaves `lastAt` where it was, so it never makes the
 * player look inactive.
 */
export function latest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

function normalise(values: number[]): number[] {
  const total = values.reduce((a, b) => a + b, 0);
  return values.map((v) => v / total);
}

/** Multi-team win chances from a pairwise probability function (see RatingSystem.predict). */
export function predictFromPairs(count: number, pair: (a: number, b: number) => number): number[] {
  if (count === 2) {
    const p = pair(0, 1);
    return [p, 1 - p];
  }
  const products = Array.from({ length: count }, (_, i) => {
    let product = 1;
    for (let j = 0; j < count; j++) if (j !== i) product *= pair(i, j);
    return product;
  });
  return normalise(products);
}

export function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** A player's state, or a new player's. */
export function stateOf(states: ReadonlyMap<string, PlayerState>, id: string, initial: () => PlayerState): PlayerState {
  return states.get(id) ?? initial();
}

/** The empty rating of each match of a period, in order (its id carried over). */
export function emptyRatings(matches: readonly Match[]): MatchRating[] {
  return matches.map((match) => ({ ...(match.id !== undefined ? { matchId: match.id } : {}), players: [] }));
}

/** A player's offset in `context` (undefined without a context or before their first match in it). */
export function contextOf(state: PlayerState, context: string | undefined): ContextOffset | undefined {
  return context === undefined ? undefined : state.contexts?.[context];
}

/** A copy of `contexts` with `context` set to `offset` (the states given to a system are never changed). */
export function withContext(contexts: Record<string, ContextOffset> | undefined, context: string, offset: ContextOffset): Record<string, ContextOffset> {
  return { ...contexts, [context]: offset };
}
