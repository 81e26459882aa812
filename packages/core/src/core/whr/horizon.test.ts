import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { Match } from '../match.js';
import { createWhrSystem, normalCdf, resolveWhrOptions, WHR, WHR_MAP_OPTIONS, WhrHistory } from './index.js';

const DAY = 86_400_000;
const phi = (z: number) => Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);

/** A one-on-one match on `day`: `score` 1 for a win of a, 0.5 a draw, 0 a loss. */
function duel(a: string, b: string, day: number, score = 1, home?: 0 | 1): Match {
  return {
    at: day * DAY + 3_600_000,
    ...(home !== undefined ? { home } : {}),
    teams: [
      { players: [{ id: a }], rank: score >= 0.5 ? 1 : 2 },
      { players: [{ id: b }], rank: score <= 0.5 ? 1 : 2 },
    ],
  };
}

/** A deterministic random log: `days` days, `perDay` matches a day among `players` players, a few draws, teams of two and free-for-alls, home sides. */
function randomLog(seed: number, days: number, perDay: number, players: number, mixed = true): Match[] {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const strength = Array.from({ length: players }, () => 2 * next() - 1);
  const pick = (): number => Math.floor(next() * players);
  const log: Match[] = [];
  for (let day = 0; day < days; day++) {
    for (let k = 0; k < perDay; k++) {
      const kind = mixed ? next() : 0;
      if (kind < 0.8) {
        const a = pick();
        let b = pick();
        if (b === a) b = (a + 1) % players;
        const p = 1 / (1 + Math.exp(strength[b]! - strength[a]!));
        const u = next();
        const score = u < 0.05 ? 0.5 : u < 0.05 + 0.95 * p ? 1 : 0;
        log.push(duel(`p${a}`, `p${b}`, day, score, next() < 0.3 ? (next() < 0.5 ? 0 : 1) : undefined));
      } else if (kind < 0.9) {
        const ids = new Set<number>();
        while (ids.size < 4) ids.add(pick());
        const [a, b, c, d] = [...ids];
        log.push({
          at: day * DAY,
          teams: [
            { players: [{ id: `p${a}` }, { id: `p${b}` }], rank: next() < 0.5 ? 1 : 2 },
            { players: [{ id: `p${c}` }, { id: `p${d}` }], rank: 1 },
          ],
        });
      } else {
        const ids = new Set<number>();
        while (ids.size < 3) ids.add(pick());
        const ranks = [1 + Math.floor(next() * 3), 1 + Math.floor(next() * 3), 1 + Math.floor(next() * 3)];
        log.push({ at: day * DAY, ...(next() < 0.3 ? { home: 2 } : {}), teams: [...ids].map((id, t) => ({ players: [{ id: `p${id}` }], rank: ranks[t]! })) });
      }
    }
  }
  return log;
}

function online(log: readonly Match[], options: ConstructorParameters<typeof WhrHistory>[0], homeOffset = 0.1): WhrHistory {
  const history = new WhrHistory(options);
  for (const match of log) history.addMatch(match, homeOffset);
  return history;
}

function estimates(history: WhrHistory): Map<string, unknown> {
  return new Map(history.playerIds().map((id) => [id, history.estimate(id)]));
}

describe('WhrHistory: per-player priors', () => {
  it('a player known only by a frozen past reports it: estimate (μ, σ²) on the freeze day, skill drifted after it', () => {
    const history = new WhrHistory();
    history.restoreFrozen({ day: 10, players: [{ id: 'a', mean: 0.3, variance: 0.2, matches: 7, lastAt: 10 * DAY }] });
    expect(history.estimate('a')).toEqual({ mean: 0.3, variance: 0.2, day: 10, matches: 7, lastAt: 10 * DAY });
    const out = new Float64Array(2);
    history.skillAt('a', 15, out);
    // Drift w² per day over 5 days (the default w² = 0.001331).
    expect(out[0]).toBe(0.3);
    expect(out[1]).toBeCloseTo(0.2 + 5 * 0.001331, 15);
  });

  it('EP with one probit game honours the prior: exact Gaussian–probit moment matching, worked by hand', () => {
    // One game between a (prior N(μ, σa²) on day 0, the game on day 4) and b (N(0, σ0²)): with a single
    // factor, EP is exact moment matching (Minka 2001): z = m/√(1 + v), m = μ, v = σa² + 4w² + σ0²,
    // the mean of a moves by (σa² + 4w²) φ(z)/(Φ(z)√(1 + v)), and its variance shrinks by
    // (σa² + 4w²)² λ(λ + z)/(1 + v), λ = φ(z)/Φ(z).
    const mu = 0.4;
    const va = 0.3;
    const w2 = 0.01;
    const v0 = 0.5;
    const history = new WhrHistory({ inference: 'ep', link: 'probit', priorVariance: v0, dailyVariance: w2 });
    history.restoreFrozen({ day: 0, players: [{ id: 'a', mean: mu, variance: va, matches: 0 }] });
    history.addMatch(duel('a', 'b', 4));
    history.converge(1e-14, 50);
    const vaDay = va + 4 * w2;
    const v = vaDay + v0;
    const z = mu / Math.sqrt(1 + v);
    const lambda = phi(z) / normalCdf(z);
    const a = history.estimate('a')!;
    expect(a.mean).toBeCloseTo(mu + (vaDay * lambda) / Math.sqrt(1 + v), 12);
    expect(a.variance).toBeCloseTo(vaDay - (vaDay * vaDay * lambda * (lambda + z)) / (1 + v), 12);
    const b = history.estimate('b')!;
    expect(b.mean).toBeCloseTo((-v0 * lambda) / Math.sqrt(1 + v), 12);
  });

  it('MAP honours the prior: the converged modes zero the gradient of the log-posterior, worked by hand', () => {
    // a (prior N(μ, σa²) on day 0) beats b (N(0, σ0²)) on day 0, logistic: at the mode,
    // 1 − σ(ra − rb) − (ra − μ)/σa² = 0 and −(1 − σ(ra − rb)) − rb/σ0² = 0.
    const mu = -0.7;
    const va = 0.25;
    const history = new WhrHistory({ ...WHR_MAP_OPTIONS });
    history.restoreFrozen({ day: 0, players: [{ id: 'a', mean: mu, variance: va, matches: 3 }] });
    history.addMatch(duel('a', 'b', 0));
    history.converge(1e-14, 500);
    const ra = history.estimate('a')!.mean;
    const rb = history.estimate('b')!.mean;
    const q = 1 / (1 + Math.exp(rb - ra));
    expect(1 - q - (ra - mu) / va).toBeCloseTo(0, 10);
    expect(-(1 - q) - rb / 0.6).toBeCloseTo(0, 10);
    // The mode is pulled towards μ, below where the default prior would leave it.
    expect(ra).toBeLessThan(0);
    expect(history.estimate('a')!.matches).toBe(4);
  });

  for (const inference of ['ep', 'map'] as const) {
    it(`${inference}: a prior equal to the default gives bit-identical results (incremental and converged)`, () => {
      // Every player's first match on day 0, the prior's day (no drift to the first node).
      const log = [...Array.from({ length: 5 }, (_, i) => duel(`p${2 * i}`, `p${2 * i + 1}`, 0)), ...randomLog(7, 30, 6, 10)];
      const options = inference === 'map' ? { ...WHR_MAP_OPTIONS } : {};
      const plain = online(log, options);
      const primed = new WhrHistory(options);
      // Every player primed with N(0, σ0²) on day 0, when the log starts, in the order the plain history met them.
      primed.restoreFrozen({ day: 0, players: plain.playerIds().map((id) => ({ id, mean: 0, variance: primed.options.priorVariance, matches: 0 })) });
      for (const match of log) primed.addMatch(match, 0.1);
      for (const id of plain.playerIds()) expect(primed.estimate(id), id).toEqual(plain.estimate(id));
      plain.converge(1e-10, 200);
      primed.converge(1e-10, 200);
      for (const id of plain.playerIds()) expect(primed.estimate(id), id).toEqual(plain.estimate(id));
    });
  }

  it('restoreFrozen names the bad field', () => {
    expect(() => new WhrHistory().restoreFrozen({ day: 3, players: [{ id: 'a', mean: 0, variance: 0, matches: 0 }] })).toThrow(/players\[0\]\.variance/);
    expect(() => new WhrHistory().restoreFrozen({ day: 3, players: [{ id: 'a', mean: Number.NaN, variance: 1, matches: 0 }] })).toThrow(/players\[0\]\.mean/);
    expect(() =>
      new WhrHistory().restoreFrozen({
        day: 3,
        players: [
          { id: 'a', mean: 0, variance: 1, matches: 0 },
          { id: 'a', mean: 0, variance: 1, matches: 0 },
        ],
      }),
    ).toThrow(/players\[1\]\.id/);
    const used = new WhrHistory();
    used.addMatch(duel('a', 'b', 0));
    expect(() => used.restoreFrozen({ day: 3, players: [] })).toThrow(/not empty/);
  });
});

