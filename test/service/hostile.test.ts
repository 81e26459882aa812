/**
 * Hostile input against the service's input contract, black-box over HTTP
 * on both backends:
 *
 * - one definition of a valid identifier (well-formed Unicode, no control
 *   characters, 1..200 characters) in bodies, path params and query params,
 *   each violation a 400 naming the field;
 * - invalid UTF-8 in a body, impossible dates, two matches with one id in a
 *   round: 400 naming the field, nothing stored;
 * - a bad submission never fails a good one sharing its write batch;
 * - a lone surrogate never aliases U+FFFD; lastAt only moves forward;
 * - prototype names stay data; private ladders look like missing ones to
 *   callers without a read key, also in /metrics;
 * - security headers on every response, CORS off unless configured, rate
 *   limiting before key verification;
 * - and a fast-check fuzz of 10,000 requests per backend mixing every class
 *   of hostility on every route with valid matches: no 5xx, a 4xx with the
 *   error body for every hostile request, nothing stored by any of them, and
 *   every valid match rated exactly once.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMatch } from 'ladder-core/core/match.js';
import { Replay } from 'ladder-core/core/replay.js';
import { createSystem } from 'ladder-core/core/systems.js';
import {
  BACKENDS,
  cleanupShared,
  client,
  type Client,
  type ContractOptions,
  encodeLoose,
  errorShapeProblem,
  httpClient,
  type Reply,
  startTestServer,
  type TestServer,
  useTestServer,
} from './helpers.js';

// ---------------------------------------------------------------- material

/** U+0000–U+001F and U+007F–U+009F. */
const CONTROLS = [...Array.from({ length: 0x20 }, (_, i) => i), ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i)].map((c) => String.fromCharCode(c));
/** Names of Object.prototype members and friends. */
const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'] as const;
/** Prototype names that JSON.parse keeps as plain keys (Fastify refuses "__proto__" keys outright). */
const PROTO_KEYS = [
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
  '__lookupSetter__',
  'propertyIsEnumerable',
  'toLocaleString',
] as const;
/** Out of range for every numeric field of every body and query. */
const HUGE = [1e308, -1e308, 2 ** 53 + 1, 1e16] as const;
const IMPOSSIBLE_DATES = [
  '2024-02-30',
  '2024-02-30T00:00:00Z',
  '2023-13-01',
  '2023-02-29',
  '2024-04-31T12:00:00Z',
  '2024-06-31',
  '2024-11-31T23:59:59.999Z',
  '2023-02-29T10:00:00+02:00',
] as const;
/** Byte sequences that are not UTF-8: bad lead bytes, overlong forms, encoded surrogates, truncations, past U+10FFFF. */
const BAD_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xe2, 0x82],
  [0x80],
  [0xbf, 0xbf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xc3],
] as const;

/** Identifiers that break the one rule, by class. */
const BAD_IDS: Record<'control' | 'surrogate', string[]> = {
  control: ['a\u0000b', '\u0000', 'a\u0001', '\u001fx', 'tab\there', 'line\nbreak', 'a\u007f', 'a\u0085b', '\u009f'],
  surrogate: ['s\ud800', '\udc00b', 'x\udc00\ud800y', '\ud83d', 'end\udbff', '\udfff\udfff'],
};
const ALL_BAD_IDS = [...BAD_IDS.control, ...BAD_IDS.surrogate];

const HOUR = 3_600_000;

/** A JSON text with `bytes` spliced in where `marker` stands (inside a string, so only the bytes are wrong). */
function spliceBytes(text: string, marker: string, bytes: readonly number[]): Uint8Array {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`marker ${marker} not in ${text}`);
  return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at + marker.length))]);
}

/** A JSON text with `"key": value` added as the first member of the object that starts at the first `{` after `after` characters. */
function withKey(text: string, key: string, value: unknown, after = 0): string {
  const at = text.indexOf('{', after);
  return `${text.slice(0, at + 1)}${JSON.stringify(key)}:${JSON.stringify(value)},${text.slice(at + 1)}`;
}

function fieldOf(reply: Reply): unknown {
  return (reply.body as { error?: { field?: unknown } } | null)?.error?.field;
}

/** Expects a 400 in the error shape naming `field` (a list: any of them; a RegExp: matching). */
function expect400(reply: Reply, field: string | string[] | RegExp | undefined, what: string) {
  expect(reply.status, `${what} → ${reply.status} ${reply.text.slice(0, 200)}`).toBe(400);
  expect(errorShapeProblem(reply), what).toBeUndefined();
  const got = fieldOf(reply);
  if (field === undefined) return;
  if (typeof field === 'string') expect(got, `${what}: field`).toBe(field);
  else if (Array.isArray(field)) expect(field, `${what}: field ${JSON.stringify(got)}`).toContain(got);
  else expect(String(got), `${what}: field`).toMatch(field);
}

// ---------------------------------------------------------------- the suite

