/**
 * Bounded reads on both backends: capped offsets answer 400 naming the
 * cursor to use instead; the `before` cursors of the match list and of a
 * player's history page through every item exactly once, and a deep page
 * reads as many rows as the first (counted with EXPLAIN ANALYZE, not timed);
 * on PostgreSQL, a read past its statement timeout answers 503, a read whose
 * client went away is cancelled in the database, and slow readers hold
 * neither the connections writes use nor /healthz. Also the duplicate-player
 * checks of predict and balance, named by their field.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/store/database.js';
import { historyOf, listMatches } from '../../src/store/matches.js';
import { HISTORY_MAX_OFFSET, MATCH_LIST_MAX_OFFSET, SEARCH_MAX_OFFSET } from '../../src/service/schemas.js';
import { BACKENDS, cleanupShared, client, DATABASE_URL, startTestServer, type Client, type TestServer, uniqueName } from './helpers.js';

/** Match i: ann against one of seven opponents, except every third match, which bob and cat play (gaps in ann's chain). */
function body(i: number) {
  const [a, b] = i % 3 === 2 ? ['bob', 'cat'] : ['ann', `p${i % 7}`];
  return {
    id: `m${i}`,
    teams: [
      { players: [a], rank: i % 2 === 0 ? 1 : 2 },
      { players: [b], rank: i % 2 === 0 ? 2 : 1 },
    ],
  };
}
const COUNT = 300;
const ALL_IDS = Array.from({ length: COUNT }, (_, i) => `m${i}`).reverse();
const ANN_IDS = ALL_IDS.filter((id) => Number(id.slice(1)) % 3 !== 2);

/** Every page from the first on, following `next` as `before`; the ids in order, and how many pages. */
async function pageAll(api: Client, path: string, limit: number, items: 'matches' | 'history'): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let before: number | null = null;
  let pages = 0;
  do {
    const reply = await api.get(`${path}?limit=${limit}${before === null ? '' : `&before=${before}`}`);
    expect(reply.status, reply.text).toBe(200);
    const list = reply.body[items] as Array<{ id?: string; matchId?: string; seq: number }>;
    ids.push(...list.map((item) => item.id ?? item.matchId!));
    before = reply.body.next as number | null;
    if (before !== null) expect(before).toBe(list[list.length - 1]!.seq);
    pages++;
    expect(pages).toBeLessThanOrEqual(COUNT + 1);
  } while (before !== null);
  return { ids, pages };
}

/**
 * Rows of `matches` the statements of `run` read, from PostgreSQL's own
 * account (EXPLAIN ANALYZE: every scan node of the table, rows times loops).
 * The statements run explained; `run` sees no rows.
 */
async function matchRowsRead(db: Queryable, run: (db: Queryable) => Promise<unknown>): Promise<number> {
  let rows = 0;
  const visit = (node: Record<string, unknown>) => {
    if (node['Relation Name'] === 'matches') rows += Number(node['Actual Rows']) * Number(node['Actual Loops']);
    for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) visit(child);
  };
  const explaining: Queryable = {
    query: async <Row>(sql: string, params?: readonly unknown[]) => {
      const [result] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      const plan = result!['QUERY PLAN'];
      const parsed = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: Record<string, unknown> }>;
      visit(parsed[0]!.Plan);
      return [] as Row[];
    },
    exec: async () => {},
  };
  await run(explaining);
  return rows;
}

