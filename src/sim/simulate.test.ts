import { describe, expect, it } from 'vitest';
import { Matchmaker } from 'ladder-core/matchmaking/matchmaker.js';
import { errorCurveSvg, quantiles, simulate, syntheticQueue } from './index.js';

describe('quantiles', () => {
  it('takes order statistics at floor(q·n)', () => {
    // 1..100: index floor(0.5·100)=50 → 51, floor(0.9·100)=90 → 91, floor(0.99·100)=99 → 100.
    expect(quantiles(Array.from({ length: 100 }, (_, i) => 100 - i))).toEqual({ count: 100, p50: 51, p90: 91, p99: 100 });
  });
});

describe('simulate (small run)', () => {
  const options = { players: 160, days: 0.1, teamSize: 2, seed: 3 } as const;
  const report = simulate(options);

  it('is deterministic for a seed', () => {
    expect(simulate(options)).toEqual(report);
  });

  it('produces consistent figures', () => {
    expect(report.matches).toBeGreaterThan(0);
    // Every matched ticket has one wait; shares lie in [0, 1] and widening shares sum to 1.
    const steps = Object.values(report.wideningSteps).reduce((a, b) => a + b, 0);
    expect(steps).toBeCloseTo(1, 9);
    for (const share of [report.predictedClose, report.predictedLopsided, report.trueClose, report.trueLopsided]) {
      expect(share).toBeGreaterThanOrEqual(0);
      expect(share).toBeLessThanOrEqual(1);
    }
    expect(report.predictedClose + report.predictedLopsided).toBeLessThanOrEqual(1);
    const byRegion = Object.values(report.waitByRegion).reduce((n, q) => n + q.count, 0);
    expect(byRegion).toBe(report.waitAll.count);
    expect(Object.values(report.waitByPartySize).reduce((n, q) => n + q.count, 0)).toBe(report.waitAll.count);
    expect(report.worstPingP95).toBeLessThanOrEqual(150); // nobody's maxPing exceeds 150 ms
  });

  it('draws an SVG with one line per report', () => {
    const svg = errorCurveSvg([report, { ...report, system: 'glicko2' }]);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
  });
});

describe('simulate with injected cheaters', () => {
  const report = simulate({ players: 160, days: 0.5, teamSize: 2, seed: 4, quitRate: 0.05, keepLog: true, cheats: { winTraders: 2, boosters: 2, arrangedPerDay: 24 } });
  const sides = (match: NonNullable<typeof report.log>[number], id: string) => match.teams.findIndex((team) => team.players.some((p) => p.id === id));

  it('logs every rated match and plays arranged matches on opposite teams', () => {
    const log = report.log!;
    const cheaters = report.cheaters!;
    expect(log).toHaveLength(report.matches + cheaters.arrangedMatches);
    expect(cheaters.arrangedMatches).toBeGreaterThan(0);
    expect(new Set(log.map((m) => m.id)).size).toBe(log.length);
    expect(log.some((m) => m.teams.some((t) => t.players.some((p) => p.quit)))).toBe(true);
    for (const [a, b] of cheaters.winTraders) {
      // The two as opponents (with this seed only in their arranged matches): taking turns, a first.
      const met = log.filter((m) => sides(m, a) !== -1 && sides(m, b) !== -1 && sides(m, a) !== sides(m, b));
      expect(met.length).toBeGreaterThanOrEqual(2);
      expect(met.every((m, k) => (m.teams[sides(m, a)].rank === 1) === (k % 2 === 0))).toBe(true);
    }
    for (const { booster, boostee } of cheaters.boosters) {
      for (const m of log) if (sides(m, booster) !== -1 && sides(m, boostee) !== -1) expect(m.teams[sides(m, boostee)].rank).toBe(1);
    }
  });

  it('leaves a run without these options as it was (no extra draws)', () => {
    const plain = simulate({ players: 160, days: 0.5, teamSize: 2, seed: 4 });
    const off = simulate({ players: 160, days: 0.5, teamSize: 2, seed: 4, quitRate: 0, cheats: {}, keepLog: false });
    expect(off).toEqual(plain);
  });
});

describe('synthetic queue', () => {
  it('is valid input for the matchmaker and matches most of a large queue', () => {
    const tickets = syntheticQueue({ tickets: 3000, seed: 9 });
    const matchmaker = new Matchmaker({ teamSize: 6 });
    for (const ticket of tickets) matchmaker.add(ticket);
    const result = matchmaker.pass(300);
    expect(result.matches.length).toBeGreaterThan(100);
  });
});
