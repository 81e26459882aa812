import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eloExpected, eloUpdate } from './elo.js';

describe('Elo', () => {
  it('follows the 400-point logistic', () => {
    expect(eloExpected(1500, 1500)).toBe(0.5);
    // 1 / (1 + 10^(-200/400)) = 1 / (1 + 0.316228) = 0.759747
    expect(eloExpected(1700, 1500)).toBeCloseTo(0.759747, 6);
  });

  it('moves K * weight * (S - E)', () => {
    expect(eloUpdate({ rating: 1500 }, [{ opponent: 1500, score: 1 }]).rating).toBe(1516);
    expect(eloUpdate({ rating: 1500 }, [{ opponent: 1500, score: 1, weight: 1 / 3 }], { k: 30 }).rating).toBeCloseTo(1505, 12);
    // 1700 beats 1500: 1700 + 32 * (1 - 0.759747) = 1707.688
    expect(eloUpdate({ rating: 1700 }, [{ opponent: 1500, score: 1 }]).rating).toBeCloseTo(1707.688, 3);
  });

  it('rejects bad games naming the field', () => {
    expect(() => eloUpdate({ rating: 1500 }, [{ opponent: 1500, score: 2 }])).toThrow(/games\[0\]\.score/);
    expect(() => eloUpdate({ rating: 1500 }, [{ opponent: 1500, score: 1, weight: -1 }])).toThrow(/games\[0\]\.weight/);
  });

  it('is zero-sum between two players and never lowers a winner', () => {
    fc.assert(
      fc.property(fc.double({ min: -3000, max: 5000, noNaN: true }), fc.double({ min: -3000, max: 5000, noNaN: true }), (a, b) => {
        const winner = eloUpdate({ rating: a }, [{ opponent: b, score: 1 }]).rating;
        const loser = eloUpdate({ rating: b }, [{ opponent: a, score: 0 }]).rating;
        expect(winner).toBeGreaterThanOrEqual(a);
        expect(winner - a).toBeCloseTo(b - loser, 9);
      }),
    );
  });
});
