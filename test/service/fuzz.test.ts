/**
 * Hostile input: thousands of malformed bodies (wrong types, huge numbers,
 * NaN and Infinity spelled in JSON, a player on both teams, very long
 * strings, unknown fields, prototype poisoning, garbage text) at every write
 * endpoint. Every answer must be a 4xx, the server must stay up, and the
 * stored state must not change.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';

const VALID: Record<string, unknown> = {
  '/v1/ladders/fz/matches': {
    id: 'm',
    teams: [
      { players: ['a', { id: 'b', seconds: 100, quit: false }], rank: 1 },
      { players: ['c', 'd'], rank: 2 },
    ],
  },
  '/v1/ladders/worlds/rounds': { round: 'r', matches: [{ worlds: { A: 1, B: 2, C: 3 } }] },
  '/v1/ladders/fz/tickets': { players: [{ id: 'a', percentile: 50, pings: { eu: 20 }, filter: { within: 5, strict: false, maxPing: 80 } }] },
  '/v1/ladders': { id: 'new-ladder', system: 'elo', options: { k: 16 }, public: true },
  '/v1/keys': { name: 'n', scopes: ['read'] },
  '/v1/performance': { games: [{ opponent: 1500, result: 'win', weight: 1 }] },
};

/**
 * Values invalid wherever they land in these bodies: every field is
 * non-nullable, every string is at most 200 characters, every number is
 * bounded well inside ±1e16, and no field takes an array of arrays or a
 * record of arrays. So every mutated body must be refused.
 */
const hostileValue = fc.oneof(
  fc.constantFrom<unknown>(null, [[]], { '\u0000': [] }, { __proto__: null, "'; DROP TABLE players; --": [] }),
  fc.string({ minLength: 201, maxLength: 400 }),
  fc.double({ min: 1e16, max: 1e300, noNaN: true }),
  fc.double({ min: -1e300, max: -1e10, noNaN: true }),
);

/** Every path to a value inside a JSON value. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
}

function setAt(root: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = value;
  return copy;
}

/** Raw texts that are not valid for any endpoint. */
const rawHostile = fc.oneof(
  fc.constantFrom(
    '{"teams":[{"players":["a"],"rank":NaN},{"players":["b"],"rank":2}]}',
    '{"teams":[{"players":["a"],"rank":1e400},{"players":["b"],"rank":2}]}',
    '{"teams":[{"players":["a"],"rank":Infinity},{"players":["b"],"rank":2}]}',
    '{"__proto__":{"admin":true},"teams":[]}',
    '{"constructor":{"prototype":{"x":1}}}',
    '[1,2,3]',
    '"just a string"',
    'null',
    '',
    '{',
    '\u0000\u0001',
  ),
  fc.string({ maxLength: 50 }).map((s) => `{${s}`),
);

describe.each(BACKENDS)('fuzzing every write endpoint on %s', (backend) => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let before: string;

  const snapshot = async () =>
    JSON.stringify([
      await server.db.query('SELECT id, match_count, player_count, next_seq, round_count FROM ladders ORDER BY id'),
      await server.db.query('SELECT ladder, id, rating, rd, volatility, matches FROM players ORDER BY ladder, id'),
      await server.db.query('SELECT sum(json_array_length(changes))::int8 AS n FROM matches'),
      await server.db.query('SELECT count(*) AS n FROM idempotency'),
      await server.db.query('SELECT count(*) AS n FROM api_keys'),
      (await api.get('/v1/ladders/fz/queue')).body.waiting,
    ]);

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    api = client(server.url, server.admin);
    await api.post('/v1/ladders', { id: 'fz', system: 'teamrank', matchmaking: { teamSize: 2 } });
    await api.post('/v1/ladders', { id: 'worlds', system: 'wvw' });
    await api.post('/v1/ladders/fz/matches', VALID['/v1/ladders/fz/matches']);
    before = await snapshot();
  });

  it('answers 4xx to mutated bodies and changes nothing', async () => {
    let sent = 0;
    for (const [path, valid] of Object.entries(VALID)) {
      const candidates = paths(valid);
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: candidates.length - 1 }), hostileValue, fc.boolean(), async (index, value, extraField) => {
          let body = setAt(valid, candidates[index]!, value);
          if (extraField && body !== null && typeof body === 'object' && !Array.isArray(body)) body = { ...body, unexpected: 1 };
          const text = JSON.stringify(body);
          const reply = await api.post(path, text);
          sent++;
          if (reply.status < 400 || reply.status >= 500) {
            throw new Error(`${path} answered ${reply.status} to ${text.slice(0, 300)}`);
          }
          expect(reply.body.error.code).toBeTypeOf('string');
        }),
        { numRuns: 250, seed: 42 },
      );
      await fc.assert(
        fc.asyncProperty(rawHostile, async (text) => {
          const reply = await api.post(path, text);
          sent++;
          expect(reply.status, `${path} ← ${text.slice(0, 80)}`).toBeGreaterThanOrEqual(400);
          expect(reply.status).toBeLessThan(500);
        }),
        { numRuns: 60, seed: 7 },
      );
    }
    // Semantic hostility the shapes allow: a player on both teams, a long id, huge bodies, unknown ladders.
    const specials: Array<[string, string]> = [
      [
        '/v1/ladders/fz/matches',
        JSON.stringify({
          teams: [
            { players: ['a', 'b'], rank: 1 },
            { players: ['c', 'a'], rank: 2 },
          ],
        }),
      ],
      [
        '/v1/ladders/fz/matches',
        JSON.stringify({
          teams: [
            { players: ['a'.repeat(201)], rank: 1 },
            { players: ['c'], rank: 2 },
          ],
        }),
      ],
      [
        '/v1/ladders/fz/matches',
        JSON.stringify({
          at: 1e300,
          teams: [
            { players: ['a'], rank: 1 },
            { players: ['c'], rank: 2 },
          ],
        }),
      ],
      [
        '/v1/ladders/fz/matches',
        JSON.stringify({
          at: 'not a date',
          teams: [
            { players: ['a'], rank: 1 },
            { players: ['c'], rank: 2 },
          ],
        }),
      ],
      ['/v1/ladders/fz/matches', JSON.stringify({ teams: [{ players: ['a'] }, { players: ['c'] }] })],
      [
        '/v1/ladders/fz/matches',
        JSON.stringify({
          teams: [
            { players: ['x'.repeat(100)], rank: 1 },
            { players: Array.from({ length: 5000 }, (_, i) => `p${i}`), rank: 2 },
          ],
        }),
      ],
      ['/v1/ladders/nope/matches', JSON.stringify(VALID['/v1/ladders/fz/matches'])],
      [
        '/v1/ladders/fz/tickets',
        JSON.stringify({
          players: [
            { id: 'a', pings: { eu: 1 } },
            { id: 'a', pings: { eu: 1 } },
          ],
        }),
      ],
      ['/v1/ladders/fz/rounds', JSON.stringify(VALID['/v1/ladders/worlds/rounds'])],
      ['/v1/ladders', JSON.stringify({ id: 'a b', system: 'elo' })],
    ];
    for (const [path, text] of specials) {
      const reply = await api.post(path, text);
      sent++;
      expect(reply.status, `${path} ← ${text.slice(0, 120)}`).toBeGreaterThanOrEqual(400);
      expect(reply.status).toBeLessThan(500);
    }
    expect(sent).toBeGreaterThan(1500);
    expect((await api.get('/healthz')).status).toBe(200);
    expect(await snapshot()).toBe(before);
  });
});
