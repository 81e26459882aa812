/**
 * Ratings shown as a tier and a percentage through it, the way Prismata shows
 * ratings to players below its top tier ("translated to Tier/% values for
 * players that haven't hit Tier X yet"). The performance-rating post gives no thresholds, so the
 * default table is Ladder's own (docs/PERFORMANCE.md).
 */
import { InvalidInputError } from './errors.js';

/** One tier: its name and the lowest rating inside it. */
export interface Tier {
  name: string;
  min: number;
}

/** Tiers in ascending order of `min`; the last one is open-ended. */
export type TierTable = readonly Tier[];

export interface TierDisplay {
  /** Name of the tier the rating falls in. */
  tier: string;
  /**
   * Whole percent of the way from this tier's minimum to the next tier's,
   * rounded down, 0 to 99. In the open-ended top tier it is 100 and the label
   * shows the rating instead.
   */
  percent: number;
  /** True in the open-ended top tier. */
  top: boolean;
  /** The rating that was displayed. */
  rating: number;
  /** 'Tier 6 · 45%', or 'Tier X · 2143' in the top tier. */
  label: string;
}

/**
 * Ladder's default table (not Prismata's, whose numbers the performance-rating post does not
 * give): Tier 1 from 1000, ten tiers of 100 points each, and the open-ended
 * Tier X from 2000. A new 1500 player shows as 'Tier 6 · 0%'.
 */
export const DEFAULT_TIER_TABLE: TierTable = Object.freeze([
  ...Array.from({ length: 10 }, (_, i) => Object.freeze({ name: `Tier ${i + 1}`, min: 1000 + 100 * i })),
  Object.freeze({ name: 'Tier X', min: 2000 }),
]);

/** Checks that a table is non-empty, named, finite and strictly ascending. */
export function validateTierTable(table: TierTable): void {
  if (!Array.isArray(table) || table.length === 0) {
    throw new InvalidInputError('must be a non-empty array of { name, min }', { field: 'table' });
  }
  table.forEach((tier, index) => {
    if (typeof tier?.name !== 'string' || tier.name.trim() === '') {
      throw new InvalidInputError('must be a non-empty string', { field: `table[${index}].name` });
    }
    if (typeof tier.min !== 'number' || !Number.isFinite(tier.min)) {
      throw new InvalidInputError(`must be a finite number, got ${String(tier.min)}`, { field: `table[${index}].min` });
    }
    if (index > 0 && !(tier.min > table[index - 1]!.min)) {
      throw new InvalidInputError(`must be greater than table[${index - 1}].min (${table[index - 1]!.min}), got ${tier.min}`, {
        field: `table[${index}].min`,
      });
    }
  });
}

/**
 * A rating as tier and percent. Ratings below the first tier's minimum show
 * as the first tier at 0% (there is nothing lower to show). In the top tier
 * the percent is 100 and the label carries the rating rounded to a whole
 * number, since an open-ended tier has no "way through".
 */
export function displayTier(rating: number, table: TierTable = DEFAULT_TIER_TABLE): TierDisplay {
  if (typeof rating !== 'number' || !Number.isFinite(rating)) {
    throw new InvalidInputError(`must be a finite number, got ${String(rating)}`, { field: 'rating' });
  }
  validateTierTable(table);
  let index = 0;
  while (index + 1 < table.length && rating >= table[index + 1]!.min) index++;
  const tier = table[index]!;
  if (index === table.length - 1 && table.length > 1 && rating >= tier.min) {
    return { tier: tier.name, percent: 100, top: true, rating, label: `${tier.name} · ${Math.round(rating)}` };
  }
  if (table.length === 1) {
    // A one-tier table has no width to measure a percent against.
    return { tier: tier.name, percent: 100, top: true, rating, label: `${tier.name} · ${Math.round(rating)}` };
  }
  const next = table[index + 1]!;
  // Multiply before dividing so 1029 in [1000, 1100) is 29, not 0.29 * 100 = 28.999...;
  // the 1e-9 absorbs the same rounding for fractional thresholds. Floor, and
  // never 100: a rating at the next minimum is already in the next tier.
  const hundredths = ((rating - tier.min) * 100) / (next.min - tier.min);
  const percent = Math.min(99, Math.max(0, Math.floor(hundredths + 1e-9)));
  return { tier: tier.name, percent, top: false, rating, label: `${tier.name} · ${percent}%` };
}

/**
 * Significant digits of a figure reported for reading (team rank's
 * modifiers): enough to recompute a rank change to far below its cent
 * (6 digits leave an error under 1e-5 on a rank of 20), few enough that a
 * quotient of equal averages reads 1, not 0.9999999999999998.
 */
export const DISPLAY_DIGITS = 6;

/**
 * A number rounded to `digits` significant digits, for reports only: what is
 * shown is rounded, what is stored (states, ranks) stays exact. The result is
 * the double nearest the rounded decimal, so it prints short. It agrees with
 * `Number(value.toPrecision(digits))` except within a rounding error of a
 * tie, at a quarter of the cost (it runs for every player of every rated match).
 */
export function roundForDisplay(value: number, digits = DISPLAY_DIGITS): number {
  if (value === 0) return 0;
  if (!Number.isFinite(value)) return value;
  const size = Math.abs(value);
  const shift = digits - 1 - Math.floor(Math.log10(size));
  // Exact powers of ten only (10^k is exact up to k = 22), never a fraction such as 0.1; ties away from zero.
  if (shift > 22 || shift < -22) return Number(value.toPrecision(digits));
  const rounded = shift >= 0 ? Math.round(size * POWERS_OF_TEN[shift]!) / POWERS_OF_TEN[shift]! : Math.round(size / POWERS_OF_TEN[-shift]!) * POWERS_OF_TEN[-shift]!;
  return value < 0 ? -rounded : rounded;
}

/** 10^0 … 10^22, every one exact as a double. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * A rating to show where overrating a player costs more than underrating
 * them (a public leaderboard, seeding): the rating less `deviations` RDs,
 * the lower end of the range the player's strength is believed to lie in.
 *
 * - Glicko-2 and World-vs-World: rating − 2·RD by default. RD is one
 *   standard deviation, so the strength is at least this with about 97.5 %
 *   confidence; a new player (1500, RD 350) shows 800 and climbs as their RD
 *   shrinks, so a lucky newcomer cannot top the board after one win.
 * - Elo and team rank keep no deviation: the rating itself.
 */
export function conservativeRating(state: { rating: number; rd?: number }, deviations = 2): number {
  if (typeof state?.rating !== 'number' || !Number.isFinite(state.rating)) {
    throw new InvalidInputError(`must be a finite number, got ${String(state?.rating)}`, { field: 'rating' });
  }
  if (!(Number.isFinite(deviations) && deviations >= 0)) throw new InvalidInputError(`must be a finite, non-negative number, got ${deviations}`, { field: 'deviations' });
  if (state.rd === undefined) return state.rating;
  if (!(Number.isFinite(state.rd) && state.rd >= 0)) throw new InvalidInputError(`must be a finite, non-negative number, got ${state.rd}`, { field: 'rd' });
  return state.rating - deviations * state.rd;
}
