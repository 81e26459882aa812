/**
 * One shape for every rating system, so replay, evaluation and the service
 * can drive any of them from the same match records.
 */
import { roundForDisplay } from './display.js';
import { eloExpected, resolveEloOptions, type EloOptions } from './elo.js';
import { InvalidInputError } from './errors.js';
import {
  GLICKO2_SCALE,
  type Glicko2Options,
  glicko2Game,
  glicko2IdleRd,
  glicko2Step,
  glicko2WinProbability,
  resolveGlicko2Options,
} from './glicko2.js';
import { type Match, pairScore, teamPlacements } from './match.js';
import { resolveTeamRankOptions, teamRankMatch, teamRankWinProbability, type TeamRankOptions, type TeamRankPlayer, type TeamRankResult } from './teamrank.js';
import { createWhrSystem, type WhrOptions, type WhrSystem } from './whr.js';
import { resolveWvwOptions, wvwGlickoScore, type WvwOptions } from './wvw.js';


/**
 * The later of two times. A player's `lastAt` only moves forward: a match
 * reported late (its `at` before the player's last match) is rated in
 * arrival order and leaves `lastAt` where it was, so it never makes the
 * player look inactive.
 */
function latest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

export type SystemName = 'glicko2' | 'wvw' | 'teamrank' | 'elo' | 'whr';
export const SYSTEM_NAMES: readonly SystemName[] = ['glicko2', 'wvw', 'teamrank', 'elo', 'whr'];

/** A player's state in any system: team rank keeps its rank in `rating`. */
export interface PlayerState {
  rating: number;
  rd?: number;
  volatility?: number;
  /** Matches rated so far. */
  matches: number;
  /** Epoch ms of the last rated match, when matches carry times. */
  lastAt?: number;
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
   * roundForDisplay) and `outcome`.
   */
  terms: Record<string, number | string>;
}

export interface MatchRating {
  matchId?: string;
  players: PlayerChange[];
}

export interface RatePeriodOptions {
  /**
   * Grow each player's RD for the time since their last match before rating
   * (continuous time, Glicko-2 and WvW only). @default true
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
   * the normalised product of its pairwise chances.
   */
  predict(teams: ReadonlyArray<readonly PlayerState[]>): number[];
  /** Step 6 alone for `periods` idle rating periods (Glicko-2 and WvW); others return the state unchanged. */
  idle(state: PlayerState, periods: number): PlayerState;
}

export type SystemOptions = Glicko2Options | WvwOptions | TeamRankOptions | EloOptions | WhrOptions;

/** True for a union of several types, false for one type. */
type IsUnion<T, All = T> = T extends unknown ? ([All] extends [T] ? false : true) : never;

/** Each system's options type, by system name. */
export interface SystemOptionsByName {
  glicko2: Glicko2Options;
  wvw: WvwOptions;
  teamrank: TeamRankOptions;
  elo: EloOptions;
  whr: WhrOptions;
}

/**
 * The options `createSystem` takes for a name: that system's own options type
 * for one literal name, so a misspelt option (`{ tua: 0.3 }`) does not
 * compile; any record for a name only known at run time (a ladder definition
 * read as JSON), whose options are then checked at run time.
 */
export type OptionsFor<Name extends SystemName> = IsUnion<Name> extends true ? Readonly<Record<string, unknown>> : SystemOptionsByName[Name];

/**
 * Creates the named system with its options (defaults documented on each
 * system's options type): one signature per system, with that system's
 * options type, and one for a name only known at run time (see OptionsFor).
 * A bad value is an InvalidInputError naming the option.
 */
export function createSystem(name: 'glicko2', options?: Glicko2Options): RatingSystem;
export function createSystem(name: 'wvw', options?: WvwOptions): RatingSystem;
export function createSystem(name: 'teamrank', options?: TeamRankOptions): RatingSystem;
export function createSystem(name: 'elo', options?: EloOptions): RatingSystem;
export function createSystem(name: 'whr', options?: WhrOptions): WhrSystem;
export function createSystem<Name extends SystemName>(name: Name, options?: OptionsFor<Name>): RatingSystem;
export function createSystem(name: SystemName, options: object = {}): RatingSystem {
  const system = systemNamed(name, options);
  // What the types refuse at compile time, refused at run time for callers without them (JSON, JavaScript).
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(system.options, key)) {
      throw new InvalidInputError(`unknown option for ${name}; known: ${Object.keys(system.options).join(', ')}`, { field: key });
    }
  }
  return system;
}

