/**
 * A whr ladder's freeze (a horizon) is run by the writer ahead of the match
 * whose day makes it, in slices with a turn of the event loop between them
 * (`LadderHistory.freezeAhead`): the loop turns during the freeze (counted,
 * not timed), and the history reaches, bit for bit, what adding the matches
 * alone reaches (where the freeze runs inside the match's prediction, in one
 * piece).
 */
import { describe, expect, it } from 'vitest';
import type { Match } from 'ladder-core/core/match.js';
import { Turns } from '../../src/service/turns.js';
import { FreezeAheadMismatchError, LadderHistory } from '../../src/service/whole-history.js';

const DAY = 86_400_000;

/** Turns that count the pauses asked of them. */
class CountingTurns extends Turns {
  pauses = 0;
  override async pause(): Promise<void> {
    this.pauses++;
    await super.pause();
  }
}

/** 40 days of 30 one-on-one matches among 24 players; every seventh reported two days late. */
function log(): Match[] {
  const out: Match[] = [];
  for (let i = 0; i < 1200; i++) {
    const day = Math.floor(i / 30) - (i % 7 === 6 && i >= 90 ? 2 : 0);
    out.push({
      id: `m${i}`,
      at: day * DAY + (i % 30) * 60_000,
      teams: [
        { players: [{ id: `p${(i * 5) % 24}` }], rank: 1 },
        { players: [{ id: `p${(i * 5 + 1 + (i % 11)) % 24}` }], rank: i % 9 === 0 ? 1 : 2 },
      ],
    });
  }
  return out;
}

describe('a whr freeze run ahead, in slices', () => {
  for (const inference of ['ep', 'map'] as const) {
    it(`${inference}: the event loop turns during each freeze, and the states are those of the matches added alone`, async () => {
      const options = { horizon: 12, freezeLag: 0, inference };
      const alone = new LadderHistory('whr', options, 0);
      const ahead = new LadderHistory('whr', options, 0);
      const matches = log();
      let turnsDuringFreezes = 0;
      let freezes = 0;
      for (let seq = 1; seq <= matches.length; seq++) {
        const match = matches[seq - 1]!;
        alone.predict(match);
        alone.add(seq, match);
        let turned = 0;
        let ticking = true;
        const tick = (): void => {
          if (!ticking) return;
          turned++;
          setImmediate(tick);
        };
        setImmediate(tick);
        const before = ahead.freeze()?.past.day;
        // Slices of 0 ms: a turn after every step of the freeze.
        await ahead.freezeAhead(match, new Turns(0));
        ticking = false;
        if (ahead.freeze()?.past.day !== before) {
          freezes++;
          turnsDuringFreezes += turned;
          expect(turned).toBeGreaterThan(1);
        }
        ahead.predict(match);
        ahead.add(seq, match);
      }
      // Freeze points every 3 days from day 12 on.
      expect(freezes).toBeGreaterThan(5);
      expect(turnsDuringFreezes).toBeGreaterThan(freezes);
      expect(ahead.freeze()).toEqual(alone.freeze());
      expect(new Map(ahead.states)).toEqual(new Map(alone.states));
    });
  }
});

