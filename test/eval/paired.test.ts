import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { pairedDifference, type PerMatchLosses } from '../../src/eval/paired.js';

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
        // The mean difference is the difference of the means.
        const mean = (v: Float64Array) => v.reduce((s, x) => s + x, 0) / v.length;
        expect(ab.difference).toBeCloseTo(mean(a.losses) - mean(b.losses), 10);
      }),
    );
  });
});
