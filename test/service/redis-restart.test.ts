/**
 * A Redis that goes away and comes back empty, under a running service on
 * PostgreSQL (the test's own redis-server, nothing persisted):
 *
 * - `/metrics` keeps answering 200 with what the instance knows while Redis
 *   is away: the series read from Redis are left out (not reported as 0)
 *   and `ladder_redis_up` says 0; 1 again once Redis is back.
 * - A ticket acknowledged with 201 before Redis lost its data is not just
 *   "not found" afterwards: a server-issued id answers 410 with
 *   `reason: "queue-lost"`, a client-chosen id a 404 with the same reason
 *   (the server cannot tell whether that id was ever queued); an id never
 *   seen on a Redis that lost nothing is a plain 404.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { cleanupShared, client, errorShapeProblem, freePort, startTestServer, type TestServer } from './helpers.js';
import { poll, startRedis, stopRedis } from './own-redis.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanups.splice(0).reverse()) await step();
});

async function serviceOnOwnRedis(): Promise<{ server: TestServer; port: number; redis: () => ChildProcess | undefined; restart: () => Promise<void>; stop: () => Promise<void> }> {
  const port = await freePort();
  let redis: ChildProcess | undefined = await startRedis(port);
  const server = await startTestServer({ backend: 'postgres+redis', redisUrl: `redis://127.0.0.1:${port}`, options: { rateLimit: { perSecond: 1e6 } } });
  cleanups.push(async () => {
    await server.dispose();
    if (redis) await stopRedis(redis);
    await cleanupShared(server.schema, undefined);
  });
  return {
    server,
    port,
    redis: () => redis,
    stop: async () => {
      if (redis) await stopRedis(redis);
      redis = undefined;
    },
    restart: async () => {
      redis = await startRedis(port);
    },
  };
}

const waitingLine = /^ladder_tickets_waiting\{queue="q"\} (\d+)$/m;

it('/metrics answers while Redis is away, leaving out the Redis series and saying ladder_redis_up 0', { timeout: 60_000 }, async () => {
  const { server, stop, restart } = await serviceOnOwnRedis();
  const api = client(server.url, server.admin);
  expect((await api.post('/v1/ladders', { id: 'q', system: 'elo', public: true, matchmaking: { teamSize: 1 } })).status).toBe(201);
  expect(
    (
      await api.post('/v1/ladders/q/matches', {
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      })
    ).status,
  ).toBe(201);
  expect((await api.post('/v1/ladders/q/tickets', { players: [{ id: 'a', pings: { eu: 20 } }] })).status).toBe(201);
  const up = await api.get('/metrics');
  expect(up.status).toBe(200);
  expect(up.text).toMatch(/^ladder_redis_up 1$/m);
  expect(up.text.match(waitingLine)?.[1]).toBe('1');

  await stop();
  const away = await api.get('/metrics');
  expect(away.status, away.text.slice(0, 200)).toBe(200);
  expect(away.text).toMatch(/^ladder_redis_up 0$/m);
  expect(away.text).not.toMatch(/^ladder_tickets_waiting\{/m);
  // What the instance knows itself is still there.
  expect(away.text).toMatch(/^ladder_matches_rated_total\{ladder="q"\} 1$/m);

  await restart();
  const back = await poll('ladder_redis_up 1 after Redis returned', 10, async () => {
    const r = await api.get('/metrics');
    return r.status === 200 && /^ladder_redis_up 1$/m.test(r.text) ? r : undefined;
  });
  expect(back.text).not.toMatch(/^ladder_tickets_waiting\{queue="q"\} [1-9]/m);
});

it('says a ticket acknowledged before Redis restarted empty was lost with the queue, not that it never existed', { timeout: 60_000 }, async () => {
  const { server, stop, restart } = await serviceOnOwnRedis();
  const api = client(server.url, server.admin);
  expect((await api.post('/v1/ladders', { id: 'q', system: 'elo', public: true, matchmaking: { teamSize: 1 } })).status).toBe(201);
  const issued = await api.post('/v1/ladders/q/tickets', { players: [{ id: 'a', pings: { eu: 20 } }] });
  expect(issued.status).toBe(201);
  const issuedId = issued.body.ticket.id as string;
  expect((await api.post('/v1/ladders/q/tickets', { id: 'chosen-1', players: [{ id: 'b', pings: { eu: 20 } }] })).status).toBe(201);
  expect((await api.get(`/v1/tickets/${encodeURIComponent(issuedId)}`)).status).toBe(200);
  // On a Redis that lost nothing, an unknown id is a plain 404.
  const never = await api.get('/v1/tickets/never-queued');
  expect(never.status).toBe(404);
  expect(never.body.error.reason).toBeUndefined();

  await stop();
  await restart();
  const lost = await poll('GET of the issued ticket after Redis came back empty', 10, async () => {
    const r = await api.get(`/v1/tickets/${encodeURIComponent(issuedId)}`);
    return r.status === 503 ? undefined : r;
  });
  expect(lost.status, lost.text).toBe(410);
  expect(errorShapeProblem(lost)).toBeUndefined();
  expect(lost.body.error).toMatchObject({ code: 'gone', field: 'ticket', reason: 'queue-lost' });
  expect(lost.body.error.message).toMatch(/queue-?s? state was lost|lost/);
  const cancelled = await api.del(`/v1/tickets/${encodeURIComponent(issuedId)}`);
  expect(cancelled.status).toBe(410);

  const chosen = await api.get('/v1/tickets/chosen-1');
  expect(chosen.status, chosen.text).toBe(404);
  expect(chosen.body.error).toMatchObject({ code: 'not_found', field: 'ticket', reason: 'queue-lost' });

  // A ticket queued after the loss is served, and its players may queue again.
  const again = await api.post('/v1/ladders/q/tickets', { players: [{ id: 'a', pings: { eu: 20 } }] });
  expect(again.status, again.text).toBe(201);
  expect((await api.get(`/v1/tickets/${encodeURIComponent(again.body.ticket.id as string)}`)).status).toBe(200);
});