describe('WhrHistory: horizon', () => {
  for (const inference of ['ep', 'map'] as const) {
    const base = inference === 'map' ? { ...WHR_MAP_OPTIONS } : {};

    it(`${inference}: a horizon longer than the log is bit-identical to none (online and rateLog)`, () => {
      const log = randomLog(11, 60, 5, 12);
      const plain = online(log, base);
      const long = online(log, { ...base, horizon: 61 });
      expect(long.freezes).toBe(0);
      expect(estimates(long)).toEqual(estimates(plain));
      const plainLog = WHR.rateLog!(log, resolveWhrOptions(base));
      const longLog = WHR.rateLog!(log, resolveWhrOptions({ ...base, horizon: 61 }));
      expect(longLog).toEqual(plainLog);
    });

    it(`${inference}: a freeze run ahead in steps, then the match, is bit-identical to the match alone (late matches included)`, () => {
      // One match in five reported one to four days late.
      const log = randomLog(7, 150, 6, 14).map((match, i) => (i % 5 === 3 ? { ...match, at: Math.max(0, match.at! - ((i % 4) + 1) * DAY) } : match));
      // Freezes in place (freezeLag 0; with a lag, below).
      const alone = online(log, { ...base, horizon: 40, freezeLag: 0 });
      const stepped = new WhrHistory({ ...base, horizon: 40, freezeLag: 0 });
      let ahead = 0;
      let steps = 0;
      for (const match of log) {
        const freeze = stepped.freezeAhead(stepped.dayOf(match.at));
        if (freeze !== undefined) {
          ahead++;
          for (const _ of freeze) steps++;
        }
        stepped.addMatch(match, 0.1);
      }
      // Freeze points every 10 days from day 40 on: each freeze ran ahead of the match whose day made it, in many steps.
      expect(ahead).toBe(alone.freezes);
      expect(ahead).toBeGreaterThan(5);
      expect(steps).toBeGreaterThan(ahead);
      expect(stepped.freezes).toBe(alone.freezes);
      expect(stepped.frozen()).toEqual(alone.frozen());
      expect(estimates(stepped)).toEqual(estimates(alone));
      // No freeze is due for a match of a day already reached, or before any point.
      expect(stepped.freezeAhead(stepped.dayOf(log.at(-1)!.at))).toBeUndefined();
      expect(new WhrHistory({ ...base, horizon: 40 }).freezeAhead(3)).toBeUndefined();
    });

    it(`${inference}: freezes every horizon/4 days; the nodes and games kept are the live window's`, () => {
      const log = randomLog(3, 200, 4, 15, false);
      const history = online(log, { ...base, horizon: 40 });
      // Freeze points 0, 10, 20, …: the first at day 40, the last at day 190 (point 150): 16 freezes.
      expect(history.freezeStep).toBe(10);
      expect(history.freezes).toBe(16);
      expect(history.frozen()!.day).toBe(150);
      expect(history.lastFrozenDay()).toBe(150);
      expect(new WhrHistory({ ...base, horizon: 40 }).lastFrozenDay()).toBeUndefined();
      // The games of days 151–199 only.
      expect(history.gamesCount).toBe(49 * 4);
      expect(history.playerCount).toBe(15);
      const whole = online(log, base);
      expect(whole.gamesCount).toBe(200 * 4);
      // The matches counted and the last match times survive the freezes.
      for (const id of whole.playerIds()) {
        expect(history.estimate(id)!.matches).toBe(whole.estimate(id)!.matches);
        expect(history.estimate(id)!.lastAt).toBe(whole.estimate(id)!.lastAt);
      }
    });

    it(`${inference}: a history restored from the last freeze and fed the matches after it is bit-identical to the live one`, () => {
      const log = randomLog(5, 150, 5, 12);
      const dayOf = (match: Match) => Math.floor(match.at! / DAY);
      const live = online(
        log.filter((match) => dayOf(match) < 100),
        { ...base, horizon: 30 },
      );
      const frozen = live.frozen()!;
      // Points every ⌈30/4⌉ = 8 days: the last by day 99, ⌊(99 − 30)/8⌋·8 = 64.
      expect(frozen.day).toBe(64);
      const restored = new WhrHistory({ ...base, horizon: 30 });
      restored.restoreFrozen(structuredClone(frozen));
      for (const match of log) if (dayOf(match) > frozen.day && dayOf(match) < 100) restored.addMatch(match, 0.1);
      expect(estimates(restored)).toEqual(estimates(live));
      // Both go on with days 100–149, freezing at the same points (72 … 112).
      for (const match of log) {
        if (dayOf(match) < 100) continue;
        live.addMatch(match, 0.1);
        restored.addMatch(match, 0.1);
      }
      expect(restored.freezes).toBe(6);
      expect(restored.frozen()).toEqual(live.frozen());
      expect(estimates(restored)).toEqual(estimates(live));
      // And a second replay of the whole log freezes at the same points to the same numbers.
      expect(estimates(online(log, { ...base, horizon: 30 }))).toEqual(estimates(live));
      expect(live.frozen()!.day).toBe(112);
    });
  }

  for (const inference of ['ep', 'map'] as const) {
    const base = inference === 'map' ? { ...WHR_MAP_OPTIONS } : {};

    it(`${inference}: with late matches (dated days before the latest), a restore from a freeze and the matches of days after it (then every later one) is bit-identical`, () => {
      // A fifth of the matches dated one to five days before the day they are added on: a late match's
      // players whose timelines have later nodes fold it into them, so the nodes' days are not the match's.
      const log = randomLog(23, 160, 5, 12).map((match, i) => ({ ...match, at: Math.max(0, match.at! - (i % 5 === 0 ? (1 + ((i % 7) % 5)) * DAY : 0)) }));
      const options = { ...base, horizon: 30 };
      const live = new WhrHistory(options);
      // The last freeze before day 120: its priors and the index of the match whose day made it.
      let frozen = live.frozen();
      let trigger = -1;
      log.forEach((match, i) => {
        const freezes = live.freezes;
        live.addMatch(structuredClone(match), 0.1);
        if (live.freezes !== freezes && match.at! < 120 * DAY) {
          frozen = structuredClone(live.frozen());
          trigger = i;
        }
      });
      expect(trigger).toBeGreaterThan(0);
      const restored = new WhrHistory(options);
      restored.restoreFrozen(frozen!);
      let late = 0;
      let latest = -Infinity;
      log.forEach((match, i) => {
        const lateOne = match.at! < latest - DAY;
        latest = Math.max(latest, match.at!);
        // Before the freeze's trigger, only the matches of days after the freeze are live; from it on, every one.
        if (i < trigger && restored.dayOf(match.at) <= frozen!.day) return;
        if (i < trigger && lateOne) late++;
        restored.addMatch(structuredClone(match), 0.1);
      });
      // Late matches among the live ones restored (the case a replay on the nodes' days would get wrong).
      expect(late).toBeGreaterThan(0);
      expect(estimates(restored)).toEqual(estimates(live));
      expect(restored.frozen()).toEqual(live.frozen());
      // The same through the system's horizon facet.
      const system = createWhrSystem({ ...base, horizon: 30 });
      expect(system.horizon).toBeDefined();
      expect(createWhrSystem(base).horizon).toBeUndefined();
      expect(system.horizon!.onOrBefore(frozen!.day * DAY + DAY - 1, frozen!.day)).toBe(true);
      expect(system.horizon!.onOrBefore((frozen!.day + 1) * DAY, frozen!.day)).toBe(false);
      // The day alone, as the writer asks it of every match: undefined before the first freeze, then the freeze's.
      expect(system.horizon!.frozenDay()).toBeUndefined();
      for (const match of log) system.rateMatch(structuredClone(match), new Map());
      expect(system.horizon!.frozenDay()).toBe(system.horizon!.frozen()!.day);
    });
  }

  it('a late match dated on or before the freeze day is frozen with the past, though its players folded it into later nodes', () => {
    // Horizon 8, step 2. a and b play days 0–9; on day 9, a late match of a and c dated day 1 folds into a's node of day 9.
    const history = new WhrHistory({ horizon: 8, freezeLag: 0 });
    for (let day = 0; day < 10; day++) history.addMatch(duel('a', 'b', day));
    history.addMatch(duel('a', 'c', 1));
    // Day 10 reaches point 2 + 8: frozen at 2. Live: the games of days 3–9 (a–b), not the late one of day 1.
    history.addMatch(duel('a', 'b', 10));
    expect(history.frozen()!.day).toBe(2);
    expect(history.gamesCount).toBe(7 + 1);
    // Its count survives the freeze in a's and c's frozen past.
    expect(history.estimate('a')!.matches).toBe(12);
    expect(history.estimate('c')!.matches).toBe(1);
  });

  it('rateLog honours the horizon: the whole log converged between freezes, close to the whole history', () => {
    const log = randomLog(13, 150, 5, 12);
    const whole = WHR.rateLog!(log, resolveWhrOptions({}));
    const bounded = WHR.rateLog!(log, resolveWhrOptions({ horizon: 40 }));
    expect([...bounded.keys()].sort()).toEqual([...whole.keys()].sort());
    let moved = 0;
    for (const [id, state] of whole) {
      expect(bounded.get(id)!.matches).toBe(state.matches);
      moved = Math.max(moved, Math.abs(bounded.get(id)!.rating - state.rating) / state.rd!);
    }
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(0.25);
  });

  it('the online hook honours the horizon (a freeze inside predict, before the prediction)', () => {
    const log = randomLog(17, 80, 4, 10, false);
    const hook = WHR.online!(resolveWhrOptions({ horizon: 20 }), 0);
    const history = online([], { horizon: 20 }, 0);
    for (const match of log) {
      hook.predict(match);
      hook.learn(match);
      history.prepare(match);
      history.addMatch(match);
    }
    expect(history.freezes).toBeGreaterThan(0);
    for (const id of history.playerIds()) expect(hook.known(id)).toBe(true);
  });

  it('memory follows the horizon, not the log: the nodes kept stay bounded as the log grows', () => {
    const short = online(randomLog(9, 100, 6, 20, false), { horizon: 20 });
    const long = online(randomLog(9, 400, 6, 20, false), { horizon: 20 });
    // At most horizon + step days of games: 25 × 6.
    expect(short.gamesCount).toBeLessThanOrEqual(25 * 6);
    expect(long.gamesCount).toBeLessThanOrEqual(25 * 6);
    expect(long.nodesCount).toBeLessThanOrEqual(25 * 12);
  });

  it('reserve: room made ahead changes no number, through freezes and matches of teams and free-for-alls, and the arrays are not grown while it lasts', () => {
    for (const base of [{}, { ...WHR_MAP_OPTIONS }]) {
      // Mixed matches (duels, teams of two, free-for-alls, home sides), a freeze every 10 days from day 40.
      const log = randomLog(5, 150, 6, 14);
      const plain = online(log, { ...base, horizon: 40 });
      const reserved = new WhrHistory({ ...base, horizon: 40 });
      reserved.reserve(2 * log.length);
      for (const match of log) reserved.addMatch(match, 0.1);
      expect(reserved.freezes).toBe(plain.freezes);
      expect(reserved.freezes).toBeGreaterThan(5);
      expect(reserved.frozen()).toEqual(plain.frozen());
      expect(estimates(reserved)).toEqual(estimates(plain));
    }
    // Duels only: room for them all, made once (a freeze in place keeps it; a freeze rebuilt beside the history,
    // freezeLag, takes the rebuilt history's arrays).
    const duels = randomLog(6, 50, 6, 14, false);
    const history = new WhrHistory({ horizon: 20, freezeLag: 0 });
    history.reserve(duels.length);
    const columns = ['nodeR', 'nodeP', 'entryGame', 'gameStart', 'gameDay', 'gameNodes', 'siteTau'];
    const arrays = () => columns.map((name) => (history as unknown as Record<string, unknown>)[name]);
    const before = arrays();
    for (const match of duels) history.addMatch(match);
    expect(history.freezes).toBeGreaterThan(0);
    arrays().forEach((array, i) => expect(array, columns[i]).toBe(before[i]));
  });

  it('property: on random logs, the estimates with a horizon stay close to those of the whole history', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 20, max: 60 }), (seed, horizon) => {
        const log = randomLog(seed, 120, 4, 8);
        const whole = online(log, {});
        const bounded = online(log, { horizon });
        expect(bounded.freezes).toBeGreaterThan(0);
        let largest = 0;
        for (const id of whole.playerIds()) {
          const a = whole.estimate(id)!;
          const b = bounded.estimate(id)!;
          largest = Math.max(largest, Math.abs(a.mean - b.mean) / Math.sqrt(a.variance));
          expect(b.variance).toBeGreaterThan(0);
        }
        // Within half a standard deviation of the whole history's estimate (forgetting the past
        // instead, every prior back to N(0, σ0²), moves the strongest players by 1 to 1.3 on these logs).
        expect(largest).toBeLessThan(0.5);
      }),
      { numRuns: 15 },
    );
  });
});

