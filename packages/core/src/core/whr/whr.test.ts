import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../errors.js';
import type { Match } from '../match.js';
import { replay } from '../replay.js';
import { createSystem } from '../systems.js';
import { inverseMillsRatio, normalCdf, WHR_MAP_OPTIONS, WHR_SCALE, WhrHistory, whrWinProbability } from './index.js';

/** The cases below were worked for the mode's former defaults (two passes over a window of 32 a closed day, no cycle, σ0² 0.6, w² 0.0025); each option given overrides them. */
const MODE = WHR_MAP_OPTIONS;

const DAY = 86_400_000;
const sigma = (d: number) => 1 / (1 + Math.exp(-d));
const game = (winner: string, loser: string, day?: number): Match => ({
  ...(day !== undefined ? { at: day * DAY } : {}),
  teams: [
    { players: [{ id: winner }], rank: 1 },
    { players: [{ id: loser }], rank: 2 },
  ],
});

function history(matches: Match[], options: ConstructorParameters<typeof WhrHistory>[0] = {}): WhrHistory {
  const h = new WhrHistory({ ...MODE, ...options });
  for (const m of matches) h.addMatch(m);
  h.converge(1e-12, 5000);
  return h;
}

/** Random logs of teams, draws and several teams under both links: predictions in (0, 1), estimates finite with a positive variance, incremental and converged. */
function expectNoNaN(inference: 'map' | 'ep'): void {
  const matchArb = fc.record({
    gap: fc.integer({ min: 0, max: 40 }),
    teams: fc.array(fc.record({ players: fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 3 }), rank: fc.integer({ min: 1, max: 3 }) }), {
      minLength: 2,
      maxLength: 3,
    }),
  });
  fc.assert(
    fc.property(fc.array(matchArb, { minLength: 1, maxLength: 40 }), fc.constantFrom('logistic', 'probit'), fc.double({ min: 1e-5, max: 1, noNaN: true }), (raw, link, dv) => {
      let day = 0;
      const h = new WhrHistory({ ...MODE, inference, link: link as 'logistic' | 'probit', dailyVariance: dv, window: 3 });
      for (const r of raw) {
        day += r.gap;
        const match: Match = { at: day * DAY, teams: r.teams.map((t) => ({ players: t.players.map((p) => ({ id: `p${p}` })), rank: t.rank })) };
        if (match.teams.length === 2) {
          const p = h.predictMatch(match);
          expect(p).toBeGreaterThan(0);
          expect(p).toBeLessThan(1);
        }
        h.addMatch(match);
      }
      for (const id of h.playerIds()) {
        const e = h.estimate(id)!;
        expect(Number.isFinite(e.mean) && e.variance > 0 && Number.isFinite(e.variance)).toBe(true);
      }
      h.converge(1e-9, 50);
      for (const id of h.playerIds()) expect(Number.isFinite(h.estimate(id)!.mean) && h.estimate(id)!.variance > 0).toBe(true);
    }),
    { numRuns: 100 },
  );
}

describe('whr: hand-worked cases', () => {
  it('two players, one game: the MAP solves x = σ0² σ(−2x), by symmetry r_B = −r_A', () => {
    // Log-posterior: ln σ(a − b) − a²/2 − b²/2 (σ0² = 1). Setting the gradient
    // to zero: 1 − σ(a − b) = a and 1 − σ(a − b) = −b, so b = −a = −x with
    // x = σ(−2x). Bisection by hand on f(x) = σ(−2x) − x: f(0.337) = +6.1e-4,
    // f(0.3375) = −1.2e-4, … x = 0.33741580717.
    const h = history([game('a', 'b', 0)], { priorVariance: 1 });
    const a = h.estimate('a')!;
    const b = h.estimate('b')!;
    expect(a.mean).toBeCloseTo(0.3374158071711996, 10);
    expect(b.mean).toBeCloseTo(-0.3374158071711996, 10);
    expect(a.mean).toBeCloseTo(sigma(-2 * a.mean), 12);
    // Laplace variance of a, b held fixed (WHR's per-player Hessian): 1/(1 + h), h = p(1 − p).
    const p = sigma(2 * a.mean);
    expect(a.variance).toBeCloseTo(1 / (1 + p * (1 - p)), 10);
  });

  it('a player with two days of games and the Wiener prior', () => {
    // a beats b on day 0, a beats c on day 1; σ0² = 1, w² = 1 per day. The MAP solves
    //   (1 − σ(a0 − b)) − a0 − (a0 − a1) = 0,   (1 − σ(a1 − c)) − (a1 − a0) = 0,
    //   −(1 − σ(a0 − b)) − b = 0,               −(1 − σ(a1 − c)) − c = 0,
    // solved independently by gradient ascent: a0 0.55472989, a1 0.81074834, b −0.29871145, c −0.25601844.
    const h = history([game('a', 'b', 0), game('a', 'c', 1)], { priorVariance: 1, dailyVariance: 1 });
    const [a0, a1] = h.timeline('a').map((n) => n.mean) as [number, number];
    expect(h.timeline('a').map((n) => n.day)).toEqual([0, 1]);
    expect(a0).toBeCloseTo(0.55472989, 7);
    expect(a1).toBeCloseTo(0.81074834, 7);
    expect(h.estimate('b')!.mean).toBeCloseTo(-0.29871145, 7);
    expect(h.estimate('c')!.mean).toBeCloseTo(-0.25601844, 7);
    // Variance of the last day: (A⁻¹)₂₂ of A = [[2 + h0, −1], [−1, 1 + h1]] = (2 + h0)/((2 + h0)(1 + h1) − 1).
    const h0 = sigma(a0 - h.estimate('b')!.mean) * (1 - sigma(a0 - h.estimate('b')!.mean));
    const h1 = sigma(a1 - h.estimate('c')!.mean) * (1 - sigma(a1 - h.estimate('c')!.mean));
    expect(h.estimate('a')!.variance).toBeCloseTo((2 + h0) / ((2 + h0) * (1 + h1) - 1), 10);
    expect(h.estimate('a')!.variance).toBeCloseTo(1.355236822341292, 7);
    // A later prediction adds w² per idle day to the variance.
    const out = new Float64Array(2);
    h.skillAt('a', 4, out);
    expect(out[1]).toBeCloseTo(1.355236822341292 + 3, 7);
  });

  it('probit link: one game gives x = σ0² λ(2x), λ = φ/Φ', () => {
    const h = history([game('a', 'b', 0)], { priorVariance: 1, link: 'probit' });
    const x = h.estimate('a')!.mean;
    expect(x).toBeCloseTo(inverseMillsRatio(2 * x), 7);
    expect(h.estimate('b')!.mean).toBeCloseTo(-x, 10);
    // Bisection on λ(2x) − x with the exact Φ (erfc): x = 0.382638…; the erfc used here is good to 1.2e-7.
    expect(x).toBeCloseTo(0.3826383, 6);
  });

  it('normal cdf and the inverse Mills ratio', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(inverseMillsRatio(0)).toBeCloseTo(2 / Math.sqrt(2 * Math.PI), 6);
    // Far in the tail λ(z) ≈ −z: no 0/0.
    expect(inverseMillsRatio(-40)).toBeCloseTo(40.025, 2);
    expect(Number.isFinite(inverseMillsRatio(-1e4))).toBe(true);
  });

  it('win probability integrates the uncertainty', () => {
    expect(whrWinProbability(1, 0, 'logistic')).toBeCloseTo(sigma(1), 12);
    expect(whrWinProbability(1, 1, 'logistic')).toBeLessThan(sigma(1));
    expect(whrWinProbability(1, 1, 'probit')).toBeCloseTo(normalCdf(1 / Math.SQRT2), 7);
  });

  it('symmetry: the mirrored log gives the negated skills', () => {
    const log = [game('a', 'b', 0), game('b', 'c', 0), game('a', 'c', 2), game('c', 'a', 5)];
    // Every result reversed: the winner's team takes the loser's rank.
    const mirrored = log.map((m) => ({
      ...m,
      teams: [
        { ...m.teams[0]!, rank: m.teams[1]!.rank },
        { ...m.teams[1]!, rank: m.teams[0]!.rank },
      ],
    }));
    const h = history(log);
    const g = history(mirrored);
    for (const id of ['a', 'b', 'c']) expect(g.estimate(id)!.mean).toBeCloseTo(-h.estimate(id)!.mean, 9);
  });

  it('a draw between equals moves nobody', () => {
    const h = history([
      {
        at: 0,
        teams: [
          { players: [{ id: 'a' }], rank: 1 },
          { players: [{ id: 'b' }], rank: 1 },
        ],
      },
    ]);
    expect(h.estimate('a')!.mean).toBeCloseTo(0, 12);
  });
});