describe.each(BACKENDS)('hostile input on %s', (backend) => {
  let server: TestServer;
  let admin: Client;
  let anon: Client;
  let readKey: string;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
    anon = client(server.url);
    const made = await admin.post('/v1/keys', { name: 'reader', scopes: ['read'] });
    expect(made.status).toBe(201);
    readKey = made.body.key;
    for (const ladder of [
      { id: 'ids', system: 'elo', public: true, standings: { placementMatches: 0 } },
      { id: 'ids-w', system: 'wvw', public: true },
    ]) {
      expect((await admin.post('/v1/ladders', ladder)).status).toBe(201);
    }
    expect(
      (
        await admin.post('/v1/ladders/ids/matches', {
          teams: [
            { players: ['a'], rank: 1 },
            { players: ['b'], rank: 2 },
          ],
        })
      ).status,
    ).toBe(201);
  });

  /** What the identifier tests must leave as it was. */
  const idsState = async () =>
    JSON.stringify([
      (await admin.get('/v1/ladders/ids')).body.matches,
      (await admin.get('/v1/ladders/ids')).body.players,
      (await admin.get('/v1/ladders/ids-w/rounds')).body.rounds.length,
      (await admin.get('/v1/ladders/ids/queue')).body.waiting,
      (await admin.get('/v1/keys')).body.keys.length,
      (await admin.get('/v1/ladders')).body.ladders.length,
    ]);

  it('identifiers in bodies: NUL, control characters and lone surrogates answer 400 naming the field, and nothing is stored', async () => {
    const before = await idsState();
    const duel = (a: unknown, b: unknown) => ({
      teams: [
        { players: [a], rank: 1 },
        { players: [b], rank: 2 },
      ],
    });
    for (const bad of ALL_BAD_IDS) {
      const what = (where: string) => `${where} = ${JSON.stringify(bad)}`;
      expect400(await admin.post('/v1/ladders/ids/matches', { id: bad, ...duel('a', 'b') }), 'id', what('match id'));
      expect400(await admin.post('/v1/ladders/ids/matches', duel(bad, 'b')), 'teams[0].players[0]', what('player id'));
      expect400(await admin.post('/v1/ladders/ids/matches', duel('a', { id: bad, seconds: 5 })), 'teams[1].players[0].id', what('player object id'));
      expect400(await admin.post('/v1/ladders/ids-w/rounds', { round: bad, matches: [{ worlds: { A: 1, B: 2 } }] }), 'round', what('round name'));
      expect400(await admin.post('/v1/ladders/ids-w/rounds', { matches: [{ id: bad, worlds: { A: 1, B: 2 } }] }), 'matches[0].id', what('round match id'));
      expect400(await admin.post('/v1/ladders/ids-w/rounds', { matches: [{ worlds: { [bad]: 1, B: 2 } }] }), /^matches\[0\]\.worlds/, what('world id'));
      expect400(await admin.post('/v1/ladders/ids/tickets', { id: bad, players: [{ id: 'a', pings: { eu: 10 } }] }), 'id', what('ticket id'));
      expect400(await admin.post('/v1/ladders/ids/tickets', { players: [{ id: bad, pings: { eu: 10 } }] }), 'players[0].id', what('ticket player id'));
      expect400(await admin.post('/v1/ladders/ids/backfills', { declared: true, match: bad, region: 'eu', teams: [['a'], []] }), 'match', what('backfill match id'));
      expect400(await admin.post('/v1/ladders/ids/backfills', { declared: true, match: 'm', region: 'eu', teams: [['a'], [bad]] }), 'teams[1][0]', what('backfill player id'));
      expect400(await admin.post('/v1/keys', { name: bad, scopes: ['read'] }), 'name', what('key name'));
      expect400(await admin.post('/v1/ladders', { id: bad, system: 'elo' }), 'id', what('ladder id'));
    }
    // 201 characters is one too many, anywhere.
    expect400(await admin.post('/v1/ladders/ids/matches', duel('x'.repeat(201), 'b')), 'teams[0].players[0]', 'a 201-character player id');
    expect400(await admin.post('/v1/keys', { name: 'k'.repeat(201), scopes: ['read'] }), 'name', 'a 201-character key name');
    expect(await idsState()).toBe(before);
  });

  it('identifiers in path params: NUL and control characters answer 400 naming the param; lone surrogates (as generalized UTF-8) 400', async () => {
    const before = await idsState();
    const valid = {
      teams: [
        { players: ['a'], rank: 1 },
        { players: ['b'], rank: 2 },
      ],
    };
    const routes = (seg: string): Array<[string, string, unknown, string | string[]]> => [
      ['GET', `/v1/ladders/${seg}`, undefined, 'ladder'],
      ['GET', `/v1/ladders/${seg}/leaderboard`, undefined, 'ladder'],
      ['GET', `/v1/ladders/${seg}/matches`, undefined, 'ladder'],
      ['GET', `/v1/ladders/${seg}/rounds`, undefined, 'ladder'],
      ['GET', `/v1/ladders/${seg}/queue`, undefined, 'ladder'],
      ['GET', `/v1/ladders/${seg}/players/a`, undefined, 'ladder'],
      ['GET', `/v1/ladders/${seg}/players/a/history`, undefined, 'ladder'],
      ['POST', `/v1/ladders/${seg}/matches`, valid, 'ladder'],
      ['POST', `/v1/ladders/${seg}/rounds`, { matches: [{ worlds: { A: 1, B: 2 } }] }, 'ladder'],
      ['POST', `/v1/ladders/${seg}/tickets`, { players: [{ id: 'a', pings: { eu: 10 } }] }, 'ladder'],
      ['GET', `/v1/ladders/ids/players/${seg}`, undefined, 'player'],
      ['GET', `/v1/ladders/ids/players/${seg}/history`, undefined, 'player'],
      ['GET', `/v1/tickets/${seg}`, undefined, ['id', 'ticket']],
      ['DELETE', `/v1/tickets/${seg}`, undefined, ['id', 'ticket']],
      ['POST', `/v1/ladders/${seg}/backfills`, { declared: true, match: 'm', region: 'eu', teams: [['a'], []] }, 'ladder'],
      ['GET', `/v1/backfills/${seg}`, undefined, ['id', 'backfill']],
      ['DELETE', `/v1/backfills/${seg}`, undefined, ['id', 'backfill']],
      ['DELETE', `/v1/keys/${seg}`, undefined, ['id', 'key']],
    ];
    for (const bad of BAD_IDS.control) {
      for (const [method, path, body, field] of routes(encodeLoose(bad))) {
        expect400(await admin.call(method, path, body), field, `${method} ${path}`);
      }
    }
    for (const bad of BAD_IDS.surrogate) {
      for (const [method, path, body, field] of routes(encodeLoose(bad))) {
        const reply = await admin.call(method, path, body);
        // The server may not be able to tell which param failed to decode; when it names one, it is the right one.
        expect400(reply, undefined, `${method} ${path}`);
        const got = fieldOf(reply);
        if (got !== undefined) expect([field].flat(), `${method} ${path}: field ${JSON.stringify(got)}`).toContain(got);
      }
    }
    expect(await idsState()).toBe(before);
  });

  it('identifiers in query params: search= and around= with NUL, control characters or lone surrogates answer 400 naming the param', async () => {
    for (const bad of ALL_BAD_IDS) {
      for (const param of ['search', 'around']) {
        for (const caller of [admin, anon]) {
          const path = `/v1/ladders/ids/leaderboard?${param}=${encodeLoose(bad)}`;
          expect400(await caller.get(path), param, `GET ${path}`);
        }
      }
    }
    // Out-of-range paging names its param too (sanity: already so today).
    for (const [param, value] of [
      ['limit', '1e308'],
      ['offset', '1e16'],
      ['limit', String(2 ** 53 + 1)],
      ['offset', '-1e308'],
    ]) {
      expect400(await anon.get(`/v1/ladders/ids/leaderboard?${param}=${value}`), param, `${param}=${value}`);
      expect400(await anon.get(`/v1/ladders/ids/matches?${param}=${value}`), param, `matches ${param}=${value}`);
      expect400(await anon.get(`/v1/ladders/ids/players/a/history?${param}=${value}`), param, `history ${param}=${value}`);
    }
  });

  it('invalid UTF-8 inside a JSON string answers 400 naming body, not a silent U+FFFD, and stores nothing', async () => {
    const before = await idsState();
    const bodies: Array<[string, string]> = [
      [
        '/v1/ladders/ids/matches',
        JSON.stringify({
          teams: [
            { players: ['uMARK'], rank: 1 },
            { players: ['b'], rank: 2 },
          ],
        }),
      ],
      ['/v1/ladders/ids-w/rounds', JSON.stringify({ round: 'rMARK', matches: [{ worlds: { A: 1, B: 2 } }] })],
      ['/v1/ladders/ids/tickets', JSON.stringify({ players: [{ id: 'tMARK', pings: { eu: 10 } }] })],
      ['/v1/keys', JSON.stringify({ name: 'kMARK', scopes: ['read'] })],
      ['/v1/ladders', JSON.stringify({ id: 'utf', system: 'elo', options: { k: 16 }, standings: { divisions: [{ name: 'dMARK', minPercentile: 1 }] } })],
      ['/v1/performance', JSON.stringify({ games: [{ opponent: 1500, result: 'win' }], k: 16, extra: 'MARK' })],
    ];
    for (const bytes of BAD_UTF8) {
      for (const [path, text] of bodies) {
        const reply = await admin.post(path, spliceBytes(text, 'MARK', bytes));
        expect400(reply, 'body', `${path} with bytes ${Buffer.from(bytes).toString('hex')}`);
      }
    }
    expect(await idsState()).toBe(before);
  });

  it('impossible dates answer 400 naming at', async () => {
    const before = await idsState();
    for (const at of IMPOSSIBLE_DATES) {
      expect400(
        await admin.post('/v1/ladders/ids/matches', {
          at,
          teams: [
            { players: ['a'], rank: 1 },
            { players: ['b'], rank: 2 },
          ],
        }),
        'at',
        `match at ${at}`,
      );
      expect400(await admin.post('/v1/ladders/ids-w/rounds', { at, matches: [{ worlds: { A: 1, B: 2 } }] }), 'at', `round at ${at}`);
    }
    expect(await idsState()).toBe(before);
  });

  it('two matches with one id in a World-vs-World round answer 400 naming the second', async () => {
    const before = await idsState();
    const pair = await admin.post('/v1/ladders/ids-w/rounds', {
      matches: [
        { id: 'x', worlds: { A: 1, B: 2 } },
        { id: 'x', worlds: { C: 1, D: 2 } },
      ],
    });
    expect400(pair, 'matches[1].id', 'matches x and x');
    const third = await admin.post('/v1/ladders/ids-w/rounds', {
      round: 'dup',
      matches: [
        { id: 'x', worlds: { A: 1, B: 2 } },
        { id: 'y', worlds: { C: 1, D: 2 } },
        { id: 'x', worlds: { E: 1, F: 2 } },
      ],
    });
    expect400(third, 'matches[2].id', 'matches x, y and x');
    expect(await idsState()).toBe(before);
    // The round is fine once the ids differ.
    expect(
      (
        await admin.post('/v1/ladders/ids-w/rounds', {
          round: 'dup',
          matches: [
            { id: 'x', worlds: { A: 1, B: 2 } },
            { id: 'y', worlds: { C: 1, D: 2 } },
          ],
        })
      ).status,
    ).toBe(201);
  });

  it('a bad job never fails another: 200 valid and 200 hostile concurrent submissions to one ladder', async () => {
    expect((await admin.post('/v1/ladders', { id: 'mix', system: 'elo' })).status).toBe(201);
    const valid = Array.from({ length: 200 }, (_, i) => ({
      id: `ok-${i}`,
      teams: [
        { players: [`v${i % 20}`], rank: 1 },
        { players: [`w${i % 23}`], rank: 2 },
      ],
    }));
    const hostile = Array.from({ length: 200 }, (_, i): unknown => {
      const base = {
        id: `bad-${i}`,
        teams: [
          { players: [`v${i % 20}`], rank: 1 },
          { players: [`w${i % 23}`], rank: 2 },
        ],
      };
      const bad = ALL_BAD_IDS[i % ALL_BAD_IDS.length]!;
      switch (i % 5) {
        case 0:
          return { ...base, teams: [{ players: [bad], rank: 1 }, base.teams[1]] };
        case 1:
          return { ...base, id: bad };
        case 2:
          return { ...base, at: IMPOSSIBLE_DATES[i % IMPOSSIBLE_DATES.length] };
        case 3:
          return spliceBytes(JSON.stringify({ ...base, teams: [{ players: ['xMARK'], rank: 1 }, base.teams[1]] }), 'MARK', BAD_UTF8[i % BAD_UTF8.length]!);
        default:
          return { ...base, teams: [base.teams[0], { players: [{ id: `${bad}!`, quit: true }], rank: 2 }] };
      }
    });
    const sends = valid.flatMap((body, i) => [
      { body: body as unknown, good: true },
      { body: hostile[i], good: false },
    ]);
    const replies = await Promise.all(sends.map(({ body }) => admin.post('/v1/ladders/mix/matches', body)));
    const validStatuses = replies.filter((_, i) => sends[i]!.good).map((r) => r.status);
    const hostileReplies = replies.filter((_, i) => !sends[i]!.good);
    expect(
      validStatuses.filter((s) => s !== 201),
      `valid submissions not answered 201: ${JSON.stringify(replies.find((r, i) => sends[i]!.good && r.status !== 201)?.text.slice(0, 300))}`,
    ).toEqual([]);
    expect(hostileReplies.filter((r) => r.status < 400 || r.status >= 500).map((r) => `${r.status} ${r.text.slice(0, 120)}`)).toEqual([]);
    for (const r of hostileReplies) expect(errorShapeProblem(r)).toBeUndefined();
    const seqs = replies.filter((_, i) => sends[i]!.good).map((r) => r.body.match.seq as number);
    expect(new Set(seqs).size).toBe(200);
    expect((await admin.get('/v1/ladders/mix')).body.matches).toBe(200);
    const listed = (await admin.get('/v1/ladders/mix/matches?limit=500')).body.matches.map((m: { id: string }) => m.id);
    expect(listed.sort()).toEqual(valid.map((m) => m.id).sort());
  });

  it('a bad job never fails another: 30 valid and 30 hostile concurrent World-vs-World rounds', async () => {
    expect((await admin.post('/v1/ladders', { id: 'mix-w', system: 'wvw' })).status).toBe(201);
    const valid = Array.from({ length: 30 }, (_, i) => ({
      round: `ok-${i}`,
      matches: [
        { id: `ok-${i}-a`, worlds: { A: i, B: 30 - i, C: 7 } },
        { id: `ok-${i}-b`, worlds: { D: 1, E: 2 } },
      ],
    }));
    const hostile = Array.from({ length: 30 }, (_, i): unknown => {
      const bad = ALL_BAD_IDS[i % ALL_BAD_IDS.length]!;
      switch (i % 4) {
        case 0:
          return {
            round: `bad-${i}`,
            matches: [
              { id: `bad-${i}`, worlds: { A: 1, B: 2 } },
              { id: `bad-${i}`, worlds: { C: 1, D: 2 } },
            ],
          };
        case 1:
          return { round: `bad-${i}`, matches: [{ worlds: { [bad]: 1, B: 2 } }] };
        case 2:
          return { round: bad, matches: [{ worlds: { A: 1, B: 2 } }] };
        default:
          return { round: `bad-${i}`, at: IMPOSSIBLE_DATES[i % IMPOSSIBLE_DATES.length], matches: [{ worlds: { A: 1, B: 2 } }] };
      }
    });
    const sends = valid.flatMap((body, i) => [
      { body: body as unknown, good: true },
      { body: hostile[i], good: false },
    ]);
    const replies = await Promise.all(sends.map(({ body }) => admin.post('/v1/ladders/mix-w/rounds', body)));
    const failedValid = replies.filter((r, i) => sends[i]!.good && r.status !== 201).map((r) => `${r.status} ${r.text.slice(0, 200)}`);
    expect(failedValid, 'valid rounds not answered 201').toEqual([]);
    expect(replies.filter((r, i) => !sends[i]!.good && (r.status < 400 || r.status >= 500)).map((r) => `${r.status} ${r.text.slice(0, 160)}`)).toEqual([]);
    const rounds = (await admin.get('/v1/ladders/mix-w/rounds')).body.rounds as Array<{ round: string }>;
    expect(rounds.map((r) => r.round).sort()).toEqual(valid.map((r) => r.round).sort());
    expect((await admin.get('/v1/ladders/mix-w')).body.matches).toBe(60);
  });

  it('a lone surrogate never aliases U+FFFD: "s\\ud800" is refused, "s\\ufffd" is a player of its own rated like a replay', async () => {
    expect((await admin.post('/v1/ladders', { id: 'alias', system: 'elo', public: true, standings: { placementMatches: 0 } })).status).toBe(201);
    const lone = await admin.post('/v1/ladders/alias/matches', {
      teams: [
        { players: ['s\ud800'], rank: 1 },
        { players: ['z'], rank: 2 },
      ],
    });
    expect400(lone, 'teams[0].players[0]', 'player s\\ud800');
    const m1 = {
      id: 'r1',
      teams: [
        { players: ['s\ufffd'], rank: 1 },
        { players: ['z'], rank: 2 },
      ],
    };
    const m2 = {
      id: 'r2',
      teams: [
        { players: ['z'], rank: 1 },
        { players: ['s\ufffd'], rank: 2 },
      ],
    };
    expect((await admin.post('/v1/ladders/alias/matches', m1)).status).toBe(201);
    // Refused again in between: the refusal must not have touched any cached state.
    expect(
      (
        await admin.post('/v1/ladders/alias/matches', {
          teams: [
            { players: ['z'], rank: 1 },
            { players: ['s\ud800'], rank: 2 },
          ],
        })
      ).status,
    ).toBe(400);
    expect((await admin.post('/v1/ladders/alias/matches', m2)).status).toBe(201);
    const replay = new Replay(createSystem('elo'));
    replay.push(parseMatch(m1));
    replay.push(parseMatch(m2));
    const stored = await anon.get('/v1/ladders/alias/players/s%EF%BF%BD');
    expect(stored.status).toBe(200);
    expect(stored.body.id).toBe('s\ufffd');
    expect(stored.body.matches).toBe(2);
    expect(stored.body.rating).toBeCloseTo(replay.players.get('s\ufffd')!.rating, 9);
    expect((await anon.get('/v1/ladders/alias/players/z')).body.rating).toBeCloseTo(replay.players.get('z')!.rating, 9);
    expect((await anon.get('/v1/ladders/alias')).body.matches).toBe(2);
    expect((await anon.get('/v1/ladders/alias')).body.players).toBe(2);
  });

  for (const system of ['teamrank', 'elo'] as const) {
    it(`${system}: lastAt only moves forward; an earlier match is rated in arrival order and nobody leaves the leaderboard`, async () => {
      const id = `last-${system}`;
      expect((await admin.post('/v1/ladders', { id, system, public: true, standings: { placementMatches: 0 } })).status).toBe(201);
      const later = Date.now() - HOUR;
      // Older than the default 30-day window: a lastAt moved back to it would drop both players.
      const earlier = later - 40 * 24 * HOUR;
      const first = await admin.post(`/v1/ladders/${id}/matches`, {
        at: later,
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      });
      expect(first.status).toBe(201);
      const second = await admin.post(`/v1/ladders/${id}/matches`, {
        at: earlier,
        teams: [
          { players: ['b'], rank: 1 },
          { players: ['a'], rank: 2 },
        ],
      });
      expect(second.status).toBe(201);
      const afterFirst = Object.fromEntries(first.body.players.map((p: { id: string; after: { rating: number } }) => [p.id, p.after.rating]));
      for (const p of second.body.players as Array<{ id: string; before: { rating: number; matches: number } }>) {
        expect(p.before.rating, `${p.id} rated from the state the first match left`).toBe(afterFirst[p.id]);
        expect(p.before.matches).toBe(1);
      }
      for (const player of ['a', 'b']) {
        const got = (await anon.get(`/v1/ladders/${id}/players/${player}`)).body;
        expect(got.matches).toBe(2);
        expect(got.lastAt, `${player}.lastAt`).toBe(new Date(later).toISOString());
        expect(got.rank, `${player}.rank`).not.toBeNull();
      }
      const board = (await anon.get(`/v1/ladders/${id}/leaderboard`)).body;
      expect(board.entries.map((e: { id: string }) => e.id).sort()).toEqual(['a', 'b']);
      expect(board.total).toBe(2);
    });
  }

  it('prototype names: ping regions show up in byRegion as plain counts; options named after Object.prototype members are refused', async () => {
    expect((await admin.post('/v1/ladders', { id: 'proto', system: 'elo', public: true })).status).toBe(201);
    for (const [i, region] of PROTO_KEYS.entries()) {
      const reply = await admin.post('/v1/ladders/proto/tickets', { players: [{ id: `q${i}`, percentile: 50, pings: { [region]: 5, zz: 500 } }] });
      expect(reply.status, `ticket with region ${region}: ${reply.text.slice(0, 200)}`).toBe(201);
    }
    const queue = await anon.get('/v1/ladders/proto/queue');
    expect(queue.status).toBe(200);
    expect(queue.body.waiting).toBe(PROTO_KEYS.length);
    expect(queue.text).not.toContain('[native code]');
    expect(queue.text).not.toContain('function');
    for (const region of PROTO_KEYS) {
      expect(Object.hasOwn(queue.body.byRegion, region), `byRegion has ${region}`).toBe(true);
      expect(queue.body.byRegion[region], `byRegion.${region}`).toBe(1);
    }
    expect(Object.values(queue.body.byRegion).every((n) => typeof n === 'number')).toBe(true);
    for (const name of ['constructor', 'hasOwnProperty', 'toString', 'valueOf', 'isPrototypeOf']) {
      const reply = await admin.post('/v1/ladders', { id: `opt-${name.toLowerCase()}`, system: 'elo', options: { [name]: 1 } });
      expect400(reply, `options.${name}`, `option ${name}`);
    }
    expect((await admin.get('/v1/ladders/opt-constructor')).status).toBe(404);
    // A "__proto__" key anywhere is refused outright.
    expect400(await admin.post('/v1/ladders', '{"id":"opt-proto","system":"elo","options":{"__proto__":{"k":1}}}'), undefined, 'options.__proto__');
  });

  it('private ladders: without a read key they answer exactly like missing ones; /metrics does not name them', async () => {
    expect((await admin.post('/v1/ladders', { id: 'secret-ladder', system: 'elo', standings: { placementMatches: 0 } })).status).toBe(201);
    expect(
      (
        await admin.post('/v1/ladders/secret-ladder/matches', {
          teams: [
            { players: ['p1'], rank: 1 },
            { players: ['p2'], rank: 2 },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await admin.post('/v1/ladders/secret-ladder/tickets', { players: [{ id: 'p1', pings: { eu: 10 } }] })).status).toBe(201);
    const reader = client(server.url, readKey);
    const routes = ['', '/leaderboard', '/players/p1', '/players/p1/history', '/matches', '/rounds', '/queue'];
    for (const route of routes) {
      const hidden = await anon.get(`/v1/ladders/secret-ladder${route}`);
      const missing = await anon.get(`/v1/ladders/absent-ladder${route}`);
      expect(hidden.status, `GET private${route}: ${hidden.text.slice(0, 200)}`).toBe(404);
      expect(missing.status).toBe(404);
      expect(hidden.text.replaceAll('secret-ladder', 'LADDER'), `GET private${route} vs missing`).toBe(missing.text.replaceAll('absent-ladder', 'LADDER'));
      expect((await reader.get(`/v1/ladders/secret-ladder${route}`)).status, `GET private${route} with a read key`).toBe(200);
    }
    const metrics = await anon.get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).not.toContain('secret-ladder');
    expect((await reader.get('/metrics')).status).toBe(200);
  });

  it('security headers on every response: API, errors, 404s, /docs, /metrics, /openapi.json, /healthz', async () => {
    const replies: Array<[string, Reply]> = [
      ['GET /v1/ladders', await anon.get('/v1/ladders')],
      ['GET public ladder', await anon.get('/v1/ladders/ids')],
      ['POST bad body', await admin.post('/v1/ladders/ids/matches', { teams: [] })],
      ['POST invalid JSON', await admin.post('/v1/ladders/ids/matches', '{')],
      ['GET no route', await anon.get('/no/such/route')],
      ['GET missing ladder', await anon.get('/v1/ladders/absent-ladder')],
      ['POST without key', await anon.post('/v1/ladders/ids/matches', { teams: [] })],
      ['GET bad key', await client(server.url, 'not-a-key-at-all').get('/v1/ladders')],
      ['GET /docs', await anon.get('/docs')],
      ['GET /metrics', await anon.get('/metrics')],
      ['GET /openapi.json', await anon.get('/openapi.json')],
      ['GET /healthz', await anon.get('/healthz')],
      ['POST /v1/performance', await anon.post('/v1/performance', { games: [{ opponent: 1500, result: 'win' }] })],
    ];
    for (const [what, reply] of replies) {
      expect(reply.headers.get('x-content-type-options'), `${what} (${reply.status}) x-content-type-options`).toBe('nosniff');
      expect(reply.headers.get('x-frame-options'), `${what} x-frame-options`).toBe('DENY');
      expect(reply.headers.get('content-security-policy') ?? '', `${what} content-security-policy`).toContain("frame-ancestors 'none'");
      expect(reply.headers.get('referrer-policy'), `${what} referrer-policy`).toBe('no-referrer');
    }
  });

  it('CORS is off by default: no Access-Control-Allow-Origin, not even on a preflight', async () => {
    const origin = { origin: 'https://game.example' };
    expect((await anon.get('/v1/ladders', origin)).headers.get('access-control-allow-origin')).toBeNull();
    expect((await admin.post('/v1/ladders/ids/matches', { teams: [] }, origin)).headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await anon.call('OPTIONS', '/v1/ladders/ids/matches', undefined, {
      ...origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.status).toBeLessThan(500);
  });

  // ------------------------------------------------------------ the fuzz

  it('fuzz: 10,000 hostile requests on every route with valid matches alongside: no 5xx, 4xx for each, nothing stored, valid ones rated once', { timeout: 600_000 }, async () => {
    expect((await admin.post('/v1/ladders', { id: 'fz', system: 'elo', public: true, standings: { placementMatches: 0 } })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'fzw', system: 'wvw' })).status).toBe(201);
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await admin.post('/v1/ladders/fz/matches', {
            id: `seed-${i}`,
            teams: [
              { players: [`ha${i}`], rank: 1 },
              { players: [`hb${i}`], rank: 2 },
            ],
          })
        ).status,
      ).toBe(201);
    }
    expect((await admin.post('/v1/ladders/fzw/rounds', { round: 'seed', matches: [{ worlds: { A: 1, B: 2 } }] })).status).toBe(201);
    const seedTicket = await admin.post('/v1/ladders/fz/tickets', { id: 'seed-ticket', players: [{ id: 'ha0', pings: { eu: 10 } }] });
    expect(seedTicket.status).toBe(201);

    const plan = fuzzPlan(10_000, backend === 'pglite' ? 1 : 2);
    const validIds = new Set<string>();
    const validPlayers = new Set<string>();
    for (const v of plan.valid) {
      validIds.add(v.body.id);
      for (const team of v.body.teams) for (const p of team.players) validPlayers.add(p);
    }

    const snapshot = async () => {
      const tables = new Set((await server.db.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE schemaname = current_schema()')).map((r) => r.tablename));
      const out: Record<string, string[]> = {};
      for (const table of ['ladders', 'matches', 'players', 'idempotency', 'api_keys', 'rounds']) {
        if (!tables.has(table)) continue;
        const rows = await server.db.query<Record<string, unknown>>(`SELECT * FROM ${table}`);
        out[table] = rows
          .filter((row) => {
            if (row.ladder !== 'fz') return true;
            if (table === 'matches') return !validIds.has(String(row.id));
            if (table === 'players') return !validPlayers.has(String(row.id));
            return true;
          })
          .map((row) => {
            // The valid matches move fz's counters, sequence and version; checked through the API instead.
            if (table === 'ladders' && row.id === 'fz') for (const key of Object.keys(row)) if (/count|seq|version/.test(key)) delete row[key];
            return JSON.stringify(row);
          })
          .sort();
      }
      const queue = (await admin.get('/v1/ladders/fz/queue')).body;
      out.queue = [JSON.stringify([queue.waiting, queue.byRegion, queue.byBand])];
      out.ticket = [(await admin.get('/v1/tickets/seed-ticket')).text.replace(/"waitedSeconds":[\d.e+-]+/, '')];
      return out;
    };
    const differences = (a: Record<string, string[]>, b: Record<string, string[]>): string[] => {
      const found: string[] = [];
      for (const table of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const before = new Set(a[table] ?? []);
        const after = new Set(b[table] ?? []);
        const added = [...after].filter((r) => !before.has(r));
        const removed = [...before].filter((r) => !after.has(r));
        if (added.length + removed.length > 0)
          found.push(
            `${table}: ${added.length} rows added (${added
              .slice(0, 3)
              .map((r) => r.slice(0, 200))
              .join(' | ')}), ${removed.length} removed (${removed
              .slice(0, 3)
              .map((r) => r.slice(0, 200))
              .join(' | ')})`,
          );
      }
      return found;
    };

    const matchesBefore = (await admin.get('/v1/ladders/fz')).body.matches as number;
    const before = await snapshot();
    const problems = { fiveHundreds: [] as string[], hostileNot4xx: [] as string[], shape: [] as string[], valid: [] as string[], noAnswer: [] as string[] };
    const checkpoints: string[] = [];
    const validSeqs = new Set<number>();
    let validAnswered = 0;
    let sent = 0;

    const http = httpClient(server.url, { key: server.admin, sockets: 24 });
    const send = async (request: FuzzRequest): Promise<Reply | undefined> => {
      try {
        return await http.call(request.method, request.path, request.body, request.headers, request.token);
      } catch (error) {
        problems.noAnswer.push(`${request.what}: ${request.method} ${request.path}: ${(error as Error).message}`);
        return undefined;
      }
    };

    const hostileOne = async (request: FuzzRequest) => {
      const reply = await send(request);
      sent++;
      if (!reply) return;
      const label = () => `[${request.what}] ${request.method} ${request.path.slice(0, 120)} ${describeBody(request.body)} → ${reply.status} ${reply.text.slice(0, 160)}`;
      if (reply.status >= 500) problems.fiveHundreds.push(label());
      if (request.expect === 'hostile' && (reply.status < 400 || reply.status >= 500)) problems.hostileNot4xx.push(label());
      if (reply.status >= 400) {
        const problem = errorShapeProblem(reply);
        if (problem) problems.shape.push(`${label()}: ${problem}`);
      }
    };
    const validOne = async (v: ValidMatch) => {
      const reply = await send({ method: 'POST', path: '/v1/ladders/fz/matches', body: JSON.stringify(v.body), expect: 'neutral', what: 'valid' });
      sent++;
      if (!reply) return;
      if (reply.status !== 201 || reply.body?.match?.id !== v.body.id) problems.valid.push(`${v.body.id} → ${reply.status} ${reply.text.slice(0, 200)}`);
      else {
        validAnswered++;
        validSeqs.add(reply.body.match.seq);
      }
    };
    // The batches in order, each valid match in the middle of its batch's hostile requests, 24 requests in
    // flight at any time (so valid and hostile submissions share the server's write batches); the pool drains
    // at every checkpoint, about each 2,500 requests, for a snapshot.
    const segments: Array<Array<() => Promise<void>>> = [[]];
    for (const batch of plan.batches) {
      const half = Math.ceil(batch.hostile.length / 2);
      const segment = segments[segments.length - 1]!;
      segment.push(...batch.hostile.slice(0, half).map((r) => () => hostileOne(r)), () => validOne(batch.valid[0]!));
      segment.push(...batch.hostile.slice(half).map((r) => () => hostileOne(r)), () => validOne(batch.valid[1]!));
      if (segment.length >= 2500) segments.push([]);
    }
    for (const segment of segments.filter((s) => s.length > 0)) {
      let next = 0;
      await Promise.all(
        Array.from({ length: 24 }, async () => {
          while (next < segment.length) await segment[next++]!();
        }),
      );
      const diff = differences(before, await snapshot());
      if (diff.length > 0) checkpoints.push(`after ${sent} requests: ${diff.join('; ')}`);
    }
    http.close();

    const summary = (list: string[]) => `${list.length}:\n  ${list.slice(0, 12).join('\n  ')}`;
    // Every class of hostility and every route was exercised.
    for (const tag of FUZZ_CLASSES) expect(plan.classes.get(tag) ?? 0, `requests of class ${tag}`).toBeGreaterThan(20);
    for (const route of FUZZ_ROUTES) expect(plan.routes.get(route) ?? 0, `requests on ${route}`).toBeGreaterThan(20);
    expect(plan.hostileCount).toBeGreaterThanOrEqual(10_000);
    // Counts, not lists, so a failure prints the first dozen examples rather than thousands.
    const failures = [
      ['requests without an answer', problems.noAnswer],
      ['answers ≥ 500', problems.fiveHundreds],
      ['hostile requests not answered 4xx', problems.hostileNot4xx],
      ['error bodies not in the contract shape', problems.shape],
      ['valid matches not answered 201', problems.valid],
      ['checkpoints where hostile requests had changed the stored state', checkpoints],
    ] as const;
    const report = failures
      .filter(([, list]) => list.length > 0)
      .map(([what, list]) => `${what} ${summary(list)}`)
      .join('\n');
    expect(report === '', `\n${report}`).toBe(true);
    // Every valid match rated exactly once.
    expect(validAnswered).toBe(plan.valid.length);
    expect(validSeqs.size).toBe(plan.valid.length);
    expect((await admin.get('/v1/ladders/fz')).body.matches).toBe(matchesBefore + plan.valid.length);
    const stored = await server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM matches WHERE ladder = 'fz' AND id = ANY($1::text[])", [[...validIds]]);
    expect(stored[0]!.n).toBe(plan.valid.length);
    expect((await admin.get('/healthz')).status).toBe(200);
  });
});

