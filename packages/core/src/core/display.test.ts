import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIER_TABLE, displayTier, validateTierTable, type TierTable } from './display.js';
import { invalidField } from '../../../../test/support/invalid-field.js';

describe('displayTier with the default table (Tier 1 from 1000, 100 points a tier, Tier X from 2000)', () => {
  it('shows tier and whole percent, rounded down', () => {
    // 1500 is the floor of Tier 6 (1000 + 5 * 100): 0%.
    expect(displayTier(1500)).toEqual({ tier: 'Tier 6', percent: 0, top: false, rating: 1500, label: 'Tier 6 · 0%' });
    // (1545 - 1500) / 100 = 45%.
    expect(displayTier(1545).label).toBe('Tier 6 · 45%');
    // 29 / 100 * 100 is 28.999... in floating point; the display must still say 29.
    expect(displayTier(1029).percent).toBe(29);
    expect(displayTier(1999.99).label).toBe('Tier 10 · 99%');
  });

  it('puts ratings below the first threshold in the first tier at 0%', () => {
    expect(displayTier(640).label).toBe('Tier 1 · 0%');
  });

  it('shows the rating itself in the open-ended top tier', () => {
    expect(displayTier(2000)).toEqual({ tier: 'Tier X', percent: 100, top: true, rating: 2000, label: 'Tier X · 2000' });
    expect(displayTier(2143.4).label).toBe('Tier X · 2143');
  });
});

describe('displayTier with a custom table', () => {
  const table: TierTable = [
    { name: 'Bronze', min: 0 },
    { name: 'Silver', min: 1200 },
    { name: 'Gold', min: 1800 },
  ];

  it('measures the percent against the next threshold', () => {
    // (1500 - 1200) / (1800 - 1200) = 50%.
    expect(displayTier(1500, table).label).toBe('Silver · 50%');
    // (1199 - 0) / 1200 = 99.9% -> 99.
    expect(displayTier(1199, table).label).toBe('Bronze · 99%');
    expect(displayTier(1800, table).label).toBe('Gold · 1800');
  });

  it('rejects bad tables and ratings, naming the field', () => {
    const field = invalidField;
    expect(field(() => validateTierTable([]))).toBe('table');
    expect(
      field(() =>
        displayTier(1500, [
          { name: 'A', min: 0 },
          { name: 'B', min: 0 },
        ]),
      ),
    ).toBe('table[1].min');
    expect(field(() => displayTier(1500, [{ name: '', min: 0 }]))).toBe('table[0].name');
    expect(field(() => displayTier(Number.NaN))).toBe('rating');
  });
});

describe('displayTier properties', () => {
  const tierIndex = (name: string) => DEFAULT_TIER_TABLE.findIndex((t) => t.name === name);

  it('never moves down a tier, or down in percent within a tier, as the rating rises', () => {
    fc.assert(
      fc.property(fc.double({ min: -1000, max: 4000, noNaN: true }), fc.double({ min: 0, max: 1000, noNaN: true }), (rating, rise) => {
        const low = displayTier(rating);
        const high = displayTier(rating + rise);
        expect(tierIndex(high.tier)).toBeGreaterThanOrEqual(tierIndex(low.tier));
        if (high.tier === low.tier) expect(high.percent).toBeGreaterThanOrEqual(low.percent);
        expect(Number.isInteger(low.percent) && low.percent >= 0 && low.percent <= (low.top ? 100 : 99)).toBe(true);
      }),
    );
  });
});