/** `log` with contexts: each match in one of `names`, or (about one in six) in none, deterministically from `seed`. */
function withContexts(log: readonly Match[], names: readonly string[], seed: number): Match[] {
  let s = seed >>> 0;
  return log.map((match) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const k = Math.floor((s / 2 ** 32) * (names.length + 0.2));
    return k < names.length ? { ...match, context: names[k]! } : { ...match };
  });
}

/** Each two-team match of `log` predicted online with a home offset, by a history with `options`, a window of 6 and a cycle of 3, which must freeze. */
function horizonPredictions(log: readonly Match[], options: ConstructorParameters<typeof WhrHistory>[0], homeOffset: number): number[] {
  const history = new WhrHistory({ ...options, window: 6, cycle: 3 });
  const out: number[] = [];
  for (const match of log) {
    history.prepare(match);
    if (match.teams.length === 2) out.push(history.predictMatch(match, homeOffset));
    history.addMatch(match, homeOffset);
  }
  expect(history.freezes).toBeGreaterThan(0);
  return out;
}

/** One match in five dated one to four days before the day it is added on (never before day 0). */
function lateOnes(log: readonly Match[]): Match[] {
  return log.map((match, i) => (i % 5 === 3 ? { ...match, at: Math.max(0, match.at! - ((i % 4) + 1) * DAY) } : match));
}

/** Every player's estimate and deviations (in the order the player first played in them). */
function contextStates(history: WhrHistory): Map<string, unknown> {
  return new Map(history.playerIds().map((id) => [id, { estimate: history.estimate(id), contexts: [...history.contextEstimates(id)] }]));
}

/** Predictions on `day` of each pair among the first six players, in each context and in none. */
function predictions(history: WhrHistory, names: readonly string[], day: number): number[] {
  const ids = history.playerIds().slice(0, 6);
  const out: number[] = [];
  for (const context of [...names, undefined]) {
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) {
        const match = duel(ids[i]!, ids[j]!, day);
        out.push(history.predictMatch(context === undefined ? match : { ...match, context }, 0.1));
      }
    }
  }
  return out;
}

/**
 * The restart: `log` fed online to one history, which freezes; another restored from its last freeze
 * made by a match dated before `cutDay` and fed the matches of days after the freeze that came before that
 * match, then every match from it on (as the service reads its log). Returns both and the late live matches restored.
 */
function restart(log: readonly Match[], options: ConstructorParameters<typeof WhrHistory>[0], cutDay: number) {
  const live = new WhrHistory(options);
  let frozen = live.frozen();
  let trigger = -1;
  log.forEach((match, i) => {
    const freezes = live.freezes;
    live.addMatch(structuredClone(match), 0.1);
    if (live.freezes !== freezes && match.at! < cutDay * DAY) {
      // Through JSON, as the service stores it.
      frozen = JSON.parse(JSON.stringify(live.frozen()));
      trigger = i;
    }
  });
  const restored = new WhrHistory(options);
  let late = 0;
  if (frozen !== undefined) {
    restored.restoreFrozen(frozen);
    let latest = -Infinity;
    log.forEach((match, i) => {
      const lateOne = match.at! < latest - DAY;
      latest = Math.max(latest, match.at!);
      if (i < trigger && restored.dayOf(match.at) <= frozen!.day) return;
      if (i < trigger && lateOne) late++;
      restored.addMatch(structuredClone(match), 0.1);
    });
  }
  return { live, restored, frozen, late };
}

/**
 * A restore from the last freeze before day 70 (through JSON) and a history whose freezes run ahead in steps both reach the
 * live history fed `log` to the last bit: states with deviations, the freeze itself, predictions in each context.
 */
function expectRestoreAndStepsBitIdentical(log: readonly Match[], options: ConstructorParameters<typeof WhrHistory>[0], names: readonly string[]): void {
  const { live, restored, frozen } = restart(log, options, 70);
  expect(frozen).toBeDefined();
  expect(contextStates(restored)).toEqual(contextStates(live));
  expect(restored.frozen()).toEqual(live.frozen());
  expect(predictions(restored, names, 95)).toEqual(predictions(live, names, 95));
  const stepped = new WhrHistory(options);
  for (const match of log) {
    const freeze = stepped.freezeAhead(stepped.dayOf(match.at));
    if (freeze !== undefined) for (const _ of freeze);
    stepped.addMatch(match, 0.1);
  }
  expect(stepped.frozen()).toEqual(live.frozen());
  expect(contextStates(stepped)).toEqual(contextStates(live));
}