describe.each(BACKENDS)('service options on %s', (backend) => {
  const servers: TestServer[] = [];
  const start = async (options: ContractOptions) => {
    const server = await startTestServer({ backend, options });
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    for (const s of servers) {
      await s.dispose();
      await cleanupShared(s.schema, s.prefix);
    }
  });

  it('rate limiting comes before key verification: 40 requests with 40 different random tokens meet a 429', async () => {
    const server = await start({ rateLimit: { perSecond: 5, burst: 10 } });
    const tokens = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? `lk_${Math.random().toString(36).slice(2, 14).padEnd(12, '0')}_${'A'.repeat(43)}` : `random-token-${i}-${Math.random().toString(36).slice(2)}`,
    );
    const replies = await Promise.all(tokens.map((token) => client(server.url, token).get('/v1/ladders')));
    const limited = replies.filter((r) => r.status === 429);
    expect(limited.length, `statuses ${JSON.stringify(replies.map((r) => r.status))}`).toBeGreaterThan(0);
    for (const r of limited) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(errorShapeProblem(r)).toBeUndefined();
    }
    for (const r of replies) expect([401, 429]).toContain(r.status);
  });

  it("metricsAccess 'key': /metrics answers 401 without a key and 200 with a read key", async () => {
    const server = await start({ metricsAccess: 'key', rateLimit: { perSecond: 1e6 } });
    const admin = client(server.url, server.admin);
    const made = await admin.post('/v1/keys', { name: 'scraper', scopes: ['read'] });
    expect(made.status).toBe(201);
    const anonymous = await client(server.url).get('/metrics');
    expect(anonymous.status).toBe(401);
    expect(errorShapeProblem(anonymous)).toBeUndefined();
    expect(anonymous.text).not.toContain('ladder_');
    const scraped = await client(server.url, made.body.key).get('/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('ladder_http_request_duration_seconds');
  });

  it('CORS when configured: the listed origin is allowed (with Vary: Origin and a 204 preflight), another origin is not', async () => {
    const server = await start({ cors: { origins: ['https://game.example'] }, rateLimit: { perSecond: 1e6 } });
    const anonymous = client(server.url);
    const admin = client(server.url, server.admin);
    expect((await admin.post('/v1/ladders', { id: 'pub', system: 'elo', public: true })).status).toBe(201);
    const allowed = await anonymous.get('/v1/ladders/pub', { origin: 'https://game.example' });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://game.example');
    expect((allowed.headers.get('vary') ?? '').toLowerCase()).toContain('origin');
    const refusedError = await admin.post('/v1/ladders/pub/matches', { teams: [] }, { origin: 'https://game.example' });
    expect(refusedError.status).toBe(400);
    expect(refusedError.headers.get('access-control-allow-origin')).toBe('https://game.example');
    const preflight = await anonymous.call('OPTIONS', '/v1/ladders/pub/matches', undefined, {
      origin: 'https://game.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://game.example');
    expect((preflight.headers.get('access-control-allow-methods') ?? '').toUpperCase()).toContain('POST');
    const allowHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const header of ['authorization', 'content-type', 'idempotency-key']) expect(allowHeaders, `allow-headers has ${header}`).toContain(header);
    const other = await anonymous.get('/v1/ladders/pub', { origin: 'https://evil.example' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const otherPreflight = await anonymous.call('OPTIONS', '/v1/ladders/pub/matches', undefined, { origin: 'https://evil.example', 'access-control-request-method': 'POST' });
    expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});

// ---------------------------------------------------------------- the fuzz plan

interface FuzzRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** A bearer token instead of the admin key. */
  token?: string;
  /** hostile: must be a 4xx; neutral: odd but allowed (no 5xx). */
  expect: 'hostile' | 'neutral';
  what: string;
}

interface ValidMatch {
  body: { id: string; teams: Array<{ players: string[]; rank: number }> };
}

/** Classes of hostility the plan must cover. */
const FUZZ_CLASSES = ['control', 'surrogate', 'utf8', 'proto-key', 'proto-value', 'huge', 'date', 'duplicate-round-id', 'token'] as const;
type FuzzClass = (typeof FUZZ_CLASSES)[number];
const FUZZ_ROUTES = [
  'POST matches',
  'POST rounds',
  'POST tickets',
  'POST ladders',
  'POST keys',
  'POST performance',
  'GET ladder',
  'GET players',
  'GET history',
  'GET leaderboard',
  'GET matches',
  'GET rounds',
  'GET queue',
  'GET ticket',
  'DELETE ticket',
  'DELETE key',
] as const;
type FuzzRoute = (typeof FUZZ_ROUTES)[number];

/** A request spec from the generator; `n` makes its ids unique. */
type Spec = { route: FuzzRoute; cls: FuzzClass; build: (n: number) => Omit<FuzzRequest, 'what'> };

function describeBody(body: string | Uint8Array | undefined): string {
  if (body === undefined) return '';
  if (typeof body === 'string') return body.slice(0, 160);
  return `bytes ${Buffer.from(body).toString('latin1').slice(0, 160)}`;
}

const safeText = fc.string({ maxLength: 6, unit: fc.constantFrom(...'abcxyz0129_-.'.split('')) });
const control = fc.constantFrom(...CONTROLS);
const high = fc.integer({ min: 0xd800, max: 0xdbff }).map((c) => String.fromCharCode(c));
const low = fc.integer({ min: 0xdc00, max: 0xdfff }).map((c) => String.fromCharCode(c));
const lone = fc.oneof(
  high,
  low,
  fc.tuple(low, high).map(([a, b]) => a + b),
  fc.tuple(high, high).map(([a, b]) => a + b),
  fc.tuple(high, fc.constantFrom('x', '1', ' ')).map(([a, b]) => a + b),
  fc.tuple(fc.constantFrom('\ud83d\ude00', 'é'), low).map(([a, b]) => a + b),
);
/** An identifier with one flaw of the given class somewhere in it. */
const flawed = (cls: 'control' | 'surrogate') => fc.tuple(safeText, cls === 'control' ? control : lone, safeText).map(([a, f, b]) => a + f + b);
const badIdOf = fc.constantFrom<'control' | 'surrogate'>('control', 'surrogate').chain((cls) => flawed(cls).map((id) => ({ cls, id })));
const huge = fc.constantFrom(...HUGE);
const date = fc.constantFrom(...IMPOSSIBLE_DATES);
const badBytes = fc.constantFrom(...BAD_UTF8);
const protoValue = fc.constantFrom(...PROTO_NAMES);
const protoKey = fc.constantFrom(...PROTO_NAMES);
const printable = fc.string({ minLength: 1, maxLength: 80, unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) });
const token = fc.oneof(
  printable,
  fc
    .tuple(
      fc.string({ minLength: 12, maxLength: 12, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split('')) }),
      fc.string({ minLength: 43, maxLength: 43, unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('')) }),
    )
    .map(([id, secret]) => `lk_${id}_${secret}`),
);

