import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { glicko2Idle, glicko2Update } from './glicko2.js';
import type { Match } from './match.js';
import { glicko2ReplayPairwise, eloReplayPairwise, PairwiseLogBuilder } from './pairwise.js';
import { Replay, replay } from './replay.js';
import { createSystem } from './systems.js';

const oneVsOne = (a: string, b: string, scoreA: number, extra: Partial<Match> = {}): Match => ({
  teams: [
    { players: [{ id: a }], rank: scoreA === 1 ? 1 : scoreA === 0 ? 2 : 1 },
    { players: [{ id: b }], rank: scoreA === 0 ? 1 : scoreA === 1 ? 2 : 1 },
  ],
  ...extra,
});

describe('Glicko-2 rating periods', () => {
  it('rates every game of a period from the ratings at its start', () => {
    const system = createSystem('glicko2', { tau: 0.5 });
    const matches = [oneVsOne('p', 'x', 1, { period: 'w1' }), oneVsOne('p', 'y', 0, { period: 'w1' })];
    const players = replay(system, matches);
    const byHand = glicko2Update({ rating: 1500, rd: 350, volatility: 0.06 }, [
      { opponent: { rating: 1500, rd: 350 }, score: 1 },
      { opponent: { rating: 1500, rd: 350 }, score: 0 },
    ]);
    expect(players.get('p')!.rating).toBeCloseTo(byHand.rating, 10);
    expect(players.get('p')!.rd).toBeCloseTo(byHand.rd, 10);
    expect(players.get('p')!.matches).toBe(2);
  });

  it('grows the RD of a known player who sits a period out, and of starting players', () => {
    const system = createSystem('glicko2');
    const matches = [oneVsOne('a', 'b', 1, { period: '1' }), oneVsOne('c', 'd', 1, { period: '2' }), oneVsOne('c', 'd', 0, { period: '3' })];
    const players = replay(system, matches, [{ id: 'z', rating: 1600, rd: 100, volatility: 0.06 }]);
    const afterFirst = replay(system, [matches[0]!]).get('a')!;
    // a played period 1 and sat out 2 and 3: two steps of step 6.
    const expected = glicko2Idle({ rating: afterFirst.rating, rd: afterFirst.rd!, volatility: afterFirst.volatility! }, 2);
    expect(players.get('a')!.rd).toBeCloseTo(expected.rd, 10);
    expect(players.get('a')!.rating).toBe(afterFirst.rating);
    // z never played: three periods of growth from RD 100.
    expect(players.get('z')!.rd).toBeCloseTo(glicko2Idle({ rating: 1600, rd: 100, volatility: 0.06 }, 3).rd, 10);
    expect(players.get('z')!.rating).toBe(1600);
  });

  it('grows RD by idle time when matches carry `at` and no period', () => {
    const system = createSystem('glicko2');
    const day = 86_400_000;
    const players = replay(system, [oneVsOne('a', 'b', 1, { at: 0 }), oneVsOne('a', 'c', 1, { at: 30 * day })]);
    const first = replay(system, [oneVsOne('a', 'b', 1, { at: 0 })]).get('a')!;
    const grown = glicko2Idle({ rating: first.rating, rd: first.rd!, volatility: first.volatility! }, 30);
    const second = glicko2Update(grown, [{ opponent: { rating: 1500, rd: 350 }, score: 1 }]);
    expect(players.get('a')!.rating).toBeCloseTo(second.rating, 10);
    expect(players.get('a')!.lastAt).toBe(30 * day);
  });
});

