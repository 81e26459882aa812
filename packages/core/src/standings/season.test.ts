import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSystem, type PlayerState } from '../core/systems.js';
import { invalidField } from '../../../../test/support/invalid-field.js';
import { DAY_MS, freezeStandings, softReset, standingsAt } from './index.js';

const glicko = createSystem('glicko2');
const teamrank = createSystem('teamrank');
const elo = createSystem('elo');

describe('softReset', () => {
  it('pulls Glicko-2 ratings halfway to 1500 and raises RDs to the floor given', () => {
    const states = new Map<string, PlayerState>([
      ['a', { rating: 1800, rd: 60, volatility: 0.05, matches: 40, lastAt: 5 }],
      ['b', { rating: 1200, rd: 200, volatility: 0.07, matches: 3 }],
    ]);
    const next = softReset(states, { keep: 0.5, rd: 100 }, glicko);
    expect(next.get('a')).toEqual({ rating: 1650, rd: 100, volatility: 0.05, matches: 40, lastAt: 5 });
    expect(next.get('b')).toEqual({ rating: 1350, rd: 200, volatility: 0.07, matches: 3 });
    expect(states.get('a')!.rating).toBe(1800); // input untouched
    expect(softReset(states, { keep: 0.5, restartPlacement: true }, glicko).get('a')!.matches).toBe(0);
  });

  it('keeps team rank at the cent and at or above 1.00', () => {
    const states = new Map<string, PlayerState>([
      ['a', { rating: 23.45, matches: 12 }],
      ['b', { rating: 1, matches: 12 }],
    ]);
    // 1 + 0.5 · 22.45 = 12.225 → 12.23 (half up on the decimal value).
    expect(softReset(states, { keep: 0.5 }, teamrank).get('a')!.rating).toBe(12.23);
    expect(softReset(states, { keep: 0.5 }, teamrank).get('b')!.rating).toBe(1);
    // Toward a value below the floor: held at the floor.
    expect(softReset(states, { keep: 0, toward: 0.2 }, teamrank).get('a')!.rating).toBe(1);
  });

  const state = fc.record({ rating: fc.double({ min: 1, max: 3000, noNaN: true }), rd: fc.double({ min: 30, max: 350, noNaN: true }), matches: fc.nat(100) });
  it('is monotone, never moves a rating away from `toward`, never lowers an RD; keep 1 changes nothing, keep 0 resets', () => {
    fc.assert(
      fc.property(fc.array(state, { minLength: 1, maxLength: 20 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 30, max: 350, noNaN: true }), (list, keep, rd) => {
        const states = new Map(list.map((s, i) => [`p${i}`, { ...s }]));
        const next = softReset(states, { keep, rd }, glicko);
        for (const [id, before] of states) {
          const after = next.get(id)!;
          expect(Math.abs(after.rating - 1500)).toBeLessThanOrEqual(Math.abs(before.rating - 1500) + 1e-9);
          expect(after.rd).toBeGreaterThanOrEqual(before.rd!);
          expect(after.rd).toBeGreaterThanOrEqual(rd);
          for (const [other, otherBefore] of states) if (before.rating <= otherBefore.rating) expect(after.rating).toBeLessThanOrEqual(next.get(other)!.rating);
        }
        expect(softReset(states, { keep: 1 }, glicko)).toEqual(states);
        for (const after of softReset(states, { keep: 0 }, glicko).values()) expect(after.rating).toBe(1500);
      }),
    );
  });

  it('team rank: every reset rank is a whole number of cents, at least 1.00, and keep 1 changes no rank', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 100, max: 1_000_000 }), { minLength: 1, maxLength: 20 }), fc.double({ min: 0, max: 1, noNaN: true }), (cents, keep) => {
        const states = new Map(cents.map((c, i) => [`p${i}`, { rating: c / 100, matches: 5 }]));
        for (const after of softReset(states, { keep }, teamrank).values()) {
          expect(after.rating).toBeGreaterThanOrEqual(1);
          expect(Math.abs(after.rating * 100 - Math.round(after.rating * 100))).toBeLessThan(1e-6);
        }
        expect(softReset(states, { keep: 1 }, teamrank)).toEqual(states);
      }),
    );
  });

  it.each<[string, Parameters<typeof softReset>[1], ReturnType<typeof createSystem>, string]>([
    ['keep above 1', { keep: 1.5 }, glicko, 'keep'],
    ['keep missing', { keep: undefined as unknown as number }, glicko, 'keep'],
    ['toward not finite', { keep: 0.5, toward: Infinity }, glicko, 'toward'],
    ['rd for a system without RD', { keep: 0.5, rd: 100 }, teamrank, 'rd'],
    ['rd of 0', { keep: 0.5, rd: 0 }, glicko, 'rd'],
    ['rd above the starting RD', { keep: 0.5, rd: 400 }, glicko, 'rd'],
    ['restartPlacement not a boolean', { keep: 0.5, restartPlacement: 'yes' as unknown as boolean }, elo, 'restartPlacement'],
  ])('rejects %s, naming the field', (_, options, system, field) => {
    expect(invalidField(() => softReset(new Map([['a', { rating: 1500, matches: 1 }]]), options, system))).toBe(field);
  });

  it('rejects a state with a non-finite rating', () => {
    expect(invalidField(() => softReset(new Map([['x', { rating: NaN, matches: 1 }]]), { keep: 0.5 }, elo))).toBe('states.x.rating');
  });
});

