import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { neweyWestLags, pairedDifference, type PerMatchLosses } from '../../src/eval/paired.js';

const losses = (values: number[], indices = values.map((_, i) => i)): PerMatchLosses => ({ indices: Int32Array.from(indices), losses: Float64Array.from(values) });

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('pairedDifference', () => {
  it('is the mean difference and its standard error, by hand', () => {
    // Differences 0.1, 0.3, 0.5: mean 0.3; sample variance ((−0.2)² + 0 + 0.2²)/2 = 0.04, so sd 0.2 and SE 0.2/√3 = 0.1154701.
    const d = pairedDifference(losses([0.5, 0.7, 0.9]), losses([0.4, 0.4, 0.4]));
    expect(d.n).toBe(3);
    expect(d.difference).toBeCloseTo(0.3, 12);
    expect(d.standardError).toBeCloseTo(0.1154701, 7);
    // Newey–West with ⌊4 (3/100)^(2/9)⌋ = 1 lag: γ0 = (0.04 + 0 + 0.04)/3, γ1 = (0 × −0.2 + 0.2 × 0)/3 = 0, so √(γ0/3) = 0.0942809.
    expect(d.lags).toBe(1);
    expect(d.neweyWest).toBeCloseTo(0.0942809, 7);
  });

  it("takes Newey and West's number of lags: 7 for OWL's 1,262 maps, 21 for the ATP test part", () => {
    expect(neweyWestLags(1262)).toBe(7);
    expect(neweyWestLags(186_801)).toBe(21);
    expect(neweyWestLags(2)).toBe(1);
    expect(neweyWestLags(1)).toBe(0);
  });

  it('widens the error when neighbouring differences go together, and narrows it when they alternate', () => {
    // Runs of four equal differences, each run's sign drawn at random: neighbours within a run go together
    // (correlation 1 − lag/4), so with the 5 lags of n = 400 the long-run variance is about 3.2 times the plain one.
    let seed = 5;
    const signs = Array.from({ length: 100 }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) < 2 ** 30 ? 0.3 : -0.1));
    const runs = Array.from({ length: 400 }, (_, i) => signs[Math.floor(i / 4)]!);
    const together = pairedDifference(losses(runs), losses(runs.map(() => 0)));
    expect(together.lags).toBe(5);
    expect(together.neweyWest).toBeGreaterThan(1.4 * together.standardError);
    // Alternating: negatively correlated neighbours.
    const alternating = Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? 0.3 : -0.1));
    const apart = pairedDifference(losses(alternating), losses(alternating.map(() => 0)));
    expect(apart.neweyWest).toBeLessThan(0.5 * apart.standardError);
  });

  it('pairs away what the matches share: a constant gap has no error, however noisy each side', () => {
    const d = pairedDifference(losses([0.1, 2.5, 0.7, 1.3]), losses([0.05, 2.45, 0.65, 1.25]));
    expect(d.difference).toBeCloseTo(0.05, 12);
    expect(d.standardError).toBeLessThan(1e-12);
  });

  it('refuses results that scored different matches, naming the field', () => {
    expect(() => pairedDifference(losses([0.5, 0.6]), losses([0.5]))).toThrow(InvalidInputError);
    const error = thrown(() => pairedDifference(losses([0.5, 0.6], [0, 1]), losses([0.5, 0.6], [0, 2])));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).field).toBe('paired');
    expect((error as Error).message).toMatch(/differ at the 2th scored \(log matches 2 and 3\)/);
  });

  it('turns the sign when the two are swapped and keeps the error (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 5, noNaN: true }), fc.double({ min: 0, max: 5, noNaN: true })), { minLength: 2, maxLength: 50 }), (pairs) => {
        const a = losses(pairs.map(([x]) => x));
        const b = losses(pairs.map(([, y]) => y));
        const ab = pairedDifference(a, b);
        const ba = pairedDifference(b, a);
        expect(ab.difference).toBeCloseTo(-ba.difference, 12);
        expect(ab.standardError).toBeCloseTo(ba.standardError, 12);
        expect(ab.standardError).toBeGreaterThanOrEqual(0);
        expect(ab.neweyWest).toBeCloseTo(ba.neweyWest, 12);
        expect(ab.neweyWest).toBeGreaterThanOrEqual(0);
        // The mean difference is the difference of the means.
        const mean = (v: Float64Array) => v.reduce((s, x) => s + x, 0) / v.length;
        expect(ab.difference).toBeCloseTo(mean(a.losses) - mean(b.losses), 10);
      }),
    );
  });
});
