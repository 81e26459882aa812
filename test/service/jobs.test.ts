/**
 * Heavy requests on the worker pool (docs/SERVICE.md, "Heavy work: the
 * worker pool"): balance, the integrity report and large predictions run in
 * worker threads, the event loop keeps answering meanwhile, caps answer 429
 * with Retry-After, a job past its limit answers 503 and the pool goes on,
 * and closing the service stops its workers.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JobReport } from '../../src/service/jobs/index.js';
import { cleanupShared, client, type Client, startTestServer, type TestServer } from './helpers.js';

const PLAYERS = Array.from({ length: 64 }, (_, i) => `p${i}`);
const BIG = { players: PLAYERS, teams: 8 };

/** A fixed pseudo-random sequence. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 1v1 Glicko-2 results among the 64 players, so their ratings and RDs differ and an 8-team split takes a real search. */
async function seedLadder(admin: Client, ladder: string, matches: number): Promise<void> {
  expect((await admin.post('/v1/ladders', { id: ladder, system: 'glicko2', public: true })).status).toBe(201);
  const random = mulberry32(7);
  const strength = PLAYERS.map(() => random());
  const bodies = Array.from({ length: matches }, () => {
    const a = Math.floor(random() * 64);
    const b = (a + 1 + Math.floor(random() * 63)) % 64;
    const aWins = random() < 0.2 + 0.6 * (strength[a]! > strength[b]! ? 1 : 0);
    return {
      teams: [
        { players: [PLAYERS[a]], rank: aWins ? 1 : 2 },
        { players: [PLAYERS[b]], rank: aWins ? 2 : 1 },
      ],
    };
  });
  for (let i = 0; i < bodies.length; i += 32) {
    const replies = await Promise.all(bodies.slice(i, i + 32).map((body) => admin.post(`/v1/ladders/${ladder}/matches`, body)));
    for (const reply of replies) expect(reply.status).toBe(201);
  }
}