describe.each(BACKENDS)('bounded reads on %s', (backend) => {
  let server: TestServer;
  let api: Client;
  let anon: Client;
  /** Sequence numbers by match id. */
  const seqOf = new Map<string, number>();

  beforeAll(async () => {
    server = await startTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } });
    api = client(server.url, server.admin);
    anon = client(server.url);
    expect((await api.post('/v1/ladders', { id: 'r', system: 'elo', public: true })).status).toBe(201);
    for (let i = 0; i < COUNT; i++) {
      const reply = await api.post('/v1/ladders/r/matches', body(i));
      expect(reply.status, reply.text).toBe(201);
      seqOf.set(`m${i}`, reply.body.match.seq);
    }
  }, 240_000);

  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  it('a deep offset is a 400 naming the cursor to page with instead; the caps themselves are accepted', async () => {
    const refused: Array<[string, string]> = [
      [`/v1/ladders/r/matches?offset=${MATCH_LIST_MAX_OFFSET + 1}`, '`before`'],
      ['/v1/ladders/r/matches?offset=1000000000', '`before`'],
      [`/v1/ladders/r/players/ann/history?offset=${HISTORY_MAX_OFFSET + 1}`, '`before`'],
      ['/v1/ladders/r/players/ann/history?offset=1000000000', '`before`'],
      [`/v1/ladders/r/leaderboard?search=p&offset=${SEARCH_MAX_OFFSET + 1}`, 'prefix'],
    ];
    for (const [path, cursor] of refused) {
      const reply = await anon.get(path);
      expect(reply.status, path).toBe(400);
      expect(reply.body.error.field, path).toBe('offset');
      expect(reply.body.error.message, path).toContain(cursor);
    }
    for (const path of [
      `/v1/ladders/r/matches?offset=${MATCH_LIST_MAX_OFFSET}`,
      `/v1/ladders/r/players/ann/history?offset=${HISTORY_MAX_OFFSET}`,
      `/v1/ladders/r/leaderboard?search=p&offset=${SEARCH_MAX_OFFSET}`,
      // The ranked leaderboard pages from the rankings, O(log n) at any depth: no cap beyond the old bound.
      '/v1/ladders/r/leaderboard?offset=1000000000',
    ]) {
      const reply = await anon.get(path);
      expect(reply.status, `${path}: ${reply.text}`).toBe(200);
    }
  });

  it('the match list and a history, paged by `next` as `before`, give every item exactly once, newest first', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 120 }), async (limit) => {
        const matches = await pageAll(anon, '/v1/ladders/r/matches', limit, 'matches');
        expect(matches.ids).toEqual(ALL_IDS);
        expect(matches.pages).toBe(Math.floor(COUNT / limit) + 1 - (COUNT % limit === 0 ? 1 : 0));
        const history = await pageAll(anon, '/v1/ladders/r/players/ann/history', limit, 'history');
        expect(history.ids).toEqual(ANN_IDS);
      }),
      { numRuns: 4, examples: [[7], [100], [COUNT / 3]] },
    );
    // The last page says there is none after it; an offset page gives its cursor too.
    expect((await anon.get(`/v1/ladders/r/matches?limit=${COUNT}`)).body.next).toBeNull();
    const offsetPage = await anon.get('/v1/ladders/r/matches?limit=10&offset=20');
    expect(offsetPage.body.matches.map((m: { id: string }) => m.id)).toEqual(ALL_IDS.slice(20, 30));
    expect(offsetPage.body.next).toBe(seqOf.get(ALL_IDS[29]!));
    // `before` and `offset` together: skip within the older part.
    const both = await anon.get(`/v1/ladders/r/matches?limit=5&offset=3&before=${seqOf.get('m200')}`);
    expect(both.body.matches.map((m: { id: string }) => m.id)).toEqual(['m196', 'm195', 'm194', 'm193', 'm192']);
  });

  it("a history `before` that is not one of the player's matches starts at the right entry, and too far back is refused", async () => {
    // m200 is bob and cat's: ann's entries before it are her matches from m199 down.
    const reply = await anon.get(`/v1/ladders/r/players/ann/history?limit=3&before=${seqOf.get('m200')}`);
    expect(reply.body.history.map((e: { matchId: string }) => e.matchId)).toEqual(['m199', 'm198', 'm196']);
    const seqAt = (id: string) => seqOf.get(id)!;
    const far = await historyOf(server.db, 'r', 'ann', { limit: 3, offset: 0, before: seqAt('m5'), maxSkipped: 10 });
    expect(far).toEqual({ rows: [], tooFarBack: true });
    const near = await historyOf(server.db, 'r', 'ann', { limit: 3, offset: 0, before: seqAt('m290'), maxSkipped: 10 });
    expect(near.tooFarBack).toBe(false);
    expect(near.rows.map((row) => row.id)).toEqual(['m289', 'm288', 'm286']);
  });

  it('a deep page through the cursor reads as many rows as the first page; a deep offset reads every row it skips', async () => {
    const limit = 20;
    const deep = seqOf.get('m40')!;
    const listFirst = await matchRowsRead(server.db, (db) => listMatches(db, 'r', { limit: limit + 1, offset: 0 }));
    const listDeep = await matchRowsRead(server.db, (db) => listMatches(db, 'r', { limit: limit + 1, offset: 0, before: deep }));
    const listOffset = await matchRowsRead(server.db, (db) => listMatches(db, 'r', { limit: limit + 1, offset: 250 }));
    expect(listFirst).toBe(limit + 1);
    expect(listDeep).toBe(listFirst);
    expect(listOffset).toBe(250 + limit + 1);
    const page = (before: number | undefined, offset: number) => (db: Queryable) =>
      historyOf(db, 'r', 'ann', { limit: limit + 1, offset, maxSkipped: HISTORY_MAX_OFFSET, ...(before !== undefined ? { before } : {}) });
    const historyFirst = await matchRowsRead(server.db, page(undefined, 0));
    // Ann played m40: the walk starts from that entry's link, as the first page starts from her newest.
    const historyDeep = await matchRowsRead(server.db, page(deep, 0));
    const historyOffset = await matchRowsRead(server.db, page(undefined, 150));
    expect(historyFirst).toBeGreaterThan(0);
    // The cursor page also reads the match of its cursor (where the walk starts): one row.
    expect(historyDeep - historyFirst).toBeGreaterThanOrEqual(0);
    expect(historyDeep - historyFirst).toBeLessThanOrEqual(2);
    expect(historyOffset).toBeGreaterThanOrEqual(historyFirst + 150);
  });

  it('predict refuses a player on both teams (or twice on one), naming where the second one is; balance names the duplicate as the body holds it', async () => {
    const both = await anon.post('/v1/ladders/r/predict', { teams: [{ players: ['ann', 'bob'] }, { players: ['ann', 'cat'] }] });
    expect(both.status).toBe(400);
    expect(both.body.error.field).toBe('teams[1].players[0]');
    expect(both.body.error.message).toContain('teams[0].players[0]');
    const twice = await anon.post('/v1/ladders/r/predict', { teams: [{ players: ['bob'] }, { players: ['cat', 'p1', 'cat'] }] });
    expect(twice.status).toBe(400);
    expect(twice.body.error.field).toBe('teams[1].players[2]');
    expect((await anon.post('/v1/ladders/r/predict', { teams: [{ players: ['ann'] }, { players: ['bob'] }] })).status).toBe(200);
    const balance = await anon.post('/v1/ladders/r/balance', { players: ['ann', 'bob', 'cat', 'bob'] });
    expect(balance.status).toBe(400);
    expect(balance.body.error.field).toBe('players[3]');
    expect(balance.body.error.message).toContain('players[1]');
    expect((await anon.post('/v1/ladders/r/balance', { players: ['ann', 'bob', 'cat', 'p1'] })).status).toBe(200);
  });
});

