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
