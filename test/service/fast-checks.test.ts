/**
 * The ticket body's fast check (`isPlainTicket`) against the zod schema it
 * stands in for: whatever it accepts, zod accepts and returns unchanged; the
 * tickets clients send (solos, parties, filters, any regions) take it; and
 * a request it refuses still gets zod's answer naming the field. The same
 * for the path parameters' and the match body's fast checks.
 */
import fc from 'fast-check';
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import {
  idParams,
  isIdentifierParams,
  isPlainMatch,
  isPlainTicket,
  ladderParams,
  matchParams,
  matchSchema,
  playerParams,
  seasonParams,
  seasonPlayerParams,
  ticketSchema,
  validate,
} from '../../src/service/schemas.js';

const text = fc.oneof(
  fc.constantFrom('a', 'eu', 'na', 'toString', 'constructor', '__proto__', '', 'x'.repeat(40), 'x'.repeat(41), 'x'.repeat(201), 'bad\u0000id', '\ud800', 'é', '1'),
  fc.string({ maxLength: 8 }),
);
const number = fc.oneof(
  fc.constantFrom(-1, 0, 1, 50, 100, 101, 1e6, 1e6 + 1, 1e9, 1e9 + 1, -0, 0.5),
  fc.double({ noNaN: true, min: -1, max: 102 }),
  fc.double({ noNaN: true, min: -1, max: 2e9 }),
);
/** Any JSON-like value, wrong types included. */
const anything = fc.oneof(text, number, fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
/** Mostly `good`, sometimes anything at all. */
const mostly = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 12, arbitrary: good }, { weight: 1, arbitrary: anything });
/** Drops undefined members, as JSON would. */
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const rare = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 12 });

const filter = mostly(fc.record({ within: maybe(mostly(number)), strict: maybe(mostly(fc.boolean())), maxPing: maybe(mostly(number)), extra: rare(anything) }).map(defined));
const pings = mostly(fc.dictionary(text, mostly(number), { maxKeys: 5 }));
/** A rule-set player's attributes: the four attribute types, lengths at and past the limits, wrong types. */
const longText = fc.constantFrom('x'.repeat(100), 'x'.repeat(101), 'x'.repeat(1000), 'x'.repeat(1001));
const attributeValue = mostly(
  fc.oneof(
    text,
    longText,
    number,
    fc.constantFrom(Infinity, Number.NaN),
    fc.array(mostly(fc.oneof(text, longText)), { maxLength: 4 }),
    fc.constantFrom(Array.from({ length: 1001 }, () => 'a')),
    fc.dictionary(fc.oneof(text, longText), mostly(number), { maxKeys: 4 }),
    fc.constantFrom(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i]))),
  ),
);
const attributes = mostly(fc.dictionary(fc.oneof(text, longText), attributeValue, { maxKeys: 4 }));
const roles = mostly(fc.array(mostly(fc.oneof(text, longText)), { maxLength: 34 }));
const player = mostly(
  fc
    .record({
      id: mostly(text),
      percentile: maybe(mostly(number)),
      rating: maybe(mostly(number)),
      pings,
      filter: maybe(filter),
      attributes: maybe(attributes),
      roles: maybe(roles),
      extra: rare(anything),
    })
    .map(defined),
);
const noisyTicket = mostly(
  fc
    .record({
      id: maybe(mostly(text)),
      mode: maybe(mostly(fc.constantFrom('1v1', '6v6', 'x'.repeat(41)))),
      players: mostly(fc.array(player, { maxLength: 18 })),
      extra: rare(anything),
    })
    .map(defined),
);