/**
 * Makes every read of `db` start with `SELECT pg_sleep(seconds)` tagged with
 * `marker` (so pg_stat_activity shows it): a read as slow as a pathological
 * query, through the real read path (pool, timeout, cancellation).
 */
function slowReads(db: Database, marker: string, seconds: number): () => void {
  const original = db.read;
  (db as { read: Database['read'] }).read = (work, options) =>
    original(async (q) => {
      await q.query('SELECT pg_sleep($1::float8), $2::text', [seconds, marker]);
      return work(q);
    }, options);
  return () => {
    (db as { read: Database['read'] }).read = original;
  };
}

/** Backends of PostgreSQL now running a statement tagged with `marker`. */
async function activeWith(marker: string): Promise<number> {
  const pg = (await import('pg')).default;
  const probe = new pg.Client({ connectionString: DATABASE_URL });
  await probe.connect();
  try {
    // The marker is a bound value of the slow statement, so it is in no statement text: look for the pg_sleep of this test's connections.
    const rows = await probe.query<{ n: number }>(
      `SELECT count(*)::int4 AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep%' AND application_name = $1`,
      [marker],
    );
    return rows.rows[0]!.n;
  } finally {
    await probe.end();
  }
}

async function until(condition: () => Promise<boolean>, what: string, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never happened: ${what}`);
}

describe('reads on PostgreSQL: statement timeout, cancellation, their own connections', () => {
  let server: TestServer;
  let api: Client;
  const marker = uniqueName('slowread');

  beforeAll(async () => {
    // application_name tells this test's connections apart in pg_stat_activity (pg reads it whenever a connection opens).
    process.env.PGAPPNAME = marker;
    server = await startTestServer({ backend: 'postgres+redis', options: { rateLimit: { perSecond: 1e6 }, readTimeoutMs: 1_500, readPoolSize: 3 } });
    api = client(server.url, server.admin);
    for (const id of ['slow', 'other']) expect((await api.post('/v1/ladders', { id, system: 'elo', public: true })).status).toBe(201);
    expect((await api.post('/v1/ladders/slow/matches', body(0))).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await server?.dispose();
    delete process.env.PGAPPNAME;
    await cleanupShared(server?.schema, server?.prefix);
  });

  it('a read past its statement timeout answers 503 with Retry-After and no driver text; reads afterwards work', async () => {
    const restore = slowReads(server.db, marker, 30);
    try {
      const reply = await client(server.url).get('/v1/ladders/slow/matches');
      expect(reply.status, reply.text).toBe(503);
      expect(reply.body.error.code).toBe('unavailable');
      expect(reply.body.error.message).toContain('1500 ms');
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.text).not.toMatch(/canceling statement|SQLSTATE|pg_sleep/);
    } finally {
      restore();
    }
    expect((await client(server.url).get('/v1/ladders/slow/matches')).status).toBe(200);
  });

  it('a read whose client goes away is cancelled in the database; slow readers hold neither the writes’ connections nor /healthz', async () => {
    // Longer than the statement timeout would allow: only cancellation can end these within the test.
    await server.dispose();
    server = await startTestServer({
      backend: 'postgres+redis',
      schema: server.schema,
      prefix: server.prefix,
      options: { rateLimit: { perSecond: 1e6 }, readTimeoutMs: 120_000, readPoolSize: 3 },
    });
    api = client(server.url, server.admin);
    const restore = slowReads(server.db, marker, 120);
    const readers = Array.from({ length: 12 }, () => new AbortController());
    const settled: Array<Promise<unknown>> = readers.map((reader) =>
      client(server.url)
        .call('GET', '/v1/ladders/slow/players/ann/history', undefined, {}, reader.signal)
        .catch(() => 'aborted'),
    );
    try {
      // Three connections run the slow reads (the read pool); the other nine wait for one.
      await until(async () => (await activeWith(marker)) === 3, 'three slow reads running');
      // Meanwhile a write to another ladder and /healthz are served: reads hold none of their connections.
      const write = await api.post('/v1/ladders/other/matches', body(1));
      expect(write.status, write.text).toBe(201);
      expect((await client(server.url).get('/healthz')).status).toBe(200);
      expect((await client(server.url).get('/v1/ladders/other')).status).toBe(200);
      // Every reader gives up: the running statements are cancelled, and the waiting reads never start one.
      for (const reader of readers) reader.abort();
      expect(await Promise.all(settled)).toEqual(readers.map(() => 'aborted'));
      await until(async () => (await activeWith(marker)) === 0, 'no slow read left running');
      // And stays so: the reads that waited for a connection never send their statement.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await activeWith(marker)).toBe(0);
    } finally {
      restore();
    }
    expect((await client(server.url).get('/v1/ladders/slow/matches')).status).toBe(200);
  }, 60_000);
});
