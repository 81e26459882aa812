import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../core/errors.js';
import { DEFAULT_DIVISIONS, divisionOf, Leaderboard, percentileOf, percentiles, RankTree, scalePercentile, standingsAt } from './index.js';

describe('percentileOf', () => {
  // Hand computation with max(1, ceil(100·below/(below+above))).
  it.each([
    [0, 9, 1], // lowest of ten
    [9, 0, 100], // highest of ten
    [5, 5, 50],
    [1, 99, 1], // ceil(100/100) = 1
    [2, 98, 2],
    [99, 1, 99],
    [1, 2, 34], // ceil(33.33)
    [0, 0, 1], // everyone tied (or alone): no one has beaten anyone
  ])('below %i, above %i → %i', (below, above, expected) => {
    expect(percentileOf(below, above)).toBe(expected);
  });

  it('rejects negative or fractional counts, naming the field', () => {
    expect(() => percentileOf(-1, 3)).toThrow(/field below/);
    expect(() => percentileOf(1, 2.5)).toThrow(InvalidInputError);
  });
});

describe('percentiles over a population', () => {
  it('handles a hand-worked population with ties', () => {
    // ratings 10,20,20,30: below/above = (0,3),(1,1),(1,1),(3,0) → 1, 50, 50, 100.
    expect(percentiles([20, 10, 30, 20])).toEqual([50, 1, 100, 50]);
  });

  it('lowest is 1, highest is 100, ties share, monotone in rating', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 200 }), (ratings) => {
        const result = percentiles(ratings);
        const min = Math.min(...ratings);
        const max = Math.max(...ratings);
        for (let i = 0; i < ratings.length; i++) {
          expect(result[i]).toBeGreaterThanOrEqual(1);
          expect(result[i]).toBeLessThanOrEqual(100);
          if (ratings[i] === min) expect(result[i]).toBe(1);
          if (ratings[i] === max && max !== min) expect(result[i]).toBe(100);
          for (let j = 0; j < ratings.length; j++) {
            if (ratings[i] === ratings[j]) expect(result[i]).toBe(result[j]);
            if (ratings[i] < ratings[j]) expect(result[i]).toBeLessThanOrEqual(result[j]);
          }
        }
      }),
    );
  });

  it('spreads a large tie-free population evenly: about 1% per percentile above 1', () => {
    const ratings = Array.from({ length: 10_000 }, (_, i) => i);
    const counts = new Map<number, number>();
    for (const p of percentiles(ratings)) counts.set(p, (counts.get(p) ?? 0) + 1);
    expect(counts.size).toBe(100);
    for (let p = 2; p <= 100; p++) expect(Math.abs(counts.get(p)! - 100)).toBeLessThanOrEqual(1);
  });
});

describe('scales and divisions', () => {
  it('maps to 1–50 by ceil(p/2) and 1–100 as identity', () => {
    expect([1, 2, 3, 50, 51, 99, 100].map((p) => scalePercentile(p, 50))).toEqual([1, 1, 2, 25, 26, 50, 50]);
    for (let p = 1; p <= 100; p++) expect(scalePercentile(p, 100)).toBe(p);
  });

  it('finds the default division and honours a custom table', () => {
    expect(divisionOf(1).name).toBe('Bronze');
    expect(divisionOf(20).name).toBe('Bronze');
    expect(divisionOf(21).name).toBe('Silver');
    expect(divisionOf(96).name).toBe('Master');
    expect(divisionOf(100, DEFAULT_DIVISIONS).name).toBe('Master');
    const table = [
      { name: 'Low', minPercentile: 1 },
      { name: 'High', minPercentile: 50.5 },
    ];
    expect(divisionOf(50, table).name).toBe('Low');
    expect(divisionOf(51, table).name).toBe('High');
  });

  it('rejects broken tables and out-of-range percentiles', () => {
    expect(() => divisionOf(0)).toThrow(/field percentile/);
    expect(() => divisionOf(101)).toThrow(/field percentile/);
    expect(() => divisionOf(5, [{ name: 'A', minPercentile: 2 }])).toThrow(/divisions\[0\]\.minPercentile/);
    expect(() =>
      divisionOf(5, [
        { name: 'A', minPercentile: 1 },
        { name: 'B', minPercentile: 1 },
      ]),
    ).toThrow(/divisions\[1\]\.minPercentile/);
  });
});

describe('RankTree', () => {
  it('agrees with a sorted array under random inserts and removes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 8 })), { maxLength: 300 }),
        fc.constantFrom(4, 5, 8, 1024),
        (ops, maxBlock) => {
          // Small blocks make the splits and merges of a million-entry board happen in a few hundred operations.
          const tree = new RankTree(16, maxBlock);
          const present = new Map<string, number>();
          for (const [insert, id, rating] of ops) {
            const key = `p${id}`;
            if (insert && !present.has(key)) {
              tree.insert(key, rating);
              present.set(key, rating);
            } else if (!insert && present.has(key)) {
              expect(tree.remove(key, present.get(key)!)).toBe(true);
              present.delete(key);
            }
          }
          const sorted = [...present].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
          expect(tree.size).toBe(sorted.length);
          expect(tree.slice(0, sorted.length + 5).map((e) => e.id)).toEqual(sorted.map((e) => e[0]));
          sorted.forEach(([id, rating], position) => {
            expect(tree.positionOf(id, rating)).toBe(position);
            expect(tree.at(position)?.id).toBe(id);
            expect(tree.countAbove(rating)).toBe(sorted.filter((e) => e[1] > rating).length);
            expect(tree.countBelow(rating)).toBe(sorted.filter((e) => e[1] < rating).length);
            const counts = { above: -1, below: -1 };
            tree.countAround(rating, counts);
            expect(counts).toEqual({ above: tree.countAbove(rating), below: tree.countBelow(rating) });
          });
        },
      ),
    );
  });
});