describe('a whr freeze run before the lock (freezeBeforeLock)', () => {
  /** A history fed the log up to the first match whose day makes a freeze; that match's index. */
  function upToFreeze(): { history: LadderHistory; matches: Match[]; at: number } {
    const matches = log();
    const probe = new LadderHistory('whr', { horizon: 12 }, 0);
    const history = new LadderHistory('whr', { horizon: 12 }, 0);
    for (let i = 0; i < matches.length; i++) {
      const before = probe.freeze()?.past.day;
      probe.add(i + 1, matches[i]!);
      if (probe.freeze()?.past.day !== before) return { history, matches, at: i };
      history.add(i + 1, matches[i]!);
    }
    throw new Error('the log never froze');
  }

  it('binds the history to its match: that match next gives the states of adding it alone', async () => {
    const { history, matches, at } = upToFreeze();
    const alone = new LadderHistory('whr', { horizon: 12 }, 0);
    for (let i = 0; i <= at; i++) alone.add(i + 1, matches[i]!);
    expect(await history.freezeBeforeLock(matches[at]!, new Turns(0))).toBe(true);
    expect(history.freezeAheadPending).toBe(true);
    history.add(at + 1, matches[at]!);
    expect(history.freezeAheadPending).toBe(false);
    expect(history.freeze()).toEqual(alone.freeze());
    expect(new Map(history.states)).toEqual(new Map(alone.states));
    // A match of the same day makes no second freeze.
    expect(await history.freezeBeforeLock(matches[at + 1]!, new Turns(0))).toBe(false);
  });

  it('breaks the history when another match comes first (another instance wrote, or the match was refused)', async () => {
    const { history, matches, at } = upToFreeze();
    expect(await history.freezeBeforeLock(matches[at]!, new Turns(0))).toBe(true);
    // The same match as another object (read back from the log) is another match too: only the one frozen for is known to be it.
    expect(() => history.add(at + 1, { ...matches[at]! })).toThrow(FreezeAheadMismatchError);
    expect(history.broken).toBe(true);
    expect(() => history.add(at + 2, matches[at + 1]!)).toThrow(/derive it again/);
  });

  it('runs no freeze for a match the horizon refuses (dated on or before the last freeze)', async () => {
    const { history, matches, at } = upToFreeze();
    history.add(at + 1, matches[at]!);
    const frozenDay = history.freeze()!.past.day;
    const old: Match = { ...matches[0]!, id: 'old', at: frozenDay * DAY };
    expect(await history.freezeBeforeLock(old, new Turns(0))).toBe(false);
    expect(history.freezeAheadPending).toBe(false);
  });
});

describe("a whr day's close run before the lock (freezeBeforeLock without a freeze)", () => {
  // Index 150 is the first match of day 5 (30 a day): it closes day 4, whose 24 players and a slice of the cycle are
  // re-smoothed, more than one step of 16 timelines; no freeze point is near.
  const FIRST_OF_DAY = 150;

  function fedUpTo(options: Record<string, unknown>, count: number): LadderHistory {
    const history = new LadderHistory('whr', options, 0);
    const matches = log();
    for (let i = 0; i < count; i++) history.add(i + 1, matches[i]!);
    return history;
  }

  for (const options of [{}, { horizon: 12 }]) {
    it(`${JSON.stringify(options)}: in steps; that match, another of a later day or a voided one may come next, each reaching the states of adding alone`, async () => {
      const matches = log();
      const first = matches[FIRST_OF_DAY]!;
      const next = matches[FIRST_OF_DAY + 1]!;
      expect(Math.floor(first.at! / DAY)).toBe(5);
      expect(Math.floor(next.at! / DAY)).toBe(5);
      expect(Math.floor(matches[FIRST_OF_DAY - 1]!.at! / DAY)).toBe(4);
      // The match itself next.
      const ahead = fedUpTo(options, FIRST_OF_DAY);
      const turns = new CountingTurns(0);
      expect(await ahead.freezeBeforeLock(first, turns)).toBe(false);
      expect(turns.pauses).toBeGreaterThan(0);
      expect(ahead.freezeAheadPending).toBe(true);
      const step = ahead.add(FIRST_OF_DAY + 1, first)!;
      expect(ahead.freezeAheadPending).toBe(false);
      const alone = fedUpTo(options, FIRST_OF_DAY);
      const aloneStep = alone.add(FIRST_OF_DAY + 1, first)!;
      expect(new Map(ahead.states)).toEqual(new Map(alone.states));
      // The players the close moved are reported with the match's own, as when the match closes the day itself.
      expect(new Map(step.changed)).toEqual(new Map(aloneStep.changed));
      expect(step.changed.size).toBeGreaterThan(2);
      // Another instance's match of the same later day first, after a voided one.
      const raced = fedUpTo(options, FIRST_OF_DAY);
      await raced.freezeBeforeLock(first, new Turns(0));
      expect(raced.add(FIRST_OF_DAY + 1, { ...next, id: 'voided' }, true)).toBeNull();
      expect(raced.freezeAheadPending).toBe(true);
      raced.add(FIRST_OF_DAY + 2, next);
      raced.add(FIRST_OF_DAY + 3, first);
      const reference = fedUpTo(options, FIRST_OF_DAY);
      reference.add(FIRST_OF_DAY + 1, next);
      reference.add(FIRST_OF_DAY + 2, first);
      expect(new Map(raced.states)).toEqual(new Map(reference.states));
    });
  }

  it('breaks the history when a match of the closed day comes first (it would have come before the close)', async () => {
    const matches = log();
    const history = fedUpTo({}, FIRST_OF_DAY);
    await history.freezeBeforeLock(matches[FIRST_OF_DAY]!, new Turns(0));
    expect(() => history.add(FIRST_OF_DAY + 1, { ...matches[FIRST_OF_DAY]!, id: 'late', at: 4 * DAY })).toThrow(FreezeAheadMismatchError);
    expect(history.broken).toBe(true);
  });

  it('a derivation closes its days in steps too: the states of adding alone', async () => {
    // Without a horizon, a derivation's only steps are the closes of its days.
    const matches = log();
    const derived = new LadderHistory('whr', {}, 0);
    const turns = new CountingTurns(0);
    for (let i = 0; i < matches.length; i++) {
      await derived.freezeBefore(i + 1, matches[i]!, false, turns);
      derived.add(i + 1, matches[i]!);
    }
    expect(turns.pauses).toBeGreaterThan(30);
    expect(new Map(derived.states)).toEqual(new Map(fedUpTo({}, matches.length).states));
  });
});

