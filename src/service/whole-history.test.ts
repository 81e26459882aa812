import { describe, expect, it, vi } from 'vitest';
import type { Match } from 'ladder-core/core/match.js';
import type { HistoryHorizon } from 'ladder-core/core/rating-system.js';
import { LadderHistory } from './whole-history.js';

const DAY = 86_400_000;

/** Match k of `day` among 12 players: one against one, the first named player winning. */
function match(day: number, k: number): Match {
  return {
    at: day * DAY + k * 60_000,
    teams: [
      { players: [{ id: `p${(k * 5 + day) % 12}` }], rank: 1 },
      { players: [{ id: `p${(k * 5 + day + 1 + (k % 11)) % 12}` }], rank: 2 },
    ],
  };
}

describe('LadderHistory with a horizon', () => {
  it('reads the last freeze by its day alone on every write: no prior is built per player for a match', () => {
    const history = new LadderHistory('whr', { horizon: 8 }, 1);
    let seq = 0;
    for (let day = 0; day < 30; day++) for (let k = 0; k < 4; k++) history.add(++seq, match(day, k));
    const horizon = (history as unknown as { system: { horizon: HistoryHorizon } }).system.horizon;
    const day = horizon.frozenDay()!;
    expect(day).toBe(horizon.frozen()!.day);
    const frozen = vi.spyOn(horizon, 'frozen');
    // A match of the frozen day is refused naming `at`; one of the day after is not.
    expect(() => history.refuseFrozen(match(day, 0))).toThrow(expect.objectContaining({ field: 'at' }));
    expect(() => history.refuseFrozen(match(day + 1, 0))).not.toThrow();
    // Writes of later days, the freeze they make included (its day is read to find its live matches).
    for (let late = 30; late < 36; late++) {
      for (let k = 0; k < 4; k++) {
        const next = match(late, k);
        history.refuseFrozen(next);
        history.add(++seq, next);
      }
    }
    expect(horizon.frozenDay()).toBeGreaterThan(day);
    expect(frozen).not.toHaveBeenCalled();
    // The freeze to store is still the whole one.
    expect(history.freeze()!.past.players.length).toBe(12);
    expect(frozen).toHaveBeenCalledTimes(1);
  });
});

/** A varied log: one against one, two against two and three-team free-for-alls, on three maps, over `days` days among 16 players. */
function variedLog(days: number): Match[] {
  const log: Match[] = [];
  for (let day = 0; day < days; day++) {
    for (let k = 0; k < 6; k++) {
      const p = (i: number) => ({ id: `p${(day * 7 + k * 5 + i * 3) % 16}` });
      const at = day * DAY + k * 60_000;
      const context = ['dust', 'ruins', 'harbour'][(day + k) % 3]!;
      if (k % 3 === 0)
        log.push({
          at,
          context,
          teams: [
            { players: [p(0)], rank: 1 },
            { players: [p(1)], rank: k % 2 === 0 ? 2 : 1 },
          ],
        });
      else if (k % 3 === 1)
        log.push({
          at,
          context,
          teams: [
            { players: [p(0), p(1)], score: 3 },
            { players: [p(2), p(4)], score: 1 },
          ],
        });
      else
        log.push({
          at,
          context,
          teams: [
            { players: [p(0)], rank: 2 },
            { players: [p(1)], rank: 1 },
            { players: [p(2)], rank: 3 },
          ],
        });
    }
  }
  return log;
}

describe('LadderHistory freeze window', () => {
  it("finds each freeze's live matches from runs of days: the first match, in log order, of a day after the freeze, late matches among them", () => {
    const history = new LadderHistory('whr', { horizon: 8 }, 1);
    const log: Match[] = [];
    for (let day = 0; day < 60; day++) {
      for (let k = 0; k < 4; k++) {
        // Every fifth match comes in one to two days late (dated before the day the log has reached), as a late report is.
        const late = (day * 4 + k) % 5 === 0 ? 1 + (k % 2) : 0;
        log.push({ ...match(day, k), at: Math.max(0, day - late) * DAY + k * 60_000 });
      }
    }
    let freezes = 0;
    log.forEach((body, i) => {
      const seq = i + 1;
      const lastDay = history.freeze()?.past.day;
      if (lastDay !== undefined && Math.floor(body.at! / DAY) <= lastDay) return;
      history.add(seq, body);
      const freeze = history.freeze();
      if (freeze === undefined || freeze.triggerSeq !== seq) return;
      freezes++;
      // By brute force: the first match of the log taken in, from the last freeze's live ones on, dated after the freeze's day.
      const live = log.findIndex((m, j) => j + 1 <= seq && Math.floor(m.at! / DAY) > freeze.past.day);
      expect(freeze.fromSeq).toBe(live + 1);
    });
    expect(freezes).toBeGreaterThan(5);
  });
});

describe('LadderHistory derivation', () => {
  it.each([
    ['no context', { horizon: 10 }],
    ['maps as context, joint', { horizon: 10, contextPriorVariance: 0.05, contextDailyVariance: 0.0001 }],
    ['maps as context, factorised', { horizon: 10, contextPriorVariance: 0.05, contextDailyVariance: 0.0001, contextInference: 'factorised' }],
    ['the mode, no horizon', { inference: 'map' }],
  ])('(%s) reaches the states of taking the log in match by match, bit for bit, building each state once at its end', (_, options) => {
    const log = variedLog(40);
    const voided = (seq: number) => seq % 17 === 0;
    const byMatch = new LadderHistory('whr', options, 1);
    log.forEach((body, i) => byMatch.add(i + 1, body, voided(i + 1)));
    const derived = new LadderHistory('whr', options, 1);
    const system = (derived as unknown as { system: { takeMoved: () => unknown } }).system;
    const takeMoved = vi.spyOn(system, 'takeMoved');
    derived.addStored(log.map((body, i) => ({ seq: i + 1, id: `m${i + 1}`, at: body.at!, round: null, body, voided: voided(i + 1) })));
    expect(takeMoved).toHaveBeenCalledTimes(1);
    expect(derived.lastSeq).toBe(log.length);
    expect(derived.counted).toBe(byMatch.counted);
    expect(new Map([...derived.states].sort())).toEqual(new Map([...byMatch.states].sort()));
    expect([...derived.states.keys()]).toEqual([...byMatch.states.keys()]);
    // Both go on alike: the next match's step, and the freeze to store.
    const next: Match = {
      at: 40 * DAY,
      context: 'dust',
      teams: [
        { players: [{ id: 'p3' }], rank: 1 },
        { players: [{ id: 'p9' }], rank: 2 },
      ],
    };
    expect(derived.add(log.length + 1, next)).toEqual(byMatch.add(log.length + 1, next));
    expect(derived.freeze()).toEqual(byMatch.freeze());
  });
});