describe('WhrHistory: horizon with context deviations', () => {
  const CONTEXTS = { contextPriorVariance: 0.2, contextDailyVariance: 0.002 };

  it('one probit game in a context, frozen: the skill and the deviation each exact moment matching, drifted by w² and wc², worked by hand', () => {
    // a beats b on day 0 in context x. In x each player's strength is general + deviation, both with coefficient 1,
    // so d = (xa + ya) − (xb + yb) ~ N(0, v), v = 2σ0² + 2σc². One factor: EP is exact moment matching (Minka 2001),
    // z = 0, λ = φ(0)/Φ(0) = 2φ(0): each of a's variables moves by its prior variance × λ/√(1 + v), b's by minus that,
    // and each variance s² shrinks to s² − s⁴λ²/(1 + v). (The library's λ comes from an erfc of relative error
    // below 1.2e-7, Numerical Recipes': hence 7 digits against the exact λ = √(2/π); the relations between the
    // frozen and the unfrozen numbers below are exact.)
    const [v0, w2, vc, wc2] = [0.5, 0.01, 0.2, 0.004];
    // Factorised: the frozen history predicts as the whole one (joint inference: below).
    const history = new WhrHistory({
      link: 'probit',
      priorVariance: v0,
      dailyVariance: w2,
      contextPriorVariance: vc,
      contextDailyVariance: wc2,
      horizon: 8,
      freezeLag: 0,
      contextInference: 'factorised',
    });
    history.addMatch({ ...duel('a', 'b', 0), context: 'x' });
    // A match of day 10 reaches point 2 + 8 (a step of 2): the history freezes at day 2, before the match.
    const next: Match = { ...duel('a', 'b', 10), context: 'x' };
    history.prepare(next);
    expect(history.freezes).toBe(1);
    expect(history.gamesCount).toBe(0);
    const v = 2 * v0 + 2 * vc;
    const lambda = Math.sqrt(2 / Math.PI);
    const moved = (s2: number) => (s2 * lambda) / Math.sqrt(1 + v);
    const shrunk = (s2: number) => s2 - (s2 * s2 * lambda * lambda) / (1 + v);
    const frozen = history.frozen()!;
    expect(frozen.day).toBe(2);
    expect(frozen.players.map((p) => p.id)).toEqual(['a', 'b']);
    const [a, b] = frozen.players;
    // On day 2: two days of drift, w² for the skill and wc² for the deviation.
    expect(a!.mean).toBeCloseTo(moved(v0), 7);
    expect(a!.variance).toBeCloseTo(shrunk(v0) + 2 * w2, 7);
    expect(b!.mean).toBeCloseTo(-moved(v0), 7);
    expect(a!.matches).toBe(1);
    expect(a!.lastAt).toBe(DAY + 3_600_000 - DAY);
    expect(a!.contexts).toHaveLength(1);
    const ax = a!.contexts![0]!;
    expect(ax.context).toBe('x');
    expect(ax.mean).toBeCloseTo(moved(vc), 7);
    expect(ax.variance).toBeCloseTo(shrunk(vc) + 2 * wc2, 7);
    expect(ax.matches).toBe(1);
    expect(ax.lastAt).toBe(3_600_000);
    expect(b!.contexts![0]!.mean).toBeCloseTo(-moved(vc), 7);
    // Exactly the unfrozen history's day-0 posterior, drifted two days.
    const whole = new WhrHistory({ link: 'probit', priorVariance: v0, dailyVariance: w2, contextPriorVariance: vc, contextDailyVariance: wc2, contextInference: 'factorised' });
    whole.addMatch({ ...duel('a', 'b', 0), context: 'x' });
    expect(a!.mean).toBe(whole.estimate('a')!.mean);
    expect(a!.variance).toBeCloseTo(whole.estimate('a')!.variance + 2 * w2, 15);
    expect(ax.mean).toBe(whole.contextEstimates('a').get('x')!.mean);
    expect(ax.variance).toBeCloseTo(whole.contextEstimates('a').get('x')!.variance + 2 * wc2, 15);
    // Known by their frozen pasts only: the deviation reports its prior on day 2 …
    expect(history.contextEstimates('a').get('x')).toEqual({ mean: ax.mean, variance: ax.variance, day: 2, matches: 1, lastAt: 3_600_000 });
    // … and a's skill in x on day 10 is both drifted 8 more days: the whole history's, ten days after the game.
    const out = new Float64Array(2);
    history.skillAt('a', 10, out, 'x');
    expect(out[0]).toBeCloseTo(moved(v0) + moved(vc), 7);
    expect(out[1]).toBeCloseTo(shrunk(v0) + 10 * w2 + shrunk(vc) + 10 * wc2, 7);
    whole.prepare(next);
    expect(history.predictMatch(next)).toBeCloseTo(whole.predictMatch(next), 12);
    // A context a has not played is its prior: N(0, σc²) on top of the frozen skill.
    history.skillAt('a', 10, out, 'y');
    expect(out[1]).toBeCloseTo(shrunk(v0) + 10 * w2 + vc, 7);
    // Joint inference: one game's marginals are the same numbers, and the freeze keeps the covariance of g and c too,
    // −v0·vc·λ²/(1 + v), as the deviation's `covariance`: the frozen skill in x has the whole history's variance,
    // smaller by 2·v0·vc·λ²/(1 + v) than the factorised one above.
    const joint = new WhrHistory({ link: 'probit', priorVariance: v0, dailyVariance: w2, contextPriorVariance: vc, contextDailyVariance: wc2, horizon: 8, freezeLag: 0 });
    joint.addMatch({ ...duel('a', 'b', 0), context: 'x' });
    joint.prepare(next);
    const jointA = joint.frozen()!.players[0]!;
    for (const [got, want] of [
      [jointA.mean, a!.mean],
      [jointA.variance, a!.variance],
      [jointA.contexts![0]!.mean, ax.mean],
      [jointA.contexts![0]!.variance, ax.variance],
    ]) {
      expect(got).toBeCloseTo(want!, 12);
    }
    const wholeJoint = new WhrHistory({ link: 'probit', priorVariance: v0, dailyVariance: w2, contextPriorVariance: vc, contextDailyVariance: wc2 });
    wholeJoint.addMatch({ ...duel('a', 'b', 0), context: 'x' });
    const covariance = (-v0 * vc * lambda * lambda) / (1 + v);
    expect(wholeJoint.contextEstimates('a').get('x')!.covariance).toBeCloseTo(covariance, 7);
    expect(jointA.contexts![0]!.covariance).toHaveLength(1);
    expect(jointA.contexts![0]!.covariance![0]).toBeCloseTo(covariance, 7);
    joint.skillAt('a', 10, out, 'x');
    expect(out[1]).toBeCloseTo(shrunk(v0) + 10 * w2 + shrunk(vc) + 10 * wc2 + 2 * covariance, 7);
    wholeJoint.prepare(next);
    expect(joint.predictMatch(next)).toBeCloseTo(wholeJoint.predictMatch(next), 12);
    // A restore from the freeze reads the covariance back: the same prediction.
    const restored = new WhrHistory({ link: 'probit', priorVariance: v0, dailyVariance: w2, contextPriorVariance: vc, contextDailyVariance: wc2, horizon: 8, freezeLag: 0 });
    restored.restoreFrozen(JSON.parse(JSON.stringify(joint.frozen())));
    expect(restored.predictMatch(next)).toBe(joint.predictMatch(next));
  });

  it('the replay keeps each live game’s context (duels, teams of two, a free-for-all): counts survive, and a restore from the freeze is bit-identical', () => {
    // Horizon 8, step 2: a and b play days 0–9 in x, y and no context; on day 5, a two-against-two in y and a
    // free-for-all of three in x. Day 8 freezes at 0, day 10 at 2: the games of days 3–9 are replayed.
    const log: Match[] = [];
    for (let day = 0; day < 10; day++) {
      const context = ['x', 'y', undefined][day % 3];
      log.push(context === undefined ? duel('a', 'b', day, day % 2) : { ...duel('a', 'b', day, day % 2), context });
      if (day === 5) {
        log.push({
          at: day * DAY,
          context: 'y',
          teams: [
            { players: [{ id: 'a' }, { id: 'c' }], rank: 2 },
            { players: [{ id: 'b' }, { id: 'd' }], rank: 1 },
          ],
        });
        log.push({
          at: day * DAY,
          context: 'x',
          home: 1,
          teams: [
            { players: [{ id: 'c' }], rank: 2 },
            { players: [{ id: 'a' }], rank: 1 },
            { players: [{ id: 'd' }], rank: 2 },
          ],
        });
      }
    }
    log.push({ ...duel('a', 'b', 10), context: 'x' });
    const options = { ...CONTEXTS, horizon: 8, freezeLag: 0 };
    const history = online(log, options);
    expect(history.freezes).toBe(2);
    expect(history.frozen()!.day).toBe(2);
    // Days 3–9 (seven duels, the team match and the free-for-all) and day 10's.
    expect(history.gamesCount).toBe(7 + 2 + 1);
    // The whole history's counts, per context too: x on days 0, 3, 6, 9, 10 and the free-for-all; y on 1, 4, 7 and the team match.
    const whole = online(log, CONTEXTS);
    for (const id of ['a', 'b', 'c', 'd']) {
      expect(history.estimate(id)!.matches, id).toBe(whole.estimate(id)!.matches);
      const counts = (h: WhrHistory) => [...h.contextEstimates(id)].map(([context, e]) => [context, e.matches, e.lastAt]);
      expect(counts(history), id).toEqual(counts(whole));
    }
    expect(history.contextEstimates('a').get('x')!.matches).toBe(6);
    expect(history.contextEstimates('a').get('y')!.matches).toBe(4);
    // c and d first played on day 5: no frozen past; a and b froze with x and y (played on days 0 and 1).
    expect(history.frozen()!.players.map((p) => [p.id, p.contexts?.map((c) => [c.context, c.matches])])).toEqual([
      [
        'a',
        [
          ['x', 1],
          ['y', 1],
        ],
      ],
      [
        'b',
        [
          ['x', 1],
          ['y', 1],
        ],
      ],
    ]);
    const { live, restored } = restart(log, options, 11);
    expect(contextStates(restored)).toEqual(contextStates(live));
    expect(predictions(restored, ['x', 'y'], 12)).toEqual(predictions(live, ['x', 'y'], 12));
  });

  it('a horizon longer than the log is bit-identical to none, deviations included', () => {
    const log = withContexts(randomLog(11, 60, 5, 12), ['x', 'y', 'z'], 4);
    const plain = online(log, CONTEXTS);
    const long = online(log, { ...CONTEXTS, horizon: 61 });
    expect(long.freezes).toBe(0);
    expect(contextStates(long)).toEqual(contextStates(plain));
    expect(predictions(long, ['x', 'y', 'z'], 62)).toEqual(predictions(plain, ['x', 'y', 'z'], 62));
  });

  it('a restore from a freeze and the matches after it is bit-identical, late matches in contexts included; so is a freeze run ahead in steps', () => {
    const names = ['x', 'y', 'z'];
    const log = lateOnes(withContexts(randomLog(23, 160, 5, 12), names, 9));
    const options = { ...CONTEXTS, horizon: 30 };
    const { live, restored, frozen, late } = restart(log, options, 120);
    expect(late).toBeGreaterThan(0);
    expect(frozen!.players.some((p) => (p.contexts?.length ?? 0) === 3)).toBe(true);
    expect(contextStates(restored)).toEqual(contextStates(live));
    expect(restored.frozen()).toEqual(live.frozen());
    expect(predictions(restored, names, 165)).toEqual(predictions(live, names, 165));
    // Run ahead in steps, each freeze then the match: the same history.
    const stepped = new WhrHistory(options);
    let steps = 0;
    for (const match of log) {
      const freeze = stepped.freezeAhead(stepped.dayOf(match.at));
      if (freeze !== undefined) for (const _ of freeze) steps++;
      stepped.addMatch(match, 0.1);
    }
    expect(steps).toBeGreaterThan(live.freezes);
    expect(stepped.freezes).toBe(live.freezes);
    expect(stepped.frozen()).toEqual(live.frozen());
    expect(contextStates(stepped)).toEqual(contextStates(live));
    // The rating system's states (each deviation an offset) from a restore through its horizon facet.
    const system = createWhrSystem(options);
    const again = createWhrSystem(options);
    let trigger = -1;
    let past: ReturnType<NonNullable<typeof system.horizon>['frozen']>;
    log.forEach((match, i) => {
      const freezes = system.horizon!.freezes();
      system.rateMatch(match, new Map());
      if (system.horizon!.freezes() !== freezes && match.at! < 100 * DAY) {
        past = JSON.parse(JSON.stringify(system.horizon!.frozen()));
        trigger = i;
      }
    });
    again.horizon!.restoreFrozen(past!);
    log.forEach((match, i) => {
      if (i >= trigger || !again.horizon!.onOrBefore(match.at!, past!.day)) again.rateMatch(match, new Map());
    });
    const states = system.states();
    expect([...states.values()].some((state) => Object.keys(state.contexts ?? {}).length === 3)).toBe(true);
    expect(again.states()).toEqual(states);
  });

  it('property: on random logs with contexts (1v1, teams, free-for-alls, late matches), a restore and a freeze in steps reach the live history to the last bit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 8, max: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.constantFrom('logistic', 'probit'),
        (seed, horizon, contexts, late, link) => {
          const names = ['x', 'y', 'z', 'w'].slice(0, contexts);
          let log = withContexts(randomLog(seed, 90, 4, 9), names, seed ^ 0x5bd1e995);
          if (late) log = lateOnes(log);
          const options = { ...CONTEXTS, horizon, link: link as 'logistic' | 'probit', window: 6, cycle: 3 };
          expectRestoreAndStepsBitIdentical(log, options, names);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("property (contextInference 'joint'): one context for every match with a horizon predicts as the same horizon without contexts at σ0² + σc², w² + wc²", () => {
    // The freeze keeps each player's joint state (the covariance of general skill and deviation with it), so the sum's
    // frozen prior is the summed model's frozen skill, and everything after follows it.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 8, max: 40 }), fc.boolean(), (seed, horizon, late) => {
        let log = randomLog(seed, 90, 4, 9).map((match): Match => ({ ...match, context: 'x' }));
        if (late) log = lateOnes(log);
        const predict = (options: ConstructorParameters<typeof WhrHistory>[0]) => horizonPredictions(log, { ...options, horizon }, 0);
        const summed = predict({ priorVariance: 0.9, dailyVariance: 0.003 });
        const joint = predict({ priorVariance: 0.6, dailyVariance: 0.002, contextPriorVariance: 0.3, contextDailyVariance: 0.001 });
        for (let i = 0; i < summed.length; i++) expect(Math.abs(joint[i]! - summed[i]!)).toBeLessThan(1e-12);
      }),
      { numRuns: 20 },
    );
  });

  it('property: with (near) zero deviation variance, a horizon with contexts predicts as the same horizon without (to 1e-8)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 8, max: 40 }), fc.integer({ min: 1, max: 4 }), fc.boolean(), (seed, horizon, contexts, late) => {
        const names = ['x', 'y', 'z', 'w'].slice(0, contexts);
        let log = withContexts(randomLog(seed, 90, 4, 9), names, seed);
        if (late) log = lateOnes(log);
        const predict = (options: ConstructorParameters<typeof WhrHistory>[0]) => horizonPredictions(log, { ...options, horizon }, 0.1);
        const without = predict({});
        const tiny = predict({ contextPriorVariance: 1e-12, contextDailyVariance: 1e-14 });
        for (let i = 0; i < without.length; i++) expect(Math.abs(tiny[i]! - without[i]!)).toBeLessThan(1e-8);
      }),
      { numRuns: 25 },
    );
  });

  it('memory follows the horizon with contexts too: the nodes kept stay bounded as the log grows', () => {
    const names = ['x', 'y', 'z'];
    const short = online(withContexts(randomLog(9, 100, 6, 20, false), names, 1), { ...CONTEXTS, horizon: 20 });
    const long = online(withContexts(randomLog(9, 400, 6, 20, false), names, 1), { ...CONTEXTS, horizon: 20 });
    expect(short.gamesCount).toBeLessThanOrEqual(25 * 6);
    expect(long.gamesCount).toBeLessThanOrEqual(25 * 6);
    // Two timelines a player in a context: at most four nodes a game.
    expect(long.nodesCount).toBeLessThanOrEqual(25 * 6 * 4);
    expect(online(withContexts(randomLog(9, 400, 6, 20, false), names, 1), CONTEXTS).nodesCount).toBeGreaterThan(4 * 25 * 6 * 4);
  });

  it('jointly frozen deviations: covariances restore into the joint state (a prior-only deviation keeps its covariance); bad ones name the field', () => {
    // a: general N(0.1, 1), x N(0.2, 0.3) with covariance −0.2, y N(0, 0.25) with covariances 0.05 (general) and 0.01 (x).
    const frozen = {
      day: 3,
      players: [
        {
          id: 'a',
          mean: 0.1,
          variance: 1,
          matches: 4,
          contexts: [
            { context: 'x', mean: 0.2, variance: 0.3, matches: 2, covariance: [-0.2] },
            { context: 'y', mean: 0, variance: 0.25, matches: 2, covariance: [0.05, 0.01] },
          ],
        },
      ],
    };
    const history = new WhrHistory({ ...CONTEXTS, horizon: 20 });
    history.restoreFrozen(frozen);
    expect(history.frozen()).toEqual(frozen);
    // On day 3 in x: mean 0.3, variance 1 + 0.3 − 2 × 0.2 = 0.9.
    const out = new Float64Array(2);
    history.skillAt('a', 3, out, 'x');
    expect(out[0]).toBeCloseTo(0.3, 15);
    expect(out[1]).toBeCloseTo(0.9, 15);
    // A game in x moves y too, through their covariances, and y keeps a covariance with the general skill.
    history.addMatch({ ...duel('a', 'b', 4), context: 'x' });
    const y = history.contextEstimates('a').get('y')!;
    expect(y.mean).not.toBe(0);
    expect(y.covariance).not.toBe(0.05);
    // Factorised inference reads the marginals alone.
    const factorised = new WhrHistory({ ...CONTEXTS, horizon: 20, contextInference: 'factorised' });
    factorised.restoreFrozen(frozen);
    factorised.skillAt('a', 3, out, 'x');
    expect(out[1]).toBeCloseTo(1.3, 15);
    const bad = (contexts: object[]) => () =>
      new WhrHistory({ ...CONTEXTS, horizon: 20 }).restoreFrozen({ ...frozen, players: [{ ...frozen.players[0]!, contexts: contexts as never }] });
    const [x, yy] = frozen.players[0]!.contexts;
    expect(bad([{ ...x, covariance: [-0.2, 0] }, yy!])).toThrow(/players\[0\]\.contexts\[0\]\.covariance must be 1 finite/);
    expect(bad([x!, { ...yy, covariance: [0.05, Number.NaN] }])).toThrow(/players\[0\]\.contexts\[1\]\.covariance/);
    expect(bad([x!, { ...yy, covariance: undefined }])).toThrow(/players\[0\]\.contexts: a covariance for every context or for none/);
    expect(bad([{ ...x, covariance: [-0.9] }, yy!])).toThrow(/players\[0\]\.contexts\[\]\.covariance .*not positive definite/);
  });

  it('a freeze without context priors (stored before contexts, or a ladder without them) restores; context priors need context deviations; bad ones name the field', () => {
    const log = randomLog(5, 60, 5, 10);
    const plain = online(log, { horizon: 20 });
    const frozen = JSON.parse(JSON.stringify(plain.frozen()));
    expect(frozen.players.every((p: { contexts?: unknown }) => p.contexts === undefined)).toBe(true);
    const contextual = new WhrHistory({ ...CONTEXTS, horizon: 20 });
    contextual.restoreFrozen(frozen);
    expect(contextual.frozen()).toEqual(frozen);
    contextual.addMatch({ ...duel('p1', 'p2', 61), context: 'x' });
    expect(contextual.contextEstimates('p1').get('x')!.matches).toBe(1);
    const withPriors = { day: 3, players: [{ id: 'a', mean: 0, variance: 1, matches: 2, contexts: [{ context: 'x', mean: 0.1, variance: 0.2, matches: 1 }] }] };
    expect(() => new WhrHistory({ horizon: 20 }).restoreFrozen(withPriors)).toThrow(/players\[0\]\.contexts needs context deviations/);
    const bad = (change: object) => () =>
      new WhrHistory({ ...CONTEXTS, horizon: 20 }).restoreFrozen({
        ...withPriors,
        players: [{ ...withPriors.players[0]!, contexts: [{ ...withPriors.players[0]!.contexts[0]!, ...change }] }],
      });
    expect(bad({ variance: 0 })).toThrow(/players\[0\]\.contexts\[0\]\.variance/);
    expect(bad({ matches: -1 })).toThrow(/players\[0\]\.contexts\[0\]\.matches/);
    expect(bad({ context: 7 })).toThrow(/players\[0\]\.contexts\[0\]\.context/);
    const twice = { ...withPriors, players: [{ ...withPriors.players[0]!, contexts: [withPriors.players[0]!.contexts[0]!, withPriors.players[0]!.contexts[0]!] }] };
    expect(() => new WhrHistory({ ...CONTEXTS, horizon: 20 }).restoreFrozen(twice)).toThrow(/players\[0\]\.contexts\[1\]\.context x is repeated/);
    // A good one: the deviation is known by its prior.
    const restored = new WhrHistory({ ...CONTEXTS, horizon: 20 });
    restored.restoreFrozen(withPriors);
    expect(restored.contextEstimates('a').get('x')).toEqual({ mean: 0.1, variance: 0.2, day: 3, matches: 1, covariance: 0 });
    expect(restored.frozen()).toEqual(withPriors);
  });
});

