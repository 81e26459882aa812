import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Match } from './match.js';
import { Replay, replay, replayWithout, voidPlan } from './replay.js';
import { createSystem, type MatchRating, type SystemName } from './systems.js';

const PLAYERS = ['a', 'b', 'c', 'd', 'e', 'f'];

/**
 * Random logs: two teams of one or two players from a small pool (so players
 * meet often), ranks with ties, some quits; ids m0, m1, …; either every
 * match carries `at` (continuous time) or runs of matches share a `period`.
 */
const log = fc
  .record({
    matches: fc.array(
      fc.record({
        players: fc.shuffledSubarray(PLAYERS, { minLength: 2, maxLength: 4 }),
        result: fc.constantFrom(1, 2, 0),
        quit: fc.boolean(),
        gap: fc.integer({ min: 0, max: 3 }),
      }),
      { maxLength: 14 },
    ),
    periods: fc.boolean(),
  })
  .map(({ matches, periods }) => {
    let at = Date.UTC(2024, 0, 1);
    let period = 0;
    return matches.map((m, i): Match => {
      at += m.gap * 43_200_000;
      period += m.gap > 1 ? 1 : 0;
      const split = Math.ceil(m.players.length / 2);
      const teams = [m.players.slice(0, split), m.players.slice(split)].map((ids, t) => ({
        players: ids.map((id, k) => ({ id, ...(m.quit && t === 1 && k === 0 ? { quit: true, seconds: 300 } : {}) })),
        rank: m.result === 0 ? 1 : m.result === t + 1 ? 1 : 2,
      }));
      return { id: `m${i}`, teams, ...(periods ? { period: `w${period}` } : { at }) };
    });
  });

const systems: SystemName[] = ['glicko2', 'teamrank', 'elo'];
const voidSet = (matches: Match[]) => fc.subarray([...matches.map((m) => m.id!), 'missing-id']);

function ratingsOf(system: ReturnType<typeof createSystem>, matches: readonly Match[]): MatchRating[] {
  const out: MatchRating[] = [];
  const run = new Replay(system);
  for (const match of matches) run.push(match, (rating) => out.push(rating));
  run.finish((rating) => out.push(rating));
  return out;
}

describe('voiding matches (property tests over the replay)', () => {
  for (const name of systems) {
    const system = createSystem(name);
    it(`${name}: replaying without voided matches equals replaying the filtered log; voiding twice equals once; voids compose`, () => {
      fc.assert(
        fc.property(
          log.chain((matches) => fc.tuple(fc.constant(matches), voidSet(matches), voidSet(matches))),
          ([matches, first, second]) => {
            const a = new Set(first);
            const expected = replay(
              system,
              matches.filter((m) => !a.has(m.id!)),
            );
            expect(replayWithout(system, matches, first)).toEqual(expected);
            const plan = voidPlan(matches, first);
            expect(plan.missing).toEqual(first.includes('missing-id') ? ['missing-id'] : []);
            // Twice = once: the voided log has nothing left to void.
            expect(replayWithout(system, plan.kept, first)).toEqual(expected);
            expect(voidPlan(plan.kept, first).voided).toEqual([]);
            // A then B = A ∪ B.
            expect(replayWithout(system, plan.kept, second)).toEqual(replayWithout(system, matches, [...first, ...second]));
          },
        ),
        { numRuns: 120 },
      );
    });

    it(`${name}: matches before restartAt rate exactly as before the void, so a replay may resume there`, () => {
      fc.assert(
        fc.property(
          log.chain((matches) => fc.tuple(fc.constant(matches), voidSet(matches))),
          ([matches, voided]) => {
            const plan = voidPlan(matches, voided);
            const before = ratingsOf(system, matches);
            const after = ratingsOf(system, plan.kept);
            const byId = (ratings: MatchRating[], id: string) => ratings.find((r) => r.matchId === id);
            for (const match of plan.kept.slice(0, plan.restartAt)) expect(byId(after, match.id!)).toEqual(byId(before, match.id!));
            // Resuming: the original log's prefix, then the kept suffix, is the voided replay.
            const resumed = new Replay(system);
            for (const match of matches.slice(0, plan.restartAt)) resumed.push(match);
            for (const match of plan.kept.slice(plan.restartAt)) resumed.push(match);
            expect(resumed.finish()).toEqual(replay(system, plan.kept));
          },
        ),
        { numRuns: 120 },
      );
    });
  }

  it("restartAt is the start of the voided match's rating period", () => {
    const m = (id: string, period?: string): Match => ({
      id,
      ...(period ? { period } : {}),
      teams: [
        { players: [{ id: 'a' }], rank: 1 },
        { players: [{ id: 'b' }], rank: 2 },
      ],
    });
    expect(voidPlan([m('1', 'w1'), m('2', 'w2'), m('3', 'w2'), m('4', 'w2')], ['3']).restartAt).toBe(1);
    expect(voidPlan([m('1'), m('2'), m('3')], ['2']).restartAt).toBe(1);
    expect(voidPlan([m('1'), m('2')], ['x'])).toEqual({ kept: [m('1'), m('2')], restartAt: 2, voided: [], missing: ['x'] });
  });
});