describe('heavy requests on the worker pool (PGlite)', () => {
  let server: TestServer;
  let admin: Client;
  let anon: Client;
  let reader: Client;
  const jobs: JobReport[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      backend: 'pglite',
      options: { jobs: { threads: 1, balanceDeadlineMs: 1500, perCaller: 2, perLadder: 4, predictPoolPlayers: 8, onJob: (report) => jobs.push(report) } },
    });
    admin = client(server.url, server.admin);
    anon = client(server.url);
    await seedLadder(admin, 'lobby', 256);
    reader = client(server.url, (await admin.post('/v1/keys', { name: 'reader', scopes: ['read'] })).body.key);
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('answers exact: true for a lobby searched exhaustively and exact: false beyond, both computed in a worker thread', async () => {
    jobs.length = 0;
    const small = await anon.post('/v1/ladders/lobby/balance', { players: ['p1', 'p2', 'p3', 'p4'] });
    expect(small.status).toBe(200);
    expect(small.body.exact).toBe(true);
    const big = await anon.post('/v1/ladders/lobby/balance', BIG);
    expect(big.status).toBe(200);
    expect(big.body.exact).toBe(false);
    expect(big.body.teams).toHaveLength(8);
    expect(big.body.teams.flat().sort()).toEqual([...PLAYERS].sort());
    expect(jobs.map((job) => job.kind)).toEqual(['balance', 'balance']);
    for (const job of jobs) {
      expect(job.threadId).not.toBe(threadId);
      expect(server.jobs.pool.threadIds).toContain(job.threadId);
    }
  });

  it('keeps answering other requests while balances run: the event loop never waits as long as one balance takes', async () => {
    jobs.length = 0;
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const balances = [anon, anon, reader, reader].map((caller) => caller.post('/v1/ladders/lobby/balance', BIG));
    const others: Array<Promise<{ status: number }>> = [];
    for (let i = 0; i < 20; i++) {
      others.push(anon.get('/healthz'));
      if (i % 5 === 0)
        others.push(
          admin.post('/v1/ladders/lobby/matches', {
            teams: [
              { players: [`q${i}`], rank: 1 },
              { players: [`r${i}`], rank: 2 },
            ],
          }),
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [balanced, answered] = await Promise.all([Promise.all(balances), Promise.all(others)]);
    delay.disable();
    for (const reply of balanced) expect(reply.status).toBe(200);
    for (const reply of answered) expect([200, 201]).toContain(reply.status);
    expect(jobs).toHaveLength(4);
    for (const job of jobs) expect(job.threadId).not.toBe(threadId);
    // Inline, the loop would stall for a whole balance (and the longest delay would be at least the longest balance).
    const longest = Math.max(...jobs.map((job) => job.runMs));
    expect(longest).toBeGreaterThan(100);
    expect(delay.max / 1e6).toBeLessThan(longest / 2);
  });

  it('answers 429 with Retry-After to a caller past its cap, and serves another caller meanwhile', async () => {
    const flood = Array.from({ length: 6 }, () => anon.post('/v1/ladders/lobby/balance', BIG));
    const other = reader.post('/v1/ladders/lobby/balance', BIG);
    const replies = await Promise.all(flood);
    expect((await other).status).toBe(200);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(replies.filter((reply) => reply.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(replies.length).toBe(refused.length + replies.filter((reply) => reply.status === 200).length);
    for (const reply of refused) {
      expect(reply.body.error.code).toBe('rate_limited');
      expect(reply.body.error.message).toMatch(/this caller/);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('answers 429 past the ladder cap, whoever asks', async () => {
    const callers = [anon, anon, reader, reader, admin, admin];
    const replies = await Promise.all(callers.map((caller) => caller.post('/v1/ladders/lobby/balance', BIG)));
    const refused = replies.filter((reply) => reply.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.some((reply) => /this ladder/.test(reply.body.error.message))).toBe(true);
    for (const reply of replies) expect([200, 429]).toContain(reply.status);
  });

  it('names the field of an error only the worker sees, then serves the next request', async () => {
    const bad = await anon.post('/v1/ladders/lobby/balance', { players: ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'], parties: [['p1', 'p2', 'p3']], teams: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_input', field: 'parties[0]' });
    expect((await anon.post('/v1/ladders/lobby/balance', { players: ['p1', 'p2'] })).status).toBe(200);
  });

  it('runs predictions past predictPoolPlayers in a worker and smaller ones inline, with the same answer', async () => {
    jobs.length = 0;
    const teams = [{ players: PLAYERS.slice(0, 5) }, { players: PLAYERS.slice(5, 10) }];
    const pooled = await anon.post('/v1/ladders/lobby/predict', { teams });
    expect(pooled.status).toBe(200);
    expect(jobs.map((job) => job.kind)).toEqual(['predict']);
    expect(jobs[0]!.threadId).not.toBe(threadId);
    const halves = [{ players: PLAYERS.slice(0, 4) }, { players: PLAYERS.slice(4, 8) }];
    expect((await anon.post('/v1/ladders/lobby/predict', { teams: halves })).status).toBe(200);
    expect(jobs).toHaveLength(1);
    const inline = server.ladders.get('lobby').then(async (ladder) => {
      const rows = await server.db.query<{ id: string; rating: number; rd: number; volatility: number; matches: number }>(
        'SELECT id, rating, rd, volatility, matches FROM players WHERE ladder = $1',
        ['lobby'],
      );
      const state = new Map(rows.map((row) => [row.id, { rating: row.rating, rd: row.rd, volatility: row.volatility, matches: row.matches }]));
      return ladder.rating.predict(teams.map((team) => team.players.map((id) => state.get(id)!)));
    });
    expect(pooled.body.probabilities).toEqual(await inline);
  });

  it('runs the integrity report in a worker', async () => {
    jobs.length = 0;
    const report = await admin.get('/v1/ladders/lobby/reports/integrity');
    expect(report.status).toBe(200);
    expect(report.body.matches).toBeGreaterThanOrEqual(256);
    expect(report.body.players).toBeGreaterThanOrEqual(64);
    expect(jobs.map((job) => job.kind)).toEqual(['integrity']);
    expect(jobs[0]!.threadId).not.toBe(threadId);
  });

  it('drops a balance whose client leaves while it waits for a worker: it never runs, and the metrics count it cancelled', async () => {
    jobs.length = 0;
    const cancelled = async () => {
      const metrics = await admin.get('/metrics');
      return Number(/^ladder_jobs_total\{kind="balance",outcome="cancelled"\} (\S+)$/m.exec(metrics.text)?.[1] ?? 0);
    };
    const before = await cancelled();
    // One worker: the first balance runs (1.5 s to its deadline), the second waits behind it.
    const first = anon.post('/v1/ladders/lobby/balance', BIG);
    const second = admin.post('/v1/ladders/lobby/balance', BIG);
    await vi.waitFor(() => expect([server.jobs.pool.running, server.jobs.pool.waiting]).toEqual([1, 1]), { timeout: 15_000, interval: 5 });
    const leaving = new AbortController();
    const left = reader.call('POST', '/v1/ladders/lobby/balance', BIG, {}, leaving.signal).catch((e: unknown) => e);
    await vi.waitFor(() => expect(server.jobs.pool.waiting).toBe(2), { timeout: 15_000, interval: 5 });
    leaving.abort();
    expect(await left).toMatchObject({ name: 'AbortError' });
    await vi.waitFor(() => expect(server.jobs.pool.waiting).toBeLessThanOrEqual(1), { timeout: 15_000, interval: 5 });
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    // Only the two whose clients stayed ran (a third would have run after them); the caller that left holds no place under its cap.
    await vi.waitFor(() => expect([server.jobs.pool.running, server.jobs.pool.waiting]).toEqual([0, 0]), { timeout: 15_000, interval: 5 });
    expect(jobs.map((job) => job.kind)).toEqual(['balance', 'balance']);
    expect(await cancelled()).toBe(before + 1);
    expect((await reader.post('/v1/ladders/lobby/balance', { players: ['p1', 'p2'] })).status).toBe(200);
  });

  it('stops its worker threads when the service closes', async () => {
    expect(server.jobs.pool.liveThreads).toBeGreaterThanOrEqual(1);
    await server.dispose();
    expect(server.jobs.pool.liveThreads).toBe(0);
    expect(server.jobs.pool.threadIds).toEqual([]);
  });
});

describe('heavy requests on PostgreSQL: a job past its limit', () => {
  let server: TestServer;
  let admin: Client;

  beforeAll(async () => {
    server = await startTestServer({ backend: 'postgres+redis', options: { jobs: { threads: 1, balanceDeadlineMs: 60_000, timeoutMs: { balance: 150 } } } });
    admin = client(server.url, server.admin);
    await seedLadder(admin, 'lobby', 256);
  });

  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  it('answers 503 with Retry-After when balance runs past its limit, replaces the worker and serves the next request', async () => {
    // A four-player balance takes a millisecond on warm code; a worker's first job on a heavily loaded machine can take longer than
    // the 150 ms limit (loading and compiling the balancer), so a small request may be retried while its worker warms up.
    const balanceSmall = async () => {
      for (let attempt = 1; ; attempt++) {
        const reply = await admin.post('/v1/ladders/lobby/balance', { players: ['p1', 'p2', 'p3', 'p4'] });
        if (reply.status !== 503 || attempt === 3) return reply;
      }
    };
    const small = await balanceSmall();
    expect(small.status).toBe(200);
    const before = server.jobs.pool.threadIds;
    const slow = await admin.post('/v1/ladders/lobby/balance', BIG);
    expect(slow.status).toBe(503);
    expect(slow.body.error.code).toBe('unavailable');
    expect(slow.body.error.message).toMatch(/balance job ran longer than its limit of 150 ms/);
    expect(Number(slow.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const again = await balanceSmall();
    expect(again.status).toBe(200);
    expect(again.body.exact).toBe(true);
    expect(server.jobs.pool.threadIds).not.toEqual(before);
  });

  it('serves the integrity report from PostgreSQL', async () => {
    const report = await admin.get('/v1/ladders/lobby/reports/integrity?matches=100');
    expect(report.status).toBe(200);
    expect(report.body.matches).toBe(100);
  });
});