/** Tickets the schema accepts, built from valid parts only. */
const name = fc.oneof(fc.constantFrom('eu', 'na', 'toString', 'constructor', 'x'.repeat(40), 'é'), fc.stringMatching(/^[a-z0-9_-]{1,12}$/));
const validTicket = fc
  .record({
    id: maybe(name),
    mode: maybe(fc.constantFrom('1v1', '6v6')),
    players: fc.array(
      fc
        .record({
          id: name,
          percentile: maybe(fc.double({ noNaN: true, min: 1, max: 100 })),
          rating: maybe(fc.double({ noNaN: true, min: 0, max: 1e9 })),
          // A `__proto__` region is left to zod (the JSON parser refuses such a body before validation anyway).
          pings: fc.dictionary(name, fc.double({ noNaN: true, min: 0, max: 1e6 }), { maxKeys: 5 }).filter((p) => !Object.hasOwn(p, '__proto__')),
          filter: maybe(
            fc
              .record({ within: maybe(fc.double({ noNaN: true, min: 0, max: 100 })), strict: maybe(fc.boolean()), maxPing: maybe(fc.double({ noNaN: true, min: 0, max: 1e6 })) })
              .map(defined),
          ),
          // Rule-set queues: attributes of the four types, and roles.
          attributes: maybe(
            fc
              .dictionary(
                name,
                fc.oneof(
                  fc.string({ maxLength: 20 }),
                  fc.double({ noNaN: true, noDefaultInfinity: true }),
                  fc.array(fc.string({ maxLength: 20 }), { maxLength: 5 }),
                  fc.dictionary(fc.string({ maxLength: 10 }), fc.double({ noNaN: true, noDefaultInfinity: true }), { maxKeys: 4 }).filter((m) => !Object.hasOwn(m, '__proto__')),
                ),
                { maxKeys: 4 },
              )
              .filter((a) => !Object.hasOwn(a, '__proto__')),
          ),
          roles: maybe(fc.array(fc.constantFrom('tank', 'damage', 'support', 'x'.repeat(100)), { maxLength: 5 })),
        })
        .map(defined),
      { minLength: 1, maxLength: 16 },
    ),
  })
  .map(defined);
const ticket = fc.oneof(validTicket, noisyTicket);

/** Whatever `fast` accepts of the values (as JSON carries them), `schema` accepts and returns unchanged. Resolves to how many it accepted. */
function agreesWithSchema(fast: (value: unknown) => boolean, schema: z.ZodType, values: fc.Arbitrary<unknown>, numRuns: number): number {
  let accepted = 0;
  fc.assert(
    fc.property(values, (body) => {
      const value = JSON.parse(JSON.stringify(body)) as unknown;
      if (!fast(value)) return;
      accepted++;
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(true);
      expect(parsed.data).toEqual(value);
    }),
    { numRuns },
  );
  return accepted;
}

/** Every value of `valid` (as JSON carries it) passes both `schema` and `fast`. */
function takesEveryValid(fast: (value: unknown) => boolean, schema: z.ZodType, valid: fc.Arbitrary<unknown>, numRuns?: number): void {
  fc.assert(
    fc.property(valid, (body) => {
      const value = JSON.parse(JSON.stringify(body)) as unknown;
      expect(schema.safeParse(value).success).toBe(true);
      expect(fast(value)).toBe(true);
    }),
    numRuns === undefined ? {} : { numRuns },
  );
}

describe('the ticket body fast check', () => {
  it('accepts only what the schema accepts, and the schema returns it unchanged', () => {
    // The generator does reach valid tickets.
    expect(agreesWithSchema(isPlainTicket, ticketSchema, ticket, 5000)).toBeGreaterThan(100);
  });

  it('takes every ticket the schema accepts that clients send', () => {
    takesEveryValid(isPlainTicket, ticketSchema, validTicket, 2000);
  });

  it('takes a solo and a party with every field', () => {
    const solo = { players: [{ id: 'ann', pings: { eu: 30, na: 110 } }] };
    const party: { id: string; mode: string; players: Array<{ id: string; percentile?: number; rating?: number; pings: Record<string, number>; filter: object }> } = {
      id: 't-1',
      mode: '6v6',
      players: [
        { id: 'ann', percentile: 37.5, rating: 1510, pings: { eu: 30, toString: 80 }, filter: { within: 10, strict: false, maxPing: 80 } },
        { id: 'bob', pings: { constructor: 12 }, filter: {} },
      ],
    };
    for (const body of [solo, party]) {
      expect(isPlainTicket(body)).toBe(true);
      expect(validate(ticketSchema, body)).toBe(body);
    }
  });

  it('leaves a bad body to zod, which names the field', () => {
    const cases: Array<[unknown, string]> = [
      [{ players: [{ id: 'ann', pings: { eu: -1 } }] }, 'players[0].pings.eu'],
      [{ players: [{ id: 'ann', pings: { eu: 1 }, filter: { within: 101 } }] }, 'players[0].filter.within'],
      [{ players: [{ id: 'ann', pings: { eu: 1 }, colour: 'red' }] }, 'players[0].colour'],
      [{ players: [] }, 'players'],
      [{ id: '', players: [{ id: 'ann', pings: {} }] }, 'id'],
    ];
    for (const [body, field] of cases) {
      expect(isPlainTicket(body)).toBe(false);
      let error: unknown;
      try {
        validate(ticketSchema, body);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).field).toBe(field);
    }
  });
});