function systemNamed(name: SystemName, options: object): RatingSystem {
  switch (name) {
    case 'glicko2':
      return glickoSystem('glicko2', resolveGlicko2Options(options as Glicko2Options));
    case 'wvw':
      return glickoSystem('wvw', resolveWvwOptions(options as WvwOptions));
    case 'teamrank':
      return teamRankSystem(options as TeamRankOptions);
    case 'elo':
      return eloSystem(options as EloOptions);
    case 'whr':
      return createWhrSystem(options as WhrOptions);
    default:
      throw new InvalidInputError(`unknown system ${JSON.stringify(name)}; expected one of ${SYSTEM_NAMES.join(', ')}`, { field: 'system' });
  }
}

function normalise(values: number[]): number[] {
  const total = values.reduce((a, b) => a + b, 0);
  return values.map((v) => v / total);
}

/** Multi-team win chances from a pairwise probability function. */
function predictFromPairs(count: number, pair: (a: number, b: number) => number): number[] {
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

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

interface Participant {
  id: string;
  match: number;
  team: number;
  start: PlayerState;
  vInverse: number;
  improvement: number;
  score: number;
  expected: number;
  battles: number;
}

function stateOf(states: ReadonlyMap<string, PlayerState>, id: string, initial: () => PlayerState): PlayerState {
  return states.get(id) ?? initial();
}

function glickoSystem(name: 'glicko2' | 'wvw', o: ReturnType<typeof resolveGlicko2Options>): RatingSystem {
  const initial = (): PlayerState => ({ rating: o.rating, rd: o.rd, volatility: o.volatility, matches: 0 });
  const idle = (state: PlayerState, periods: number): PlayerState => {
    if (!(periods > 0)) return state;
    return { ...state, rd: glicko2IdleRd(state.rd ?? o.rd, state.volatility ?? o.volatility, periods, o.rd) };
  };
  const composite = (team: readonly PlayerState[]) => {
    let rd2 = 0;
    for (const p of team) rd2 += (p.rd ?? o.rd) ** 2;
    return { rating: mean(team.map((p) => p.rating)), rd: Math.sqrt(rd2 / team.length) };
  };

  const ratePeriod: RatingSystem['ratePeriod'] = (matches, states, rateOptions = {}) => {
    const timeIdle = rateOptions.timeIdle ?? true;
    const starts = new Map<string, PlayerState>();
    const idlePeriods = new Map<string, number>();
    const startOf = (id: string, at: number | undefined): PlayerState => {
      let start = starts.get(id);
      if (start) return start;
      start = stateOf(states, id, initial);
      let periods = 0;
      if (timeIdle && at !== undefined && start.lastAt !== undefined && at > start.lastAt) {
        periods = (at - start.lastAt) / o.periodMs;
        start = idle(start, periods);
      }
      idlePeriods.set(id, periods);
      starts.set(id, start);
      return start;
    };

    const participants: Participant[] = [];
    const byPlayer = new Map<string, Participant[]>();
    matches.forEach((match, m) => {
      if (name === 'wvw' && match.teams.some((team) => team.score === undefined)) {
        const missing = match.teams.findIndex((team) => team.score === undefined);
        throw new InvalidInputError('World-vs-World needs raw scores', { field: `teams[${missing}].score` });
      }
      const placements = teamPlacements(match);
      const teamStates = match.teams.map((team) => team.players.map((p) => startOf(p.id, match.at)));
      const opponents = teamStates.map(composite);
      match.teams.forEach((team, t) => {
        team.players.forEach((player, i) => {
          const start = teamStates[t]![i]!;
          const mu = (start.rating - 1500) / GLICKO2_SCALE;
          const participant: Participant = { id: player.id, match: m, team: t, start, vInverse: 0, improvement: 0, score: 0, expected: 0, battles: 0 };
          const sums = [0, 0];
          match.teams.forEach((_, u) => {
            if (u === t) return;
            const opponent = opponents[u]!;
            const s = name === 'wvw' ? wvwGlickoScore(match.teams[t]!.score!, match.teams[u]!.score!) : pairScore(placements, t, u);
            const e = glicko2Game(mu, (opponent.rating - 1500) / GLICKO2_SCALE, opponent.rd / GLICKO2_SCALE, s, sums);
            participant.score += s;
            participant.expected += e;
            participant.battles += 1;
          });
          participant.vInverse = sums[0]!;
          participant.improvement = sums[1]!;
          participants.push(participant);
          const list = byPlayer.get(player.id);
          if (list) list.push(participant);
          else byPlayer.set(player.id, [participant]);
        });
      });
    });

    const after = new Map<string, PlayerState>();
    const out = [0, 0, 0];
    for (const [id, list] of byPlayer) {
      const start = list[0]!.start;
      let vInverse = 0;
      let improvement = 0;
      for (const p of list) {
        vInverse += p.vInverse;
        improvement += p.improvement;
      }
      const mu = (start.rating - 1500) / GLICKO2_SCALE;
      glicko2Step(mu, (start.rd ?? o.rd) / GLICKO2_SCALE, start.volatility ?? o.volatility, vInverse, improvement, o.tau, o.epsilon, o.k, out);
      const lastAt = list.reduce<number | undefined>((latest, p) => {
        const at = matches[p.match]!.at;
        return at !== undefined && (latest === undefined || at > latest) ? at : latest;
      }, start.lastAt);
      const state: PlayerState = {
        rating: out[0]! * GLICKO2_SCALE + 1500,
        rd: out[1]! * GLICKO2_SCALE,
        volatility: out[2]!,
        matches: start.matches + list.length,
      };
      if (lastAt !== undefined) state.lastAt = lastAt;
      after.set(id, state);
    }

    const ratings: MatchRating[] = matches.map((match) => ({ ...(match.id !== undefined ? { matchId: match.id } : {}), players: [] }));
    for (const p of participants) {
      ratings[p.match]!.players.push({
        id: p.id,
        team: p.team,
        before: stateOf(states, p.id, initial),
        after: after.get(p.id)!,
        terms: {
          score: p.score / p.battles,
          expected: p.expected / p.battles,
          surprise: (p.score - p.expected) / p.battles,
          idlePeriods: idlePeriods.get(p.id) ?? 0,
          rdBeforeMatch: p.start.rd ?? o.rd,
        },
      });
    }
    return ratings;
  };

  return {
    name,
    options: o,
    initial,
    ratePeriod,
    rateMatch: (match, states, rateOptions) => ratePeriod([match], states, rateOptions)[0]!,
    predict: (teams) => {
      const composites = teams.map(composite);
      return predictFromPairs(teams.length, (a, b) => glicko2WinProbability(composites[a]!, composites[b]!));
    },
    idle,
  };
}

function eloSystem(options: EloOptions): RatingSystem {
  const o = resolveEloOptions(options);
  const initial = (): PlayerState => ({ rating: o.rating, matches: 0 });
  const ratePeriod: RatingSystem['ratePeriod'] = (matches, states) => {
    const changes = new Map<string, number>();
    const counts = new Map<string, number>();
    const lastAts = new Map<string, number>();
    const pending: Array<{ match: number; id: string; team: number; score: number; expected: number }> = [];
    matches.forEach((match, m) => {
      const placements = teamPlacements(match);
      const weight = match.weight ?? 1;
      const means = match.teams.map((team) => mean(team.players.map((p) => stateOf(states, p.id, initial).rating)));
      const others = match.teams.length - 1;
      match.teams.forEach((team, t) => {
        let score = 0;
        let expected = 0;
        match.teams.forEach((_, u) => {
          if (u === t) return;
          score += pairScore(placements, t, u);
          expected += eloExpected(means[t]!, means[u]!, o.scale);
        });
        // Scaled by the number of opponents so a two-team match is plain Elo.
        const delta = (o.k * weight * (score - expected)) / others;
        for (const player of team.players) {
          changes.set(player.id, (changes.get(player.id) ?? 0) + delta);
          counts.set(player.id, (counts.get(player.id) ?? 0) + 1);
          if (match.at !== undefined) lastAts.set(player.id, Math.max(match.at, lastAts.get(player.id) ?? -Infinity));
          pending.push({ match: m, id: player.id, team: t, score: score / others, expected: expected / others });
        }
      });
    });
    const ratings: MatchRating[] = matches.map((match) => ({ ...(match.id !== undefined ? { matchId: match.id } : {}), players: [] }));
    for (const p of pending) {
      const before = stateOf(states, p.id, initial);
      const after: PlayerState = { rating: before.rating + changes.get(p.id)!, matches: before.matches + counts.get(p.id)! };
      const lastAt = latest(lastAts.get(p.id), before.lastAt);
      if (lastAt !== undefined) after.lastAt = lastAt;
      ratings[p.match]!.players.push({ id: p.id, team: p.team, before, after, terms: { score: p.score, expected: p.expected, surprise: p.score - p.expected } });
    }
    return ratings;
  };
  return {
    name: 'elo',
    options: o,
    initial,
    ratePeriod,
    rateMatch: (match, states) => ratePeriod([match], states)[0]!,
    predict: (teams) => {
      const means = teams.map((team) => mean(team.map((p) => p.rating)));
      return predictFromPairs(teams.length, (a, b) => eloExpected(means[a]!, means[b]!, o.scale));
    },
    idle: (state) => state,
  };
}

function teamRankSystem(options: TeamRankOptions): RatingSystem {
  const o = resolveTeamRankOptions(options);
  const initial = (): PlayerState => ({ rating: o.initialRank, matches: 0 });
  const rateMatch: RatingSystem['rateMatch'] = (match, states) => {
    if (match.teams.length !== 2) {
      throw new InvalidInputError(`team rank rates matches of two teams, got ${match.teams.length}`, { field: 'teams' });
    }
    const placements = teamPlacements(match);
    const result: TeamRankResult = placements[0]! < placements[1]! ? 'win' : placements[0]! > placements[1]! ? 'loss' : 'draw';
    const befores = match.teams.map((team) => team.players.map((p) => stateOf(states, p.id, initial)));
    const toPlayers = (t: number): TeamRankPlayer[] =>
      match.teams[t]!.players.map((p, i) => ({ id: p.id, rank: befores[t]![i]!.rating, seconds: p.seconds, quit: p.quit }));
    const changes = teamRankMatch([toPlayers(0), toPlayers(1)], result, o);
    const flatBefore = befores.flat();
    return {
      ...(match.id !== undefined ? { matchId: match.id } : {}),
      players: changes.map((change, i) => {
        const before = flatBefore[i]!;
        const after: PlayerState = { rating: change.after, matches: before.matches + 1 };
        const lastAt = latest(match.at, before.lastAt);
        if (lastAt !== undefined) after.lastAt = lastAt;
        return {
          id: change.id,
          team: change.team,
          before,
          after,
          // Rounded for reading: quotients of equal averages come out as 0.9999999999999998; the ranks stay exact.
          terms: { outcome: change.outcome, averageModifier: roundForDisplay(change.averageModifier), quitterModifier: roundForDisplay(change.quitterModifier) },
        };
      }),
    };
  };
  return {
    name: 'teamrank',
    options: o,
    initial,
    // Team rank has no rating periods: matches are applied in order, each
    // seeing the changes before it through a small overlay (never a copy of
    // the whole population).
    ratePeriod: (matches, states) => {
      if (matches.length === 1) return [rateMatch(matches[0]!, states)];
      const changed = new Map<string, PlayerState>();
      const view: ReadonlyMap<string, PlayerState> = { get: (id: string) => changed.get(id) ?? states.get(id) } as ReadonlyMap<string, PlayerState>;
      return matches.map((match) => {
        const rating = rateMatch(match, view);
        for (const change of rating.players) changed.set(change.id, change.after);
        return rating;
      });
    },
    rateMatch,
    predict: (teams) => {
      if (teams.length !== 2) throw new InvalidInputError(`team rank predicts matches of two teams, got ${teams.length}`, { field: 'teams' });
      const p = teamRankWinProbability(teams[0]!.map((s) => s.rating), teams[1]!.map((s) => s.rating));
      return [p, 1 - p];
    },
    idle: (state) => state,
  };
}
