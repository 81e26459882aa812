/**
 * The things an evaluation compares: Ladder's rating systems (driven through
 * the core Replay, exactly as `ladder replay` rates a log) and
 * FiveThirtyEight-style Elo. The peer libraries are in peers.ts.
 * Each predicts a two-team match before it is played, then learns from it.
 */
import { eloExpected } from 'ladder-core/core/elo.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { type Match, teamPlacements } from 'ladder-core/core/match.js';
import { Replay } from 'ladder-core/core/replay.js';
import { describeSystem, type RegisteredDescriptor } from 'ladder-core/core/registry.js';
import { createSystem, type PlayerState, type RatingSystem, type SystemName } from 'ladder-core/core/systems.js';

/**
 * A match as the evaluation reads it: a core Match, plus the index of the
 * team that played at home (absent at a neutral venue).
 */
export interface EvalMatch extends Match {
  home?: number;
}

export type ParameterValue = number | string | boolean;

export interface Contender {
  /** Short name for tables, e.g. `glicko2` or `openskill (PlackettLuce)`. */
  readonly label: string;
  /** The parameters in use, for the report. */
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /** Team 0's expected score (its win chance, draws counting half), from what was learnt so far. */
  predict(match: EvalMatch): number;
  /** Learns from the match once it was predicted. */
  update(match: EvalMatch): void;
  /** Whether this player has been in a match learnt so far. */
  known(id: string): boolean;
}

export function requireTwoTeams(match: Match): void {
  if (match.teams.length !== 2) throw new InvalidInputError(`evaluation predicts matches of two teams, got ${match.teams.length}`, { field: 'teams' });
}

export interface CoreContenderOptions {
  /**
   * Rating points added to the home team's players, both when predicting
   * and in the expectation the update uses (so a home win moves ratings
   * less). Ignored at neutral venues. Not for team rank, whose ranks are
   * multiplicative. @default 0
   */
  homeAdvantage?: number;
  /**
   * Glicko-2 and WvW: grow each player's RD for the time since their last
   * match before predicting, as the update will (continuous time, one step 6
   * per `periodMs`). @default true
   */
  idleBeforePredict?: boolean;
  /**
   * Glicko-2 and WvW: grow RD with the time between matches at all (the
   * core's `timeIdle`). `false` rates every match as a rating period with no
   * growth in between, and also turns `idleBeforePredict` off. @default true
   */
  continuousTime?: boolean;
}

/**
 * Wraps a system so the home team is rated as if `homeAdvantage` points
 * stronger: the home players' states are shifted up before the update and
 * back down after. For Elo and Glicko-2 this is exactly an expectation
 * E(r_home + H − r_away), because their updates depend on ratings only
 * through that difference.
 */
function withHomeAdvantage(system: RatingSystem, homeAdvantage: number): RatingSystem {
  const shift = (state: PlayerState, by: number): PlayerState => ({ ...state, rating: state.rating + by });
  const ratePeriod: RatingSystem['ratePeriod'] = (matches, states, options) => {
    const homeMatches = matches.filter((m) => (m as EvalMatch).home !== undefined);
    if (homeMatches.length === 0) return system.ratePeriod(matches, states, options);
    if (matches.length > 1) {
      throw new InvalidInputError('home advantage is supported for matches rated one at a time (no shared rating period)', { field: 'period' });
    }
    const match = matches[0] as EvalMatch;
    const homePlayers = new Set(match.teams[match.home!]!.players.map((p) => p.id));
    // Only the match's own players are read by ratePeriod, so a small map suffices.
    const shifted = new Map<string, PlayerState>();
    for (const team of match.teams) {
      for (const { id } of team.players) {
        const state = states.get(id) ?? system.initial();
        shifted.set(id, homePlayers.has(id) ? shift(state, homeAdvantage) : state);
      }
    }
    const ratings = system.ratePeriod(matches, shifted, options);
    for (const rating of ratings) {
      for (const change of rating.players) {
        if (!homePlayers.has(change.id)) continue;
        change.before = shift(change.before, -homeAdvantage);
        change.after = shift(change.after, -homeAdvantage);
      }
    }
    return ratings;
  };
  return { ...system, ratePeriod, rateMatch: (match, states, options) => ratePeriod([match], states, options)[0]! };
}