describe('whr: the batch path and the compiled sweeps', () => {
  const bisect = (f: (x: number) => number, low: number, high: number): number => {
    for (let i = 0; i < 200; i++) {
      const mid = (low + high) / 2;
      if (f(low) * f(mid) <= 0) high = mid;
      else low = mid;
    }
    return (low + high) / 2;
  };

  it('addMatches then converge (forward pass, then sweeps) gives the hand-worked two-day case', () => {
    const h = new WhrHistory({ ...MODE, priorVariance: 1, dailyVariance: 1 });
    h.addMatches([game('a', 'b', 0), game('a', 'c', 1)]);
    h.converge(1e-12, 5000);
    const [a0, a1] = h.timeline('a').map((n) => n.mean) as [number, number];
    expect(a0).toBeCloseTo(0.55472989, 7);
    expect(a1).toBeCloseTo(0.81074834, 7);
    expect(h.estimate('b')!.mean).toBeCloseTo(-0.29871145, 7);
    expect(h.estimate('c')!.mean).toBeCloseTo(-0.25601844, 7);
    expect(h.estimate('a')!.variance).toBeCloseTo(1.355236822341292, 7);
    expect(h.estimate('a')!.matches).toBe(2);
  });

  it('two against two, one game: each winner solves x = σ(−2x)/2 (a side is the mean of its two)', () => {
    // ln σ((a1 + a2)/2 − (b1 + b2)/2) − Σ r²/2: ∂/∂a1 = (1 − σ(d))/2 − a1 = 0; by symmetry
    // a1 = a2 = x, b1 = b2 = −x, d = 2x, so x = σ(−2x)/2 (x ≈ 0.20053).
    const x = bisect((v) => sigma(-2 * v) / 2 - v, 0, 1);
    expect(x).toBeCloseTo(0.20053, 4);
    const match: Match = {
      at: 0,
      teams: [
        { players: [{ id: 'a1' }, { id: 'a2' }], rank: 1 },
        { players: [{ id: 'b1' }, { id: 'b2' }], rank: 2 },
      ],
    };
    for (const batch of [true, false]) {
      const h = new WhrHistory({ ...MODE, priorVariance: 1 });
      if (batch) h.addMatches([match]);
      else h.addMatch(match);
      h.converge(1e-13, 5000);
      for (const id of ['a1', 'a2']) expect(h.estimate(id)!.mean).toBeCloseTo(x, 10);
      for (const id of ['b1', 'b2']) expect(h.estimate(id)!.mean).toBeCloseTo(-x, 10);
      // Laplace variance, the others fixed: 1/(1 + p(1 − p)/4), p = σ(2x).
      const p = sigma(2 * x);
      expect(h.estimate('a1')!.variance).toBeCloseTo(1 / (1 + (p * (1 - p)) / 4), 10);
    }
  });

  it('whole sweeps (compiled) and incremental re-smoothing of whole timelines reach the same MAP: teams, draws, home offsets, both links', () => {
    const log: Match[] = [];
    const ids = ['a', 'b', 'c', 'd', 'e'];
    for (let d = 0; d < 12; d++) {
      const x = ids[d % 5]!;
      const y = ids[(d * 2 + 1) % 5]!;
      if (x !== y) log.push({ ...game(d % 3 === 0 ? y : x, d % 3 === 0 ? x : y, d), home: d % 2 });
      if (d % 4 === 1)
        log.push({
          at: d * DAY,
          teams: [
            { players: [{ id: 'a' }, { id: 'e' }], rank: 1 },
            { players: [{ id: 'b' }, { id: 'c' }], rank: 1 },
          ],
        });
      if (d % 5 === 2)
        log.push({
          at: d * DAY,
          teams: [
            { players: [{ id: 'd' }], rank: 2 },
            { players: [{ id: 'c' }], rank: 1 },
            { players: [{ id: 'b' }], rank: 3 },
          ],
        });
    }
    for (const link of ['logistic', 'probit'] as const) {
      const options = { link, dailyVariance: 0.05, window: 1000, refresh: 1 };
      const batch = new WhrHistory({ ...MODE, ...options });
      batch.addMatches(log, 0.2);
      batch.converge(1e-13, 5000);
      const incremental = new WhrHistory({ ...MODE, ...options });
      for (const m of log) incremental.addMatch(m, 0.2);
      // Each prepare of a later day re-smooths every player's whole timeline once (refresh 1, window ≥ nodes).
      const everyone: Match = { teams: ids.map((id) => ({ players: [{ id }] })) };
      for (let day = 100; day < 600; day++) incremental.prepare(everyone, day);
      for (const id of ids) {
        const b = batch.timeline(id);
        const i = incremental.timeline(id);
        expect(i.map((n) => n.day)).toEqual(b.map((n) => n.day));
        b.forEach((node, k) => expect(i[k]!.mean).toBeCloseTo(node.mean, 8));
        expect(incremental.estimate(id)!.variance).toBeCloseTo(batch.estimate(id)!.variance, 8);
      }
    }
  });

  it('over-relaxation and the sweep count: the same MAP for any ω in [1, 2), onSweep sees every sweep', () => {
    const log = [game('a', 'b', 0), game('b', 'c', 1), game('c', 'a', 2), game('a', 'c', 3), game('b', 'a', 3)];
    const plain = new WhrHistory(MODE);
    plain.addMatches(log);
    const seen: number[] = [];
    const sweeps = plain.converge(1e-12, 5000, { relaxation: 1, onSweep: (sweep) => seen.push(sweep) });
    expect(seen.length).toBe(sweeps - 1);
    const relaxed = new WhrHistory(MODE);
    relaxed.addMatches(log);
    relaxed.converge(1e-12, 5000, { relaxation: 1.9 });
    for (const id of ['a', 'b', 'c']) expect(relaxed.estimate(id)!.mean).toBeCloseTo(plain.estimate(id)!.mean, 10);
    // At the mode a sweep moves nothing; sweepOnce names the player of its largest step.
    const [moved] = relaxed.sweepOnce();
    expect(moved).toBeLessThan(1e-9);
    const fresh = new WhrHistory(MODE);
    fresh.addMatch(game('a', 'b', 0));
    fresh.addMatch(game('c', 'b', 1));
    fresh.addMatch(game('c', 'a', 1));
    const [step, who] = fresh.sweepOnce();
    expect(step).toBeGreaterThan(0);
    expect(fresh.playerIds()[who]).toBeDefined();
  });
});

describe('whr: a match of three or more teams is one ranked game (each team against the next in rank order)', () => {
  const bisect = (f: (x: number) => number, low: number, high: number): number => {
    for (let i = 0; i < 200; i++) {
      const mid = (low + high) / 2;
      if (f(low) * f(mid) <= 0) high = mid;
      else low = mid;
    }
    return (low + high) / 2;
  };
  const solo = (id: string, rank: number) => ({ players: [{ id }], rank });

  it('three players ranked a > b > c: two comparisons, a > b and b > c, never a > c; the MAP by hand', () => {
    // Log-posterior ln σ(a − b) + ln σ(b − c) − (a² + b² + c²)/2 (σ0² = 1): no a-against-c term.
    // Gradient: ∂a: σ(b − a) − a = 0; ∂b: −σ(b − a) + σ(c − b) − b = 0; ∂c: −σ(c − b) − c = 0.
    // By symmetry (reverse the order, negate the skills) b = 0 and c = −a, so a = σ(−a):
    // x = 0.40105…, bisection by hand on f(x) = σ(−x) − x: f(0.401) = +8.0e-5, f(0.4011) = −4.5e-5.
    // (Every pair, as before, would add ln σ(a − c): then a = σ(−a) + σ(−2a), a ≈ 0.64.)
    const x = bisect((v) => sigma(-v) - v, 0, 1);
    expect(x).toBeGreaterThan(0.401);
    expect(x).toBeLessThan(0.4011);
    const match: Match = { at: 0, teams: [solo('b', 2), solo('c', 3), solo('a', 1)] };
    for (const batch of [true, false]) {
      const h = new WhrHistory({ ...MODE, priorVariance: 1 });
      if (batch) h.addMatches([match]);
      else h.addMatch(match);
      expect(h.gamesCount).toBe(1);
      h.converge(1e-13, 5000);
      expect(h.estimate('a')!.mean).toBeCloseTo(x, 10);
      expect(h.estimate('b')!.mean).toBeCloseTo(0, 10);
      expect(h.estimate('c')!.mean).toBeCloseTo(-x, 10);
      // Laplace variance of a (the others held): 1/(1 + p(1 − p)), p = σ(a − b) = σ(x); b sees two comparisons.
      const p = sigma(x);
      expect(h.estimate('a')!.variance).toBeCloseTo(1 / (1 + p * (1 - p)), 10);
      expect(h.estimate('b')!.variance).toBeCloseTo(1 / (1 + 2 * p * (1 - p)), 10);
    }
  });

  // Four teams of 1, 2, 3 and 1 players (given out of order), the second and third tied, the third at home:
  // in rank order W > {X1, X2} = {Y1, Y2, Y3} > Z, the same likelihood as three games of two teams.
  const ranked: Match = {
    at: 0,
    home: 1,
    teams: [
      { players: [{ id: 'x1' }, { id: 'x2' }], rank: 2 },
      { players: [{ id: 'y1' }, { id: 'y2' }, { id: 'y3' }], rank: 2 },
      { players: [{ id: 'z' }], rank: 4 },
      { players: [{ id: 'w' }], rank: 1 },
    ],
  };
  const pairs: Match[] = [
    { at: 0, teams: [ranked.teams[3]!, { ...ranked.teams[0]!, rank: 2 }] },
    {
      at: 0,
      home: 1,
      teams: [
        { ...ranked.teams[0]!, rank: 1 },
        { ...ranked.teams[1]!, rank: 1 },
      ],
    },
    {
      at: 0,
      home: 0,
      teams: [
        { ...ranked.teams[1]!, rank: 1 },
        { ...ranked.teams[2]!, rank: 2 },
      ],
    },
  ];

  for (const inference of ['map', 'ep'] as const) {
    for (const link of ['logistic', 'probit'] as const) {
      it(`${inference}, ${link}: the ranked game reaches the fixed point of its N − 1 comparisons entered as games of two teams (ties, teams of several, home offset)`, () => {
        const one = new WhrHistory({ ...MODE, inference, link, priorVariance: 1 });
        one.addMatch(ranked, 0.3);
        const many = new WhrHistory({ ...MODE, inference, link, priorVariance: 1 });
        for (const m of pairs) many.addMatch(m, 0.3);
        expect(one.gamesCount).toBe(1);
        expect(many.gamesCount).toBe(3);
        one.converge(1e-12, 5000);
        many.converge(1e-12, 5000);
        for (const id of ['w', 'x1', 'x2', 'y1', 'y2', 'y3', 'z']) {
          expect(one.estimate(id)!.mean).toBeCloseTo(many.estimate(id)!.mean, 9);
          expect(one.estimate(id)!.variance).toBeCloseTo(many.estimate(id)!.variance, 9);
        }
        // The home offset and the tie took effect: the tied teams are not level, and the winner is ahead of the last.
        expect(one.estimate('x1')!.mean).not.toBeCloseTo(one.estimate('y1')!.mean, 3);
        expect(one.estimate('w')!.mean).toBeGreaterThan(one.estimate('z')!.mean);
      });
    }
  }

  it('sixty-four teams make one game with one entry per player, whatever the number of pairs', () => {
    const teams = Array.from({ length: 64 }, (_, t) => ({ players: Array.from({ length: 4 }, (_, i) => ({ id: `t${t}p${i}` })), rank: t + 1 }));
    const h = new WhrHistory(MODE);
    h.addMatch({ at: 0, teams });
    expect(h.gamesCount).toBe(1);
    expect(h.nodesCount).toBe(256);
    // The first team beat only the second: its players' gradient is one comparison's.
    const first = h.estimate('t0p0')!.mean;
    const last = h.estimate('t63p0')!.mean;
    expect(first).toBeGreaterThan(0);
    expect(last).toBeCloseTo(-first, 12);
  });
});

