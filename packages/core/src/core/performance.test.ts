import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UnboundedRatingError } from './errors.js';
import { invalidField } from '../../../../test/support/invalid-field.js';
import {
  algo400,
  eloReplayRule,
  expectedScore,
  glicko2ReplayRule,
  maxLikelihood,
  netzero,
  netzeroUnordered,
  parsePerformanceGame,
  performanceRating,
  performanceRatings,
  type GameResult,
  type PerformanceGame,
} from './performance.js';

const record = (results: GameResult[], opponent = 1500): PerformanceGame[] => results.map((result) => ({ opponent, result }));

// The performance-rating post's example: start at 1500, beat three 1500 players, then lose to three.
const seedRun = record(['win', 'win', 'win', 'loss', 'loss', 'loss']);

describe("the performance-rating post's example (three wins then three losses against 1500)", () => {
  it('rates algo400, maximum likelihood and unordered netzero at exactly 1500', () => {
    // algo400: (6 * 1500 + 400 * (3 - 3)) / 6 = 1500.
    expect(algo400(seedRun)).toBe(1500);
    // ML: 3 wins and 3 losses against one rating balance at E = 1/2, i.e. R = 1500.
    expect(maxLikelihood(seedRun)).toBeCloseTo(1500, 9);
    expect(netzeroUnordered(seedRun)).toBeCloseTo(1500, 9);
  });

  it('ends below 1500 when replayed from 1500 with Elo K = 32, as the performance-rating post claims', () => {
    // Hand/independent computation (mpmath, 40 digits): 1500 -> 1516 (E = 1/2, +16)
    // -> 1531.26369321 -> 1545.82782033 -> 1527.72952612 -> 1510.45523882 -> 1493.97390256.
    const expected = [1516, 1531.26369321, 1545.82782033, 1527.72952612, 1510.45523882, 1493.97390256];
    const update = eloReplayRule(32);
    let rating = 1500;
    seedRun.forEach((game, index) => {
      rating = update(rating, game);
      expect(rating).toBeCloseTo(expected[index]!, 7);
    });
    expect(rating).toBeLessThan(1500);
  });

  it('has netzero 1475.4715729689... with Elo K = 32', () => {
    // Derivation: Elo against a fixed 1500 opponent is symmetric under r -> 3000 - r with
    // win <-> loss, so the losing half of the run mirrors the winning half and the netzero
    // run peaks at 3000 - R: R solves W3(R) = 3000 - R, W3 = three wins from R. Solved
    // independently by mpmath.findroot at 40 digits: R = 1475.4715729689282752
    // (path 1475.47 -> 1492.60 -> 1508.94 -> 1524.53 -> 1507.40 -> 1491.06 -> 1475.47).
    const rating = netzero(seedRun);
    expect(rating).toBeCloseTo(1475.4715729689282752, 8);
    expect(rating).toBeLessThan(1500);
    // The mirrored order, three losses then three wins, lands at 3000 - 1475.47 = 1524.53.
    expect(netzero(record(['loss', 'loss', 'loss', 'win', 'win', 'win']))).toBeCloseTo(3000 - 1475.4715729689282752, 8);
  });

  it('is found by a netzero Glicko-2 replay below 1500 too, with the same mirror symmetry', () => {
    // Glicko-2 is symmetric under mu -> -mu with s -> 1 - s (E -> 1 - E, delta^2 and v
    // unchanged), so the two orders must again sum to 3000.
    const update = glicko2ReplayRule({ rd: 100, volatility: 0.06, opponentRd: 50 });
    const forward = netzero(seedRun, { update });
    const backward = netzero(record(['loss', 'loss', 'loss', 'win', 'win', 'win']), { update });
    expect(forward).toBeLessThan(1500);
    expect(forward + backward).toBeCloseTo(3000, 6);
    // Unordered: a win and a loss at X = 1500 are mirror images, so they cancel there.
    expect(netzeroUnordered(seedRun, { update })).toBeCloseTo(1500, 6);
  });
});