describe('WhrHistory: horizon with the newcomer options (newcomerTrend, newcomerMean)', () => {
  it('newcomerTrend: a frozen past rises by the learning curve from the player’s first day, worked by hand', () => {
    // One probit game on day 0 between new players a and b (σ0² = 1): EP is exact moment matching, E[a] =
    // λ(0)/√3 = √(2/π)/√3 and Var[a] = 1 − 2/(3π). Horizon 8 (step 2): a game on day 13 freezes at day 4,
    // where a's skill is the filter at day 0 risen by a·τ·(1 − e^(−4/τ)) (t0 = 0) and drifted by 4w².
    const [a, tau, w2] = [0.01, 50, 0.002];
    const options = {
      inference: 'ep' as const,
      link: 'probit' as const,
      priorVariance: 1,
      dailyVariance: w2,
      newcomerTrend: a,
      newcomerTrendPeriods: tau,
      horizon: 8,
      freezeLag: 0,
    };
    const history = new WhrHistory(options);
    history.addMatch(duel('a', 'b', 0));
    // The posterior after the game (to the precision of the inverse Mills ratio's evaluation).
    const posterior = history.estimate('a')!;
    expect(posterior.mean).toBeCloseTo(Math.sqrt(2 / Math.PI) / Math.sqrt(3), 7);
    expect(posterior.variance).toBeCloseTo(1 - 2 / (3 * Math.PI), 7);
    history.addMatch(duel('c', 'd', 13));
    const frozen = history.frozen()!;
    expect(frozen.day).toBe(4);
    const rise = a * tau * (1 - Math.exp(-4 / tau));
    const fa = frozen.players.find((p) => p.id === 'a')!;
    expect(fa.mean).toBeCloseTo(posterior.mean + rise, 14);
    expect(fa.variance).toBeCloseTo(posterior.variance + 4 * w2, 14);
    expect(fa.firstDay).toBe(0);
    // Known only by the frozen past, a's skill on day 30 rises on along the same curve: a·τ·(e^(−4/τ) − e^(−30/τ)) more.
    const out = new Float64Array(2);
    history.skillAt('a', 30, out);
    expect(out[0]).toBeCloseTo(posterior.mean + a * tau * (1 - Math.exp(-30 / tau)), 14);
    expect(out[1]).toBeCloseTo(posterior.variance + 30 * w2, 14);
    // c and d entered on day 13: their curve starts there, not at the freeze.
    history.skillAt('c', 20, out);
    const c = history.estimate('c')!;
    expect(out[0]).toBeCloseTo(c.mean + a * tau * (1 - Math.exp(-7 / tau)), 12);
    // Without a first day the learning curve cannot go on: restoring names the field.
    const { firstDay: _, ...withoutFirstDay } = fa;
    expect(() => new WhrHistory(options).restoreFrozen({ day: 4, players: [withoutFirstDay] })).toThrow(/players\[0\]\.firstDay/);
  });

  it('newcomerMean: the entrants frozen with the past keep their first skills in the group’s mean, worked from the estimates', () => {
    // Horizon 8 (step 2). a, b and c enter on day 0 (a beats b, c beats a); a game of d and e on day 13 freezes at day 4.
    const options = { inference: 'ep' as const, newcomerMean: 'entrants' as const, horizon: 8, freezeLag: 0 };
    const history = new WhrHistory(options);
    history.addMatch(duel('a', 'b', 0));
    history.addMatch(duel('c', 'a', 0));
    // Each has one node (day 0): its mean is their first skill.
    const firsts = ['a', 'b', 'c'].map((id) => history.estimate(id)!.mean);
    history.addMatch(duel('d', 'e', 13));
    const frozen = history.frozen()!;
    expect(frozen.day).toBe(4);
    expect(frozen.entrants).toHaveLength(1);
    expect(frozen.entrants![0]!.group).toBe('');
    expect(frozen.entrants![0]!.count).toBe(3);
    expect(frozen.entrants![0]!.sum).toBeCloseTo(firsts[0]! + firsts[1]! + firsts[2]!, 14);
    // A newcomer after the freeze is predicted at the mean first skill of all five entrants: the frozen three, d and e.
    const out = new Float64Array(2);
    history.skillAt('f', 14, out);
    const live = ['d', 'e'].map((id) => history.estimate(id)!.mean);
    expect(out[0]).toBeCloseTo((firsts[0]! + firsts[1]! + firsts[2]! + live[0]! + live[1]!) / 5, 12);
    // The same after a restore from the freeze and the match after it.
    const restored = new WhrHistory(options);
    restored.restoreFrozen(JSON.parse(JSON.stringify(frozen)));
    restored.addMatch(duel('d', 'e', 13));
    const again = new Float64Array(2);
    restored.skillAt('f', 14, again);
    expect(again[0]).toBe(out[0]);
    expect(() => new WhrHistory(options).restoreFrozen({ day: 4, players: [] })).toThrow(/entrants must be an array/);
    expect(() => new WhrHistory(options).restoreFrozen({ day: 4, players: [], entrants: [{ group: '', sum: 0, count: -1 }] })).toThrow(/entrants\[0\]\.count/);
  });

  const NEWCOMERS = [
    { newcomerTrend: 0.01, newcomerTrendPeriods: 30 },
    { newcomerMean: 'entrants' as const },
    { newcomerMean: 'context' as const, contextPriorVariance: 0.2, contextDailyVariance: 0.002 },
    { newcomerTrend: 0.005, newcomerTrendPeriods: 60, newcomerMean: 'entrants' as const },
    // Entry groups by the match's context without context deviations: the freeze keeps each game's context to replay it.
    { newcomerTrend: 0.005, newcomerTrendPeriods: 60, newcomerMean: 'context' as const },
  ];

  it('a horizon longer than the log is bit-identical to none with the newcomer options', () => {
    const log = withContexts(randomLog(31, 60, 5, 12), ['x', 'y'], 7);
    for (const newcomers of NEWCOMERS) {
      const plain = online(log, newcomers);
      const long = online(log, { ...newcomers, horizon: 61 });
      expect(long.freezes).toBe(0);
      expect(contextStates(long)).toEqual(contextStates(plain));
      // rateLog (`ladder replay`) too; with a shorter horizon it freezes and stays near the whole log's estimates.
      expect(WHR.rateLog!(log, resolveWhrOptions({ ...newcomers, horizon: 61 }))).toEqual(WHR.rateLog!(log, resolveWhrOptions(newcomers)));
      const whole = WHR.rateLog!(log, resolveWhrOptions(newcomers));
      const bounded = WHR.rateLog!(log, resolveWhrOptions({ ...newcomers, horizon: 20 }));
      for (const [id, state] of whole) expect(Math.abs(bounded.get(id)!.rating - state.rating) / state.rd!).toBeLessThan(0.5);
    }
  });

  it('property: with the newcomer options, a restore from a freeze (through JSON) and a freeze in steps reach the live history to the last bit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 8, max: 40 }), fc.constantFrom(...NEWCOMERS), fc.boolean(), (seed, horizon, newcomers, late) => {
        const names = ['x', 'y', 'z'];
        // Players keep arriving: a new pool of players every 30 days.
        let log = withContexts(
          randomLog(seed, 90, 4, 9).map((match) => {
            const day = Math.floor(match.at! / DAY);
            return { ...match, teams: match.teams.map((team) => ({ ...team, players: team.players.map((p) => ({ id: `${p.id}-${Math.floor(day / 30)}` })) })) };
          }),
          names,
          seed ^ 0x2545f491,
        );
        if (late) log = lateOnes(log);
        const options = { ...newcomers, inference: 'ep' as const, horizon, window: 6, cycle: 3 };
        expectRestoreAndStepsBitIdentical(log, options, names);
      }),
      { numRuns: 36 },
    );
  });
});