describe('whr: incremental', () => {
  it('re-smoothing a closed day corrects the past: a later result moves an earlier day', () => {
    const h = new WhrHistory({ ...MODE, dailyVariance: 0.01 });
    h.addMatch(game('a', 'b', 0));
    h.addMatch(game('b', 'c', 1));
    const before = h.timeline('b')[0]!.mean;
    h.addMatch(game('b', 'd', 2));
    h.addMatch(game('x', 'y', 3)); // a new day closes day 2
    expect(h.timeline('b')[0]!.mean).toBeGreaterThan(before);
  });

  it('incremental estimates approach the converged MAP', () => {
    const log: Match[] = [];
    for (let d = 0; d < 30; d++) log.push(game(['a', 'b', 'c'][d % 3]!, ['b', 'c', 'a'][d % 3]!, d), game('a', 'c', d));
    const h = new WhrHistory({ ...MODE, window: 64, sweeps: 4 });
    for (const m of log) h.addMatch(m);
    h.closeDay();
    const converged = history(log);
    for (const id of ['a', 'b', 'c']) expect(h.estimate(id)!.mean).toBeCloseTo(converged.estimate(id)!.mean, 2);
  });

  it("prepare: a prediction of a new day sees the day before closed, as after adding; refresh re-smooths before a player's first match of a day", () => {
    const log = [game('a', 'b', 0), game('b', 'c', 1), game('c', 'd', 1), game('d', 'a', 1)];
    const next = game('a', 'c', 2);
    const early = new WhrHistory(MODE);
    for (const m of log) early.addMatch(m);
    early.prepare(next);
    const closed = new WhrHistory(MODE);
    for (const m of log) closed.addMatch(m);
    closed.closeDay();
    expect(early.predictMatch(next)).toBe(closed.predictMatch(next));
    // Refresh: a's timeline is re-smoothed once b, a's past opponent, has moved.
    const refreshed = new WhrHistory({ ...MODE, refresh: 1 });
    for (const m of log) refreshed.addMatch(m);
    const before = refreshed.timeline('a')[0]!.mean;
    refreshed.prepare(next);
    expect(refreshed.timeline('a')[0]!.mean).not.toBe(before);
    expect(() => new WhrHistory({ ...MODE, refresh: -1 })).toThrow(/refresh/);
  });

  it("a late match (before the player's last day) joins the last day", () => {
    const h = new WhrHistory(MODE);
    h.addMatch(game('a', 'b', 5));
    h.addMatch(game('a', 'b', 3));
    expect(h.timeline('a').map((n) => n.day)).toEqual([5]);
  });
});

describe('whr: properties', () => {
  const logArb = fc.array(fc.record({ w: fc.integer({ min: 0, max: 4 }), l: fc.integer({ min: 0, max: 4 }), gap: fc.integer({ min: 0, max: 3 }) }), {
    minLength: 1,
    maxLength: 25,
  });
  const toLog = (entries: Array<{ w: number; l: number; gap: number }>): Match[] => {
    let day = 0;
    return entries
      .filter((e) => e.w !== e.l)
      .map((e) => {
        day += e.gap;
        return game(`p${e.w}`, `p${e.l}`, day);
      });
  };

  it("a win never lowers the winner's current estimate (converged)", () => {
    fc.assert(
      fc.property(logArb, fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.constantFrom('logistic', 'probit'), (entries, w, shift, link) => {
        const log = toLog(entries);
        const lastDay = log.length > 0 ? log[log.length - 1]!.at! / DAY : 0;
        const winner = `p${w}`;
        const loser = `p${(w + shift) % 5}`;
        const without = history(log, { link: link as 'logistic' | 'probit' });
        const withWin = history([...log, game(winner, loser, lastDay)], { link: link as 'logistic' | 'probit' });
        const before = without.estimate(winner)?.mean ?? 0;
        expect(withWin.estimate(winner)!.mean).toBeGreaterThanOrEqual(before - 1e-9);
      }),
      { numRuns: 150 },
    );
  });

  it('no NaN over random logs: teams, draws, several teams, both links, incremental and converged', () => expectNoNaN('map'));
});