describe('freezeStandings', () => {
  const now = 100 * DAY_MS;
  const states = new Map<string, PlayerState>([
    ['a', { rating: 1700, rd: 50, matches: 20, lastAt: now - DAY_MS }],
    ['b', { rating: 1600, rd: 60, matches: 20, lastAt: now - DAY_MS }],
    ['c', { rating: 1600, rd: 70, matches: 20, lastAt: now - 2 * DAY_MS }],
    ['d', { rating: 1500, rd: 80, matches: 20, lastAt: now - 40 * DAY_MS }], // inactive
    ['e', { rating: 1900, rd: 300, matches: 3, lastAt: now }], // in placement
    ['f', { rating: 1400, rd: 90, matches: 20 }], // no time: active at now
  ]);

  it('lists the ranked players best first with rank, percentile and division', () => {
    expect(freezeStandings(states, { placementMatches: 10 }, now)).toEqual([
      { rank: 1, id: 'a', rating: 1700, rd: 50, percentile: 100, division: 'Master', matches: 20 },
      { rank: 2, id: 'b', rating: 1600, rd: 60, percentile: 50, division: 'Gold', matches: 20 },
      { rank: 2, id: 'c', rating: 1600, rd: 70, percentile: 50, division: 'Gold', matches: 20 },
      { rank: 4, id: 'f', rating: 1400, rd: 90, percentile: 1, division: 'Bronze', matches: 20 },
    ]);
  });

  it("agrees with the leaderboard's standings for every player (random populations)", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ rating: fc.integer({ min: 1, max: 40 }), matches: fc.nat(15), age: fc.integer({ min: 0, max: 60 }) }), { maxLength: 40 }), (list) => {
        const population = new Map(list.map((p, i) => [`p${i}`, { rating: p.rating, matches: p.matches, lastAt: now - p.age * DAY_MS }]));
        const rows = freezeStandings(population, {}, now);
        const standings = standingsAt(
          [...population].map(([id, s]) => ({ id, rating: s.rating, lastActiveAt: s.lastAt, matches: s.matches })),
          now,
        );
        const ranked = [...standings.values()].filter((s) => s.rank !== null && s.percentile !== null);
        expect(rows.map((r) => r.id).sort()).toEqual(ranked.map((s) => s.id).sort());
        for (const row of rows) {
          const standing = standings.get(row.id)!;
          expect([row.rank, row.percentile, row.division]).toEqual([standing.rank, standing.percentile, standing.division]);
        }
        for (let i = 1; i < rows.length; i++) expect(rows[i - 1].rating > rows[i].rating || (rows[i - 1].rating === rows[i].rating && rows[i - 1].id < rows[i].id)).toBe(true);
      }),
    );
  });

  it('rejects a bad clock', () => {
    expect(invalidField(() => freezeStandings(states, {}, NaN))).toBe('now');
  });
});
