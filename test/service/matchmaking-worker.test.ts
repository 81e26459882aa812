/**
 * The service's matchmakers live in a worker thread: a worker that stops
 * (here: terminated between two turns) is replaced, the ladder's matchmaker
 * is rebuilt from the shared queue, and matching carries on with the
 * tickets queued before and after. `matchmakingWorker: false` keeps the
 * matchmakers on the main thread.
 */
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, client, startTestServer, type TestServer, useTestServer } from './helpers.js';

const solo = (id: string, percentile: number) => ({ id, players: [{ id: `${id}-p`, percentile, pings: { eu: 20 } }] });

describe.each(BACKENDS)('the matchmaking worker on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
  });

  it('a killed worker is replaced, the matchmaker rebuilt from the queue, and matching continues', async () => {
    expect((await admin.post('/v1/ladders', { id: 'crash', system: 'elo', matchmaking: { teamSize: 1 } })).status).toBe(201);
    expect((await admin.post('/v1/ladders/crash/tickets', solo('c1', 50))).status).toBe(201);
    expect(await server.matchmakeNow()).toBe(0);
    const before = server.matchmaking.matchmakerOf('crash')!;
    expect(before.threadId).not.toBe(threadId);
    expect(before.size).toBe(1);
    const worker = server.matchmaking.host.worker!;
    await worker.terminate();
    expect(before.alive).toBe(false);

    expect((await admin.post('/v1/ladders/crash/tickets', solo('c2', 52))).status).toBe(201);
    // (The turn that places them may be this one or one the arrival brought forward.)
    await server.matchmakeNow();
    for (const id of ['c1', 'c2']) expect((await admin.get(`/v1/tickets/${id}`)).body.status).toBe('matched');
    const after = server.matchmaking.matchmakerOf('crash')!;
    expect(after.alive).toBe(true);
    expect(server.matchmaking.host.worker).not.toBe(worker);
    expect(server.matchmaking.host.restarts).toBe(1);
    // And the new worker keeps following the queue.
    for (const [id, percentile] of [
      ['c3', 30],
      ['c4', 31],
    ] as const)
      expect((await admin.post('/v1/ladders/crash/tickets', solo(id, percentile))).status).toBe(201);
    await server.matchmakeNow();
    for (const id of ['c3', 'c4']) expect((await admin.get(`/v1/tickets/${id}`)).body.status).toBe('matched');
    expect(after.size).toBe(0);
  });
});

describe('matchmakingWorker: false', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ backend: 'pglite', options: { matchmakingWorker: false } });
  });
  afterAll(async () => {
    await server?.dispose();
  });

  it('keeps the matchmakers on the main thread', async () => {
    const admin = client(server.url, server.admin);
    expect((await admin.post('/v1/ladders', { id: 'here', system: 'elo', matchmaking: { teamSize: 1 } })).status).toBe(201);
    expect((await admin.post('/v1/ladders/here/tickets', solo('h1', 50))).status).toBe(201);
    expect((await admin.post('/v1/ladders/here/tickets', solo('h2', 51))).status).toBe(201);
    await server.matchmakeNow();
    expect((await client(server.url, server.admin).get('/v1/tickets/h2')).body.status).toBe('matched');
    expect(server.matchmaking.host.inWorker).toBe(false);
    expect(server.matchmaking.host.worker).toBeUndefined();
    expect(server.matchmaking.matchmakerOf('here')!.threadId).toBe(threadId);
  });
});