describe('WhrHistory: a freeze replays without the cycle, then sweeps every timeline (freezeSweeps)', () => {
  interface Inside {
    players: { nodeLength: number }[];
    generalTimelines: number[];
    gameCount: number;
  }
  /** Each freeze's whole-timeline smooths of timelines of two nodes or more (with window 1, only the cycle makes them): the player, and the games held then. */
  function wholeSmoothsAtFreezes(
    log: readonly Match[],
    options: Parameters<typeof online>[1],
  ): { freezes: number; smooths: Array<Array<[number, number]>>; timelines: number[][] } {
    const proto = WhrHistory.prototype as unknown as { smooth(this: Inside, p: number, from: number): number };
    const original = proto.smooth;
    let recorded: Array<[number, number]> = [];
    const spy = vi.spyOn(proto, 'smooth').mockImplementation(function (this: Inside, p: number, from: number) {
      if (from === 0 && this.players[p]!.nodeLength > 1) recorded.push([p, this.gameCount]);
      return original.call(this, p, from);
    });
    const history = new WhrHistory(options);
    const smooths: Array<Array<[number, number]>> = [];
    const timelines: number[][] = [];
    try {
      for (const match of log) {
        recorded = [];
        const before = history.freezes;
        history.addMatch(match);
        if (history.freezes === before) continue;
        smooths.push(recorded);
        const inside = history as unknown as Inside;
        timelines.push(inside.generalTimelines.filter((p) => inside.players[p]!.nodeLength > 1));
      }
    } finally {
      spy.mockRestore();
    }
    return { freezes: history.freezes, smooths, timelines };
  }

  it('the replay runs no cycle; the first close after it smooths every timeline freezeSweeps times, from the first player, before the reaching match', () => {
    // 40 matches a day among 60 players over 40 days, a horizon of 12: freezes every 3 days from day 12 on.
    const log = randomLog(5, 40, 40, 60, false);
    for (const passes of [1, 2, 3]) {
      const { freezes, smooths, timelines } = wholeSmoothsAtFreezes(log, { horizon: 12, cycle: 4, window: 1, freezeLag: 0, freezeSweeps: passes });
      expect(freezes).toBeGreaterThan(5);
      smooths.forEach((inFreeze, k) => {
        // Every one after the replay: the games held are the replayed ones, the same for all (the reaching match comes after).
        expect(new Set(inFreeze.map(([, games]) => games)).size).toBe(1);
        // `passes` rounds over the players in order.
        const order = inFreeze.map(([p]) => p);
        expect(order).toEqual(Array.from({ length: passes }, () => timelines[k]!).flat());
      });
    }
  });

  it('freezeSweeps 0 replays with the cycle at each day it closes, as the history did; the states then differ', () => {
    const log = randomLog(5, 40, 40, 60, false);
    const { smooths } = wholeSmoothsAtFreezes(log, { horizon: 12, cycle: 4, window: 1, freezeLag: 0, freezeSweeps: 0 });
    expect(smooths.length).toBeGreaterThan(5);
    // A slice of the cycle at each replayed day's close: spread over the replay.
    for (const inFreeze of smooths) expect(new Set(inFreeze.map(([, games]) => games)).size).toBeGreaterThan(5);
    const swept = online(log, { horizon: 12, cycle: 4 });
    const cycled = online(log, { horizon: 12, cycle: 4, freezeSweeps: 0 });
    expect(swept.freezes).toBe(cycled.freezes);
    expect(estimates(swept)).not.toEqual(estimates(cycled));
    // Before the first freeze nothing differs.
    const early = log.filter((m) => (m.at ?? 0) < 12 * DAY);
    expect(estimates(online(early, { horizon: 12, cycle: 4 }))).toEqual(estimates(online(early, { horizon: 12, cycle: 4, freezeSweeps: 0 })));
  });

  it('without the cycle freezeSweeps changes nothing', () => {
    const log = randomLog(9, 30, 20, 40);
    expect(estimates(online(log, { horizon: 8, cycle: 0 }))).toEqual(estimates(online(log, { horizon: 8, cycle: 0, freezeSweeps: 0 })));
  });
});