describe('algo400', () => {
  it('weighs a blitz game a third', () => {
    // Win vs 1600 (weight 1), blitz loss vs 1400 (weight 1/3):
    // (1 * (1600 + 400) + (1/3) * (1400 - 400)) / (4/3) = (7000/3) / (4/3) = 1750.
    expect(
      algo400([
        { opponent: 1600, result: 'win' },
        { opponent: 1400, result: 'loss', weight: 1 / 3 },
      ]),
    ).toBeCloseTo(1750, 10);
  });

  it('counts a draw as its opponent only', () => {
    // (1500 + 1700 + 400) / 2 = 1800.
    expect(
      algo400([
        { opponent: 1500, result: 'draw' },
        { opponent: 1700, result: 'win' },
      ]),
    ).toBe(1800);
  });
});

describe('maximum likelihood', () => {
  it('matches the closed form against a single opponent rating', () => {
    // n wins, m losses against o: n(1 - E) = m E, so E = n / (n + m) and
    // R = o + 400 log10(n / m). Two wins, one loss: 1500 + 400 log10 2 = 1620.4119982655925.
    expect(maxLikelihood(record(['win', 'loss', 'win']))).toBeCloseTo(1620.4119982655925, 8);
    // A draw is half a win and half a loss: win + draw is 1.5 of 2, E = 3/4,
    // R = 1500 + 400 log10 3 = 1690.8485018878650.
    expect(maxLikelihood(record(['win', 'draw']))).toBeCloseTo(1690.848501887865, 8);
    // Weights: a win of weight 1 against a loss of weight 1/3 is the same E = 3/4.
    expect(
      maxLikelihood([
        { opponent: 1500, result: 'win' },
        { opponent: 1500, result: 'loss', weight: 1 / 3 },
      ]),
    ).toBeCloseTo(1690.848501887865, 8);
  });

  it('maximises the weighted log-likelihood', () => {
    const games: PerformanceGame[] = [
      { opponent: 1400, result: 'win' },
      { opponent: 1650, result: 'loss', weight: 2 },
      { opponent: 1550, result: 'draw', weight: 1 / 3 },
      { opponent: 1800, result: 'win' },
    ];
    const logLikelihood = (rating: number) =>
      games.reduce((sum, g) => {
        const p = expectedScore(rating, g.opponent);
        const s = g.result === 'win' ? 1 : g.result === 'draw' ? 0.5 : 0;
        return sum + (g.weight ?? 1) * (s * Math.log(p) + (1 - s) * Math.log(1 - p));
      }, 0);
    const best = maxLikelihood(games);
    for (const offset of [-50, -1, -0.01, 0.01, 1, 50]) expect(logLikelihood(best + offset)).toBeLessThan(logLikelihood(best));
  });
});

describe('records with no finite rating', () => {
  const allWins: PerformanceGame[] = [
    { opponent: 1500, result: 'win' },
    { opponent: 1700, result: 'win' },
  ];
  const allLosses: PerformanceGame[] = [
    { opponent: 1500, result: 'loss' },
    { opponent: 1700, result: 'loss' },
  ];

  it('clamps to the highest opponent + 800 / lowest opponent - 800 by default', () => {
    for (const method of ['ml', 'netzero', 'netzero-unordered'] as const) {
      expect(performanceRating(method, allWins)).toBe(2500);
      expect(performanceRating(method, allLosses)).toBe(700);
    }
    // algo400 is always finite: (1500 + 1700 + 800) / 2.
    expect(algo400(allWins)).toBe(2000);
  });

  it('honours unboundedMargin', () => {
    // One win against 1500: max(1500 + 400, rating of a single draw at 1500 = 1500) = 1900.
    expect(maxLikelihood(record(['win']), { unboundedMargin: 400 })).toBe(1900);
    expect(netzero(record(['win']), { unboundedMargin: 400 })).toBe(1900);
    expect(netzeroUnordered(record(['loss']), { unboundedMargin: 0 })).toBe(1500);
  });

  it('throws UnboundedRatingError with the direction when asked', () => {
    for (const rate of [maxLikelihood, netzero, netzeroUnordered]) {
      expect(() => rate(allWins, { unbounded: 'throw' })).toThrow(UnboundedRatingError);
      try {
        rate(allLosses, { unbounded: 'throw' });
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(UnboundedRatingError);
        expect((error as UnboundedRatingError).direction).toBe('below');
      }
    }
  });

  it('pushes the clamp out for long records so one more win never lowers the rating', () => {
    // 101 wins + 1 loss at 1500: ML = 1500 + 400 log10(101) = 2301.7285495130570 > 1500 + 800.
    const oneLoss = record(['loss', ...Array<GameResult>(101).fill('win')]);
    expect(maxLikelihood(oneLoss)).toBeCloseTo(2301.728549513057, 7);
    // 102 wins: the clamp is the ML of 101 wins + 1 draw: E = 101.5 / 102,
    // 10^((R - 1500)/400) = E / (1 - E) = 203, R = 1500 + 400 log10 203 = 2422.9984151652.
    const allWon = record(Array<GameResult>(102).fill('win'));
    expect(maxLikelihood(allWon)).toBeCloseTo(1500 + 400 * Math.log10(203), 7);
    expect(netzero(allWon)).toBeGreaterThanOrEqual(netzero(oneLoss));
    expect(netzeroUnordered(allWon)).toBeGreaterThanOrEqual(netzeroUnordered(oneLoss));
  });
});