describe("a derivation's freezes run in slices (freezeBefore)", () => {
  /** Every thirteenth match of the log voided. */
  const voidedAt = (seq: number): boolean => seq % 13 === 0;

  /** Counts the freezes the history's system runs ahead, in steps, and the steps. */
  function countAhead(history: LadderHistory): { freezes: number; steps: number } {
    const horizon = (history as unknown as { system: { horizon: { freezeAhead(at: number): Iterable<void> | undefined } } }).system.horizon;
    const freezeAhead = horizon.freezeAhead.bind(horizon);
    const count = { freezes: 0, steps: 0 };
    horizon.freezeAhead = (at) => {
      const steps = freezeAhead(at);
      if (steps === undefined) return undefined;
      count.freezes++;
      return (function* () {
        for (const step of steps) {
          count.steps++;
          yield step;
        }
      })();
    };
    return count;
  }

  const horizonOf = (history: LadderHistory) => (history as unknown as { system: { horizon: { freezes(): number; freezePending(): boolean } } }).system.horizon;
  const freezesOf = (history: LadderHistory): number => horizonOf(history).freezes();
  /** The freezes run ahead for a history's freezes: one each in place; with a lag, its start and its effect, and a pending one's start. */
  const aheadFor = (history: LadderHistory, lag: number): number => (lag === 0 ? freezesOf(history) : 2 * freezesOf(history) + (horizonOf(history).freezePending() ? 1 : 0));

  for (const [inference, freezeLag] of [
    ['ep', 0],
    ['map', 0],
    ['ep', 1],
    ['map', 1],
  ] as const) {
    it(`${inference}, freezeLag ${freezeLag}: every freeze of the log runs ahead in steps, none for a voided match, to the states of adding alone`, async () => {
      const options = { horizon: 12, inference, freezeLag };
      const matches = log();
      // A voided match dated 60 days ahead (a typo, then voided): the history never takes it in, so it makes no freeze.
      matches[519] = { ...matches[519]!, at: 60 * DAY };
      expect(voidedAt(520)).toBe(true);
      const alone = new LadderHistory('whr', options, 0);
      const derived = new LadderHistory('whr', options, 0);
      const ahead = countAhead(derived);
      let ran = 0;
      for (let seq = 1; seq <= matches.length; seq++) {
        const match = matches[seq - 1]!;
        alone.add(seq, match, voidedAt(seq));
        if (await derived.freezeBefore(seq, match, voidedAt(seq), new Turns(0))) ran++;
        derived.add(seq, match, voidedAt(seq));
      }
      expect(freezesOf(alone)).toBeGreaterThan(5);
      // Each freeze ran ahead (none inside `add`), each in more than one step, and said so.
      expect(freezesOf(derived)).toBe(freezesOf(alone));
      expect(ahead.freezes).toBe(aheadFor(alone, freezeLag));
      expect(ran).toBe(ahead.freezes);
      expect(ahead.steps).toBeGreaterThan(ahead.freezes);
      expect(derived.freeze()).toEqual(alone.freeze());
      expect(new Map(derived.states)).toEqual(new Map(alone.states));
    });
  }

  it("runs none for a restored freeze's priors: a restart's derivation reaches the whole log's states", async () => {
    const matches = log();
    const alone = new LadderHistory('whr', { horizon: 12 }, 0);
    for (let seq = 1; seq <= 900; seq++) alone.add(seq, matches[seq - 1]!, voidedAt(seq));
    const stored = alone.freeze()!;
    const restored = new LadderHistory('whr', { horizon: 12 }, 0);
    expect(restored.restore(stored)).toBe(true);
    const ahead = countAhead(restored);
    for (let seq = stored.fromSeq; seq <= matches.length; seq++) {
      const match = matches[seq - 1]!;
      if (seq > 900) alone.add(seq, match, voidedAt(seq));
      await restored.freezeBefore(seq, match, voidedAt(seq), new Turns(0));
      restored.add(seq, match, voidedAt(seq));
    }
    // The freezes after the restored one, each run ahead; the matches of the priors (late ones before the trigger) run none.
    expect(ahead.freezes).toBeGreaterThan(0);
    expect(ahead.freezes).toBe(aheadFor(restored, 1));
    expect(restored.freeze()).toEqual(alone.freeze());
    expect(new Map(restored.states)).toEqual(new Map(alone.states));
  });

  it('a freeze stored under other options (one made before freezeSweeps, or with another value of it) does not fit: the history stays empty, to derive the whole log', () => {
    const matches = log();
    const alone = new LadderHistory('whr', { horizon: 12 }, 0);
    for (let seq = 1; seq <= 900; seq++) alone.add(seq, matches[seq - 1]!, voidedAt(seq));
    const stored = alone.freeze()!;
    expect(stored.options).toMatchObject({ freezeSweeps: 3 });
    const { freezeSweeps: _, ...before } = stored.options as Record<string, unknown>;
    for (const options of [before, { ...stored.options, freezeSweeps: 0 }]) {
      const fresh = new LadderHistory('whr', { horizon: 12 }, 0);
      expect(fresh.restore({ ...stored, options })).toBe(false);
      expect(fresh.states.size).toBe(0);
      expect(fresh.freeze()).toBeUndefined();
    }
    // The same options, as stored, fit.
    expect(new LadderHistory('whr', { horizon: 12 }, 0).restore(stored)).toBe(true);
  });
});