describe('WhrHistory: the close of a day run ahead of its match (closeAhead)', () => {
  for (const options of [{}, { horizon: 12 }, { horizon: 12, freezeLag: 0 }, { inference: 'map' as const, cycle: 4 }]) {
    it(`${JSON.stringify(options)}: steps of a few timelines; then the match, or any of a later day, reaches what adding it alone reaches`, () => {
      const log = randomLog(13, 40, 40, 120);
      const ahead = new WhrHistory(options);
      const alone = new WhrHistory(options);
      const other = new WhrHistory(options);
      let closes = 0;
      let mostSteps = 0;
      let freezesInstead = 0;
      for (let i = 0; i < log.length; i++) {
        const match = log[i]!;
        const day = ahead.dayOf(match.at);
        const steps = ahead.closeAhead(day);
        if (steps === undefined) {
          // Nothing to close, or a freeze comes first (freezeAhead's work).
          if (day > ahead.dayOf(log[i - 1]?.at) && (ahead.freezeAhead(day) !== undefined || ahead.freezePending)) freezesInstead++;
        } else {
          expect(ahead.closeHolds(day)).toBe(true);
          // A match of the latest day may not follow the close: it would have come before it.
          expect(ahead.closeHolds(day - 1)).toBe(false);
          const count = [...steps].length;
          mostSteps = Math.max(mostSteps, count);
          closes++;
          // Another history closed ahead of the same day takes a different match of a later day first.
          if (i + 1 < log.length && other.dayOf(log[i + 1]!.at) === day) {
            const swapped = new WhrHistory(options);
            for (const m of log.slice(0, i)) swapped.addMatch(m, 0.1);
            for (const _ of swapped.closeAhead(day)!);
            swapped.addMatch(log[i + 1]!, 0.1);
            swapped.addMatch(match, 0.1);
            const reference = new WhrHistory(options);
            for (const m of [...log.slice(0, i), log[i + 1]!, match]) reference.addMatch(m, 0.1);
            if (closes <= 3) expect(estimates(swapped)).toEqual(estimates(reference));
          }
        }
        ahead.addMatch(match, 0.1);
        alone.addMatch(match, 0.1);
        other.addMatch(match, 0.1);
      }
      expect(closes).toBeGreaterThan(15);
      // A day's close: its ~70 players' windows and a slice of the cycle, 16 timelines a step.
      expect(mostSteps).toBeGreaterThan(3);
      if ('horizon' in options) expect(freezesInstead).toBeGreaterThan(0);
      expect(estimates(ahead)).toEqual(estimates(alone));
      expect(ahead.frozen()).toEqual(alone.frozen());
    });
  }
});

