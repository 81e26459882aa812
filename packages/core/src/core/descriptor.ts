/**
 * What a rating system tells the rest of Ladder about itself: its name and
 * label, its options (schema and defaults), what it can rate, how its
 * numbers are shown, which parameters a fit may tune, and how the
 * dashboard presents its matches. Each system's module exports one
 * descriptor next to its math; `registry.ts` lists them. Nothing outside
 * the core asks for a system by name: it reads these fields.
 */
import type { Match } from './match.js';
import type { OptionsSchema, ResolvedOptionsOf } from './options.js';
import type { PairwiseLog, PairwiseRatings } from './pairwise.js';
import type { PlayerState, RatingSystem } from './rating-system.js';

/** What a system can rate and how. */
export interface SystemCapabilities {
  /** Teams of more than one player. */
  readonly teams: boolean;
  /** Tied placements (a draw, scored half a win). */
  readonly draws: boolean;
  /** Matches of more than two teams. */
  readonly multiTeam: boolean;
  /**
   * `ratePeriod` rates every match of a period from the states at its start
   * (Glicko-2's rating periods). Without it, a period's matches are rated
   * one after another, each seeing the ones before.
   */
  readonly ratingPeriods: boolean;
  /** Uncertainty grows with time away (`idle`, and the option `periodMs`). */
  readonly idleGrowth: boolean;
  /** Ratings on an additive scale: a home advantage is rating points added to the home side. */
  readonly homeAdvantage: boolean;
  /** A typed-array path for logs of one-against-one games (`fastPath`), giving what `Replay` gives. */
  readonly fastPath: boolean;
  /** Needs each team's raw score (World vs World), not only placements. */
  readonly needsScores: boolean;
  /** Rated in rounds: several matches form one rating period, and the teams are regrouped into tiers after each. */
  readonly rounds: boolean;
  /**
   * Keeps every player's whole history inside the system object and
   * re-estimates the past: one system object rates one log, in order. The
   * service, which rates each match from stored states, does not offer it.
   */
  readonly wholeHistory: boolean;
  /** States carry a deviation (`rd`), so a conservative rating is rating − 2·RD. */
  readonly deviation: boolean;
}

/** What each capability means, one line each (the systems endpoint describes its fields with these). */
export const CAPABILITY_MEANINGS: { readonly [K in keyof SystemCapabilities]: string } = Object.freeze({
  teams: 'Rates teams of more than one player.',
  draws: 'Rates tied placements (a draw counts half a win).',
  multiTeam: 'Rates matches of more than two teams.',
  ratingPeriods: "Rates every match of a rating period from the states at the period's start (else one after another).",
  idleGrowth: "A player's uncertainty grows with time away.",
  homeAdvantage: 'Ratings are additive: a home advantage is rating points added to the home side.',
  fastPath: 'Has a typed-array fast path for logs of one-against-one games.',
  needsScores: "Needs each team's raw score, not only placements.",
  rounds: 'Rated in rounds: several matches form one rating period, and the teams are regrouped into tiers after each.',
  wholeHistory: "Keeps every player's whole history and re-estimates the past; one system object rates one log (a service ladder keeps it in the memory of its writer).",
  deviation: 'States carry a deviation (rd).',
});

/** How the system's numbers are shown. */
export interface SystemDisplay {
  /**
   * What the number is called in tables, charts and answers: a rating, for
   * every system (team rank's too: "rank" names a leaderboard position and a
   * team's placing in a match; docs/RATING.md).
   */
  readonly quantity: 'rating';
  /** Decimals shown (team rank holds ranks in cents). */
  readonly decimals: number;
  /**
   * What a difference means: `elo`, 400 points are odds of 10; `glicko`,
   * Glicko-2's scale, 173.7178 points per natural unit (close to Elo's);
   * `multiplicative`, ranks are odds (team rank: P(A) = YA / (YA + OA)).
   */
  readonly scale: 'elo' | 'glicko' | 'multiplicative';
}

/** A parameter `ladder fit` may tune: an option of the system, or `homeAdvantage`. */
export interface FitParameter {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** `log` searches ln(value): for positive scale-like parameters. @default 'log' */
  readonly scale?: 'log' | 'linear';
  /** Where the search starts. @default the mean of min and max (geometric for `log`) */
  readonly initial?: number;
}

export interface SystemFit {
  /** Every parameter a fit may tune, with its search range. */
  readonly parameters: readonly FitParameter[];
  /** The ones `ladder fit` tunes when none are named. */
  readonly byDefault: readonly string[];
}

/**
 * Home advantage in rating points, fitted for systems with
 * `capabilities.homeAdvantage` where matches have a home side.
 */
export const HOME_ADVANTAGE_FIT: FitParameter = Object.freeze({ name: 'homeAdvantage', min: 0, max: 300, scale: 'linear', initial: 60 });

/** One column of a player's match table, read from each change's `terms`. */
export interface TermColumn {
  readonly key: string;
  readonly label: string;
  /** `number` and `signed` with `digits` decimals; `text` as is. */
  readonly format: 'number' | 'signed' | 'text';
  readonly digits?: number;
}

/** The columns of systems that report `score`, `expected` and `surprise` in their terms (Elo, the Glicko-2 family). */
export const SURPRISE_TERMS: readonly TermColumn[] = Object.freeze([
  Object.freeze({ key: 'score', label: 'Score', format: 'number', digits: 3 }),
  Object.freeze({ key: 'expected', label: 'Expected', format: 'number', digits: 3 }),
  Object.freeze({ key: 'surprise', label: 'Surprise', format: 'signed', digits: 3 }),
]);