describe('a whr freeze rebuilt beside the history (the default freezeLag)', () => {
  for (const inference of ['ep', 'map'] as const) {
    it(`${inference}: the rebuild runs in slices between matches, so the day of effect finds nothing left; the states are those of the matches added alone`, async () => {
      const options = { horizon: 12, inference };
      const alone = new LadderHistory('whr', options, 0);
      const beside = new LadderHistory('whr', options, 0);
      // The same log without a rebuild between matches: its days of effect replay the whole window then.
      const unaided = new LadderHistory('whr', options, 0);
      const matches = log();
      const stepsAtEffect: number[] = [];
      const unaidedSteps: number[] = [];
      let rebuildSlices = 0;
      let rebuilding: Promise<void> = Promise.resolve();
      for (let seq = 1; seq <= matches.length; seq++) {
        const match = matches[seq - 1]!;
        alone.add(seq, match);
        const before = beside.freeze()?.past.day;
        const turns = new CountingTurns(0);
        await beside.freezeBeforeLock(match, turns);
        const unaidedTurns = new CountingTurns(0);
        await unaided.freezeBeforeLock(match, unaidedTurns);
        beside.add(seq, match);
        unaided.add(seq, match);
        if (beside.freeze()?.past.day !== before) {
          stepsAtEffect.push(turns.pauses);
          unaidedSteps.push(unaidedTurns.pauses);
        }
        // As the writer does after each batch: the rebuild goes on between requests, a slice a turn.
        if (beside.freezeRebuilding) {
          const slices = new CountingTurns(0);
          rebuilding = beside.rebuildFreeze(slices).then(() => {
            rebuildSlices += slices.pauses;
          });
          // A second call while one runs returns at once.
          await beside.rebuildFreeze(new Turns(0));
          await rebuilding;
        }
      }
      await rebuilding;
      // Freeze points every 3 days from day 12 on, each in effect a day after: the rebuild had caught up each time.
      expect(stepsAtEffect.length).toBeGreaterThan(5);
      // Left for the day of effect: the close of the rebuilt history's latest day, which only a match of a later day
      // may start (here a step of 16 timelines or two), against the replay's steps and that close without the rebuild.
      expect(stepsAtEffect.every((steps) => steps <= 2)).toBe(true);
      expect(unaidedSteps.every((steps) => steps > 4)).toBe(true);
      expect(rebuildSlices).toBeGreaterThan(stepsAtEffect.length);
      expect(beside.freeze()).toEqual(alone.freeze());
      expect(unaided.freeze()).toEqual(alone.freeze());
      expect(new Map(beside.states)).toEqual(new Map(alone.states));
      expect(new Map(unaided.states)).toEqual(new Map(alone.states));
    });
  }

  for (const inference of ['ep', 'map'] as const) {
    it(`${inference}: a ladder written without a pause gives the rebuild a share of each write (shareFreeze), enough to finish it within the lag`, async () => {
      const options = { horizon: 12, inference };
      const alone = new LadderHistory('whr', options, 0);
      const shared = new LadderHistory('whr', options, 0);
      const matches = log();
      const stepsAtEffect: number[] = [];
      let shares = 0;
      for (let seq = 1; seq <= matches.length; seq++) {
        const match = matches[seq - 1]!;
        alone.add(seq, match);
        const before = shared.freeze()?.past.day;
        // As the writer does before each batch; no rebuildFreeze between writes (the queue never empties).
        // A slice of 0 ms, every time: one group of games, about 480 a day here, against a live window of about 360.
        if (shared.shareFreeze(0, 0)) shares++;
        const turns = new CountingTurns(0);
        await shared.freezeBeforeLock(match, turns);
        shared.add(seq, match);
        if (shared.freeze()?.past.day !== before) stepsAtEffect.push(turns.pauses);
      }
      expect(stepsAtEffect.length).toBeGreaterThan(5);
      // Left for the day of effect: the close of the rebuilt history's latest day (a step or two here).
      expect(stepsAtEffect.every((steps) => steps <= 2)).toBe(true);
      expect(shares).toBeGreaterThan(5 * 20);
      expect(shared.freeze()).toEqual(alone.freeze());
      expect(new Map(shared.states)).toEqual(new Map(alone.states));
    });
  }

  it('a write gives no share when the rebuild ran within the interval, and none without a pending freeze', async () => {
    const matches = log();
    const history = new LadderHistory('whr', { horizon: 12 }, 0);
    let seq = 0;
    while (!history.freezeRebuilding) {
      expect(history.shareFreeze(0, 0)).toBe(false);
      history.add(++seq, matches[seq - 1]!);
    }
    // One slice between writes: a share within the next minute gives way; one with no interval runs.
    let slices = 0;
    await history.rebuildFreeze(new Turns(0), () => (slices++ === 0 ? 'run' : 'stop'));
    expect(history.shareFreeze(0, 60_000)).toBe(false);
    expect(history.shareFreeze(0, 0)).toBe(true);
    // A share counts as the rebuild having run.
    expect(history.shareFreeze(0, 60_000)).toBe(false);
    while (history.freezeRebuilding) {
      history.shareFreeze(1000, 0);
      history.add(++seq, matches[seq - 1]!);
    }
    expect(history.shareFreeze(0, 0)).toBe(false);
  });

  it('a rebuild stops when its history is no longer in use, and a failed one breaks the history (derived again)', async () => {
    const matches = log();
    const history = new LadderHistory('whr', { horizon: 12 }, 0);
    let seq = 0;
    while (!history.freezeRebuilding) history.add(++seq, matches[seq - 1]!);
    const turns = new CountingTurns(0);
    await history.rebuildFreeze(turns, () => 'stop');
    expect(turns.pauses).toBe(0);
    // Told to wait, it runs nothing until told to run.
    let told: 'run' | 'wait' | 'stop' = 'wait';
    const waiting = history.rebuildFreeze(turns, () => told);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(turns.pauses).toBe(0);
    told = 'stop';
    await waiting;
    const horizon = (history as unknown as { system: { horizon: { advanceFreeze(games?: number): boolean } } }).system.horizon;
    horizon.advanceFreeze = () => {
      throw new Error('a rebuild that fails');
    };
    await history.rebuildFreeze(new Turns(0));
    expect(history.broken).toBe(true);
  });
});