describe('whr as a RatingSystem', () => {
  it.each(['map', 'ep'] as const)("takeMoved (%s): the match's players, and at a day's close everyone re-smoothed, each estimate as `states` gives it", (inference) => {
    const system = createSystem('whr', { ...MODE, dailyVariance: 0.02, inference });
    system.rateMatch(game('a', 'b', 0), new Map());
    expect([...system.takeMoved().keys()].sort()).toEqual(['a', 'b']);
    system.rateMatch(game('c', 'd', 0), new Map());
    expect([...system.takeMoved().keys()].sort()).toEqual(['c', 'd']);
    // Day 1 closes day 0: a, b, c and d are re-smoothed; e and f play.
    const before = system.states();
    system.rateMatch(game('e', 'f', 1), new Map());
    const moved = system.takeMoved();
    expect([...moved.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    // The mode moves when its day is re-smoothed; expectation propagation had the exact posterior of that one game already.
    if (inference === 'map') expect(moved.get('a')!.rating).not.toBe(before.get('a')!.rating);
    else expect(moved.get('a')!.rating).toBeCloseTo(before.get('a')!.rating, 9);
    const states = system.states();
    for (const [id, state] of moved) expect(state).toEqual(states.get(id));
    expect(system.takeMoved().size).toBe(0);
    // A player untouched since is not reported again.
    system.rateMatch(game('e', 'f', 1), new Map());
    expect([...system.takeMoved().keys()].sort()).toEqual(['e', 'f']);
    system.history.converge();
    expect(system.takeMoved().size).toBe(6);
  });

  it.each(['map', 'ep'] as const)('takeMoved (%s) with a cycle: players re-smoothed by the cycle are reported, with the estimates `states` gives', (inference) => {
    const system = createSystem('whr', { ...MODE, dailyVariance: 0.02, inference, cycle: 1 });
    system.rateMatch(game('a', 'b', 0), new Map());
    system.rateMatch(game('c', 'd', 1), new Map());
    system.takeMoved();
    // Day 2 closes day 1: c and d are re-smoothed, and the cycle (every player, k = 1) takes a and b too.
    system.rateMatch(game('e', 'f', 2), new Map());
    const moved = system.takeMoved();
    expect([...moved.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    const states = system.states();
    for (const [id, state] of moved) expect(state).toEqual(states.get(id));
    // Everyone not reported kept the estimate last reported.
    const reported = new Map(states);
    system.rateMatch(game('e', 'f', 2), new Map());
    const again = system.takeMoved();
    for (const [id, state] of system.states()) if (!again.has(id)) expect(state).toEqual(reported.get(id));
  });

  it('createSystem("whr") rates through Replay, states on the Elo scale', () => {
    const system = createSystem('whr', { ...MODE, priorVariance: 1 });
    const states = replay(system, [game('a', 'b', 0)]);
    const a = states.get('a')!;
    expect(a.rating).toBeCloseTo(1500 + 0.3374158 * WHR_SCALE, 0);
    expect(a.rd).toBeGreaterThan(0);
    expect(a.matches).toBe(1);
    expect(system.predict([[a], [states.get('b')!]])[0]).toBeGreaterThan(0.5);
    expect(system.idle(a, 10).rd).toBeGreaterThan(a.rd!);
  });

  it('rejects unknown and bad options, naming them', () => {
    expect(() => createSystem('whr', { tau: 0.5 } as never)).toThrow(InvalidInputError);
    expect(() => createSystem('whr', { dailyVariance: -1 })).toThrow(/dailyVariance/);
    expect(() => createSystem('whr', { link: 'cauchy' } as never)).toThrow(/link/);
  });

  it('periods are kept in 32 bits: a time beyond ±2^31 periods is refused, naming the field, and the history is left as it was', () => {
    // A period of one second holds today's times (about 1.76e9 s in 2026) and every one up to 2038.
    const seconds = new WhrHistory({ periodMs: 1000 });
    const now = Date.UTC(2026, 10, 30);
    seconds.addMatch({ ...game('a', 'b'), at: now });
    expect(seconds.timeline('a').map((n) => n.day)).toEqual([now / 1000]);
    // A period of a millisecond does not: 1.76e12 periods.
    const millis = new WhrHistory({ periodMs: 1 });
    millis.addMatch({ ...game('a', 'b'), at: 1000 });
    const refused = (() => {
      try {
        millis.addMatch({ ...game('a', 'c'), at: now });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).field).toBe('at');
    expect((refused as InvalidInputError).message).toMatch(/periodMs/);
    expect(millis.playerCount).toBe(2);
    expect(millis.timeline('a').map((n) => n.day)).toEqual([1000]);
    expect(() => millis.dayOf(-(2 ** 31) - 1)).toThrow(InvalidInputError);
    expect(millis.dayOf(-(2 ** 31))).toBe(-(2 ** 31));
  });

  it('untimed matches: each rating period is one day', () => {
    const system = createSystem('whr');
    system.ratePeriod([game('a', 'b'), game('a', 'c')], new Map());
    system.rateMatch(game('b', 'c'), new Map());
    expect(system.history.timeline('a').map((n) => n.day)).toEqual([0]);
    expect(system.history.timeline('b').map((n) => n.day)).toEqual([0, 1]);
  });
});

describe('whr: the default is the configuration chosen on the training part (docs/EVALUATION.md)', () => {
  it("a system or history with no options infers by expectation propagation, one pass over the last 64 nodes of a closed day's players, a cycle of 8 days, the fitted variances", () => {
    for (const options of [new WhrHistory().options, createSystem('whr').options]) {
      expect(options).toMatchObject({ inference: 'ep', sweeps: 1, cycle: 8, window: 64, priorVariance: 0.7989, dailyVariance: 0.001331, link: 'logistic' });
    }
  });

  it("one logistic game between two new players under the default prior: MacKay's moments, by hand", () => {
    // Priors N(0, s), s = 0.7989; a beats b. d = a − b is N(0, 2s): κ = 1/√(1 + π·2s/8), Z = σ(0) = 1/2,
    // α = κ(1 − 1/2) = κ/2, β = κ²/4; the winner's posterior mean s·α = sκ/2 and variance s − s²κ²/4.
    const s = 0.7989;
    const kappa = 1 / Math.sqrt(1 + (Math.PI * 2 * s) / 8);
    const system = createSystem('whr');
    system.rateMatch(game('a', 'b', 0), new Map());
    const a = system.history.estimate('a')!;
    expect(a.mean).toBeCloseTo((s * kappa) / 2, 10);
    expect(a.variance).toBeCloseTo(s - (s * s * kappa * kappa) / 4, 10);
    expect(system.history.estimate('b')!.mean).toBeCloseTo(-a.mean, 12);
  });

  it('inference: map with WHR_MAP_OPTIONS is the mode as it was the default: x = σ0² σ(−2x) for σ0² = 0.6', () => {
    // One game, the MAP: r_A = −r_B = x with x/σ0² = σ(−2x); solved by bisection here, independently of the code.
    let low = 0;
    let high = 1;
    for (let i = 0; i < 100; i++) {
      const x = (low + high) / 2;
      if (x / 0.6 < sigma(-2 * x)) low = x;
      else high = x;
    }
    const system = createSystem('whr', WHR_MAP_OPTIONS);
    expect(system.options).toMatchObject({ inference: 'map', window: 32, sweeps: 2, cycle: 0, priorVariance: 0.6, dailyVariance: 0.0025 });
    system.history.addMatch(game('a', 'b', 0));
    system.history.converge(1e-12, 5000);
    expect(system.history.estimate('a')!.mean).toBeCloseTo(low, 9);
  });
});

describe('whr: expectation propagation (inference: ep)', () => {
  const ep = (matches: Match[], options: ConstructorParameters<typeof WhrHistory>[0] = {}): WhrHistory => history(matches, { inference: 'ep', ...options });

  it('probit, one game between two new players: the exact posterior moments, by hand', () => {
    // Priors N(0, 1); a beats b: likelihood Φ(a − b). d = a − b is N(0, 2) a priori, so
    // Z = Φ(0/√3) = ½, α = ∂ln Z/∂m = λ(0)/√3, β = −∂²ln Z/∂m² = λ(0)(λ(0) + 0)/3, λ(0) = φ(0)/Φ(0) = √(2/π).
    // One factor: EP is exact. E[a] = α = √(2/π)/√3 = 0.46065886, Var[a] = 1 − β = 1 − 2/(3π) = 0.78779342; b mirrored.
    const h = ep([game('a', 'b', 0)], { priorVariance: 1, link: 'probit' });
    const a = h.estimate('a')!;
    const b = h.estimate('b')!;
    expect(a.mean).toBeCloseTo(Math.sqrt(2 / Math.PI) / Math.sqrt(3), 6);
    expect(a.mean).toBeCloseTo(0.46065886, 6);
    expect(a.variance).toBeCloseTo(1 - 2 / (3 * Math.PI), 6);
    expect(b.mean).toBeCloseTo(-a.mean, 10);
    expect(b.variance).toBeCloseTo(a.variance, 10);
    // The next prediction integrates both variances: Φ(2·0.46065886/√(1 + 2·0.78779342)) = Φ(0.57407) = 0.71707.
    expect(h.predictMatch(game('a', 'b', 0))).toBeCloseTo(normalCdf(0.92131773 / Math.sqrt(2.57558684)), 6);
    expect(h.predictMatch(game('a', 'b', 0))).toBeCloseTo(0.71707, 4);
  });

  it("logistic, one game: MacKay's Z = σ(m/√(1 + πv/8)) gives mean κ/2 and variance 1 − κ²/4, by hand", () => {
    // m = 0, v = 2: κ = 1/√(1 + π/4) = 1/1.336188 = 0.748398, q = σ(0) = ½, α = κ(1 − q) = κ/2, β = κ² q(1 − q) = κ²/4.
    const kappa = 1 / Math.sqrt(1 + Math.PI / 4);
    const h = ep([game('a', 'b', 0)], { priorVariance: 1 });
    expect(h.estimate('a')!.mean).toBeCloseTo(kappa / 2, 10);
    expect(h.estimate('a')!.mean).toBeCloseTo(0.374199, 5);
    expect(h.estimate('a')!.variance).toBeCloseTo(1 - (kappa * kappa) / 4, 10);
    expect(h.estimate('b')!.mean).toBeCloseTo(-kappa / 2, 10);
  });

  it("the added game, as `addMatch` leaves it: new players' last nodes take the one-game moments", () => {
    const h = new WhrHistory({ ...MODE, inference: 'ep', priorVariance: 1, link: 'probit' });
    h.addMatch(game('a', 'b', 0));
    expect(h.estimate('a')!.mean).toBeCloseTo(0.46065886, 6);
    expect(h.estimate('a')!.variance).toBeCloseTo(1 - 2 / (3 * Math.PI), 6);
  });

  it('a player with two days: the Kalman smoother over the messages, against a dense EP', () => {
    // a beats b on day 0, a beats c on day 2; probit, σ0² = 1, w² = 0.5 a day (link variance 1).
    // Reference: EP on the 4 skills (a0, a2, b, c) with the full 4×4 covariance, each factor's
    // message refined until fixed. The Gaussian prior: a0, b, c ~ N(0, 1), a2 = a0 + N(0, 1).
    const prior = [
      [1, 1, 0, 0],
      [1, 2, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 1],
    ];
    const factors: Array<[number, number]> = [
      [0, 2],
      [1, 3],
    ]; // winner index, loser index
    // Messages on d_k = x_w − x_l, natural parameters (τ, ν).
    const tau = [0, 0];
    const nu = [0, 0];
    const posterior = (): { mean: number[]; cov: number[][] } => {
      // Precision = prior⁻¹ + Σ τ_k u_k u_kᵀ, shift = Σ ν_k u_k (u_k = e_w − e_l).
      const inv = invert(prior);
      const shift = [0, 0, 0, 0];
      factors.forEach(([w, l], k) => {
        inv[w]![w]! += tau[k]!;
        inv[l]![l]! += tau[k]!;
        inv[w]![l]! -= tau[k]!;
        inv[l]![w]! -= tau[k]!;
        shift[w]! += nu[k]!;
        shift[l]! -= nu[k]!;
      });
      const cov = invert(inv);
      return { cov, mean: cov.map((row) => row.reduce((s, x, j) => s + x * shift[j]!, 0)) };
    };
    for (let iteration = 0; iteration < 200; iteration++) {
      factors.forEach(([w, l], k) => {
        const { mean, cov } = posterior();
        const m = mean[w]! - mean[l]!;
        const v = cov[w]![w]! + cov[l]![l]! - 2 * cov[w]![l]!;
        // Cavity of d: this factor's message removed.
        const vc = 1 / (1 / v - tau[k]!);
        const mc = vc * (m / v - nu[k]!);
        const z = mc / Math.sqrt(1 + vc);
        const lambda = inverseMillsRatio(z);
        const alpha = lambda / Math.sqrt(1 + vc);
        const beta = (lambda * (lambda + z)) / (1 + vc);
        tau[k] = beta / (1 - beta * vc);
        nu[k] = (alpha + beta * mc) / (1 - beta * vc);
      });
    }
    const { mean, cov } = posterior();
    const h = ep([game('a', 'b', 0), game('a', 'c', 2)], { priorVariance: 1, dailyVariance: 0.5, link: 'probit' });
    const [a0, a2] = h.timeline('a').map((n) => n.mean) as [number, number];
    expect(a0).toBeCloseTo(mean[0]!, 6);
    expect(a2).toBeCloseTo(mean[1]!, 6);
    expect(h.estimate('a')!.variance).toBeCloseTo(cov[1]![1]!, 6);
    expect(h.estimate('b')!.mean).toBeCloseTo(mean[2]!, 6);
    expect(h.estimate('c')!.variance).toBeCloseTo(cov[3]![3]!, 6);
    // The later day has learnt from both wins: above the first.
    expect(a2).toBeGreaterThan(a0);
  });

  it('symmetry; incremental estimates near the converged ones; the batch path reaches the same fixed point', () => {
    const log = [game('a', 'b', 0), game('b', 'c', 0), game('c', 'a', 1), game('a', 'b', 3), game('a', 'c', 3), game('d', 'a', 5)];
    // Every result reversed: every mean negated, the variances the same.
    const mirrored = log.map((m) => game(m.teams[1]!.players[0]!.id, m.teams[0]!.players[0]!.id, m.at! / DAY));
    const h = ep(log);
    const g = ep(mirrored);
    for (const id of ['a', 'b', 'c', 'd']) {
      expect(g.estimate(id)!.mean).toBeCloseTo(-h.estimate(id)!.mean, 8);
      expect(g.estimate(id)!.variance).toBeCloseTo(h.estimate(id)!.variance, 8);
    }
    const online = new WhrHistory({ ...MODE, inference: 'ep' });
    for (const m of log) online.addMatch(m);
    for (const id of ['a', 'b', 'c', 'd']) expect(Math.abs(online.estimate(id)!.mean - h.estimate(id)!.mean)).toBeLessThan(0.05);
    const batch = new WhrHistory({ ...MODE, inference: 'ep' });
    batch.addMatches(log);
    batch.converge(1e-12, 5000);
    for (const id of ['a', 'b', 'c', 'd']) expect(batch.estimate(id)!.mean).toBeCloseTo(h.estimate(id)!.mean, 8);
    // At the fixed point, one more pass moves nothing.
    expect(batch.sweepOnce()[0]).toBeLessThan(1e-9);
  });

  it('cycle: players who did not play are re-smoothed too, and the online estimates reach the fixed point; cycleHorizon skips the inactive', () => {
    // a beats b on day 0, c beats a on day 1. Then x and y (who never meet a, b or c) play on days 2 … 40,
    // so days close without a, b or c. With cycle 1, every closed day re-smooths every whole timeline.
    const log = [game('a', 'b', 0), game('c', 'a', 1)];
    const filler = Array.from({ length: 39 }, (_, i) => game(i % 2 ? 'x' : 'y', i % 2 ? 'y' : 'x', i + 2));
    for (const inference of ['ep', 'map'] as const) {
      const converged = history(log, { inference });
      const run = (options: ConstructorParameters<typeof WhrHistory>[0]): WhrHistory => {
        const h = new WhrHistory({ ...MODE, inference, ...options });
        for (const m of [...log, ...filler]) h.addMatch(m);
        return h;
      };
      const cycled = run({ cycle: 1 });
      for (const id of ['a', 'b', 'c']) expect(cycled.estimate(id)!.mean).toBeCloseTo(converged.estimate(id)!.mean, 6);
      // Without the cycle, b (who played on day 0 only) keeps the estimate of day 0's close.
      const plain = run({});
      expect(Math.abs(plain.estimate('b')!.mean - converged.estimate('b')!.mean)).toBeGreaterThan(1e-3);
      // With a horizon of 0, the cycle skips whoever did not play on the day closed: once day 2 is
      // closed (by day 3's match), a, b and c never move again.
      const skipped = new WhrHistory({ ...MODE, inference, cycle: 1, cycleHorizon: 0 });
      for (const m of [...log, ...filler.slice(0, 2)]) skipped.addMatch(m);
      const before = ['a', 'b', 'c'].map((id) => skipped.estimate(id)!.mean);
      for (const m of filler.slice(2)) skipped.addMatch(m);
      expect(['a', 'b', 'c'].map((id) => skipped.estimate(id)!.mean)).toEqual(before);
    }
  });

  it('no NaN over random logs: teams, draws, several teams, both links', () => expectNoNaN('ep'));
});

/** Inverse of a small matrix by Gauss–Jordan elimination (tests only). */
function invert(matrix: number[][]): number[][] {
  const n = matrix.length;
  const a = matrix.map((row, i) => [...row, ...row.map((_, j) => (i === j ? 1 : 0))]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    const p = a[col]![col]!;
    for (let j = 0; j < 2 * n; j++) a[col]![j]! /= p;
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = a[r]![col]!;
      for (let j = 0; j < 2 * n; j++) a[r]![j]! -= f * a[col]![j]!;
    }
  }
  return a.map((row) => row.slice(n));
}

describe('whr: context deviations (skill in a context = general skill + a deviation with its own timeline)', () => {
  const inContext = (match: Match, context: string): Match => ({ ...match, context });
  const CONTEXT = { priorVariance: 0.6, contextPriorVariance: 0.2 };

  it("one context, one game between new players, by hand (contextInference 'factorised'): the means of the summed model, the variances of two independent factors", () => {
    // σ0² = a = 0.6, σc² = b = 0.2, V = a + b = 0.8. a beats b in context x: d = g_a + c_a − g_b − c_b (each ±1),
    // a priori N(0, 2V = 1.6). One factor, so every cavity is the prior and EP is at its fixed point after one pass:
    // κ = 1/√(1 + π·1.6/8) = 0.78366476, α = κ/2 = 0.39183238, β = κ²/4 = 0.15353261.
    // g_a: mean a·α = 0.23509943, variance a − a²β = 0.54472826; c_a: mean b·α = 0.07836648, variance b − b²β = 0.19385870.
    const h = history([inContext(game('a', 'b', 0), 'x')], { inference: 'ep', ...CONTEXT, contextInference: 'factorised' });
    expect(h.estimate('a')!.mean).toBeCloseTo(0.23509943, 7);
    expect(h.estimate('a')!.variance).toBeCloseTo(0.54472826, 7);
    const deviation = h.contextEstimates('a').get('x')!;
    expect(deviation.mean).toBeCloseTo(0.07836648, 7);
    expect(deviation.variance).toBeCloseTo(0.1938587, 7);
    expect(deviation.matches).toBe(1);
    expect(h.contextEstimates('b').get('x')!.mean).toBeCloseTo(-0.07836648, 7);
    // The summed model (no context, σ0² = 0.8) gives the skill in x the same mean, V·α = 0.31346591, but variance
    // V − V²β = 0.70173913, not (a − a²β) + (b − b²β) = 0.73858695: the factorised posterior drops the
    // correlation of g and c (−abβ each way), 2abβ = 0.03684782. So the rematch's prediction
    // σ(0.62693181/√(1 + π·1.47717391/8)) = 0.62216477 against σ(0.62693181/√(1 + π·1.40347825/8)) = 0.62325283.
    const summed = history([game('a', 'b', 0)], { inference: 'ep', priorVariance: 0.8 });
    expect(summed.estimate('a')!.mean).toBeCloseTo(0.31346591, 7);
    expect(summed.estimate('a')!.variance).toBeCloseTo(0.70173913, 7);
    expect(h.predictMatch(inContext(game('a', 'b', 0), 'x'))).toBeCloseTo(0.62216477, 7);
    expect(summed.predictMatch(game('a', 'b', 0))).toBeCloseTo(0.62325283, 7);
    // With the means alone (integrate off), the two predictions are the same: σ(0.62693181) = 0.65179343.
    const meansOnly = history([inContext(game('a', 'b', 0), 'x')], { inference: 'ep', ...CONTEXT, contextInference: 'factorised', integrate: false });
    expect(meansOnly.predictMatch(inContext(game('a', 'b', 0), 'x'))).toBeCloseTo(0.65179343, 7);
    expect(history([game('a', 'b', 0)], { inference: 'ep', priorVariance: 0.8, integrate: false }).predictMatch(game('a', 'b', 0))).toBeCloseTo(0.65179343, 7);
  });

  it("one context, one game between new players, by hand (contextInference 'joint', the default): exactly the summed model", () => {
    // As above, σ0² = a = 0.6, σc² = b = 0.2, β = 0.15353261. The joint posterior of (g_a, c_a) keeps their covariance
    // −abβ = −0.01842391, so the skill in x has mean V·α = 0.31346591 and variance (a − a²β) + (b − b²β) − 2abβ =
    // 0.54472826 + 0.19385870 − 0.03684782 = 0.70173913 = V − V²β, the summed model's; the rematch is predicted at its
    // 0.62325283. The marginals of g and c are the factorised ones (a single game: EP's marginals are exact).
    const h = history([inContext(game('a', 'b', 0), 'x')], { inference: 'ep', ...CONTEXT });
    expect(h.estimate('a')!.mean).toBeCloseTo(0.23509943, 7);
    expect(h.estimate('a')!.variance).toBeCloseTo(0.54472826, 7);
    expect(h.contextEstimates('a').get('x')!.variance).toBeCloseTo(0.1938587, 7);
    const out = new Float64Array(2);
    h.skillAt('a', 0, out, 'x');
    expect(out[0]).toBeCloseTo(0.31346591, 7);
    expect(out[1]).toBeCloseTo(0.70173913, 7);
    expect(h.predictMatch(inContext(game('a', 'b', 0), 'x'))).toBeCloseTo(0.62325283, 7);
  });

  it("property (contextInference 'joint'): one context for every match predicts as no context with σ0² + σc² and w² + wc²", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.constantFrom('logistic', 'probit'), fc.constantFrom(2, 4, 64), fc.constantFrom(0, 3), (seed, link, window, cycle) => {
        const log = randomLog(seed, 240, ['x']);
        const common = { inference: 'ep', link: link as 'logistic' | 'probit', window, cycle, priorVariance: 0.5, dailyVariance: 0.002 } as const;
        const summed = onlinePredictions(log, { ...common, priorVariance: 0.5 + 0.3, dailyVariance: 0.002 + 0.001 });
        const joint = onlinePredictions(log, { ...common, contextPriorVariance: 0.3, contextDailyVariance: 0.001 });
        expect(joint.length).toBe(summed.length);
        // Logistic: the same to rounding (2e-16 seen). Probit: the erfc approximation's two branches meet at z = 0
        // with a gap near its 1.2e-7 relative error, and a first game's difference lands on either side of 0 (7e-9 seen).
        const tolerance = link === 'logistic' ? 1e-12 : 1e-7;
        for (let i = 0; i < summed.length; i++) expect(Math.abs(joint[i]! - summed[i]!)).toBeLessThan(tolerance);
      }),
      { numRuns: 24 },
    );
  });

  it("one context for every match, converged (contextInference 'joint'): the summed model's fixed point, and factorised is not", () => {
    const log = randomLog(11, 300, ['x']);
    const fit = (options: ConstructorParameters<typeof WhrHistory>[0]): WhrHistory => {
      const h = new WhrHistory({ inference: 'ep', ...options });
      h.addMatches(log);
      h.converge(1e-12, 2000);
      return h;
    };
    const summed = fit({ priorVariance: 0.9, dailyVariance: 0.003 });
    const joint = fit({ priorVariance: 0.6, dailyVariance: 0.002, contextPriorVariance: 0.3, contextDailyVariance: 0.001 });
    const factorised = fit({ priorVariance: 0.6, dailyVariance: 0.002, contextPriorVariance: 0.3, contextDailyVariance: 0.001, contextInference: 'factorised' });
    const out = new Float64Array(2);
    let jointGap = 0;
    let factorisedGap = 0;
    for (const id of summed.playerIds()) {
      const s = summed.estimate(id)!;
      joint.skillAt(id, s.day, out, 'x');
      jointGap = Math.max(jointGap, Math.abs(out[0]! - s.mean), Math.abs(out[1]! - s.variance));
      factorised.skillAt(id, s.day, out, 'x');
      factorisedGap = Math.max(factorisedGap, Math.abs(out[1]! - s.variance));
    }
    expect(jointGap).toBeLessThan(1e-8);
    expect(factorisedGap).toBeGreaterThan(1e-3);
  });

  it('property (both inferences): contexts under extreme variances, teams, probit and small windows give finite means, positive variances and predictions in (0, 1)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 30 }),
            a: fc.integer({ min: 0, max: 5 }),
            b: fc.integer({ min: 0, max: 5 }),
            ctx: fc.integer({ min: 0, max: 4 }),
            win: fc.boolean(),
            team: fc.boolean(),
          }),
          { minLength: 5, maxLength: 120 },
        ),
        fc.constantFrom(1e-12, 0.01, 1, 5),
        fc.constantFrom(0, 1e-6, 0.05),
        fc.constantFrom(0.01, 0.8, 5),
        fc.constantFrom('logistic', 'probit'),
        fc.constantFrom(2, 64),
        fc.constantFrom('joint', 'factorised'),
        (games, cpv, cdv, pv, link, window, inference) => {
          const h = new WhrHistory({
            contextPriorVariance: cpv,
            contextDailyVariance: cdv,
            priorVariance: pv,
            link: link as 'logistic',
            window,
            cycle: 2,
            contextInference: inference as 'joint',
          });
          let day = 0;
          for (const g of games) {
            day += g.gap;
            if (g.a === g.b) continue;
            const other = (g.b + 1) % 6 === g.a ? (g.b + 2) % 6 : (g.b + 1) % 6;
            const teams =
              g.team && other !== g.a
                ? [
                    { players: [{ id: `p${g.a}` }], rank: g.win ? 1 : 2 },
                    { players: [{ id: `p${g.b}` }, { id: `p${other}` }], rank: g.win ? 2 : 1 },
                  ]
                : [
                    { players: [{ id: `p${g.a}` }], rank: g.win ? 1 : 2 },
                    { players: [{ id: `p${g.b}` }], rank: g.win ? 2 : 1 },
                  ];
            const m: Match = { at: day * DAY, teams, ...(g.ctx < 4 ? { context: `c${g.ctx}` } : {}) };
            const p = h.predictMatch(m);
            expect(p).toBeGreaterThan(0);
            expect(p).toBeLessThan(1);
            h.addMatch(m);
          }
          h.converge(1e-8, 200);
          for (const id of h.playerIds()) {
            const e = h.estimate(id)!;
            expect(Number.isFinite(e.mean)).toBe(true);
            expect(e.variance).toBeGreaterThan(0);
            for (const [, c] of h.contextEstimates(id)) {
              expect(Number.isFinite(c.mean)).toBe(true);
              expect(c.variance).toBeGreaterThan(0);
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a new context starts at the general skill: mean the general one, variance plus σc² (and a new player: σ0² + σc²)', () => {
    const h = history([inContext(game('a', 'b', 0), 'x'), inContext(game('a', 'b', 1), 'x')], { inference: 'ep', ...CONTEXT });
    const a = h.estimate('a')!;
    const b = h.estimate('b')!;
    const w2 = h.options.dailyVariance;
    // Day 1 is both players' last day; a game on day 3 drifts each general skill by 2w².
    const expected = whrWinProbability(a.mean - b.mean, a.variance + b.variance + 4 * w2 + 2 * 0.2, 'logistic');
    expect(h.predictMatch(inContext(game('a', 'b', 3), 'y'))).toBeCloseTo(expected, 12);
    // A player never seen: prior σ0² + σc² = 0.8 in any context.
    const out = new Float64Array(2);
    h.skillAt('new', 3, out, 'x');
    expect([out[0], out[1]]).toEqual([0, 0.8]);
  });

  it('(b) two contexts whose deviations have (near) zero variance give the predictions of no context', () => {
    const log = randomLog(7, 400, ['x', 'y']);
    const without = onlinePredictions(log, { inference: 'ep' });
    const tiny = onlinePredictions(log, { inference: 'ep', contextPriorVariance: 1e-12 });
    expect(tiny.length).toBe(without.length);
    let largest = 0;
    for (let i = 0; i < without.length; i++) largest = Math.max(largest, Math.abs(tiny[i]! - without[i]!));
    expect(largest).toBeLessThan(1e-9);
    // …while a real deviation variance changes them.
    const real = onlinePredictions(log, { inference: 'ep', contextPriorVariance: 0.3, contextDailyVariance: 0.001 });
    expect(real.some((p, i) => Math.abs(p - without[i]!) > 1e-3)).toBe(true);
  });

  it('property: with (near) zero deviation variance, any log with any contexts predicts as without contexts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 4 }), fc.constantFrom('logistic', 'probit'), (seed, contexts, link) => {
        const names = ['x', 'y', 'z', 'w'].slice(0, contexts);
        const log = randomLog(seed, 60, names);
        const link_ = link as 'logistic' | 'probit';
        const without = onlinePredictions(log, { inference: 'ep', link: link_, window: 4 });
        const tiny = onlinePredictions(log, { inference: 'ep', link: link_, window: 4, contextPriorVariance: 1e-12, contextDailyVariance: 1e-14 });
        // Probit: the erfc approximation's two branches meet at z = 0 with a gap near its 1.2e-7 relative error, and a
        // comparison whose mean is ±1e-13 lands on either side (2.6e-8 seen, seed 847366, two contexts).
        const bound = link === 'logistic' ? 1e-8 : 1e-7;
        for (let i = 0; i < without.length; i++) expect(Math.abs(tiny[i]! - without[i]!)).toBeLessThan(bound);
        // With the cycle, the timelines re-smoothed each day are a share of all of them, deviations included: the two
        // histories re-smooth different players on a day, and their incremental estimates differ by what one pass more or
        // less leaves (up to 3e-8 in a prediction, seen on a probit log with seed 959765), never by a model's difference.
        const cycled = onlinePredictions(log, { inference: 'ep', link: link_, window: 4, cycle: 3 });
        const cycledTiny = onlinePredictions(log, { inference: 'ep', link: link_, window: 4, cycle: 3, contextPriorVariance: 1e-12, contextDailyVariance: 1e-14 });
        for (let i = 0; i < cycled.length; i++) expect(Math.abs(cycledTiny[i]! - cycled[i]!)).toBeLessThan(1e-6);
      }),
      { numRuns: 40 },
    );
  });

  it('the batch path (addMatches, then converge) reaches the fixed point the incremental one does, deviations included', () => {
    const log = randomLog(5, 150, ['x', 'y', 'z']);
    const options = { inference: 'ep' as const, contextPriorVariance: 0.3, contextDailyVariance: 0.002 };
    const batch = new WhrHistory(options);
    batch.addMatches(log);
    batch.converge(1e-10, 2000);
    const incremental = new WhrHistory(options);
    for (const match of log) incremental.addMatch(match);
    incremental.converge(1e-10, 2000);
    for (const id of incremental.playerIds()) {
      expect(batch.estimate(id)!.mean).toBeCloseTo(incremental.estimate(id)!.mean, 6);
      for (const [context, deviation] of incremental.contextEstimates(id)) expect(batch.contextEstimates(id).get(context)!.mean).toBeCloseTo(deviation.mean, 6);
    }
    expect(batch.playerIds().length).toBe(12);
  });

  it('contexts off (contextPriorVariance 0, the default): a match context changes nothing', () => {
    const log = randomLog(11, 200, ['x', 'y']);
    const stripped = log.map(({ context: _context, ...match }) => match);
    expect(onlinePredictions(log, { inference: 'ep' })).toEqual(onlinePredictions(stripped, { inference: 'ep' }));
  });

  it('the posterior mode has no context deviations: contextPriorVariance with inference map is an error naming the option', () => {
    expect(() => new WhrHistory({ inference: 'map', contextPriorVariance: 0.1 })).toThrow(InvalidInputError);
    expect(() => new WhrHistory({ inference: 'map', contextPriorVariance: 0.1 })).toThrow(/contextPriorVariance/);
    // A horizon combines with context deviations (its freezes keep them: horizon.test.ts); under map, the deviations are still what is refused.
    expect(() => new WhrHistory({ horizon: 730, contextPriorVariance: 0.1 })).not.toThrow();
    expect(() => new WhrHistory({ inference: 'map', horizon: 730, contextPriorVariance: 0.1 })).toThrow(/contextPriorVariance/);
    expect(() => new WhrHistory({ horizon: 730 })).not.toThrow();
    expect(() => new WhrHistory({ inference: 'map', contextDailyVariance: 0.1 })).not.toThrow();
  });

  it('as a RatingSystem: states carry each deviation as an offset, and predict in a context adds it', () => {
    const system = createSystem('whr', { contextPriorVariance: 0.2, contextDailyVariance: 0.001 });
    const states = new Map();
    for (const match of [inContext(game('a', 'b', 0), 'x'), inContext(game('a', 'c', 0), 'y'), inContext(game('b', 'c', 0), 'x')]) {
      for (const change of system.rateMatch(match, states).players) states.set(change.id, change.after);
    }
    const all = (system as unknown as { states(): Map<string, import('../rating-system.js').PlayerState> }).states();
    const a = all.get('a')!;
    expect(Object.keys(a.contexts ?? {}).sort()).toEqual(['x', 'y']);
    expect(a.contexts!.x!.matches).toBe(1);
    const history_ = (system as unknown as { history: WhrHistory }).history;
    expect(a.contexts!.x!.offset).toBeCloseTo(history_.contextEstimates('a').get('x')!.mean * WHR_SCALE, 9);
    // The same day: predict from the states equals the history's prediction, in a played context and a new one.
    for (const context of ['x', 'y', 'z']) {
      const match = inContext(game('a', 'b', 0), context);
      expect(system.predict([[a], [all.get('b')!]], context)[0]).toBeCloseTo(history_.predictMatch(match), 12);
    }
    // Without a context, the general skills alone.
    expect(system.predict([[a], [all.get('b')!]])[0]).toBeCloseTo(history_.predictMatch(game('a', 'b', 0)), 12);
    // Idle for 10 days: the general variance grows by 10 w², each deviation's by 10 wc² (0.001), the offsets stay.
    const idled = system.idle!(a, 10);
    const rdOf = (variance: number): number => Math.sqrt(variance) * WHR_SCALE;
    const deviationVariance = (a.contexts!.x!.rd! / WHR_SCALE) ** 2;
    expect(idled.contexts!.x!.rd).toBeCloseTo(rdOf(deviationVariance + 10 * 0.001), 9);
    expect(idled.contexts!.x!.offset).toBe(a.contexts!.x!.offset);
  });
});

