/**
 * The typed library surface: options typed per system, the one-call `rate`,
 * the conservative rating, and reported figures rounded while states stay exact.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { invalidField } from '../../../../test/support/invalid-field.js';
import { conservativeRating, DISPLAY_DIGITS, roundForDisplay } from './display.js';
import { glicko2Update } from './glicko2.js';
import { UnknownSystemError } from './errors.js';
import { predict, rate } from './rate.js';
import { createSystem, type SystemName } from './systems.js';
import { teamRankMatch } from './teamrank.js';

describe('createSystem options, typed per system', () => {
  it('refuses a misspelt or foreign option at compile time, and at run time for untyped callers', () => {
    // Each line below fails to compile without its expectation (test/typecheck.test.ts runs tsc over this file).
    // @ts-expect-error `tua` is not a Glicko-2 option
    expect(invalidField(() => createSystem('glicko2', { tua: 0.3 }))).toBe('tua');
    // @ts-expect-error Elo has no tau
    expect(invalidField(() => createSystem('elo', { tau: 0.3 }))).toBe('tau');
    // @ts-expect-error not one of team rank's quitter modifiers
    expect(invalidField(() => createSystem('teamrank', { quitterModifier: 'heads' }))).toBe('quitterModifier');
    const misspelt = { tua: 0.3 };
    // @ts-expect-error a variable with no Glicko-2 option in common
    expect(invalidField(() => createSystem('wvw', misspelt))).toBe('tua');
  });

  it('takes any record from a caller whose system name is only known at run time', () => {
    const definition = JSON.parse('{"system":"glicko2","options":{"tau":0.3}}') as { system: SystemName; options: Record<string, unknown> };
    expect(createSystem(definition.system, definition.options).options).toMatchObject({ tau: 0.3 });
    expect(() => createSystem(definition.system, { tua: 0.3 })).toThrow(/unknown option for glicko2; known: rating, rd, volatility, tau/);
    expect(createSystem('teamrank', { quitterModifier: 'headcount', stakeDivisor: 10 }).options).toMatchObject({ quitterModifier: 'headcount', stakeDivisor: 10 });
  });

  it('takes a name typed as a plain string, and refuses an unknown one with a typed error that lists the names', () => {
    const fromConfig: string = JSON.parse('"elo"') as string;
    expect(createSystem(fromConfig).name).toBe('elo');
    const misspelt: string = 'glicko';
    let caught: unknown;
    try {
      createSystem(misspelt);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UnknownSystemError);
    expect(caught).toMatchObject({ system: 'glicko', field: 'system', known: expect.arrayContaining(['glicko2', 'elo', 'whr']) });
    // @ts-expect-error a misspelt literal does not compile
    expect(() => createSystem('glicko')).toThrow(UnknownSystemError);
  });
});

describe("rate: one match in, every player's new state out", () => {
  const duel = {
    teams: [
      { players: ['ann'], rank: 1 },
      { players: ['bob'], rank: 2 },
    ],
  };

  it('rates new players as Glicko-2 does by hand', () => {
    const after = rate(createSystem('glicko2'), duel);
    const byHand = glicko2Update({ rating: 1500, rd: 350, volatility: 0.06 }, [{ opponent: { rating: 1500, rd: 350 }, score: 1 }]);
    expect([...after.keys()]).toEqual(['ann', 'bob']);
    expect(after.get('ann')).toEqual({ ...byHand, matches: 1 });
    expect(after.get('bob')!.rating).toBeCloseTo(3000 - byHand.rating, 9);
  });

  it('starts from the states given, as a Map or a plain object, and leaves them unchanged', () => {
    const states = { ann: { rating: 1400, rd: 80, volatility: 0.06, matches: 30 }, bob: { rating: 1600, rd: 80, volatility: 0.06, matches: 30 } };
    const fromObject = rate(createSystem('glicko2'), duel, states);
    const fromMap = rate(createSystem('glicko2'), duel, new Map(Object.entries(states)));
    expect(fromObject).toEqual(fromMap);
    expect(fromObject.get('ann')!.rating).toBeGreaterThan(1400);
    expect(fromObject.get('ann')!.matches).toBe(31);
    expect(states.ann.rating).toBe(1400);
  });

  it('rates teams by rank (team rank, as teamRankMatch does) and validates the match', () => {
    const ranks = { a: { rating: 21.84, matches: 5 }, b: { rating: 19.71, matches: 5 }, c: { rating: 22.87, matches: 5 }, d: { rating: 17.04, matches: 5 } };
    const after = rate(
      createSystem('teamrank'),
      {
        teams: [
          { players: ['a', 'b'], rank: 1 },
          { players: ['c', 'd'], rank: 2 },
        ],
      },
      ranks,
    );
    const byHand = teamRankMatch(
      [
        [
          { id: 'a', rank: 21.84 },
          { id: 'b', rank: 19.71 },
        ],
        [
          { id: 'c', rank: 22.87 },
          { id: 'd', rank: 17.04 },
        ],
      ],
      'win',
    );
    for (const change of byHand) expect(after.get(change.id)!.rating).toBe(change.after);
    expect(invalidField(() => rate(createSystem('elo'), { teams: [{ players: ['a'], rank: 1 }] }))).toBe('teams');
  });
});

describe('rate with { all: true }: the whole updated map', () => {
  it("returns every player of the states given, the match's players updated, and leaves the input unchanged", () => {
    const system = createSystem('elo');
    const states = new Map([
      ['ann', { rating: 1500, matches: 3 }],
      ['cy', { rating: 1620, matches: 9 }],
    ]);
    const all = rate(
      system,
      {
        teams: [
          { players: ['ann'], rank: 1 },
          { players: ['bob'], rank: 2 },
        ],
      },
      states,
      { all: true },
    );
    const only = rate(
      system,
      {
        teams: [
          { players: ['ann'], rank: 1 },
          { players: ['bob'], rank: 2 },
        ],
      },
      states,
    );
    expect([...all.keys()].sort()).toEqual(['ann', 'bob', 'cy']);
    expect(all.get('cy')).toEqual({ rating: 1620, matches: 9 });
    expect(all.get('ann')).toEqual(only.get('ann'));
    expect(all.get('bob')).toEqual(only.get('bob'));
    expect(states.get('ann')!.rating).toBe(1500);
    expect(states.has('bob')).toBe(false);
  });
});

describe("predict: player ids and a state map in, each team's chance out", () => {
  it("equals the system's predict over the states, unknown players at the starting state", () => {
    const system = createSystem('glicko2');
    const states = { ann: { rating: 1700, rd: 60, volatility: 0.06, matches: 40 } };
    const byIds = predict(system, [['ann'], ['newcomer']], states);
    expect(byIds).toEqual(system.predict([[states.ann], [system.initial()]]));
    expect(byIds[0]).toBeGreaterThan(0.5);
    expect(byIds[0]! + byIds[1]!).toBeCloseTo(1, 12);
  });

  it('refuses a player on two teams, naming the field', () => {
    expect(
      invalidField(() =>
        predict(createSystem('elo'), [
          ['a', 'b'],
          ['c', 'a'],
        ]),
      ),
    ).toBe('teams[1][1]');
    expect(invalidField(() => predict(createSystem('elo'), [['a']]))).toBe('teams');
    expect(invalidField(() => predict(createSystem('elo'), [['a'], []]))).toBe('teams[1]');
  });
});

describe('conservativeRating', () => {
  it('is rating − 2·RD where the system keeps an RD, the rating itself where it does not', () => {
    expect(conservativeRating({ rating: 1500, rd: 350 })).toBe(800);
    expect(conservativeRating({ rating: 1464.05, rd: 151.52 }, 3)).toBeCloseTo(1464.05 - 454.56, 9);
    expect(conservativeRating({ rating: 23 })).toBe(23);
    expect(invalidField(() => conservativeRating({ rating: 1500, rd: 350 }, -1))).toBe('deviations');
    expect(invalidField(() => conservativeRating({ rating: Number.NaN }))).toBe('rating');
  });
});

describe('reported figures are rounded, stored states are not', () => {
  it('team rank reports 1 where two equal averages divide to 0.9999999999999998', () => {
    // 14.75 + 26.51 and 17.70 + 23.56 are both 41.26, but not as doubles.
    const teams = [
      [
        { id: 'a', rank: 14.75 },
        { id: 'b', rank: 26.51 },
      ],
      [
        { id: 'c', rank: 17.7 },
        { id: 'd', rank: 23.56 },
      ],
    ] as const;
    expect(teamRankMatch(teams, 'win')[0]!.averageModifier).toBe(0.9999999999999998);
    const states = new Map(teams.flat().map((p) => [p.id, { rating: p.rank, matches: 1 }]));
    const rating = createSystem('teamrank').rateMatch({ teams: teams.map((team, t) => ({ players: team.map(({ id }) => ({ id })), rank: t + 1 })) }, states);
    expect(rating.players.map((p) => p.terms.averageModifier)).toEqual([1, 1, 1, 1]);
    expect(rating.players.map((p) => p.after.rating)).toEqual(teamRankMatch(teams, 'win').map((change) => change.after));
  });

  it('roundForDisplay keeps six significant digits, rounding to the nearest', () => {
    expect(DISPLAY_DIGITS).toBe(6);
    expect(roundForDisplay(0.9999999999999998)).toBe(1);
    expect(roundForDisplay(1.0187439083)).toBe(1.01874);
    expect(roundForDisplay(1234567.8)).toBe(1234570);
    expect(roundForDisplay(-2.5, 1)).toBe(-3);
    fc.assert(
      fc.property(fc.double({ min: -1e300, max: 1e300, noNaN: true }), fc.integer({ min: 1, max: 15 }), (value, digits) => {
        const shown = roundForDisplay(value, digits);
        // At most `digits` significant digits, and within half a unit of the last of them (plus the double's own rounding).
        expect(Number(shown.toPrecision(digits))).toBe(shown);
        const unit = value === 0 ? 0 : 10 ** (Math.floor(Math.log10(Math.abs(value))) - digits + 1);
        expect(Math.abs(shown - value)).toBeLessThanOrEqual(unit * 0.5 + Math.abs(value) * 2 ** -51);
      }),
      { numRuns: 5000 },
    );
  });
});
