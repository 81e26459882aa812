/**
 * Seasons: a soft reset of every player's state at the start of a season,
 * and the frozen final standings of the season that ends.
 *
 * Soft reset, for each player:
 *
 *   rating' = toward + keep · (rating − toward)
 *   rd'     = max(rd, options.rd)       (systems whose states carry an RD)
 *   matches' = 0 when placement restarts, else unchanged
 *
 * `toward` defaults to the system's starting rating, so `keep: 0` is a hard
 * reset and `keep: 1` changes no rating. Team rank stays at or above its
 * floor (1.00) and at its precision (cents, half up). Volatility and
 * `lastAt` are kept: the reset is about ratings, not about who has played
 * recently (the leaderboard's activity window still counts the last match).
 */
import { InvalidInputError } from '../core/errors.js';
import type { PlayerState, RatingSystem } from '../core/systems.js';
import { type LeaderboardOptions, Leaderboard } from './leaderboard.js';
import { divisionOf } from './percentile.js';

export interface SoftResetOptions {
  /** Share of the distance to `toward` each rating keeps, from 0 (hard reset) to 1 (no change). */
  keep: number;
  /** Rating the reset pulls toward. @default system.initial().rating */
  toward?: number;
  /**
   * Lowest RD after the reset (Glicko-2, WvW): each RD becomes max(RD, rd),
   * so last season's ratings count as less certain. At most the system's
   * starting RD. An error for systems without RD.
   */
  rd?: number;
  /**
   * Whether players play placement again: `matches` goes to 0, so the
   * leaderboard shows no percentile until they have played
   * `placementMatches` matches of the new season. Without it `matches` is
   * kept and placed players stay placed. @default false
   */
  restartPlacement?: boolean;
}

/**
 * New states for a new season (see the file comment for the formula). The
 * input map is not changed. Errors name the field: `keep` outside [0, 1], a
 * non-finite `toward`, an `rd` that is not positive, above the system's
 * starting RD or given for a system without RD, a state with a non-finite
 * rating (`states.<id>.rating`).
 */
export function softReset(states: ReadonlyMap<string, PlayerState>, options: SoftResetOptions, system: RatingSystem): Map<string, PlayerState> {
  const start = system.initial();
  const keep = options.keep;
  if (typeof keep !== 'number' || !(keep >= 0 && keep <= 1)) throw new InvalidInputError(`must be a number from 0 to 1, got ${String(keep)}`, { field: 'keep' });
  const toward = options.toward ?? start.rating;
  if (typeof toward !== 'number' || !Number.isFinite(toward)) throw new InvalidInputError(`must be a finite number, got ${String(toward)}`, { field: 'toward' });
  const rd = options.rd;
  if (rd !== undefined) {
    if (start.rd === undefined) throw new InvalidInputError(`${system.name} states have no RD`, { field: 'rd' });
    if (typeof rd !== 'number' || !(rd > 0 && rd <= start.rd))
      throw new InvalidInputError(`must be a number above 0 and at most the starting RD ${start.rd}, got ${String(rd)}`, { field: 'rd' });
  }
  const restart = options.restartPlacement ?? false;
  if (typeof restart !== 'boolean') throw new InvalidInputError(`must be true or false, got ${String(restart)}`, { field: 'restartPlacement' });

  const result = new Map<string, PlayerState>();
  for (const [id, state] of states) {
    if (!Number.isFinite(state.rating)) throw new InvalidInputError(`must be a finite number, got ${state.rating}`, { field: `states.${id}.rating` });
    // toward + keep·(rating − toward), written so that keep 1 and keep 0 are exact.
    let rating = keep * state.rating + (1 - keep) * toward;
    // A rating as the system holds it (team rank: in cents, never below its floor).
    if (system.holdRating) rating = system.holdRating(rating);
    const next: PlayerState = { ...state, rating };
    if (rd !== undefined && state.rd !== undefined) next.rd = Math.max(state.rd, rd);
    if (restart) next.matches = 0;
    result.set(id, next);
  }
  return result;
}

/** One row of a season's frozen standings. */
export interface FrozenStanding {
  /** Competition rank (ties share; 1 is best). */
  rank: number;
  id: string;
  rating: number;
  rd?: number;
  percentile: number;
  division: string;
  matches: number;
}

/**
 * The final standings of a season at `now` (epoch ms), best first (rating
 * descending, then id): the ranked players of a `Leaderboard` with these
 * options — active within the window and placed — with rank, percentile and
 * division. Players outside the ranking (inactive, in placement) get no row.
 * A state without `lastAt` counts as active at `now`. Pure: the same input
 * gives the same rows, for the service to store as the season's record.
 */
export function freezeStandings(states: ReadonlyMap<string, PlayerState>, options: LeaderboardOptions, now: number): FrozenStanding[] {
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new InvalidInputError(`must be a finite number of epoch ms, got ${String(now)}`, { field: 'now' });
  const board = new Leaderboard({ ...options, initialCapacity: Math.max(1024, states.size) });
  for (const [id, state] of states) board.upsert(id, state.rating, state.lastAt ?? now, state.matches);
  board.expire(now);
  return board.top(board.rankedCount).map((entry) => {
    const state = states.get(entry.id)!;
    return {
      rank: entry.rank,
      id: entry.id,
      rating: entry.rating,
      ...(state.rd === undefined ? {} : { rd: state.rd }),
      percentile: entry.percentile,
      division: divisionOf(entry.percentile, board.options.divisions).name,
      matches: state.matches,
    };
  });
}