/** A reproducible log of duels, two-player teams, three-team matches, draws and home sides over `count` matches, each in one of `contexts`. */
function randomLog(seed: number, count: number, contexts: readonly string[]): Match[] {
  let s = seed;
  const random = (): number => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const matches: Match[] = [];
  let day = 0;
  for (let i = 0; i < count; i++) {
    if (random() < 0.3) day += 1 + Math.floor(random() * 3);
    const teamCount = random() < 0.1 ? 3 : 2;
    const size = random() < 0.3 ? 2 : 1;
    const used = new Set<number>();
    const teams = [];
    for (let t = 0; t < teamCount; t++) {
      const players = [];
      while (players.length < size) {
        const p = Math.floor(random() * 12);
        if (used.has(p)) continue;
        used.add(p);
        players.push({ id: `p${p}` });
      }
      teams.push({ players, rank: 1 + Math.floor(random() * teamCount) });
    }
    const match: Match = { at: day * DAY, teams, context: contexts[Math.floor(random() * contexts.length)]! };
    if (random() < 0.3) match.home = 0;
    matches.push(match);
  }
  return matches;
}

/** Each two-team match predicted online (before it is added), with a home offset of 0.2. */
function onlinePredictions(matches: readonly Match[], options: ConstructorParameters<typeof WhrHistory>[0]): number[] {
  const h = new WhrHistory(options);
  const out: number[] = [];
  for (const match of matches) {
    h.prepare(match);
    if (match.teams.length === 2) out.push(h.predictMatch(match, 0.2));
    h.addMatch(match, 0.2);
  }
  return out;
}

