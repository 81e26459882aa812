import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { roundHalfUp, type TeamRankPlayer, teamRankMatch, teamRankWinProbability } from './teamrank.js';
import { rate } from './rate.js';
import { describeSystem } from './registry.js';
import { createSystem } from './systems.js';

// team-rank-system.txt, IN-DEPTH EXAMPLE: a 6v6 game of 801 s; "I" am the
// first player of team A (21.84); one team A player quit after 609 s.
const teamA: TeamRankPlayer[] = [21.84, 19.71, 19.94, 20.87, 18.43, 24.05].map((rank, i) => ({
  id: `a${i}`,
  rank,
  seconds: i === 5 ? 609 : 801,
  quit: i === 5,
}));
const teamB: TeamRankPlayer[] = [22.87, 17.04, 23.39, 21.4, 20.11, 22.37].map((rank, i) => ({ id: `b${i}`, rank, seconds: 801 }));

describe("team rank: the team-rank write-up's in-depth example", () => {
  const changes = teamRankMatch([teamA, teamB], 'win');
  const me = changes[0]!;

  it("uses the team-rank write-up's averages and times", () => {
    // YA = 124.84/6, OA = 127.18/6, YT = 4614/6 = 769, OT = 4806/6 = 801 (the team-rank write-up).
    expect(me.averageModifier).toBeCloseTo(127.18 / 124.84, 12);
    expect(me.quitterModifier).toBeCloseTo(801 / 769, 12);
  });

  it("follows the formula (23.00), not the team-rank write-up's arithmetic (23.10)", () => {
    // Formula: 21.84 + 21.84/20 * (21.19667/20.80667) * (801/769)
    //        = 21.84 + 1.092 * 1.018744 * 1.041612 = 21.84 + 1.158760 = 22.99876 -> 23.00.
    // The team-rank write-up writes 21.20/20.81 as 1.10 (it is 1.0187) and rounds each factor:
    // 21.84 + 1.10 * 1.10 * 1.04 = 23.0984 -> 23.10. The formula wins.
    const byHand = 21.84 + (21.84 / 20) * (127.18 / 6 / (124.84 / 6)) * (801 / 769);
    expect(byHand).toBeCloseTo(22.99876, 5);
    expect(me.after).toBe(23.0);
    expect(me.after).not.toBe(23.1);
    expect(21.84 + 1.1 * 1.1 * 1.04).toBeCloseTo(23.0984, 10);
  });

  it('gives the quitter the automatic loss although the team won', () => {
    const quitter = changes[5]!;
    expect(quitter.outcome).toBe('quit');
    // Standard loss from the quitter's side: 24.05 - 1.2025 * (YA/OA) * (YT/OT) = 24.05 - 1.2025 * 0.98160 * 0.96005 = 22.9168
    // Automatic: 24.05 - 1.2025 = 22.8475. The lower is the automatic loss -> 22.85.
    expect(quitter.after).toBe(22.85);
  });

  it('ranks the losing team down by the loss formula', () => {
    const b0 = changes[6]!;
    // 22.87 - 22.87/20 * (OA/YA from B's side = 127.18/124.84) * (801/769) = 22.87 - 1.1435 * 1.018744 * 1.041612 = 21.65658 -> 21.66
    expect(b0.after).toBe(roundHalfUp(22.87 - (22.87 / 20) * (127.18 / 124.84) * (801 / 769)));
    expect(b0.after).toBe(21.66);
  });
});

describe('team rank rules', () => {
  const even = (prefix: string, ranks: number[]) => ranks.map((rank, i) => ({ id: `${prefix}${i}`, rank, seconds: 600 }));

  it('draws: the lower-average team ranks up as if it won, the other stays', () => {
    const low = even('l', [10, 10]);
    const high = even('h', [20, 20]);
    const changes = teamRankMatch([low, high], 'draw');
    expect(changes[0]!.after).toBe(11); // 10 + 0.5 * (20/10) * 1
    expect(changes[2]!.after).toBe(20);
    const same = teamRankMatch([even('x', [10, 10]), even('y', [10, 10])], 'draw');
    expect(same.every((c) => c.after === c.before)).toBe(true);
  });

  it('never drops below the floor of 1.00', () => {
    const changes = teamRankMatch([even('a', [1, 1]), even('b', [1, 1])], 'loss');
    expect(changes[0]!.after).toBe(1);
  });

  it('gives a walkover R0 + R0/20 when every opponent quit', () => {
    const quitters = [
      { id: 'q0', rank: 30, seconds: 100, quit: true },
      { id: 'q1', rank: 30, seconds: 50, quit: true },
    ];
    const changes = teamRankMatch([even('s', [10, 12]), quitters], 'loss');
    expect(changes[0]!.outcome).toBe('walkover');
    expect(changes[0]!.after).toBe(10.5);
    expect(changes[1]!.after).toBe(12.6);
    expect(changes[2]!.outcome).toBe('quit');
    expect(changes[2]!.after).toBe(28.5);
  });

  it('rounds half up on the decimal value', () => {
    expect(roundHalfUp(23.005)).toBe(23.01);
    expect(roundHalfUp(1.005)).toBe(1.01);
    expect(roundHalfUp(2.675)).toBe(2.68);
    expect(roundHalfUp(22.99876)).toBe(23);
  });

  it('rejects bad input with the field named', () => {
    expect(() => teamRankMatch([[{ id: 'a', rank: 0.5 }], [{ id: 'b', rank: 2 }]], 'win')).toThrow(/teams\[0\]\.players\[0\]\.rank/);
    expect(() => teamRankMatch([[{ id: 'a', rank: 2, seconds: -1 }], [{ id: 'b', rank: 2 }]], 'win')).toThrow(/teams\[0\]\.players\[0\]\.seconds/);
    expect(() => teamRankMatch([[], [{ id: 'b', rank: 2 }]], 'win')).toThrow(/teams\[0\]\.players/);
  });

  it('reads odds from average ranks', () => {
    expect(teamRankWinProbability([10, 10], [10, 10])).toBe(0.5);
    expect(teamRankWinProbability([20.81], [21.2])).toBeLessThan(0.5);
  });
});