/** What those columns mean. */
export const SURPRISE_EXPLANATION =
  'Expected is the chance of winning the ratings gave before the match; score is what happened (1 win, ½ draw, 0 loss). Surprise = score − expected: the further from 0, the more the rating moved.';

/** How the dashboard shows a ladder of this system. */
export interface DashboardHints {
  /** Columns of the terms that moved a rating, after before/after/change. */
  readonly terms: readonly TermColumn[];
  /** A paragraph under a player's matches explaining those terms. */
  readonly explanation: string;
  /**
   * Notes for a result whose rating change went the other way (World vs
   * World follows score shares, not placings): shown beside a win that lost
   * rating and a loss that gained it.
   */
  readonly mixedResult?: { readonly win: string; readonly loss: string };
  /**
   * The performance page may load a player's games from this ladder: each
   * change's `terms.expected` is a win chance on Elo's 400-point scale, from
   * which the opponent's rating is recovered.
   */
  readonly performanceRuns: boolean;
}

/** Defaults for a ladder of this system in the service. */
export interface LadderDefaults {
  /** Players per team the matchmaker forms when the ladder gives none. */
  readonly teamSize: number;
  /**
   * Bounds on one match the service takes for a ladder of this system,
   * tighter than the service's own (64 teams of 64 players) where the
   * system's cost of a match or memory per match calls for it.
   */
  readonly matchLimits?: { readonly teams?: number; readonly playersPerTeam?: number; readonly players?: number };
}

/** A typed-array replay of one-against-one games (see `pairwise.ts`). */
export interface FastPath<Resolved> {
  /**
   * Rates the whole log from new players, each game its own period
   * (uncertainty growing with idle time where the system has it).
   * `onProgress` hears the games rated every {@link FAST_PATH_PROGRESS_STEP} games.
   */
  replay(log: PairwiseLog, options: Resolved, onProgress?: (done: number) => void): PairwiseRatings;
}

/** How many games a fast path rates between two progress reports. */
export const FAST_PATH_PROGRESS_STEP = 10_000;

/**
 * A fast path's per-game hook that reports every {@link FAST_PATH_PROGRESS_STEP}
 * games; undefined without a listener, so an unwatched replay pays nothing.
 */
export function progressEveryStep(onProgress: ((done: number) => void) | undefined): ((game: number) => void) | undefined {
  if (!onProgress) return undefined;
  return (game) => {
    if ((game + 1) % FAST_PATH_PROGRESS_STEP === 0) onProgress(game + 1);
  };
}

/**
 * Predict-then-learn over one stream of matches, for systems whose
 * `RatingSystem` view misses part of what they learn (a whole-history
 * system re-estimates players outside the match just rated).
 */
export interface OnlineRater {
  /** Team 0's chance of beating team 1 (draws counting half), from what was learnt so far. */
  predict(match: Match): number;
  learn(match: Match): void;
  /** Whether this player has been in a match learnt so far. */
  known(id: string): boolean;
}

/**
 * A rating system's description. `Resolved` is the type of its options with
 * defaults filled in; code that holds a descriptor of any system sees it as
 * `AnySystemDescriptor`, whose options are plain objects.
 */
export interface SystemDescriptor<
  Name extends string = string,
  Schema extends OptionsSchema = OptionsSchema,
  System extends RatingSystem = RatingSystem,
  Resolved = ResolvedOptionsOf<Schema>,
> {
  /** The name `createSystem`, the command line and ladder definitions use. */
  readonly name: Name;
  /** The name shown to people: `Glicko-2`. */
  readonly label: string;
  /** One sentence on what it is. */
  readonly summary: string;
  /** Options with their defaults, ranges and meanings. */
  readonly options: Schema;
  /** Checks across options the schema cannot express (team rank: `initialRank` ≥ `floor`). */
  check?(options: Resolved): void;
  readonly capabilities: SystemCapabilities;
  readonly display: SystemDisplay;
  readonly fit: SystemFit;
  readonly dashboard: DashboardHints;
  readonly ladder: LadderDefaults;
  /** The system, from options already resolved and checked. */
  create(options: Resolved): System;
  /** Present exactly when `capabilities.fastPath`. */
  readonly fastPath?: FastPath<Resolved>;
  /**
   * Rates a complete log at once and returns every player's state (a
   * whole-history system adds every match, then smooths to convergence).
   * Absent: a log is replayed match by match (`Replay`).
   */
  rateLog?(matches: readonly Match[], options: Resolved): Map<string, PlayerState>;
  /**
   * Online prediction for evaluation where the `RatingSystem` view falls
   * short; `homeAdvantage` is in rating points. Absent: the evaluation
   * drives the `RatingSystem` through `Replay`.
   */
  online?(options: Resolved, homeAdvantage: number): OnlineRater;
}

/** A descriptor of some system: what code that works with any system holds (options as plain objects, such as `RatingSystem.options`). */
export type AnySystemDescriptor = SystemDescriptor<string, OptionsSchema, RatingSystem, Readonly<object>>;

/** A descriptor, its name and option types kept literal for the registry. */
export function defineSystem<const Name extends string, Schema extends OptionsSchema, System extends RatingSystem>(
  descriptor: SystemDescriptor<Name, Schema, System>,
): SystemDescriptor<Name, Schema, System> {
  return Object.freeze(descriptor);
}