describe("whr: a newcomer's learning curve (newcomerTrend) and prior mean (newcomerMean)", () => {
  const ep = (matches: Match[], options: ConstructorParameters<typeof WhrHistory>[0] = {}): WhrHistory => history(matches, { inference: 'ep', ...options });

  it('one probit game, then a prediction 50 days on: the mean has risen by a·τ·(1 − e^(−50/τ)), by hand', () => {
    // a beats b on day 0 (priors N(0, 1)): E[a] = √(2/π)/√3 = 0.46065887, Var[a] = 1 − 2/(3π) = 0.78779341, as without a trend
    // (the trend moves a timeline between its days, and both have one node). On day 50, a = 0.01, τ = 100, w² = 0.01:
    // mean 0.46065887 + 0.01·100·(1 − e^(−0.5)) = 0.46065887 + 0.39346934 = 0.85412821, variance 0.78779341 + 50·0.01 = 1.28779341.
    // Against c, new on day 50 (N(0, 1), no rise yet): Φ(0.85412821/√(1 + 1.28779341 + 1)) = Φ(0.47105412) = 0.68119896.
    const options = { priorVariance: 1, dailyVariance: 0.01, link: 'probit' as const, newcomerTrend: 0.01, newcomerTrendPeriods: 100 };
    const h = ep([game('a', 'b', 0)], options);
    expect(h.estimate('a')!.mean).toBeCloseTo(0.46065887, 6);
    expect(h.estimate('a')!.variance).toBeCloseTo(0.78779341, 6);
    expect(h.predictMatch(game('a', 'c', 50))).toBeCloseTo(0.68119896, 6);
    // Without the trend: Φ(0.46065887/√3.28779341) = 0.60027334.
    expect(ep([game('a', 'b', 0)], { ...options, newcomerTrend: 0 }).predictMatch(game('a', 'c', 50))).toBeCloseTo(0.60027334, 6);
  });

  it('every player entering on the same day: each node rises by exactly a·τ·(1 − e^(−t/τ)), variances and predictions unchanged (filter and smoother)', () => {
    // The likelihood reads only differences of skills, and every timeline's mean rises by the same amount on each day:
    // the model with a trend is the one without, each day's skills shifted by that amount.
    const log = [game('a', 'b', 0), game('c', 'd', 0), game('a', 'c', 3), game('d', 'b', 3), game('a', 'd', 7), game('b', 'c', 7), game('c', 'a', 20), game('d', 'a', 45)];
    const a = 0.02;
    const tau = 30;
    const plain = ep(log, { dailyVariance: 0.01 });
    const trended = ep(log, { dailyVariance: 0.01, newcomerTrend: a, newcomerTrendPeriods: tau });
    for (const id of ['a', 'b', 'c', 'd']) {
      const p = plain.timeline(id);
      const t = trended.timeline(id);
      expect(t.length).toBe(p.length);
      for (let k = 0; k < p.length; k++) expect(t[k]!.mean).toBeCloseTo(p[k]!.mean + a * tau * (1 - Math.exp(-p[k]!.day / tau)), 9);
      expect(trended.estimate(id)!.variance).toBeCloseTo(plain.estimate(id)!.variance, 9);
    }
    expect(trended.predictMatch(game('a', 'b', 60))).toBeCloseTo(plain.predictMatch(game('a', 'b', 60)), 9);
    // Online too: each prediction as without the trend.
    const online = (options: ConstructorParameters<typeof WhrHistory>[0]) => onlinePredictions(log, { inference: 'ep', dailyVariance: 0.01, ...options });
    const withTrend = online({ newcomerTrend: a, newcomerTrendPeriods: tau });
    const without = online({});
    for (let i = 0; i < without.length; i++) expect(withTrend[i]).toBeCloseTo(without[i]!, 9);
  });

  it('newcomerMean context: a new player is predicted at the mean first skill of the earlier entrants of the match context, by hand from the estimates', () => {
    const log = randomLog(3, 300, ['futures', 'tour']);
    const h = new WhrHistory({ inference: 'ep', link: 'probit', newcomerMean: 'context' });
    const firstContext = new Map<string, string>();
    for (const match of log) {
      h.prepare(match);
      h.addMatch(match);
      for (const team of match.teams) for (const { id } of team.players) if (!firstContext.has(id)) firstContext.set(id, match.context!);
    }
    const day = log[log.length - 1]!.at! / DAY;
    for (const context of ['futures', 'tour']) {
      const entrants = [...firstContext].filter(([, c]) => c === context).map(([id]) => h.timeline(id)[0]!.mean);
      expect(entrants.length).toBeGreaterThan(0);
      const mean = entrants.reduce((s, m) => s + m, 0) / entrants.length;
      // A newcomer against p0 on the last day: Φ((μ_context − m)/√(1 + σ0² + v)), m and v p0's estimate on that day.
      const known = h.estimate('p0')!;
      const variance = known.variance + h.options.dailyVariance * (day - known.day);
      const match: Match = { ...game('newcomer', 'p0', day), context };
      expect(h.predictMatch(match)).toBeCloseTo(normalCdf((mean - known.mean) / Math.sqrt(1 + h.options.priorVariance + variance)), 9);
    }
    // The two groups did not enter at the same level.
    const zero = new WhrHistory({ inference: 'ep', link: 'probit' });
    for (const match of log) zero.addMatch(match);
    expect(zero.predictMatch({ ...game('newcomer', 'p0', day), context: 'tour' })).not.toBeCloseTo(h.predictMatch({ ...game('newcomer', 'p0', day), context: 'tour' }), 6);
  });

  it('property: at their neutral values (newcomerTrend 0 with any τ, newcomerMean zero) any log predicts as without them, to the bit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.double({ min: 1, max: 5000, noNaN: true }), fc.constantFrom('logistic', 'probit'), (seed, tau, link) => {
        const log = randomLog(seed, 60, ['x', 'y']);
        const base = { inference: 'ep' as const, link: link as 'logistic' | 'probit', window: 4, cycle: 3 };
        expect(onlinePredictions(log, { ...base, newcomerTrend: 0, newcomerTrendPeriods: tau, newcomerMean: 'zero' })).toEqual(onlinePredictions(log, base));
      }),
      { numRuns: 40 },
    );
    // …while the options on change them.
    const log = randomLog(9, 200, ['x', 'y']);
    const base = onlinePredictions(log, { inference: 'ep' });
    expect(onlinePredictions(log, { inference: 'ep', newcomerTrend: 0.01, newcomerTrendPeriods: 10 }).some((p, i) => Math.abs(p - base[i]!) > 1e-3)).toBe(true);
    expect(onlinePredictions(log, { inference: 'ep', newcomerMean: 'entrants' }).some((p, i) => Math.abs(p - base[i]!) > 1e-6)).toBe(true);
  });

  it('the batch path (addMatches, then converge) reaches the fixed point the incremental one does, with a trend', () => {
    const log = randomLog(5, 150, ['x']);
    const options = { inference: 'ep' as const, newcomerTrend: 0.01, newcomerTrendPeriods: 20 };
    const batch = new WhrHistory(options);
    batch.addMatches(log);
    batch.converge(1e-10, 2000);
    const incremental = new WhrHistory(options);
    for (const match of log) incremental.addMatch(match);
    incremental.converge(1e-10, 2000);
    for (const id of incremental.playerIds()) expect(batch.estimate(id)!.mean).toBeCloseTo(incremental.estimate(id)!.mean, 6);
  });

  it('both are expectation propagation only and do not combine with a horizon: errors naming the option', () => {
    expect(() => new WhrHistory({ inference: 'map', newcomerTrend: 0.001 })).toThrow(/newcomerTrend/);
    expect(() => new WhrHistory({ inference: 'map', newcomerMean: 'context' })).toThrow(/newcomerMean/);
    // With a horizon both freeze with the past (horizon.test.ts).
    expect(() => new WhrHistory({ horizon: 730, newcomerTrend: 0.001, newcomerMean: 'entrants' })).not.toThrow();
    expect(() => new WhrHistory({ inference: 'map', newcomerTrendPeriods: 10 })).not.toThrow();
  });
});