describe('the pairwise fast path', () => {
  const games = fc.array(fc.record({ a: fc.integer({ min: 0, max: 9 }), b: fc.integer({ min: 0, max: 9 }), s: fc.constantFrom(0, 0.5, 1), day: fc.integer({ min: 0, max: 3 }) }), {
    minLength: 1,
    maxLength: 60,
  });

  // The fast path carries ln(sigma^2) from game to game instead of recomputing
  // it, so its last bits may differ: it agrees to well under 1e-6 rating points.
  it('gives the ratings of the general replay, for Glicko-2 and Elo', () => {
    fc.assert(
      fc.property(games, (list) => {
        const valid = list.filter((g) => g.a !== g.b);
        let day = 0;
        const builder = new PairwiseLogBuilder();
        const matches: Match[] = [];
        for (const g of valid) {
          day += g.day;
          builder.add(`p${g.a}`, `p${g.b}`, g.s, day * 86_400_000);
          matches.push(oneVsOne(`p${g.a}`, `p${g.b}`, g.s, { at: day * 86_400_000 }));
        }
        const log = builder.build();
        const fast = glicko2ReplayPairwise(log);
        const slow = replay(createSystem('glicko2'), matches);
        const fastElo = eloReplayPairwise(log);
        const slowElo = replay(createSystem('elo'), matches);
        log.ids.forEach((id, i) => {
          expect(fast.rating[i]).toBeCloseTo(slow.get(id)!.rating, 6);
          expect(fast.rd[i]).toBeCloseTo(slow.get(id)!.rd!, 6);
          expect(fast.matches[i]).toBe(slow.get(id)!.matches);
          expect(fastElo.rating[i]).toBeCloseTo(slowElo.get(id)!.rating, 9);
        });
      }),
    );
  });
});

describe('systems over random games', () => {
  it('never produce NaN or Infinity, over a million random games', () => {
    const random = (() => {
      let s = 12345;
      return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    })();
    const builder = new PairwiseLogBuilder();
    for (let i = 0; i < 1_000_000; i++) {
      const a = Math.floor(random() * 500);
      let b = Math.floor(random() * 499);
      if (b >= a) b++;
      builder.add(String(a), String(b), [0, 0.5, 1][Math.floor(random() * 3)]!, Math.floor(i / 1000) * 86_400_000);
    }
    const log = builder.build();
    const glicko = glicko2ReplayPairwise(log, { tau: 1.2 });
    const elo = eloReplayPairwise(log, { k: 64 });
    for (let i = 0; i < log.ids.length; i++) {
      expect(Number.isFinite(glicko.rating[i]) && Number.isFinite(glicko.rd[i]) && Number.isFinite(glicko.volatility[i])).toBe(true);
      expect(Number.isFinite(elo.rating[i])).toBe(true);
    }
  });

  it('team rank through the system adapter never goes below 1.00', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.shuffledSubarray(['a', 'b', 'c', 'd', 'e', 'f'], { minLength: 4, maxLength: 4 }), fc.constantFrom(1, 2), fc.boolean()), {
          minLength: 1,
          maxLength: 40,
        }),
        (list) => {
          const run = new Replay(createSystem('teamrank'));
          for (const [ids, winner, quit] of list) {
            run.push({
              teams: [
                {
                  players: [
                    { id: ids[0]!, seconds: 600, quit },
                    { id: ids[1]!, seconds: 600 },
                  ],
                  rank: winner === 1 ? 1 : 2,
                },
                {
                  players: [
                    { id: ids[2]!, seconds: 600 },
                    { id: ids[3]!, seconds: 600 },
                  ],
                  rank: winner === 2 ? 1 : 2,
                },
              ],
            });
          }
          for (const state of run.finish().values()) expect(state.rating).toBeGreaterThanOrEqual(1);
        },
      ),
    );
  });

  it('predict gives probabilities that sum to 1', () => {
    for (const name of ['glicko2', 'elo', 'wvw'] as const) {
      const system = createSystem(name);
      const p = system.predict([[{ rating: 1600, rd: 80, matches: 1 }], [{ rating: 1500, rd: 80, matches: 1 }], [{ rating: 1400, rd: 80, matches: 1 }]]);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      expect(p[0]).toBeGreaterThan(p[1]!);
    }
    const teamrank = createSystem('teamrank').predict([[{ rating: 20.81, matches: 1 }], [{ rating: 21.2, matches: 1 }]]);
    expect(teamrank[0]).toBeLessThan(0.5);
  });

  it('a 1v1 draw between equal players leaves both ratings where they were', () => {
    for (const name of ['glicko2', 'elo'] as const) {
      const players = replay(createSystem(name), [oneVsOne('a', 'b', 0.5)]);
      expect(players.get('a')!.rating).toBeCloseTo(players.get('b')!.rating, 12);
      expect(players.get('a')!.rating).toBeCloseTo(1500, 9);
    }
  });
});