describe('input validation', () => {
  const fieldOf = invalidField;

  it('names the offending field', () => {
    expect(fieldOf(() => maxLikelihood([]))).toBe('games');
    expect(
      fieldOf(() =>
        algo400([
          { opponent: 1500, result: 'win' },
          { opponent: Number.NaN, result: 'win' },
        ]),
      ),
    ).toBe('games[1].opponent');
    expect(fieldOf(() => netzero([{ opponent: 1500, result: 'tie' as GameResult }]))).toBe('games[0].result');
    expect(fieldOf(() => netzeroUnordered([{ opponent: 1500, result: 'win', weight: -1 }]))).toBe('games[0].weight');
    expect(fieldOf(() => algo400([{ opponent: 1500, result: 'win', weight: 0 }]))).toBe('games');
    expect(fieldOf(() => eloReplayRule(-1))).toBe('k');
    expect(fieldOf(() => maxLikelihood(seedRun, { unboundedMargin: Number.POSITIVE_INFINITY }))).toBe('unboundedMargin');
    expect(fieldOf(() => parsePerformanceGame({ opponent: '1500', result: 'win' }))).toBe('opponent');
    expect(fieldOf(() => parsePerformanceGame({ opponent: 1500, result: 'won' }))).toBe('result');
    expect(fieldOf(() => parsePerformanceGame({ opponent: 1500, result: 'win', weight: -0.5 }))).toBe('weight');
  });

  it('ignores zero-weight games', () => {
    const withIgnored = [...seedRun, { opponent: 2400, result: 'loss' as const, weight: 0 }];
    expect(performanceRatings(withIgnored)).toEqual(performanceRatings(seedRun));
  });
});

// ---------------------------------------------------------------------------
// Properties

const resultArb = fc.constantFrom<GameResult>('win', 'loss', 'draw');
const gameArb: fc.Arbitrary<PerformanceGame> = fc.record({
  opponent: fc.double({ min: 0, max: 3000, noNaN: true }),
  result: resultArb,
  // Up to 5 keeps K * w = 160 below 1600 / ln 10 = 695, where an Elo replay is monotone.
  weight: fc.oneof(fc.constant(1), fc.constant(1 / 3), fc.double({ min: 0.01, max: 5, noNaN: true })),
});
const recordArb = fc.array(gameArb, { minLength: 1, maxLength: 10 });
// All wins (or all losses) but for at most one game: the records next to the unbounded ones,
// where a light draw among wins has a finite rating far above the default clamp.
const nearlyOneSidedArb = fc
  .tuple(fc.array(gameArb, { minLength: 1, maxLength: 10 }), fc.constantFrom<GameResult>('win', 'loss'), fc.nat())
  .map(([games, side, keep]) => games.map((g, i) => (i === keep % games.length ? g : { ...g, result: side })));
