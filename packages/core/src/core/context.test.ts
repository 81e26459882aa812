/**
 * Per-context offsets (a match's `context`: a map, a mode, a surface, a
 * tournament level): skill in a context is the general rating plus the
 * player's offset for it, the offset starting at 0. Elo and Glicko-2 (and
 * World vs World, which shares Glicko-2's engine) have it as an option that
 * is off by default: off, a context changes nothing, bit for bit.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from './errors.js';
import { GLICKO2_SCALE, glicko2G, glicko2StepVolatility } from './glicko2.js';
import { type Match, parseMatch } from './match.js';
import type { PlayerState, RatingSystem } from './rating-system.js';
import { predict, rate } from './rate.js';
import { replay } from './replay.js';
import { createSystem } from './systems.js';

const DAY = 86_400_000;
const CONTEXTS = ['clay', 'grass', 'hard'];

/** Random one-against-one and two-against-two logs over eight players, each match in a random context or none. */
const logs = fc.array(
  fc.record({
    players: fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 4, maxLength: 4 }),
    size: fc.integer({ min: 1, max: 2 }),
    result: fc.constantFrom(1, 2, 0),
    context: fc.option(fc.constantFrom(...CONTEXTS), { nil: undefined }),
    gap: fc.integer({ min: 0, max: 10 }),
  }),
  { maxLength: 40 },
);

function matchesOf(log: ReadonlyArray<{ players: number[]; size: number; result: number; context?: string | undefined; gap: number }>, withContext = true): Match[] {
  let day = 0;
  return log.map((g) => {
    day += g.gap;
    const ids = g.players.map((i) => `p${i}`);
    const ranks = g.result === 1 ? [1, 2] : g.result === 2 ? [2, 1] : [1, 1];
    const match: Match = {
      at: day * DAY,
      teams: [
        { players: ids.slice(0, g.size).map((id) => ({ id })), rank: ranks[0]! },
        { players: ids.slice(2, 2 + g.size).map((id) => ({ id })), rank: ranks[1]! },
      ],
    };
    if (withContext && g.context !== undefined) match.context = g.context;
    return match;
  });
}

function match(winner: string, loser: string, context?: string, at?: number): Match {
  return {
    ...(at !== undefined ? { at } : {}),
    ...(context !== undefined ? { context } : {}),
    teams: [
      { players: [{ id: winner }], rank: 1 },
      { players: [{ id: loser }], rank: 2 },
    ],
  };
}

describe('a match context', () => {
  it('is read and checked, a bad one naming the field', () => {
    const teams = [
      { players: ['a'], rank: 1 },
      { players: ['b'], rank: 2 },
    ];
    expect(parseMatch({ teams, context: "King's Row" }).context).toBe("King's Row");
    expect(parseMatch({ teams }).context).toBeUndefined();
    for (const bad of [12, '', ' clay', 'clay ', 'x'.repeat(65), 'a\u0000b', ['clay']]) {
      let error: unknown;
      try {
        parseMatch({ teams, context: bad });
      } catch (e) {
        error = e;
      }
      expect(error, String(bad)).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).field).toBe('context');
    }
    expect(parseMatch({ teams, context: 'x'.repeat(64) }).context).toHaveLength(64);
  });
});

describe('per-context offsets, switched off (the default)', () => {
  for (const name of ['elo', 'glicko2', 'wvw'] as const) {
    it(`${name}: a context changes nothing, bit for bit`, () => {
      fc.assert(
        fc.property(logs, (log) => {
          const scored = (m: Match): Match => (name === 'wvw' ? { ...m, teams: m.teams.map((t) => ({ players: t.players, score: 3 - t.rank! })) } : m);
          const system = createSystem(name);
          const withContexts = replay(system, matchesOf(log).map(scored));
          const without = replay(system, matchesOf(log, false).map(scored));
          expect(withContexts).toEqual(without);
          const ids = [...without.keys()];
          if (ids.length >= 2)
            expect(system.predict([[withContexts.get(ids[0]!)!], [withContexts.get(ids[1]!)!]], 'clay')).toEqual(
              system.predict([[without.get(ids[0]!)!], [without.get(ids[1]!)!]]),
            );
        }),
        { numRuns: 60 },
      );
    });
  }
});