describe('the path parameters fast check', () => {
  const schemas = { ladderParams, matchParams, seasonParams, seasonPlayerParams, playerParams, idParams };
  for (const [label, schema] of Object.entries(schemas)) {
    const names = Object.keys(schema.shape);
    const fast = isIdentifierParams(names);
    it(`${label}: accepts only what the schema accepts, unchanged, and every valid set of ids`, () => {
      const params = fc.dictionary(fc.constantFrom(...names, 'extra'), mostly(text), { maxKeys: names.length + 1 });
      expect(agreesWithSchema(fast, schema, fc.oneof(params, fc.record(Object.fromEntries(names.map((n) => [n, name])))), 2000)).toBeGreaterThan(100);
      fc.assert(
        fc.property(fc.record(Object.fromEntries(names.map((n) => [n, name]))), (value) => {
          expect(fast(value)).toBe(true);
        }),
      );
      // What it refuses still gets the schema's answer, naming the parameter.
      expect(() => validate(schema, { ...Object.fromEntries(names.map((n) => [n, 'ok'])), [names[0]!]: 'bad\u0000id' }, 'path')).toThrow(
        expect.objectContaining({ field: names[0] }),
      );
    });
  }
});

describe('the match body fast check', () => {
  const idOrNumber = fc.oneof(name, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
  const player = fc.oneof(idOrNumber, fc.record({ id: idOrNumber, seconds: maybe(fc.double({ noNaN: true, min: 0, max: 1e15 })), quit: maybe(fc.boolean()) }).map(defined));
  const validMatch = fc
    .record({
      id: maybe(idOrNumber),
      at: maybe(fc.oneof(fc.constantFrom('2026-01-01T10:00:00Z', '2026-02-30'), fc.double({ noNaN: true, min: 0, max: 8.64e15 }))),
      period: maybe(idOrNumber),
      weight: maybe(fc.double({ noNaN: true, min: 0, max: 1e6 })),
      teams: fc.array(
        fc
          .record({
            players: fc.array(player, { minLength: 1, maxLength: 8 }),
            rank: maybe(fc.double({ noNaN: true, min: 0, max: 1e6 })),
            score: maybe(fc.double({ noNaN: true, min: 0, max: 1e15 })),
          })
          .map(defined),
        { minLength: 2, maxLength: 6 },
      ),
    })
    .map(defined);
  const noisyPlayer = mostly(
    fc.oneof(
      mostly(text),
      number,
      fc.record({ id: mostly(fc.oneof(text, number)), seconds: maybe(mostly(number)), quit: maybe(mostly(fc.boolean())), extra: rare(anything) }).map(defined),
    ),
  );
  const noisyMatch = mostly(
    fc
      .record({
        id: maybe(mostly(fc.oneof(text, number))),
        at: maybe(mostly(fc.oneof(text, number, fc.constant('x'.repeat(41))))),
        period: maybe(mostly(number)),
        weight: maybe(mostly(number)),
        teams: mostly(
          fc.array(
            mostly(
              fc
                .record({ players: mostly(fc.array(noisyPlayer, { maxLength: 6 })), rank: maybe(mostly(number)), score: maybe(mostly(number)), extra: rare(anything) })
                .map(defined),
            ),
            { maxLength: 5 },
          ),
        ),
        extra: rare(anything),
      })
      .map(defined),
  );

  it('accepts only what the schema accepts, and the schema returns it unchanged', () => {
    expect(agreesWithSchema(isPlainMatch, matchSchema, fc.oneof(validMatch, noisyMatch), 5000)).toBeGreaterThan(500);
  });

  it('takes every match the schema accepts that clients send', () => {
    takesEveryValid(isPlainMatch, matchSchema, validMatch);
  });

  it("a body it refuses still gets the schema's answer naming the field", () => {
    const bad = { teams: [{ players: ['ann'] }, { players: ['b\u0000b'] }] };
    expect(isPlainMatch(bad)).toBe(false);
    expect(() => validate(matchSchema, bad)).toThrow(expect.objectContaining({ field: 'teams[1].players[0]' }));
  });
});