const methods = ['algo400', 'ml', 'netzero', 'netzero-unordered'] as const;

describe('properties', () => {
  it('every method is finite for every record, including all wins and all losses', () => {
    const oneSided = fc
      .tuple(fc.array(fc.double({ min: 0, max: 3000, noNaN: true }), { minLength: 1, maxLength: 10 }), fc.constantFrom<GameResult>('win', 'loss'))
      .map(([opponents, result]) => opponents.map((opponent) => ({ opponent, result })));
    fc.assert(
      fc.property(fc.oneof(recordArb, oneSided), (games) => {
        for (const method of methods) expect(Number.isFinite(performanceRating(method, games))).toBe(true);
      }),
    );
  });

  it('turning a loss into a draw or a draw into a win never lowers any rating', () => {
    fc.assert(
      fc.property(fc.oneof(recordArb, nearlyOneSidedArb), fc.nat(), (games, pick) => {
        const index = pick % games.length;
        const before = games[index]!.result;
        if (before === 'win') return;
        const better = games.map((g, i) => (i === index ? { ...g, result: before === 'loss' ? ('draw' as const) : ('win' as const) } : g));
        for (const method of methods) {
          const old = performanceRating(method, games);
          expect(performanceRating(method, better)).toBeGreaterThanOrEqual(old - 1e-7 * Math.max(1, Math.abs(old)));
        }
      }),
    );
  });

  it('algo400 is the weighted average opponent when weighted wins equal weighted losses', () => {
    // Each win is paired with a loss of the same weight (opponents differ); draws are free.
    const pairArb = fc.record({
      winOpponent: fc.double({ min: 0, max: 3000, noNaN: true }),
      lossOpponent: fc.double({ min: 0, max: 3000, noNaN: true }),
      weight: fc.double({ min: 0.01, max: 5, noNaN: true }),
    });
    const drawArb = fc.record({ opponent: fc.double({ min: 0, max: 3000, noNaN: true }), weight: fc.double({ min: 0.01, max: 5, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(pairArb, { maxLength: 6 }), fc.array(drawArb, { maxLength: 4 }), fc.boolean(), (pairs, draws, shuffle) => {
        if (pairs.length + draws.length === 0) return;
        const games: PerformanceGame[] = [
          ...pairs.flatMap((p) => [
            { opponent: p.winOpponent, result: 'win' as const, weight: p.weight },
            { opponent: p.lossOpponent, result: 'loss' as const, weight: p.weight },
          ]),
          ...draws.map((d) => ({ opponent: d.opponent, result: 'draw' as const, weight: d.weight })),
        ];
        if (shuffle) games.reverse();
        const total = games.reduce((s, g) => s + g.weight!, 0);
        const mean = games.reduce((s, g) => s + g.weight! * g.opponent, 0) / total;
        expect(algo400(games)).toBeCloseTo(mean, 6);
      }),
    );
  });

  it('unordered netzero with Elo is the maximum-likelihood rating (same equation)', () => {
    fc.assert(
      fc.property(recordArb, (games) => {
        expect(netzeroUnordered(games)).toBeCloseTo(maxLikelihood(games), 6);
      }),
    );
  });

  it('netzero is above any start whose replay gains points and below any that loses (the performance-rating post)', () => {
    // Only for records with a finite netzero: an all-wins record gains from every start,
    // which no finite stand-in can be above.
    const twoSided = recordArb.filter((games) => !games.every((g) => g.result === 'win') && !games.every((g) => g.result === 'loss'));
    fc.assert(
      fc.property(twoSided, fc.double({ min: 0, max: 3000, noNaN: true }), (games, start) => {
        const update = eloReplayRule(32);
        const end = games.reduce((rating, game) => update(rating, game), start);
        const rating = netzero(games);
        if (end > start + 1e-9) expect(rating).toBeGreaterThan(start);
        if (end < start - 1e-9) expect(rating).toBeLessThan(start);
      }),
    );
  });
});
