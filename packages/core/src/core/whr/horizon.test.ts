import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
      const alone = online(log, { ...base, horizon: 40 });
      const stepped = new WhrHistory({ ...base, horizon: 40 });
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
    });
  }

  it('a late match dated on or before the freeze day is frozen with the past, though its players folded it into later nodes', () => {
    // Horizon 8, step 2. a and b play days 0–9; on day 9, a late match of a and c dated day 1 folds into a's node of day 9.
    const history = new WhrHistory({ horizon: 8 });
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
