/**
 * A void made while Redis is away: the shared leaderboard catches up by
 * sequence number, and a void moves none, so the ladder counts its
 * corrections and the leaderboard reloads when the count it was loaded at
 * differs. The test runs its own redis-server (a child process on a free
 * port) that keeps its data across a restart (an RDB snapshot taken before
 * it is killed), the way a persistent Redis comes back after an outage.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startRedis, stopRedis } from './own-redis.js';
import { cleanupShared, client, freePort, startTestServer, type TestServer } from './helpers.js';

describe('a void while Redis is away (PostgreSQL + its own redis-server)', () => {
  let redis: ChildProcess | undefined;
  let server: TestServer | undefined;
  let schema: string | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'ladder-redis-'));

  afterAll(async () => {
    await server?.dispose();
    if (redis) await stopRedis(redis);
    await cleanupShared(schema, undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the leaderboard shows the corrected ratings once Redis is back with its old data, after a restart too', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    redis = await startRedis(port, { dir });
    server = await startTestServer({ backend: 'postgres+redis', redisUrl: url, options: { rateLimit: { perSecond: 1e6 } } });
    schema = server.schema;
    const prefix = server.prefix;
    let api = client(server.url, server.admin);
    expect((await api.post('/v1/ladders', { id: 'lb', system: 'elo', public: true, standings: { placementMatches: 0 } })).status).toBe(201);
    const duel = (id: string, a: string, b: string) => ({
      id,
      teams: [
        { players: [a], rank: 1 },
        { players: [b], rank: 2 },
      ],
    });
    // `solo` plays only m0: voiding it takes solo out of the ladder.
    for (const body of [duel('m0', 'solo', 'p0'), duel('m1', 'p0', 'p1'), duel('m2', 'p1', 'p2'), duel('m3', 'p2', 'p0'), duel('m4', 'p3', 'p1')]) {
      expect((await api.post('/v1/ladders/lb/matches', body)).status).toBe(201);
    }
    const before = (await api.get('/v1/ladders/lb/leaderboard?limit=100')).body;
    expect(before.total).toBe(5);

    // ---- Redis goes away, keeping what it had (a snapshot), and the match is voided meanwhile.
    const admin = new Redis(url);
    await admin.save();
    admin.disconnect();
    await stopRedis(redis);
    redis = undefined;
    const voided = await api.post('/v1/ladders/lb/matches/m0/void', { reason: 'test' });
    expect(voided.status).toBe(200);
    expect(voided.body.players.map((p: { id: string }) => p.id)).toContain('solo');

    // ---- Redis comes back with the old leaderboard; the service restarts on the same data.
    redis = await startRedis(port, { dir });
    await server.dispose();
    server = await startTestServer({ backend: 'postgres+redis', schema, prefix, redisUrl: url, options: { rateLimit: { perSecond: 1e6 } } });
    api = client(server.url, server.admin);
    const stored = await server.db.query<{ id: string; rating: number }>('SELECT id, rating FROM players WHERE ladder = $1 ORDER BY rating DESC, id', ['lb']);
    expect(stored.map((p) => p.id)).not.toContain('solo');
    const after = (await api.get('/v1/ladders/lb/leaderboard?limit=100')).body;
    expect(after.total).toBe(4);
    expect(new Map(after.entries.map((e: { id: string; rating: number }) => [e.id, e.rating]))).toEqual(new Map(stored.map((p) => [p.id, p.rating])));
    expect(after.entries.map((e: { id: string }) => e.id)).toEqual(stored.map((p) => p.id));
  });
});
