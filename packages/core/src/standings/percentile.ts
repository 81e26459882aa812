/**
 * Percentiles, rank scales and named divisions — the public face of a hidden
 * rating (the team-rank write-up, VISIBILITY section).
 *
 * Formula (one number per active player, ties share it):
 *
 *   below = active players with a strictly lower rating
 *   above = active players with a strictly higher rating
 *   percentile = 1                                   if below + above = 0
 *              = max(1, ceil(100 · below / (below + above)))  otherwise
 *
 * so the lowest-rated active player(s) get 1, the highest get 100, equal
 * ratings get equal percentiles and a higher rating never gets a lower one.
 * `ceil` (not `floor`) makes every percentile from 2 to 100 hold about 1 % of
 * the players; `floor` would leave 100 to the top tie group alone. When every
 * active player has the same rating (a fresh season, where everyone starts at
 * the team-rank write-up's 1.00) they all read 1: no one has beaten anyone yet.
 */
import { InvalidInputError } from '../core/errors.js';

/**
 * Percentile from the number of active players rated strictly below and
 * strictly above a player. Integer arithmetic, so it is exact for any count.
 */
export function percentileOf(below: number, above: number): number {
  if (!Number.isInteger(below) || below < 0) throw new InvalidInputError(`must be a non-negative integer, got ${below}`, { field: 'below' });
  if (!Number.isInteger(above) || above < 0) throw new InvalidInputError(`must be a non-negative integer, got ${above}`, { field: 'above' });
  const others = below + above;
  if (others === 0) return 1;
  // ceil(100·below/others) without floating point: (100·below + others − 1) div others.
  const value = Math.floor((100 * below + others - 1) / others);
  return Math.max(1, value);
}

/**
 * Percentiles of a whole population at once (O(n log n)); `ratings[i]` →
 * result[i]. The reference the leaderboard is tested against.
 */
export function percentiles(ratings: readonly number[]): number[] {
  const n = ratings.length;
  ratings.forEach((rating, index) => {
    if (!Number.isFinite(rating)) throw new InvalidInputError(`must be a finite number, got ${rating}`, { field: `ratings[${index}]` });
  });
  const order = ratings.map((_, index) => index).sort((a, b) => ratings[a] - ratings[b]);
  const result = new Array<number>(n);
  let start = 0;
  while (start < n) {
    let end = start;
    while (end + 1 < n && ratings[order[end + 1]] === ratings[order[start]]) end++;
    const below = start;
    const above = n - 1 - end;
    const value = percentileOf(below, above);
    for (let k = start; k <= end; k++) result[order[k]] = value;
    start = end + 1;
  }
  return result;
}

/**
 * Maps a percentile (1–100) onto a scale of `levels` steps (1–levels):
 * `ceil(percentile · levels / 100)`. levels 100 is the identity; levels 50 gives
 * the team-rank write-up's "1–50" scale (percentiles 1–2 → 1, 99–100 → 50). Monotone.
 */
export function scalePercentile(percentile: number, levels: number): number {
  checkPercentile(percentile);
  if (!Number.isInteger(levels) || levels < 1) throw new InvalidInputError(`must be a positive integer, got ${levels}`, { field: 'levels' });
  return Math.max(1, Math.ceil((percentile * levels) / 100 - 1e-9));
}

/** One named band of percentiles; it runs from `minPercentile` up to the next band's. */
export interface Division {
  name: string;
  /** Lowest percentile in this division (inclusive). */
  minPercentile: number;
}

/**
 * Default division table: six bands, wide at the bottom and narrow at the
 * top so the top names stay rare (Master is the top 5 %).
 */
export const DEFAULT_DIVISIONS: readonly Division[] = Object.freeze([
  { name: 'Bronze', minPercentile: 1 },
  { name: 'Silver', minPercentile: 21 },
  { name: 'Gold', minPercentile: 41 },
  { name: 'Platinum', minPercentile: 61 },
  { name: 'Diamond', minPercentile: 81 },
  { name: 'Master', minPercentile: 96 },
]);

/**
 * Checks a division table: non-empty, starts at 1, strictly increasing
 * bounds within 1–100, names non-empty and distinct.
 */
export function validateDivisions(table: readonly Division[]): void {
  if (table.length === 0) throw new InvalidInputError('must hold at least one division', { field: 'divisions' });
  const names = new Set<string>();
  table.forEach((division, index) => {
    const field = `divisions[${index}]`;
    if (typeof division.name !== 'string' || division.name.length === 0) throw new InvalidInputError('must be a non-empty string', { field: `${field}.name` });
    if (names.has(division.name)) throw new InvalidInputError(`duplicate division name "${division.name}"`, { field: `${field}.name` });
    names.add(division.name);
    const min = division.minPercentile;
    if (typeof min !== 'number' || !Number.isFinite(min) || min < 1 || min > 100) {
      throw new InvalidInputError(`must be a number from 1 to 100, got ${min}`, { field: `${field}.minPercentile` });
    }
    if (index === 0 && min !== 1) throw new InvalidInputError('the first division must start at percentile 1', { field: `${field}.minPercentile` });
    if (index > 0 && min <= table[index - 1].minPercentile) {
      throw new InvalidInputError("must be greater than the previous division's", { field: `${field}.minPercentile` });
    }
  });
}

/** The division a percentile falls in: the last band whose `minPercentile` ≤ percentile. */
export function divisionOf(percentile: number, table: readonly Division[] = DEFAULT_DIVISIONS): Division {
  checkPercentile(percentile);
  if (table !== DEFAULT_DIVISIONS) validateDivisions(table);
  // Tables are short (a handful of names); a linear scan is faster than a search.
  let found = table[0];
  for (const division of table) {
    if (division.minPercentile <= percentile) found = division;
    else break;
  }
  return found;
}

function checkPercentile(percentile: number): void {
  if (typeof percentile !== 'number' || !Number.isFinite(percentile) || percentile < 1 || percentile > 100) {
    throw new InvalidInputError(`must be a number from 1 to 100, got ${percentile}`, { field: 'percentile' });
  }
}