describe('whr: the timelines’ node lists (one pool)', () => {
  it('lists that outgrow their room move and are packed again, and every timeline still reads its own nodes in time order', () => {
    // 300 players, each in one duel a day for 60 days (pairings shifting by the day), a third of the matches in a
    // context (a deviation timeline each): every list outgrows its room four times, so lists move and the pool is packed.
    const players = 300;
    const history = new WhrHistory({ contextPriorVariance: 0.05 });
    const internals = history as unknown as { timelineNodesEnd: number; timelineNodesUnused: number; packNodeLists(): void };
    let packs = 0;
    const pack = internals.packNodeLists.bind(history);
    internals.packNodeLists = () => {
      packs++;
      pack();
    };
    const played = new Map<string, number[]>();
    for (let day = 0; day < 60; day++) {
      for (let i = 0; i < players; i += 2) {
        const a = `p${(i + day) % players}`;
        const b = `p${(i + 1 + 3 * day) % players}`;
        if (a === b) continue;
        const match: Match = {
          at: day * DAY,
          teams: [
            { players: [{ id: a }], rank: 1 },
            { players: [{ id: b }], rank: 2 },
          ],
        };
        if (i % 3 === 0) match.context = 'map';
        history.addMatch(match);
        for (const id of [a, b]) {
          const days = played.get(id) ?? [];
          if (days[days.length - 1] !== day) days.push(day);
          played.set(id, days);
        }
      }
    }
    expect(packs).toBeGreaterThan(0);
    // A node per player per day played, in time order, each timeline's own.
    for (const [id, days] of played)
      expect(
        history.timeline(id).map((node) => node.day),
        id,
      ).toEqual(days);
    // The pool's unused room stays under a quarter (past the first 4096), and the whole under twice the nodes.
    expect(internals.timelineNodesUnused).toBeLessThanOrEqual(Math.max(4096, internals.timelineNodesEnd / 4));
    expect(internals.timelineNodesEnd).toBeLessThanOrEqual(2 * history.nodesCount + 4096);
  });
});