const json = (value: unknown) => JSON.stringify(value);
const post = (path: string, body: string | Uint8Array, extra: Partial<FuzzRequest> = {}): Omit<FuzzRequest, 'what'> => ({
  method: 'POST',
  path,
  body,
  expect: 'hostile',
  ...extra,
});
const get = (path: string, extra: Partial<FuzzRequest> = {}): Omit<FuzzRequest, 'what'> => ({ method: 'GET', path, expect: 'hostile', ...extra });
const del = (path: string, extra: Partial<FuzzRequest> = {}): Omit<FuzzRequest, 'what'> => ({ method: 'DELETE', path, expect: 'hostile', ...extra });
const spec = (route: FuzzRoute, cls: FuzzClass, build: Spec['build']): Spec => ({ route, cls, build });

// Bodies that would be valid but for the one flaw put in them; prototype names sit in valid places as decoration.
const matchBody = (n: number, decor: string) => ({
  id: `h${n}`,
  at: Date.now() - HOUR,
  teams: [
    { players: [`ha${n % 5}`, decor], rank: 1 },
    { players: [{ id: `hb${n % 5}`, seconds: 10 }], rank: 2 },
  ],
});
const roundBody = (n: number, decor: string) => ({
  round: `hr${n}`,
  at: Date.now() - HOUR,
  matches: [
    { id: `hm${n}a`, worlds: { [`W${n}a`]: 1, [decor]: 2 } },
    { id: `hm${n}b`, worlds: { [`W${n}c`]: 3, [`W${n}d`]: 4 } },
  ],
});
const ticketBody = (n: number, region: string) => ({ id: `ht${n}`, players: [{ id: `tp${n}`, percentile: 50, pings: { eu: 30, [region]: 20 } }] });
const ladderBody = (n: number) => ({ id: `hl${n}`, system: 'elo', options: { k: 16 }, public: true, standings: { placementMatches: 1 } });
const keyBody = (n: number) => ({ name: `hk${n}`, scopes: ['read'] });
const perfBody = () => ({ games: [{ opponent: 1500, result: 'win', weight: 1, opponentRd: 50 }], k: 16 });
const decorValue = fc.constantFrom('constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__proto__');
const decorKey = fc.constantFrom('constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf');
const LADDER_ROUTES: Array<[FuzzRoute, string]> = [
  ['GET ladder', ''],
  ['GET leaderboard', '/leaderboard'],
  ['GET matches', '/matches'],
  ['GET rounds', '/rounds'],
  ['GET queue', '/queue'],
  ['GET players', '/players/ha1'],
  ['GET history', '/players/ha1/history'],
];

