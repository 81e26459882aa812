import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { glicko2Update } from './glicko2.js';
import { mulberry32 } from './random.js';
import { wvwExpectedScores, wvwGlickoScore, wvwGroups, wvwRateMatch } from './wvw.js';

describe('World-vs-World score transform (gw2-wvw-glicko2.txt)', () => {
  it('maps score shares through (sin((p - 0.5) pi) + 1) / 2', () => {
    expect(wvwGlickoScore(100, 100)).toBe(0.5);
    expect(wvwGlickoScore(1, 0)).toBe(1);
    expect(wvwGlickoScore(0, 1)).toBeCloseTo(0, 15);
    // p = 0.75: (sin(pi/4) + 1) / 2 = (0.70711 + 1) / 2 = 0.85355 (hand computation)
    expect(wvwGlickoScore(300, 100)).toBeCloseTo(0.853553, 6);
    expect(wvwGlickoScore(0, 0)).toBe(0.5);
  });

  it("is symmetric: the two worlds' scores sum to 1", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.double({ min: 0, max: 1e6, noNaN: true }), (a, b) => {
        expect(wvwGlickoScore(a, b) + wvwGlickoScore(b, a)).toBeCloseTo(1, 12);
      }),
    );
  });
});

describe('World-vs-World rating', () => {
  const worlds = [
    { rating: 1600, rd: 80, volatility: 0.06 },
    { rating: 1500, rd: 120, volatility: 0.06 },
    { rating: 1400, rd: 200, volatility: 0.06 },
  ];
  const scores = [250_000, 180_000, 90_000];

  it('rates each world as two battles from the pre-match ratings, with tau 0.6', () => {
    const rated = wvwRateMatch(worlds, scores);
    worlds.forEach((world, i) => {
      const games = worlds.flatMap((opponent, j) => (j === i ? [] : [{ opponent, score: wvwGlickoScore(scores[i]!, scores[j]!) }]));
      const expected = glicko2Update(world, games, { tau: 0.6 });
      expect(rated[i]!.rating).toBeCloseTo(expected.rating, 10);
      expect(rated[i]!.rd).toBeCloseTo(expected.rd, 10);
      expect(rated[i]!.volatility).toBeCloseTo(expected.volatility, 12);
    });
  });

  it('does not depend on the order of the worlds', () => {
    const forward = wvwRateMatch(worlds, scores);
    const backward = wvwRateMatch([...worlds].reverse(), [...scores].reverse()).reverse();
    forward.forEach((r, i) => expect(r.rating).toBeCloseTo(backward[i]!.rating, 12));
  });

  it('treats k as a multiplier on the rating step, standard at 1', () => {
    const standard = wvwRateMatch(worlds, scores, { k: 1 });
    const half = wvwRateMatch(worlds, scores, { k: 0.5 });
    standard.forEach((r, i) => {
      expect(half[i]!.rating - worlds[i]!.rating).toBeCloseTo((r.rating - worlds[i]!.rating) / 2, 9);
      expect(half[i]!.rd).toBeCloseTo(r.rd, 12);
    });
  });

  it('rejects bad scores with the field named', () => {
    expect(() => wvwRateMatch(worlds, [1, Number.NaN, 3])).toThrow(/scores\[1\]/);
    expect(() => wvwRateMatch(worlds, [1, 2])).toThrow(/scores/);
  });

  it('expects higher shares for higher ratings', () => {
    const { share } = wvwExpectedScores(worlds);
    expect(share[0]).toBeGreaterThan(share[1]!);
    expect(share[1]).toBeGreaterThan(share[2]!);
  });
});

describe('World-vs-World grouping', () => {
  const worlds = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id, i) => ({ id, rating: 2000 - i * 50, rd: 50 }));

  it('groups by rating in threes, top tier first, the remainder at the bottom', () => {
    expect(wvwGroups([...worlds].reverse())).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
  });

  it('places worlds by rating + U(-1,1) * min(0.45 RD + 10, 100) under the randomized rule, reproducibly', () => {
    const first = wvwGroups(worlds, { rule: 'randomized', seed: 42 });
    expect(wvwGroups([...worlds].reverse(), { rule: 'randomized', seed: 42 })).toEqual(first);
    // With RD 0 the noise is at most 10 points, less than half the 50-point gaps: the sorted order stands.
    expect(
      wvwGroups(
        worlds.map((w) => ({ ...w, rd: 0 })),
        { rule: 'randomized', seed: 7 },
      ),
    ).toEqual(wvwGroups(worlds));
    // Close ratings with large RD get shuffled for some seed.
    const close = worlds.map((w, i) => ({ ...w, rating: 1500 + i, rd: 300 }));
    const draws = new Set(Array.from({ length: 20 }, (_, seed) => JSON.stringify(wvwGroups(close, { rule: 'randomized', seed }))));
    expect(draws.size).toBeGreaterThan(1);
  });

  it('has a seedable generator in [0, 1)', () => {
    const random = mulberry32(5);
    const values = Array.from({ length: 1000 }, random);
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(mulberry32(5)()).toBe(values[0]);
  });
});