describe('Elo with per-context offsets', () => {
  it('moves the rating by K and the offset by contextK, worked by hand', () => {
    const elo = createSystem('elo', { k: 32, contextK: 16 });
    // Equal players, E = 0.5: the winner's rating +32 · 0.5 = +16, its clay offset +16 · 0.5 = +8.
    let states = new Map<string, PlayerState>(elo.rateMatch(match('a', 'b', 'clay'), new Map()).players.map((c) => [c.id, c.after]));
    expect(states.get('a')).toEqual({ rating: 1516, matches: 1, contexts: { clay: { offset: 8, matches: 1 } } });
    expect(states.get('b')).toEqual({ rating: 1484, matches: 1, contexts: { clay: { offset: -8, matches: 1 } } });
    // On clay a plays at 1524 and b at 1476: E = 1 / (1 + 10^(-48/400)) = 1 / (1 + 0.758578) = 0.568641.
    expect(elo.predict([[states.get('a')!], [states.get('b')!]], 'clay')[0]).toBeCloseTo(0.568641, 6);
    // On grass, new to both, they play at 1516 and 1484: E = 1 / (1 + 10^(-32/400)) = 1 / (1 + 0.831764) = 0.545922.
    expect(elo.predict([[states.get('a')!], [states.get('b')!]], 'grass')[0]).toBeCloseTo(0.545922, 6);
    // b wins on grass: b's rating +32 · 0.545922 = +17.4695, its grass offset +16 · 0.545922 = +8.73475; clay is kept.
    states = new Map([...states, ...elo.rateMatch(match('b', 'a', 'grass'), states).players.map((c) => [c.id, c.after] as const)]);
    expect(states.get('b')!.rating).toBeCloseTo(1484 + 17.4695, 4);
    expect(states.get('b')!.contexts!.grass!.offset).toBeCloseTo(8.73475, 4);
    expect(states.get('b')!.contexts!.clay).toEqual({ offset: -8, matches: 1 });
    // A match without a context moves the rating alone.
    const plain = elo.rateMatch(match('a', 'b'), states).players.find((c) => c.id === 'a')!;
    expect(plain.after.contexts).toEqual(plain.before.contexts);
  });

  it('is reached through rate and predict, a bad context naming the field', () => {
    const elo = createSystem('elo', { contextK: 16 });
    const states = rate(elo, {
      context: 'clay',
      teams: [
        { players: ['a'], rank: 1 },
        { players: ['b'], rank: 2 },
      ],
    });
    // As above: 1524 against 1476 on clay, 0.568641.
    expect(predict(elo, [['a'], ['b']], states, { context: 'clay' })[0]).toBeCloseTo(0.568641, 6);
    expect(predict(elo, [['a'], ['b']], states)[0]).toBeCloseTo(0.545922, 6);
    expect(() => predict(elo, [['a'], ['b']], states, { context: ' clay' })).toThrow(expect.objectContaining({ field: 'context' }));
  });

  it('with one context for every match is plain Elo on rating + offset with K + contextK', () => {
    fc.assert(
      fc.property(logs, fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), (log, k, contextK) => {
        const one = matchesOf(log).map((m) => ({ ...m, context: 'only' }));
        const withOffsets = replay(createSystem('elo', { k, contextK }), one);
        const plain = replay(createSystem('elo', { k: k + contextK }), matchesOf(log, false));
        for (const [id, state] of plain) {
          const other = withOffsets.get(id)!;
          expect(other.rating + (other.contexts?.only?.offset ?? 0)).toBeCloseTo(state.rating, 9);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('Glicko-2 with per-context offsets', () => {
  it('splits the step between rating and offset by their variances, worked by hand', () => {
    const system = createSystem('glicko2', { contextRd: 100 });
    // Two new players (1500, RD 350, σ 0.06) on clay, new to both: each plays at 1500 with deviation sqrt(350² + 100²).
    const [a] = system.rateMatch(match('a', 'b', 'clay'), new Map()).players;
    const phi = 350 / GLICKO2_SCALE;
    const phiC = 100 / GLICKO2_SCALE;
    const g = glicko2G(Math.sqrt(phi * phi + phiC * phiC));
    // E = 0.5 (equal skills): v⁻¹ = g² E (1 − E), improvement = g (1 − E).
    const vInverse = g * g * 0.25;
    const improvement = g * 0.5;
    const sigma = Math.exp(glicko2StepVolatility(Math.log(0.06 ** 2), 0.06 ** 2, phi * phi, vInverse, improvement, 0.5, 1e-6) / 2);
    const general = phi * phi + sigma * sigma; // step 6: φ*²
    const p = general + phiC * phiC; // the variance of skill on clay
    const denominator = 1 + p * vInverse;
    expect(a!.after.rating).toBeCloseTo(1500 + ((general * improvement) / denominator) * GLICKO2_SCALE, 9);
    expect(a!.after.contexts!.clay!.offset).toBeCloseTo(((phiC * phiC * improvement) / denominator) * GLICKO2_SCALE, 9);
    expect(a!.after.rd).toBeCloseTo(Math.sqrt(general - (general * general * vInverse) / denominator) * GLICKO2_SCALE, 9);
    expect(a!.after.contexts!.clay!.rd).toBeCloseTo(Math.sqrt(phiC * phiC - (phiC ** 4 * vInverse) / denominator) * GLICKO2_SCALE, 9);
    expect(a!.after.volatility).toBe(sigma);
    // The shares: the offset moves φ_c² / φ*² as far as the rating; together skill on clay moves as step 7 with P for φ*².
    const step = a!.after.rating - 1500;
    expect(a!.after.contexts!.clay!.offset / step).toBeCloseTo((phiC * phiC) / general, 12);
    expect(step + a!.after.contexts!.clay!.offset).toBeCloseTo((improvement / (1 / p + vInverse)) * GLICKO2_SCALE, 9);
    // Numerically: the RD-350 pair move by about 140 points (rating) and 11 (offset).
    expect(step).toBeGreaterThan(100);
    expect(a!.after.contexts!.clay!.offset).toBeGreaterThan(5);
  });

  it('with a vanishing offset deviation is plain Glicko-2', () => {
    fc.assert(
      fc.property(logs, (log) => {
        const tiny = replay(createSystem('glicko2', { contextRd: 1e-9 }), matchesOf(log));
        const plain = replay(createSystem('glicko2'), matchesOf(log, false));
        for (const [id, state] of plain) {
          const other = tiny.get(id)!;
          expect(Math.abs(other.rating - state.rating), id).toBeLessThan(1e-6);
          expect(Math.abs(other.rd! - state.rd!), id).toBeLessThan(1e-6);
          expect(other.volatility!).toBeCloseTo(state.volatility!, 9);
          for (const offset of Object.values(other.contexts ?? {})) expect(Math.abs(offset.offset)).toBeLessThan(1e-9);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('learns a context: a player who wins on clay and loses elsewhere is favoured on clay only', () => {
    const system: RatingSystem = createSystem('glicko2', { contextRd: 150 });
    const log: Match[] = [];
    for (let i = 0; i < 30; i++) log.push(match('a', `x${i}`, 'clay', i * DAY), match(`y${i}`, 'a', 'grass', i * DAY + 1));
    const states = replay(system, log);
    const a = states.get('a')!;
    const fresh = system.initial();
    expect(a.contexts!.clay!.offset).toBeGreaterThan(0);
    expect(a.contexts!.grass!.offset).toBeLessThan(0);
    expect(a.contexts!.clay!.rd!).toBeLessThan(150);
    expect(a.contexts!.clay!.matches).toBe(30);
    expect(system.predict([[a], [fresh]], 'clay')[0]).toBeGreaterThan(system.predict([[a], [fresh]])[0]!);
    expect(system.predict([[a], [fresh]], 'grass')[0]).toBeLessThan(system.predict([[a], [fresh]])[0]!);
  });
});