/** Every generator of hostile (and a few neutral) requests. */
const specs: fc.Arbitrary<Spec> = fc.oneof(
  // ---- POST matches
  fc.tuple(fc.constantFrom('id', 'p0', 'p1'), badIdOf, decorValue).map(([slot, bad, decor]) =>
    spec('POST matches', bad.cls, (n) => {
      const body: any = matchBody(n, decor);
      if (slot === 'id') body.id = bad.id;
      else if (slot === 'p0') body.teams[0].players[0] = bad.id;
      else body.teams[1].players[0].id = bad.id;
      return post('/v1/ladders/fz/matches', json(body), n % 3 === 0 ? { headers: { 'idempotency-key': `hi${n}` } } : {});
    }),
  ),
  fc.tuple(fc.constantFrom('at', 'rank', 'weight', 'seconds', 'numeric id'), huge, decorValue).map(([slot, value, decor]) =>
    spec('POST matches', 'huge', (n) => {
      const body: any = matchBody(n, decor);
      if (slot === 'at') body.at = value;
      else if (slot === 'rank') body.teams[1].rank = value;
      else if (slot === 'weight') body.weight = value;
      else if (slot === 'seconds') body.teams[1].players[0].seconds = value;
      else body.teams[0].players[0] = value;
      return post('/v1/ladders/fz/matches', json(body));
    }),
  ),
  fc.tuple(date, decorValue).map(([at, decor]) => spec('POST matches', 'date', (n) => post('/v1/ladders/fz/matches', json({ ...matchBody(n, decor), at })))),
  fc.tuple(badBytes, decorValue).map(([bytes, decor]) =>
    spec('POST matches', 'utf8', (n) => {
      const body: any = matchBody(n, decor);
      body.teams[0].players[0] = `ha${n % 5}MARK`;
      return post('/v1/ladders/fz/matches', spliceBytes(json(body), 'MARK', bytes));
    }),
  ),
  fc.tuple(protoKey, fc.constantFrom(0, 1, 2)).map(([key, where]) =>
    spec('POST matches', 'proto-key', (n) => {
      const text = json(matchBody(n, 'x'));
      // Top level, inside the first team, inside a player object.
      const at = where === 0 ? 0 : where === 1 ? text.indexOf('"teams"') : text.indexOf('{"id":"hb');
      return post('/v1/ladders/fz/matches', withKey(text, key, key === '__proto__' ? { admin: true } : 1, at));
    }),
  ),
  fc.tuple(badIdOf, decorValue).map(([bad, decor]) => spec('POST matches', bad.cls, (n) => post(`/v1/ladders/${encodeLoose(`fz${bad.id}`)}/matches`, json(matchBody(n, decor))))),
  fc.tuple(token, decorValue).map(([t, decor]) => spec('POST matches', 'token', (n) => post('/v1/ladders/fz/matches', json(matchBody(n, decor)), { token: t }))),
  decorValue.map((decor) =>
    spec('POST matches', 'proto-value', (n) => {
      // Prototype names as every player of an otherwise valid match, sent with a token that is not a key.
      const other = decor === 'constructor' ? 'valueOf' : 'constructor';
      const body = {
        id: `hp${n}`,
        teams: [
          { players: [decor], rank: 1 },
          { players: [other], rank: 2 },
        ],
      };
      return post('/v1/ladders/fz/matches', json(body), { token: `not-a-key-${n}` });
    }),
  ),
  // ---- POST rounds
  fc.tuple(fc.constantFrom('round', 'match id', 'world'), badIdOf, decorKey).map(([slot, bad, decor]) =>
    spec('POST rounds', bad.cls, (n) => {
      const body: any = roundBody(n, decor);
      if (slot === 'round') body.round = bad.id;
      else if (slot === 'match id') body.matches[1].id = bad.id;
      else body.matches[1].worlds = { [bad.id]: 1, [`W${n}d`]: 2 };
      return post('/v1/ladders/fzw/rounds', json(body));
    }),
  ),
  fc.tuple(huge, decorKey).map(([value, decor]) =>
    spec('POST rounds', 'huge', (n) => {
      const body: any = roundBody(n, decor);
      if (n % 2 === 0) body.matches[0].worlds[decor] = value;
      else body.at = value;
      return post('/v1/ladders/fzw/rounds', json(body));
    }),
  ),
  fc.tuple(date, decorKey).map(([at, decor]) => spec('POST rounds', 'date', (n) => post('/v1/ladders/fzw/rounds', json({ ...roundBody(n, decor), at })))),
  decorKey.map((decor) =>
    spec('POST rounds', 'duplicate-round-id', (n) => {
      const body: any = roundBody(n, decor);
      body.matches[1].id = body.matches[0].id;
      return post('/v1/ladders/fzw/rounds', json(body), n % 2 === 0 ? { headers: { 'idempotency-key': `hr${n}` } } : {});
    }),
  ),
  fc
    .tuple(badBytes, decorKey)
    .map(([bytes, decor]) => spec('POST rounds', 'utf8', (n) => post('/v1/ladders/fzw/rounds', spliceBytes(json({ ...roundBody(n, decor), round: `hr${n}MARK` }), 'MARK', bytes)))),
  fc
    .tuple(protoKey, decorKey)
    .map(([key, decor]) => spec('POST rounds', 'proto-key', (n) => post('/v1/ladders/fzw/rounds', withKey(json(roundBody(n, decor)), key, 1, n % 2 === 0 ? 0 : 15)))),
  fc.tuple(token, decorKey).map(([t, decor]) => spec('POST rounds', 'token', (n) => post('/v1/ladders/fzw/rounds', json(roundBody(n, decor)), { token: t }))),
  // ---- POST tickets
  fc.tuple(fc.constantFrom('id', 'player'), badIdOf, decorKey).map(([slot, bad, region]) =>
    spec('POST tickets', bad.cls, (n) => {
      const body: any = ticketBody(n, region);
      if (slot === 'id') body.id = bad.id;
      else body.players[0].id = bad.id;
      return post('/v1/ladders/fz/tickets', json(body));
    }),
  ),
  fc.tuple(fc.constantFrom('ping', 'rating', 'percentile'), huge, decorKey).map(([slot, value, region]) =>
    spec('POST tickets', 'huge', (n) => {
      const body: any = ticketBody(n, region);
      if (slot === 'ping') body.players[0].pings[region] = value;
      else body.players[0][slot] = value;
      return post('/v1/ladders/fz/tickets', json(body));
    }),
  ),
  fc
    .tuple(badBytes, decorKey)
    .map(([bytes, region]) =>
      spec('POST tickets', 'utf8', (n) => post('/v1/ladders/fz/tickets', spliceBytes(json({ ...ticketBody(n, region), id: `ht${n}MARK` }), 'MARK', bytes))),
    ),
  fc.tuple(protoKey, decorKey).map(([key, region]) =>
    spec('POST tickets', 'proto-key', (n) => {
      const text = json(ticketBody(n, region));
      // At the top, in the player, in the pings ("__proto__" there is refused; other names would be regions, so only it goes there).
      const at = key === '__proto__' ? text.indexOf('"pings"') : n % 2 === 0 ? 0 : text.indexOf('"players"');
      return post('/v1/ladders/fz/tickets', withKey(text, key, key === '__proto__' ? { eu: 1 } : 1, at));
    }),
  ),
  fc.tuple(badIdOf, decorKey).map(([bad, region]) => spec('POST tickets', bad.cls, (n) => post(`/v1/ladders/${encodeLoose(bad.id)}/tickets`, json(ticketBody(n, region))))),
  fc.tuple(token, decorKey).map(([t, region]) => spec('POST tickets', 'token', (n) => post('/v1/ladders/fz/tickets', json(ticketBody(n, region)), { token: t }))),
  // ---- POST ladders
  fc.tuple(protoKey, fc.constantFrom(1, 16, 'x', true)).map(([key, value]) =>
    spec('POST ladders', 'proto-key', (n) => {
      const text = json(ladderBody(n));
      return post('/v1/ladders', withKey(text, key, key === '__proto__' ? { k: 1 } : value, text.indexOf('"options"')));
    }),
  ),
  fc.tuple(fc.constantFrom('option', 'placement', 'teamSize'), huge).map(([slot, value]) =>
    spec('POST ladders', 'huge', (n) => {
      const body: any = ladderBody(n);
      if (slot === 'option') body.options.k = value;
      else if (slot === 'placement') body.standings.placementMatches = value;
      else body.matchmaking = { teamSize: value };
      return post('/v1/ladders', json(body));
    }),
  ),
  badIdOf.map((bad) => spec('POST ladders', bad.cls, (n) => post('/v1/ladders', json({ ...ladderBody(n), id: `hl${n}${bad.id}` })))),
  badBytes.map((bytes) =>
    spec('POST ladders', 'utf8', (n) =>
      post('/v1/ladders', spliceBytes(json({ ...ladderBody(n), standings: { divisions: [{ name: 'dMARK', minPercentile: 1 }] } }), 'MARK', bytes)),
    ),
  ),
  token.map((t) => spec('POST ladders', 'token', (n) => post('/v1/ladders', json(ladderBody(n)), { token: t }))),
  // ---- POST keys, DELETE keys/{id}
  badIdOf.map((bad) => spec('POST keys', bad.cls, (n) => post('/v1/keys', json({ ...keyBody(n), name: `${n}${bad.id}` })))),
  badBytes.map((bytes) => spec('POST keys', 'utf8', (n) => post('/v1/keys', spliceBytes(json({ ...keyBody(n), name: `hk${n}MARK` }), 'MARK', bytes)))),
  protoKey.map((key) => spec('POST keys', 'proto-key', (n) => post('/v1/keys', withKey(json(keyBody(n)), key, key === '__proto__' ? { scopes: ['admin'] } : ['admin'])))),
  token.map((t) => spec('POST keys', 'token', (n) => post('/v1/keys', json(keyBody(n)), { token: t }))),
  badIdOf.map((bad) => spec('DELETE key', bad.cls, () => del(`/v1/keys/${encodeLoose(bad.id)}`))),
  protoValue.map((name) => spec('DELETE key', 'proto-value', () => del(`/v1/keys/${encodeLoose(name)}`, { expect: 'neutral' }))),
  token.map((t) => spec('DELETE key', 'token', () => del('/v1/keys/envabcdef012', { token: t }))),
  // ---- POST performance
  fc.tuple(fc.constantFrom('opponent', 'weight', 'opponentRd', 'k'), huge).map(([slot, value]) =>
    spec('POST performance', 'huge', () => {
      const body: any = perfBody();
      if (slot === 'k') body.k = value;
      else body.games[0][slot] = value;
      return post('/v1/performance', json(body));
    }),
  ),
  badBytes.map((bytes) =>
    spec('POST performance', 'utf8', () => post('/v1/performance', spliceBytes(json({ ...perfBody(), games: [{ opponent: 1500, result: 'winMARK' }] }), 'MARK', bytes))),
  ),
  protoKey.map((key) => spec('POST performance', 'proto-key', (n) => post('/v1/performance', withKey(json(perfBody()), key, 1, n % 2 === 0 ? 0 : 9)))),
  token.map((t) => spec('POST performance', 'token', () => post('/v1/performance', json(perfBody()), { token: t }))),
  // ---- GET ladder-scoped routes with a bad ladder id, a bad player id, prototype names, tokens
  fc.tuple(fc.constantFrom(...LADDER_ROUTES), badIdOf).map(([[route, suffix], bad]) => spec(route, bad.cls, () => get(`/v1/ladders/${encodeLoose(bad.id)}${suffix}`))),
  fc
    .tuple(fc.constantFrom<FuzzRoute>('GET players', 'GET history'), badIdOf)
    .map(([route, bad]) => spec(route, bad.cls, () => get(`/v1/ladders/fz/players/${encodeLoose(bad.id)}${route === 'GET history' ? '/history' : ''}`))),
  fc
    .tuple(fc.constantFrom(...LADDER_ROUTES), protoValue, fc.boolean())
    .map(([[route, suffix], name, asLadder]) =>
      spec(route, 'proto-value', () =>
        get(asLadder ? `/v1/ladders/${encodeLoose(name)}${suffix}` : `/v1/ladders/fz${suffix.replace('ha1', encodeLoose(name))}?${encodeLoose(name)}=1`, { expect: 'neutral' }),
      ),
    ),
  fc.tuple(fc.constantFrom(...LADDER_ROUTES), token).map(([[route, suffix], t]) => spec(route, 'token', () => get(`/v1/ladders/fz${suffix}`, { token: t }))),
  // ---- query params
  fc
    .tuple(fc.constantFrom('search', 'around'), badIdOf)
    .map(([param, bad]) => spec('GET leaderboard', bad.cls, () => get(`/v1/ladders/fz/leaderboard?${param}=${encodeLoose(bad.id)}`))),
  fc
    .tuple(fc.constantFrom('search', 'around'), protoValue)
    .map(([param, name]) => spec('GET leaderboard', 'proto-value', () => get(`/v1/ladders/fz/leaderboard?${param}=${encodeLoose(name)}`, { expect: 'neutral' }))),
  fc
    .tuple(
      fc.constantFrom<[FuzzRoute, string]>(['GET leaderboard', '/leaderboard'], ['GET matches', '/matches'], ['GET history', '/players/ha1/history']),
      fc.constantFrom('limit', 'offset'),
      huge,
    )
    .map(([[route, suffix], param, value]) => spec(route, 'huge', () => get(`/v1/ladders/fz${suffix}?${param}=${encodeURIComponent(String(value))}`))),
  // ---- tickets by id
  fc
    .tuple(fc.constantFrom<FuzzRoute>('GET ticket', 'DELETE ticket'), badIdOf)
    .map(([route, bad]) => spec(route, bad.cls, () => (route === 'GET ticket' ? get : del)(`/v1/tickets/${encodeLoose(bad.id)}`))),
  fc
    .tuple(fc.constantFrom<FuzzRoute>('GET ticket', 'DELETE ticket'), protoValue)
    .map(([route, name]) => spec(route, 'proto-value', () => (route === 'GET ticket' ? get : del)(`/v1/tickets/${encodeLoose(name)}`, { expect: 'neutral' }))),
  token.map((t) => spec('DELETE ticket', 'token', () => del('/v1/tickets/seed-ticket', { token: t }))),
  token.map((t) => spec('GET ticket', 'token', () => get('/v1/tickets/seed-ticket', { token: t }))),
);