/** Naive model of the leaderboard: filter and sort on every question. */
function naiveStandings(players: Map<string, { rating: number; lastActiveAt: number; matches: number }>, now: number, windowMs: number, placement: number) {
  const ranked = [...players].filter(([, p]) => p.lastActiveAt >= now - windowMs && p.matches >= placement);
  ranked.sort((a, b) => b[1].rating - a[1].rating || (a[0] < b[0] ? -1 : 1));
  const ratings = ranked.map(([, p]) => p.rating);
  const pct = percentiles(ratings);
  const result = new Map<string, { rank: number; percentile: number; position: number }>();
  ranked.forEach(([id, p], position) => {
    result.set(id, { rank: 1 + ratings.filter((r) => r > p.rating).length, percentile: pct[position], position });
  });
  return { order: ranked.map(([id]) => id), result };
}

describe('Leaderboard', () => {
  it('matches a naive sort on random upserts, removes and expiries', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('upsert' as const),
        id: fc.integer({ min: 0, max: 25 }),
        rating: fc.integer({ min: 1, max: 12 }),
        dt: fc.integer({ min: 0, max: 5 }),
        matches: fc.integer({ min: 0, max: 4 }),
      }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 25 }) }),
      fc.record({ kind: fc.constant('tick' as const), dt: fc.integer({ min: 0, max: 6 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const windowMs = 10;
        const placement = 2;
        const board = new Leaderboard({ windowMs, placementMatches: placement, initialCapacity: 4 });
        const model = new Map<string, { rating: number; lastActiveAt: number; matches: number }>();
        let now = 0;
        for (const o of ops) {
          if (o.kind === 'upsert') {
            // Activity may be stamped slightly in the past (late results).
            const at = now - o.dt;
            board.upsert(`p${o.id}`, o.rating, at, o.matches);
            model.set(`p${o.id}`, { rating: o.rating, lastActiveAt: at, matches: o.matches });
          } else if (o.kind === 'remove') {
            expect(board.remove(`p${o.id}`)).toBe(model.delete(`p${o.id}`));
          } else {
            now += o.dt;
          }
          board.expire(now);
          const { order, result } = naiveStandings(model, now, windowMs, placement);
          expect(board.rankedCount).toBe(order.length);
          expect(board.top(1000).map((e) => e.id)).toEqual(order);
          for (const id of model.keys()) {
            const expected = result.get(id);
            expect(board.rank(id)).toBe(expected?.rank ?? null);
            expect(board.percentile(id)).toBe(expected?.percentile ?? null);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reports placement remaining and hides the percentile until placed', () => {
    const board = new Leaderboard({ placementMatches: 10 });
    board.upsert('a', 30, 0, 3);
    board.upsert('b', 20, 0, 10);
    board.upsert('c', 10, 0, 12);
    const a = board.standing('a', 0)!;
    expect(a.placementRemaining).toBe(7);
    expect(a.percentile).toBeNull();
    expect(a.rank).toBeNull();
    expect(board.standing('b')!.percentile).toBe(100);
    expect(board.standing('c')!.percentile).toBe(1);
    expect(board.standing('b')!.division).toBe('Master');
  });

  it('expires players after the 30-day default window and takes them back when they play', () => {
    const day = 86_400_000;
    const board = new Leaderboard({ placementMatches: 0 });
    board.upsert('old', 50, 0, 1);
    board.upsert('new', 40, 20 * day, 1);
    expect(board.rank('old', 30 * day)).toBe(1); // exactly 30 days: still in the window
    expect(board.expire(30 * day + 1)).toEqual(['old']);
    expect(board.rank('old')).toBeNull();
    expect(board.standing('old')!.active).toBe(false);
    expect(board.rank('new')).toBe(1);
    board.upsert('old', 50, 31 * day, 2);
    expect(board.rank('old')).toBe(1);
    expect(() => board.expire(0)).toThrow(/field now/);
  });

  it('pages: top-k with offset and around a player', () => {
    const board = new Leaderboard({ placementMatches: 0 });
    for (let i = 0; i < 20; i++) board.upsert(`p${i}`, i, 0, 1);
    expect(board.top(3).map((e) => e.id)).toEqual(['p19', 'p18', 'p17']);
    expect(board.top(2, 18).map((e) => [e.id, e.rank, e.position])).toEqual([
      ['p1', 19, 18],
      ['p0', 20, 19],
    ]);
    expect(board.around('p10', 2).map((e) => e.id)).toEqual(['p12', 'p11', 'p10', 'p9', 'p8']);
    expect(board.around('p19', 2).map((e) => e.id)).toEqual(['p19', 'p18', 'p17']);
    expect(board.around('missing', 2)).toEqual([]);
  });

  it('standingsAt gives every player a standing at one moment', () => {
    const day = 86_400_000;
    const result = standingsAt(
      [
        { id: 'x', rating: 5, lastActiveAt: 0, matches: 20 },
        { id: 'y', rating: 7, lastActiveAt: 40 * day, matches: 20 },
        { id: 'z', rating: 6, lastActiveAt: 40 * day, matches: 20 },
        { id: 'w', rating: 9, lastActiveAt: 40 * day, matches: 2 },
      ],
      40 * day,
    );
    expect(result.get('x')!.percentile).toBeNull(); // inactive
    expect(result.get('y')!.percentile).toBe(100);
    expect(result.get('z')!.percentile).toBe(1);
    expect(result.get('w')!.percentile).toBeNull(); // placement
    expect(result.get('w')!.placementRemaining).toBe(8);
  });
});
