/**
 * Elo on the 400-point logistic scale: E = 1 / (1 + 10^((Rb - Ra) / 400)),
 * R' = R + K * weight * (S - E).
 */
import { defineSystem, progressEveryStep, SURPRISE_EXPLANATION, SURPRISE_TERMS } from './descriptor.js';
import { InvalidInputError } from './errors.js';
import { type Match, pairScore, teamPlacements } from './match.js';
import { numberOption, type OptionsOf, resolveOptions, type ResolvedOptionsOf, defaultsOf } from './options.js';
import type { PairwiseLog, PairwiseRatings } from './pairwise.js';
import {
  type ContextOffset,
  contextOf,
  emptyRatings,
  latest,
  mean,
  type MatchRating,
  type PlayerState,
  predictFromPairs,
  type RatingSystem,
  stateOf,
  withContext,
} from './rating-system.js';

export interface EloRating {
  rating: number;
}

/** Elo's options: what each means, its default and range. */
export const ELO_OPTIONS = {
  /** Starting rating. @default 1500 */
  rating: numberOption({ default: 1500, description: 'starting rating' }),
  /** K factor: the most a game of weight 1 can move a rating. @default 32 */
  k: numberOption({ default: 32, min: 0, description: 'K factor: the most a game of weight 1 can move a rating' }),
  /** Rating points for a tenfold change in odds. @default 400 */
  scale: numberOption({ default: 400, min: 0, exclusiveMin: true, description: 'rating points for a tenfold change in odds' }),
  /**
   * K factor of a player's per-context offsets: a match with a `context` is
   * played at rating + offset[context], the rating moves by K and the offset
   * by this K; 0 leaves contexts out (plain Elo). @default 0
   */
  contextK: numberOption({ default: 0, min: 0, description: 'K factor of the per-context offsets (skill in a context = rating + offset); 0 leaves contexts out' }),
};

export type EloOptions = OptionsOf<typeof ELO_OPTIONS>;
export type ResolvedEloOptions = ResolvedOptionsOf<typeof ELO_OPTIONS>;

export const ELO_DEFAULTS: Readonly<ResolvedEloOptions> = defaultsOf(ELO_OPTIONS);

export interface EloGame {
  opponent: number;
  /** Score in [0, 1]. */
  score: number;
  /** Multiplies K for this game (a blitz game might weigh 1/3). @default 1 */
  weight?: number;
}

export function resolveEloOptions(options: EloOptions = {}): ResolvedEloOptions {
  return resolveOptions(ELO_OPTIONS, options);
}

export function eloInitial(options: EloOptions = {}): EloRating {
  return { rating: resolveEloOptions(options).rating };
}

/** Expected score of a player rated `rating` against `opponent`. */
export function eloExpected(rating: number, opponent: number, scale = 400): number {
  return 1 / (1 + 10 ** ((opponent - rating) / scale));
}

/**
 * Rates a player over a set of games, every expectation taken from the
 * rating before the first of them (one rating period, as FIDE does).
 */
export function eloUpdate(player: EloRating, games: readonly EloGame[], options: EloOptions = {}): EloRating {
  const o = resolveEloOptions(options);
  let change = 0;
  games.forEach((game, i) => {
    if (!(game.score >= 0 && game.score <= 1)) throw new InvalidInputError(`must be in [0, 1], got ${game.score}`, { field: `games[${i}].score` });
    if (!Number.isFinite(game.opponent)) throw new InvalidInputError(`must be finite, got ${game.opponent}`, { field: `games[${i}].opponent` });
    const weight = game.weight ?? 1;
    if (!(weight >= 0 && Number.isFinite(weight))) throw new InvalidInputError(`must be a finite, non-negative number, got ${weight}`, { field: `games[${i}].weight` });
    change += o.k * weight * (game.score - eloExpected(player.rating, game.opponent, o.scale));
  });
  return { rating: player.rating + change };
}

/** Probability that a player rated `a` beats one rated `b` (draws counting half). */
export function eloWinProbability(a: number, b: number, options: EloOptions = {}): number {
  return eloExpected(a, b, resolveEloOptions(options).scale);
}

/**
 * Elo behind the RatingSystem interface. Teams play at their mean rating;
 * with more than two teams each player's change is the sum of its pairwise
 * changes divided by the number of opponents, so two teams are plain Elo.
 * A period's matches are all rated from the ratings at its start.
 */