/**
 * The requests of one fuzz run: `count` hostile or neutral requests from
 * fixed seeds, in batches of 22, each batch with 2 valid matches (distinct
 * ids and players; the first six named after prototype members) to send
 * among them.
 */
function fuzzPlan(count: number, seed: number) {
  const sampled = fc.sample(specs, { numRuns: count, seed });
  const classes = new Map<string, number>();
  const routes = new Map<string, number>();
  const hostile: FuzzRequest[] = sampled.map((s, n) => {
    classes.set(s.cls, (classes.get(s.cls) ?? 0) + 1);
    routes.set(s.route, (routes.get(s.route) ?? 0) + 1);
    return { ...s.build(n), what: `${s.route}/${s.cls}` };
  });
  const batches: Array<{ hostile: FuzzRequest[]; valid: ValidMatch[] }> = [];
  const valid: ValidMatch[] = [];
  for (let i = 0; i < hostile.length; i += 22) {
    const pair = [0, 1].map((j): ValidMatch => {
      const k = valid.length + j;
      const first = k < PROTO_NAMES.length ? PROTO_NAMES[k]! : `va${k}`;
      return {
        body: {
          id: `v${k}`,
          teams: [
            { players: [first], rank: 1 },
            { players: [`vb${k}`], rank: 2 },
          ],
        },
      };
    });
    valid.push(...pair);
    batches.push({ hostile: hostile.slice(i, i + 22), valid: pair });
  }
  return { batches, valid, classes, routes, hostileCount: hostile.length };
}
