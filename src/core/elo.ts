/**
 * Elo on the 400-point logistic scale: E = 1 / (1 + 10^((Rb - Ra) / 400)),
 * R' = R + K * weight * (S - E).
 */
import { InvalidInputError } from './errors.js';

export interface EloRating {
  rating: number;
}

export interface EloOptions {
  /** Starting rating. @default 1500 */
  rating?: number;
  /** K factor: the most a game of weight 1 can move a rating. @default 32 */
  k?: number;
  /** Rating points for a tenfold change in odds. @default 400 */
  scale?: number;
}

export interface ResolvedEloOptions {
  rating: number;
  k: number;
  scale: number;
}

export const ELO_DEFAULTS: ResolvedEloOptions = Object.freeze({ rating: 1500, k: 32, scale: 400 });

export interface EloGame {
  opponent: number;
  /** Score in [0, 1]. */
  score: number;
  /** Multiplies K for this game (a blitz game might weigh 1/3). @default 1 */
  weight?: number;
}

export function resolveEloOptions(options: EloOptions = {}): ResolvedEloOptions {
  const o = { ...ELO_DEFAULTS };
  for (const key of ['rating', 'k', 'scale'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidInputError(`must be a finite number, got ${String(value)}`, { field: key });
    o[key] = value;
  }
  if (o.k < 0) throw new InvalidInputError(`must not be negative, got ${o.k}`, { field: 'k' });
  if (!(o.scale > 0)) throw new InvalidInputError(`must be positive, got ${o.scale}`, { field: 'scale' });
  return o;
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