/** One of Ladder's systems, rated through the core Replay. */
export function coreContender(system: RatingSystem, options: CoreContenderOptions = {}): Contender {
  const homeAdvantage = options.homeAdvantage ?? 0;
  const descriptor = describeSystem(system.name);
  if (homeAdvantage !== 0 && !descriptor.capabilities.homeAdvantage) {
    throw new InvalidInputError(`${descriptor.label} has no additive rating scale for a home advantage`, { field: 'homeAdvantage' });
  }
  const continuousTime = options.continuousTime ?? true;
  const idleBeforePredict = continuousTime && (options.idleBeforePredict ?? true);
  let rated = homeAdvantage !== 0 ? withHomeAdvantage(system, homeAdvantage) : system;
  {
    // A period of one match goes to rateMatch: the same rating, but team rank's
    // ratePeriod copies the whole state map per call, O(players) per match.
    const inner = rated;
    rated = { ...inner, ratePeriod: (matches, states, o) => (matches.length === 1 ? [inner.rateMatch(matches[0]!, states, o)] : inner.ratePeriod(matches, states, o)) };
  }
  if (!continuousTime) {
    const inner = rated;
    rated = { ...inner, ratePeriod: (matches, states) => inner.ratePeriod(matches, states, { timeIdle: false }) };
  }
  const replay = new Replay(rated);
  const players = replay.players;
  const periodMs = (system.options as { periodMs?: number }).periodMs;
  const grows = idleBeforePredict && descriptor.capabilities.idleGrowth && periodMs !== undefined;
  const initial = system.initial();

  const stateAt = (id: string, at: number | undefined, untagged: boolean): PlayerState => {
    const state = players.get(id);
    if (!state) return initial;
    if (grows && untagged && at !== undefined && state.lastAt !== undefined && at > state.lastAt) {
      return system.idle(state, (at - state.lastAt) / periodMs!);
    }
    return state;
  };

  const parameters = reportedParameters(system.options, homeAdvantage);
  if (!continuousTime && descriptor.capabilities.idleGrowth) parameters.continuousTime = false;

  return {
    label: system.name,
    parameters,
    predict(match) {
      requireTwoTeams(match);
      const untagged = match.period === undefined;
      const teams = match.teams.map((team, t) =>
        team.players.map((p) => {
          const state = stateAt(p.id, match.at, untagged);
          return match.home === t && homeAdvantage !== 0 ? { ...state, rating: state.rating + homeAdvantage } : state;
        }),
      );
      return system.predict(teams, match.context)[0]!;
    },
    update(match) {
      replay.push(match);
    },
    known: (id) => players.has(id),
  };
}

/** The parameters a contender reports: the system's resolved options, home advantage when used. */
function reportedParameters(options: object, homeAdvantage: number): Record<string, ParameterValue> {
  const parameters: Record<string, ParameterValue> = {};
  for (const [key, value] of Object.entries(options)) {
    if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') parameters[key] = value;
  }
  if (homeAdvantage) parameters.homeAdvantage = homeAdvantage;
  return parameters;
}

/**
 * A system that predicts online on its own terms (its descriptor's
 * `online`: Whole-History Rating, driven on its history directly, since the
 * re-smoothing of a closed day moves players outside the match, whose
 * states a Replay would not see): each match is predicted from everything
 * learnt so far, then learnt.
 */
export function onlineContender(descriptor: RegisteredDescriptor, systemOptions: Record<string, unknown> = {}, options: CoreContenderOptions = {}): Contender {
  // Validates the options (unknown keys included) the way createSystem does.
  const resolved = createSystem(descriptor.name, systemOptions).options;
  const homeAdvantage = options.homeAdvantage ?? 0;
  const rater = descriptor.online!(resolved, homeAdvantage);
  return {
    label: descriptor.name,
    parameters: reportedParameters(resolved, homeAdvantage),
    predict(match) {
      requireTwoTeams(match);
      return rater.predict(match);
    },
    update: (match) => rater.learn(match),
    known: (id) => rater.known(id),
  };
}

/** Creates a core system by name and wraps it (online, where the system predicts on its own terms). */
export function systemContender(name: SystemName, systemOptions: Record<string, unknown> = {}, options: CoreContenderOptions = {}): Contender {
  const descriptor = describeSystem(name);
  if (descriptor.online) return onlineContender(descriptor, systemOptions, options);
  return coreContender(createSystem(name, systemOptions), options);
}

export interface FiveThirtyEightEloOptions {
  /** @default 1500 */
  rating?: number;
  /** K = numerator / (offset + m)^shape, m = the player's matches so far. @default 250 */
  numerator?: number;
  /** @default 5 */
  offset?: number;
  /** @default 0.4 */
  shape?: number;
}

/**
 * FiveThirtyEight's tennis Elo (as published by FiveThirtyEight in 2016 and
 * used by Tennis Abstract): 400-point logistic Elo where each player has
 * their own K = 250 / (5 + m)^0.4, shrinking with career matches m. One-
 * player teams only. Kept in the evaluation: the core Elo has one K for all.
 */
export function fiveThirtyEightEloContender(options: FiveThirtyEightEloOptions = {}): Contender {
  const start = options.rating ?? 1500;
  const numerator = options.numerator ?? 250;
  const offset = options.offset ?? 5;
  const shape = options.shape ?? 0.4;
  const ratings = new Map<string, number>();
  const counts = new Map<string, number>();
  const single = (match: Match, t: number): string => {
    const players = match.teams[t]!.players;
    if (players.length !== 1) throw new InvalidInputError('FiveThirtyEight Elo rates one player per side', { field: `teams[${t}].players` });
    return players[0]!.id;
  };
  const expected = (a: string, b: string) => eloExpected(ratings.get(a) ?? start, ratings.get(b) ?? start);
  return {
    label: 'elo-538',
    parameters: { rating: start, k: `${numerator}/(${offset}+m)^${shape}` },
    predict(match) {
      requireTwoTeams(match);
      return expected(single(match, 0), single(match, 1));
    },
    update(match) {
      const a = single(match, 0);
      const b = single(match, 1);
      const placements = teamPlacements(match);
      const score = placements[0]! < placements[1]! ? 1 : placements[0]! > placements[1]! ? 0 : 0.5;
      const e = expected(a, b);
      const ma = counts.get(a) ?? 0;
      const mb = counts.get(b) ?? 0;
      ratings.set(a, (ratings.get(a) ?? start) + (numerator / (offset + ma) ** shape) * (score - e));
      ratings.set(b, (ratings.get(b) ?? start) + (numerator / (offset + mb) ** shape) * (e - score));
      counts.set(a, ma + 1);
      counts.set(b, mb + 1);
    },
    known: (id) => ratings.has(id),
  };
}