describe('WhrHistory: a freeze rebuilt beside the history (freezeLag)', () => {
  it('worked on a small log: the reaching match starts the rebuild, the first match a period later finds the freeze in effect', () => {
    // Horizon 8 (step 2): a and b play days 2–9 (the first day is 2, so point 0 has no past); a match of day 10
    // reaches point 2 + 8.
    const log = Array.from({ length: 8 }, (_, k) => duel('a', 'b', k + 2, k % 3 === 0 ? 0 : 1));
    const lagged = online(log, { horizon: 8 });
    const inPlace = online(log, { horizon: 8, freezeLag: 0 });
    const whole = online(log, {});
    expect(lagged.options.freezeLag).toBe(1);
    const reaching = duel('a', 'c', 10);
    // Predicted before it is taken in: the rebuild starts in `prepare`, and the prediction is still the whole history's.
    for (const history of [lagged, inPlace, whole]) history.prepare(reaching);
    expect(lagged.freezePending).toBe(true);
    expect(inPlace.freezes).toBe(1);
    expect(lagged.predictMatch(reaching)).toBe(whole.predictMatch(reaching));
    expect(inPlace.predictMatch(reaching)).not.toBe(whole.predictMatch(reaching));
    for (const history of [lagged, inPlace, whole]) history.addMatch(reaching, 0.1);
    // Not in effect yet: no freeze counted or stored, every game still held; a match dated on or before day 2 is refused already.
    expect(lagged.freezes).toBe(0);
    expect(lagged.frozen()).toBeUndefined();
    expect(lagged.lastFrozenDay()).toBeUndefined();
    expect(lagged.refusedThrough()).toBe(2);
    expect(inPlace.refusedThrough()).toBe(2);
    expect(lagged.gamesCount).toBe(9);
    expect(estimates(lagged)).toEqual(estimates(whole));
    // A slice of the rebuild at a time (7 live games, then the reaching match); then two more matches of day 10,
    // which the rebuild takes in as they come, one a slice.
    expect(lagged.advanceFreeze(3)).toBe(false);
    expect(lagged.advanceFreeze(1000)).toBe(true);
    for (const history of [lagged, inPlace, whole]) history.addMatch(duel('b', 'c', 10), 0.1);
    for (const history of [lagged, inPlace, whole]) history.addMatch(duel('c', 'a', 10), 0.1);
    expect(lagged.advanceFreeze(1)).toBe(false);
    expect(lagged.advanceFreeze(1)).toBe(true);
    // Day 11: in effect. The games of days 3–11 only, and every number the freeze in place gave.
    for (const history of [lagged, inPlace]) history.addMatch(duel('a', 'b', 11), 0.1);
    expect(lagged.freezePending).toBe(false);
    expect(lagged.freezes).toBe(1);
    expect(lagged.gamesCount).toBe(7 + 3 + 1);
    expect(lagged.frozen()).toEqual(inPlace.frozen());
    expect(lagged.frozen()!.day).toBe(2);
    expect(estimates(lagged)).toEqual(estimates(inPlace));
    expect(lagged.advanceFreeze()).toBe(true);
  });

  it('a rebuild closes each day it replays or takes in in steps of a few timelines, where addMatch closes a day in one piece; the result is the freeze in place', () => {
    // 40 matches a day among 120 players: a day's close smooths each of its ~70 players' windows, and a slice of the cycle.
    const log = randomLog(7, 40, 40, 120);
    const options = { horizon: 12, cycle: 4 };
    const lagged = new WhrHistory(options);
    const inPlace = new WhrHistory({ ...options, freezeLag: 0 });
    const smooth = vi.spyOn(WhrHistory.prototype as unknown as { smooth(p: number, from: number): number }, 'smooth');
    try {
      let mostInAStep = 0;
      let mostInAMatch = 0;
      let steps = 0;
      let compared = 0;
      for (const match of log) {
        const before = lagged.freezes;
        smooth.mockClear();
        const pending = lagged.freezePending;
        lagged.addMatch(match, 0.1);
        // Outside a day of effect (which puts the rest of the rebuild in place at once), a match of a new day closes the day before in one piece.
        if (lagged.freezes === before && !pending) mostInAMatch = Math.max(mostInAMatch, smooth.mock.calls.length);
        inPlace.addMatch(match, 0.1);
        for (let done = false; !done && lagged.freezePending; steps++) {
          smooth.mockClear();
          done = lagged.advanceFreeze(1);
          mostInAStep = Math.max(mostInAStep, smooth.mock.calls.length);
        }
        // Whenever no freeze is pending, every number is the freeze in place's.
        if (!lagged.freezePending && lagged.freezes > 0) {
          expect(lagged.frozen()).toEqual(inPlace.frozen());
          expect(estimates(lagged)).toEqual(estimates(inPlace));
          compared++;
        }
      }
      expect(lagged.freezes).toBeGreaterThan(5);
      expect(steps).toBeGreaterThan(1000);
      // A close step smooths at most 16 timelines; the step that ends a close also adds the next game, which smooths
      // its players' last nodes (two rounds) after refreshing them: at most 4 players here.
      expect(mostInAMatch).toBeGreaterThan(80);
      expect(mostInAStep).toBeLessThanOrEqual(15 + 4 * 4);
      expect(compared).toBeGreaterThan(100);
    } finally {
      smooth.mockRestore();
    }
  });

  it('freezeAhead: at a freeze point, steps that start the rebuild; at the day of effect, steps that bring it up to date; the history reads the same between them', () => {
    const log = randomLog(41, 120, 6, 14);
    const alone = online(log, { horizon: 40 });
    const stepped = new WhrHistory({ horizon: 40 });
    let starts = 0;
    let effects = 0;
    for (const match of log) {
      const day = stepped.dayOf(match.at);
      const pendingBefore = stepped.freezePending;
      const freeze = stepped.freezeAhead(day);
      if (freeze !== undefined) {
        const before = estimates(stepped);
        for (const _ of freeze) expect(stepped.estimate('p0')).toEqual(before.get('p0'));
        expect(estimates(stepped)).toEqual(before);
        if (pendingBefore) {
          // The rebuild was brought up to date.
          expect(stepped.advanceFreeze(1)).toBe(true);
          effects++;
        } else {
          // The rebuild was started, and the match will not start it again.
          expect(stepped.freezePending).toBe(true);
          expect(stepped.advanceFreeze(1)).toBe(false);
          starts++;
        }
      }
      const freezes = stepped.freezes;
      stepped.addMatch(match, 0.1);
      if (freeze !== undefined && !pendingBefore) expect(stepped.freezes).toBe(freezes);
    }
    expect(effects).toBeGreaterThan(5);
    expect(effects).toBe(stepped.freezes);
    expect(starts).toBe(effects + (stepped.freezePending ? 1 : 0));
    expect(stepped.frozen()).toEqual(alone.frozen());
    expect(estimates(stepped)).toEqual(estimates(alone));
  });

  it('property: whenever no freeze is pending the states are those of freezes in place, whatever slices ran, and every state that moved is reported', () => {
    const variants = [
      {},
      { ...WHR_MAP_OPTIONS },
      { contextPriorVariance: 0.2, contextDailyVariance: 0.002 },
      { contextPriorVariance: 0.2, contextDailyVariance: 0.002, contextInference: 'factorised' as const },
      { newcomerTrend: 0.005, newcomerTrendPeriods: 60, newcomerMean: 'context' as const },
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 10, max: 30 }),
        fc.constantFrom(1, 2, 3, 50),
        fc.constantFrom(...variants),
        fc.integer({ min: 0, max: 40 }),
        (seed, horizon, lag, variant, slice) => {
          const log = withContexts(lateOnes(randomLog(seed, 80, 4, 9)), ['x', 'y'], seed ^ 0x5bd1e995);
          const options = { ...variant, horizon, window: 6, cycle: 3 };
          const inPlace = new WhrHistory({ ...options, freezeLag: 0 });
          const lagged = new WhrHistory({ ...options, freezeLag: lag });
          let pending = 0;
          let compared = 0;
          for (const match of log) {
            const before = estimates(lagged);
            inPlace.addMatch(match, 0.1);
            lagged.addMatch(match, 0.1);
            // Every player whose estimate moved is among those the history reports (a writer stores those only).
            const moved = new Set(lagged.takeMoved());
            for (const [id, estimate] of estimates(lagged)) if (!moved.has(id)) expect(estimate, id).toEqual(before.get(id));
            if (lagged.freezePending) {
              pending++;
              if (slice > 0) lagged.advanceFreeze(slice);
            } else if (inPlace.freezes > 0) {
              compared++;
              expect(lagged.freezes).toBe(inPlace.freezes);
              expect(estimates(lagged)).toEqual(estimates(inPlace));
            }
          }
          expect(pending).toBeGreaterThan(0);
          // A lag as long as the step puts each freeze in effect at the next point, which starts the next one.
          if (lag < Math.ceil(horizon / 4)) expect(compared).toBeGreaterThan(0);
          // Put in effect now (addMatches settles a pending freeze first): the state of the freeze in place.
          lagged.addMatches([]);
          expect(lagged.freezes).toBe(inPlace.freezes);
          expect(lagged.frozen()).toEqual(inPlace.frozen());
          expect(contextStates(lagged)).toEqual(contextStates(inPlace));
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a rebuild never freezes itself: with a lag longer than the step, a freeze takes effect at the next freeze point', () => {
    // Horizon 20 (step 5), lag 50: each freeze takes effect when the next point is reached, which starts the next one.
    const log = randomLog(43, 100, 4, 10, false);
    const lagged = new WhrHistory({ horizon: 20, freezeLag: 50 });
    const inPlace = new WhrHistory({ horizon: 20, freezeLag: 0 });
    const frozenDays: number[] = [];
    for (const match of log) {
      const freezes = lagged.freezes;
      lagged.addMatch(match);
      inPlace.addMatch(match);
      if (lagged.freezes !== freezes) frozenDays.push(lagged.frozen()!.day);
      expect(lagged.freezes).toBeGreaterThanOrEqual(inPlace.freezes - 1);
    }
    // Points 0, 5, …, 75 (day 95 reaches 75): each in effect one step later, the last still pending.
    expect(frozenDays).toEqual(Array.from({ length: 15 }, (_, k) => 5 * k));
    expect(lagged.freezePending).toBe(true);
    expect(lagged.refusedThrough()).toBe(75);
  });
});
