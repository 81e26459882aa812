/**
 * A large ladder's standings load a page of players at a time, on both
 * backends (the in-process board and Redis's sorted sets): `playerPages`
 * gives every player once, in id order, in pages no larger than asked; the
 * first leaderboard read of 200,000 players seeded straight into the
 * database ranks them all, as the database orders them, while the
 * service's own work never holds the event loop for 100 ms (read all at
 * once into the in-process board, the same load held it for about 400 ms on
 * PGlite: one result to decode and one loop over it); a match committed
 * while the board loads is in the board afterwards; and closing a season of
 * those 200,000 players (their frozen standings ranked and sorted, every
 * rating reset) holds the loop under 100 ms too (in one piece: 500–740 ms).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchLoop } from '../../src/service/loop-stall.js';
import { addPlayerCount } from '../../src/store/ladders.js';
import { playerPages, seedSyntheticPlayers } from '../../src/store/players.js';
import { BACKENDS, cleanupShared, client, type Client, startTestServer, type TestServer } from './helpers.js';

const PLAYERS = 200_000;

describe.each(BACKENDS)('standings of a large ladder on %s', (backend) => {
  let server: TestServer;
  let api: Client;

  beforeAll(async () => {
    server = await startTestServer({ backend });
    api = client(server.url, server.admin);
    for (const id of ['big', 'paged']) {
      const created = await api.post('/v1/ladders', { id, system: 'glicko2', public: true });
      expect(created.status, created.text).toBe(201);
    }
    // Straight into the database, as the benchmark does: the service would take minutes to rate their matches.
    await seedSyntheticPlayers(server.db, 'big', PLAYERS, Date.now());
    await addPlayerCount(server.db, 'big', PLAYERS);
    await seedSyntheticPlayers(server.db, 'paged', 1234, Date.now());
  }, 120_000);

  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  it('playerPages gives every player once, in id order, in pages of at most the size asked', async () => {
    const sizes: number[] = [];
    const ids: string[] = [];
    for await (const page of playerPages(server.db, 'paged', 100)) {
      sizes.push(page.length);
      ids.push(...page.map((row) => row.id));
    }
    expect(ids.length).toBe(1234);
    expect(new Set(ids).size).toBe(1234);
    // The database's order of the key, compared as it compares (not as JavaScript does).
    const ordered = await server.db.query<{ id: string }>("SELECT id FROM players WHERE ladder = 'paged' ORDER BY id");
    expect(ids).toEqual(ordered.map((row) => row.id));
    expect(sizes.slice(0, -1).every((size) => size === 100)).toBe(true);
    expect(sizes.at(-1)).toBe(34);
    // A ladder whose count is a multiple of the page: no empty page at the end.
    const whole: number[] = [];
    for await (const page of playerPages(server.db, 'paged', 617)) whole.push(page.length);
    expect(whole).toEqual([617, 617]);
  });

  it('the first leaderboard read loads every player a page at a time, never holding the loop for 100 ms', async () => {
    const watch = watchLoop();
    const reply = await api.get('/v1/ladders/big/leaderboard?limit=10');
    const seen = watch.stop();
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.total).toBe(PLAYERS);
    const top = await server.db.query<{ id: string }>("SELECT id FROM players WHERE ladder = 'big' ORDER BY rating DESC, id LIMIT 10");
    expect((reply.body.entries as Array<{ id: string }>).map((entry) => entry.id)).toEqual(top.map((row) => row.id));
    // Where /proc can tell the thread's CPU time (Linux), up to a clock tick high.
    if (seen.ownMaxMs !== undefined) expect(seen.ownMaxMs).toBeLessThan(100);
  }, 120_000);

  it('a match committed while the board loads is in it afterwards', async () => {
    await server.rankings.reset('big');
    const loading = api.get('/v1/ladders/big/leaderboard?limit=1');
    const posted = await api.post('/v1/ladders/big/matches', {
      teams: [
        { players: ['p7'], rank: 1 },
        { players: ['newcomer'], rank: 2 },
      ],
    });
    expect(posted.status, posted.text).toBe(201);
    expect((await loading).status).toBe(200);
    const stored = await server.db.query<{ rating: number }>("SELECT rating FROM players WHERE ladder = 'big' AND id = 'p7'");
    const above = await server.db.query<{ n: number }>("SELECT count(*)::int4 AS n FROM players WHERE ladder = 'big' AND rating > $1", [stored[0]!.rating]);
    const page = await api.get('/v1/ladders/big/players/p7');
    expect(page.status, page.text).toBe(200);
    expect(page.body.rating).toBeCloseTo(stored[0]!.rating, 6);
    expect(page.body.rank).toBe(above[0]!.n + 1);
  }, 120_000);

  it('a season of 200,000 players closes without holding the loop for 100 ms, its standings in order', async () => {
    const watch = watchLoop();
    const closed = await api.post('/v1/ladders/big/seasons', { name: 'second', reset: { keep: 0.5 } });
    const seen = watch.stop();
    expect(closed.status, closed.text).toBe(201);
    if (seen.ownMaxMs !== undefined) expect(seen.ownMaxMs).toBeLessThan(100);
    const season = (await api.get('/v1/ladders/big/seasons')).body.seasons[0].name as string;
    const frozen = await api.get(`/v1/ladders/big/seasons/${season}/leaderboard?limit=100&offset=150000`);
    expect(frozen.status, frozen.text).toBe(200);
    expect(frozen.body.total).toBe(PLAYERS + 1);
    const entries = frozen.body.entries as Array<{ position: number; rank: number | null; rating: number }>;
    expect(entries.map((e) => e.position)).toEqual(Array.from({ length: 100 }, (_, i) => 150_001 + i));
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.rating).toBeLessThanOrEqual(entries[i - 1]!.rating);
    // Every rating moved halfway back toward the start.
    const moved = await server.db.query<{ rating: number }>("SELECT rating FROM players WHERE ladder = 'big' AND id = 'p1'");
    expect(moved[0]!.rating).toBeCloseTo(1500 + (300 * Math.sin(1)) / 2, 6);
  }, 120_000);
});