function eloSystem(o: ResolvedEloOptions): RatingSystem {
  const initial = (): PlayerState => ({ rating: o.rating, matches: 0 });
  // Per-context offsets only when switched on: otherwise a context is ignored and every step is plain Elo's.
  const contextual = o.contextK > 0;
  const skill = (state: PlayerState, context: string | undefined): number => state.rating + (contextual ? (contextOf(state, context)?.offset ?? 0) : 0);
  const ratePeriod: RatingSystem['ratePeriod'] = (matches, states) => {
    /** Offset changes by player, then by context: the K of offsets times the same surprise. */
    const offsetChanges = new Map<string, Map<string, { change: number; count: number }>>();
    const changes = new Map<string, number>();
    const counts = new Map<string, number>();
    const lastAts = new Map<string, number>();
    const pending: Array<{ match: number; id: string; team: number; score: number; expected: number }> = [];
    matches.forEach((match, m) => {
      const placements = teamPlacements(match);
      const weight = match.weight ?? 1;
      const context = contextual ? match.context : undefined;
      const means = match.teams.map((team) => mean(team.players.map((p) => skill(stateOf(states, p.id, initial), context))));
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
          if (context !== undefined) {
            let byContext = offsetChanges.get(player.id);
            if (!byContext) offsetChanges.set(player.id, (byContext = new Map()));
            const entry = byContext.get(context) ?? { change: 0, count: 0 };
            entry.change += (o.contextK * weight * (score - expected)) / others;
            entry.count += 1;
            byContext.set(context, entry);
          }
          counts.set(player.id, (counts.get(player.id) ?? 0) + 1);
          if (match.at !== undefined) lastAts.set(player.id, Math.max(match.at, lastAts.get(player.id) ?? -Infinity));
          pending.push({ match: m, id: player.id, team: t, score: score / others, expected: expected / others });
        }
      });
    });
    const ratings: MatchRating[] = emptyRatings(matches);
    for (const p of pending) {
      const before = stateOf(states, p.id, initial);
      const after: PlayerState = { rating: before.rating + changes.get(p.id)!, matches: before.matches + counts.get(p.id)! };
      const lastAt = latest(lastAts.get(p.id), before.lastAt);
      if (lastAt !== undefined) after.lastAt = lastAt;
      let contexts = before.contexts;
      for (const [context, { change, count }] of offsetChanges.get(p.id) ?? []) {
        const old: ContextOffset | undefined = contexts?.[context];
        contexts = withContext(contexts, context, { offset: (old?.offset ?? 0) + change, matches: (old?.matches ?? 0) + count });
      }
      if (contexts !== undefined) after.contexts = contexts;
      ratings[p.match]!.players.push({ id: p.id, team: p.team, before, after, terms: { score: p.score, expected: p.expected, surprise: p.score - p.expected } });
    }
    return ratings;
  };
  return {
    name: 'elo',
    options: o,
    initial,
    ratePeriod,
    rateMatch: (match: Match, states) => ratePeriod([match], states)[0]!,
    predict: (teams, context) => {
      const means = teams.map((team) => mean(team.map((p) => skill(p, context))));
      return predictFromPairs(teams.length, (a, b) => eloExpected(means[a]!, means[b]!, o.scale));
    },
    idle: (state) => state,
  };
}

/**
 * The fast path: rates a log of one-against-one games on typed arrays, each
 * game from the ratings before it, identical to the last bit to `Replay`
 * with `createSystem('elo')`. `onGame`, when given, sees each game's
 * prediction (the first player's expected score) before it is rated.
 */
export function eloReplayPairwise(log: PairwiseLog, options: EloOptions = {}, onGame?: (game: number, probabilityA: number) => void): PairwiseRatings {
  const o = resolveEloOptions(options);
  const rating = new Float64Array(log.ids.length).fill(o.rating);
  const matches = new Int32Array(log.ids.length);
  const lastAt = new Float64Array(log.ids.length).fill(NaN);
  const weightless = o.k;
  for (let game = 0; game < log.count; game++) {
    const i = log.a[game]!;
    const j = log.b[game]!;
    const e = eloExpected(rating[i]!, rating[j]!, o.scale);
    onGame?.(game, e);
    const delta = weightless * (log.score[game]! - e);
    rating[i] = rating[i]! + delta;
    rating[j] = rating[j]! - delta;
    matches[i]!++;
    matches[j]!++;
    const at = log.at[game]!;
    if (at === at && !(lastAt[i]! >= at)) lastAt[i] = at;
    if (at === at && !(lastAt[j]! >= at)) lastAt[j] = at;
  }
  return { rating, matches, lastAt };
}

/** Elo in the registry. */
export const ELO = defineSystem({
  name: 'elo',
  label: 'Elo',
  summary: "Elo on the 400-point logistic scale: R' = R + K · weight · (S − E); teams play at their mean rating.",
  options: ELO_OPTIONS,
  capabilities: {
    teams: true,
    draws: true,
    multiTeam: true,
    ratingPeriods: true,
    idleGrowth: false,
    homeAdvantage: true,
    fastPath: true,
    needsScores: false,
    rounds: false,
    wholeHistory: false,
    deviation: false,
  },
  display: { quantity: 'rating', decimals: 1, scale: 'elo' },
  fit: {
    parameters: [
      { name: 'k', min: 1, max: 200, initial: 32 },
      { name: 'contextK', min: 0, max: 100, scale: 'linear', initial: 8 },
    ],
    byDefault: ['k'],
  },
  dashboard: {
    terms: SURPRISE_TERMS,
    explanation: SURPRISE_EXPLANATION,
    performanceRuns: true,
  },
  ladder: { teamSize: 1 },
  create: eloSystem,
  fastPath: { replay: (log, options, onProgress) => eloReplayPairwise(log, options, progressEveryStep(onProgress)) },
});