describe('the booster scenario (team-rank-system.txt, Specific considerations)', () => {
  // 4v4: the boostee and three booster accounts win; the boosters quit at 780 s of an 801 s game.
  const boosted = [{ id: 'boostee', rank: 10, seconds: 801 }, ...[0, 1, 2].map((i) => ({ id: `booster${i}`, rank: 10, seconds: 780, quit: true }))];
  const opponents = [0, 1, 2, 3].map((i) => ({ id: `o${i}`, rank: 10, seconds: 801 }));

  it('keeps the quitter bonus near 1 with time in game, where a head count gives 4', () => {
    const byTime = teamRankMatch([boosted, opponents], 'win')[0]!;
    const byHead = teamRankMatch([boosted, opponents], 'win', { quitterModifier: 'headcount' })[0]!;
    // Time: OT/YT = 801 / ((801 + 3 * 780) / 4) = 801 / 785.25 = 1.02006.
    expect(byTime.quitterModifier).toBeCloseTo(801 / 785.25, 12);
    expect(byTime.quitterModifier).toBeLessThan(1.03);
    // Head count: 4 players against 1 left: 4/1 = 4, the team-rank write-up's exploit.
    expect(byHead.quitterModifier).toBe(4);
    expect(byTime.after).toBe(10.51); // 10 + 0.5 * 1.02006 = 10.51003
    expect(byHead.after).toBe(12);
  });
});

describe('team rank properties', () => {
  const player = (prefix: string) =>
    fc
      .array(
        fc.record({ rank: fc.integer({ min: 100, max: 100_000_000 }).map((cents) => cents / 100), seconds: fc.double({ min: 1, max: 5000, noNaN: true }), quit: fc.boolean() }),
        { minLength: 1, maxLength: 6 },
      )
      .map((list) => list.map((p, i) => ({ ...p, id: `${prefix}${i}` })));

  it('never drops below 1.00 and keeps two decimals', () => {
    fc.assert(
      fc.property(player('a'), player('b'), fc.constantFrom('win', 'loss', 'draw') as fc.Arbitrary<'win' | 'loss' | 'draw'>, (a, b, result) => {
        for (const change of teamRankMatch([a, b], result)) {
          expect(change.after).toBeGreaterThanOrEqual(1);
          expect(Number.isFinite(change.after)).toBe(true);
          expect(roundHalfUp(change.after)).toBe(change.after);
        }
      }),
    );
  });

  it('never lowers a player who stayed on the winning team', () => {
    fc.assert(
      fc.property(player('a'), player('b'), (a, b) => {
        teamRankMatch([a, b], 'win')
          .filter((c) => c.team === 0 && c.outcome !== 'quit')
          .forEach((c) => expect(c.after).toBeGreaterThanOrEqual(c.before - 0.005));
      }),
    );
  });
});

describe("team rank's number is a rating, as in every other system (docs/RATING.md)", () => {
  it('is described, created and rated as `rating`', () => {
    expect(describeSystem('teamrank').display.quantity).toBe('rating');
    const system = createSystem('teamrank');
    expect(system.initial()).toEqual({ rating: 1, matches: 0 });
    const after = rate(system, {
      teams: [
        { players: ['ann'], rank: 1 },
        { players: ['bob'], rank: 2 },
      ],
    });
    expect(after.get('ann')).toMatchObject({ rating: 1.05, matches: 1 });
    expect(Object.keys(after.get('bob')!)).not.toContain('rank');
  });
});
