import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Match } from '../core/match.js';
import { mulberry32 } from '../core/random.js';
import { invalidField } from '../../../../test/support/invalid-field.js';
import { integrityReport, type PairEntry, type QuitEntry } from './index.js';
import { benjaminiHochberg, binomialTail, logChoose, poissonUpper, runsUpper } from './stats.js';

function duel(a: string, b: string, aWins: boolean, quit?: string): Match {
  const player = (id: string) => (id === quit ? { id, quit: true } : { id });
  return {
    teams: [
      { players: [player(a)], rank: aWins ? 1 : 2 },
      { players: [player(b)], rank: aWins ? 2 : 1 },
    ],
  };
}

/** Honest background: random pairs of `count` players, fair coin results. */
function background(count: number, matches: number, seed: number): Match[] {
  const random = mulberry32(seed);
  return Array.from({ length: matches }, () => {
    const a = Math.floor(random() * count);
    let b = Math.floor(random() * (count - 1));
    if (b >= a) b++;
    return duel(`h${a}`, `h${b}`, random() < 0.5);
  });
}

describe('tail probabilities', () => {
  it('Poisson and binomial tails match direct sums', () => {
    const fact = (n: number): number => (n <= 1 ? 1 : n * fact(n - 1));
    for (const [x, mean] of [
      [0, 1],
      [1, 0.5],
      [3, 0.5],
      [5, 2],
      [2, 7],
      [12, 0.1],
    ] as const) {
      let direct = 1;
      for (let k = 0; k < x; k++) direct -= (Math.exp(-mean) * mean ** k) / fact(k);
      expect(poissonUpper(x, mean)).toBeCloseTo(direct, 12);
    }
    let tail = 0;
    for (let k = 12; k < 40; k++) tail += (Math.exp(-0.1) * 0.1 ** k) / fact(k);
    expect(poissonUpper(12, 0.1) / tail).toBeCloseTo(1, 12);
    const binom = (n: number, k: number, p: number) => Math.exp(logChoose(n, k)) * p ** k * (1 - p) ** (n - k);
    let upper = 0;
    for (let k = 7; k <= 10; k++) upper += binom(10, k, 0.3);
    expect(binomialTail(10, 7, 0.3, true)).toBeCloseTo(upper, 14);
    expect(binomialTail(10, 2, 0.3, false)).toBeCloseTo(binom(10, 0, 0.3) + binom(10, 1, 0.3) + binom(10, 2, 0.3), 14);
  });

  it('the runs test equals an enumeration of every order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 14 }), (a, b, runs) => {
        let atLeast = 0;
        let total = 0;
        for (let mask = 0; mask < 1 << (a + b); mask++) {
          let ones = 0;
          for (let m = mask; m; m &= m - 1) ones++;
          if (ones !== a) continue;
          total++;
          let r = 1;
          for (let i = 1; i < a + b; i++) if (((mask >> i) & 1) !== ((mask >> (i - 1)) & 1)) r++;
          if (r >= runs) atLeast++;
        }
        expect(runsUpper(a, b, runs)).toBeCloseTo(atLeast / total, 12);
      }),
    );
  });

  it('Benjamini–Hochberg: q = min over ranks at or above of m·p/rank', () => {
    expect(benjaminiHochberg([0.01, 0.04, 0.03, 0.5])).toEqual([0.04, (0.04 * 4) / 3, (0.04 * 4) / 3, 0.5].map((q, i) => (i === 0 ? 0.04 : q)));
  });
});

describe('integrityReport', () => {
  it('computes the random-pairing factor: 1v1 logs give 1/(2M)', () => {
    const report = integrityReport(background(10, 50, 1));
    expect(report.meetingFactor).toBeCloseTo(1 / 100, 15);
    // 6v6: O = 144 − 72 = 72 per match, S = 12 per match: factor 72/(144·M).
    const team = (prefix: string) => Array.from({ length: 6 }, (_, i) => ({ id: `${prefix}${i}` }));
    const sixes: Match[] = Array.from({ length: 3 }, (_, m) => ({
      teams: [
        { players: team(`a${m}`), rank: 1 },
        { players: team(`b${m}`), rank: 2 },
      ],
    }));
    expect(integrityReport(sixes).meetingFactor).toBeCloseTo(72 / (144 * 3), 15);
  });

  it('names win-traders: a pair that meets far too often and takes turns', () => {
    const log = background(200, 3000, 7);
    // Twenty trades spread through the log.
    for (let k = 0; k < 20; k++) log.splice(150 * k, 0, duel('x', 'y', k % 2 === 0));
    const report = integrityReport(log);
    const entry = report.entries[0] as PairEntry;
    expect(entry.kind).toBe('pair');
    expect(entry.players).toEqual(['x', 'y']);
    expect(entry.pattern).toBe('alternating');
    expect(entry.evidence).toMatchObject({ meetings: 20, wins: [10, 10], runs: 20, results: 'WL'.repeat(10) });
    // x and y play only each other: 20 matches each in a log of 3020 duels.
    expect(entry.evidence.expectedMeetings).toBeCloseTo((20 * 20) / (2 * 3020), 12);
    expect(entry.evidence.alternationP).toBeCloseTo(2 / Math.exp(logChoose(20, 10)), 15);
    expect(report.entries.filter((e) => e.kind === 'pair')).toHaveLength(1);
  });

  it('names a booster who always loses to the same player and quits, but not the honest background', () => {
    const log = background(200, 3000, 11);
    // The booster wins elsewhere (so log5 expects them to win), and loses all 15 meetings with the boostee, quitting 10.
    for (let k = 0; k < 15; k++) log.splice(200 * k, 0, duel('booster', 'boostee', false, k < 10 ? 'booster' : undefined), duel('booster', `h${k}`, true));
    const report = integrityReport(log);
    const pair = report.entries.find((e): e is PairEntry => e.kind === 'pair')!;
    // Ids in order: the evidence is from the boostee's side.
    expect(pair.players).toEqual(['boostee', 'booster']);
    expect(pair.pattern).toBe('one-sided');
    expect(pair.evidence.wins).toEqual([15, 0]);
    expect(pair.evidence.expectedWinShare).toBeLessThan(0.5);
    const quits = report.entries.find((e): e is QuitEntry => e.kind === 'quits')!;
    expect(quits.player).toBe('booster');
    expect(quits.evidence).toMatchObject({ matches: 30, quits: 10 });
    expect(quits.evidence.expectedQuits).toBeCloseTo(30 * (10 / (2 * 3030)), 12);
    // The boostee's 15 straight wins against one opponent.
    const results = report.entries.find((e) => e.kind === 'results');
    if (results?.kind === 'results') expect(results.evidence.topOpponent).toBe('booster');
    for (const entry of report.entries) expect(entry.kind === 'pair' ? entry.players : [entry.player]).not.toContain('h0');
    for (let i = 1; i < report.entries.length; i++) expect(report.entries[i - 1].score).toBeGreaterThanOrEqual(report.entries[i].score);
  });

  it('names nobody in an honest log', () => {
    for (const seed of [1, 2, 3]) expect(integrityReport(background(100, 4000, seed)).entries).toEqual([]);
  });

  it('validates options and matches, naming the field', () => {
    expect(invalidField(() => integrityReport([], { alpha: 2 }))).toBe('alpha');
    expect(invalidField(() => integrityReport([], { minMeetings: 0.5 }))).toBe('minMeetings');
    expect(invalidField(() => integrityReport([{ teams: [{ players: [{ id: 'a' }], rank: 1 }] }]))).toBe('matches[0].teams');
  });
});
