/**
 * Redis outage: the test runs its own redis-server (a child process on a
 * free port, nothing persisted), kills it with SIGKILL under a running
 * service and starts it again, empty, on the same port.
 *
 * While Redis is down the process stays up with no unhandled rejection,
 * match submissions still succeed (PostgreSQL is the source of truth), and
 * what needs Redis (leaderboard, tickets, queue) answers 503 with
 * Retry-After and no driver text. Once Redis is back, the leaderboard is
 * rebuilt from the database within seconds — every player rated before and
 * during the outage, with the stored rating — tickets are taken again and
 * the matchmaking timer matches them.
 *
 * And a Redis that is not there at start-up: startService rejects promptly
 * naming the address; `ladder serve` exits 2 with one line saying so.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service/index.js';
import { childEnv } from '../support/test-env.js';
import { ADMIN_KEY, cleanupShared, client, DATABASE_URL, errorShapeProblem, freePort, type Reply, startTestServer, type TestServer, uniqueName } from './helpers.js';
import { poll, startRedis, stopRedis } from './own-redis.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A 503 of a dependency: Retry-After, the error body, no driver text. */
function expectUnavailable(reply: Reply, what: string) {
  expect(reply.status, `${what} → ${reply.status} ${reply.text.slice(0, 200)}`).toBe(503);
  expect(reply.headers.get('retry-after') ?? '', `${what}: Retry-After`).not.toBe('');
  expect(errorShapeProblem(reply), what).toBeUndefined();
}

describe('Redis outage under a running service (PostgreSQL + its own redis-server)', () => {
  const unhandled: string[] = [];
  const onUnhandled = (error: unknown) => unhandled.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
  let redis: ChildProcess | undefined;
  let server: TestServer | undefined;
  let port: number;

  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
  });
  afterAll(async () => {
    await server?.dispose();
    if (redis) await stopRedis(redis);
    await cleanupShared(server?.schema, undefined);
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  });

  it('keeps rating while Redis is down, answers 503 for what needs it, and rebuilds the leaderboard and queue when it comes back empty', { timeout: 120_000 }, async () => {
    port = await freePort();
    redis = await startRedis(port);
    server = await startTestServer({ backend: 'postgres+redis', redisUrl: `redis://127.0.0.1:${port}`, options: { matchmakingIntervalMs: 100, rateLimit: { perSecond: 1e6 } } });
    // A bounded call: an answer within 15 s or a failure naming the request.
    const api = client(server.url, server.admin);
    const timed = (method: string, path: string, body?: unknown): Promise<Reply> =>
      api.call(method, path, body, {}, AbortSignal.timeout(15_000)).catch((error: Error) => {
        throw new Error(`${method} ${path} did not answer: ${error.message}`);
      });
    expect((await timed('POST', '/v1/ladders', { id: 'out', system: 'elo', public: true, standings: { placementMatches: 0 }, matchmaking: { teamSize: 1 } })).status).toBe(201);
    const duel = (a: string, b: string) => ({
      teams: [
        { players: [a], rank: 1 },
        { players: [b], rank: 2 },
      ],
    });
    for (const [a, b] of [
      ['p0', 'p1'],
      ['p2', 'p3'],
      ['p4', 'p5'],
      ['p1', 'p2'],
      ['p3', 'p0'],
    ]) {
      expect((await timed('POST', '/v1/ladders/out/matches', duel(a!, b!))).status).toBe(201);
    }
    const before = await timed('GET', '/v1/ladders/out/leaderboard?limit=100');
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(6);

    // ---- Redis goes away.
    await stopRedis(redis);
    redis = undefined;
    for (const [a, b] of [
      ['p0', 'q0'],
      ['q1', 'p5'],
      ['q0', 'q1'],
      ['p2', 'p4'],
    ]) {
      const reply = await timed('POST', '/v1/ladders/out/matches', duel(a!, b!));
      expect(reply.status, `match ${a}–${b} during the outage: ${reply.text.slice(0, 200)}`).toBe(201);
    }
    expectUnavailable(await timed('GET', '/v1/ladders/out/leaderboard'), 'GET leaderboard during the outage');
    expectUnavailable(await timed('POST', '/v1/ladders/out/tickets', { players: [{ id: 'p0', percentile: 50, pings: { eu: 20 } }] }), 'POST tickets during the outage');
    expectUnavailable(await timed('GET', '/v1/ladders/out/queue'), 'GET queue during the outage');
    const health = await timed('GET', '/healthz');
    expect([200, 503], `healthz → ${health.status} ${health.text.slice(0, 200)}`).toContain(health.status);
    if (health.status === 503) expect(errorShapeProblem(health)).toBeUndefined();
    // Several matchmaking passes against the dead Redis.
    await new Promise((r) => setTimeout(r, 1000));
    expect(unhandled, 'unhandled rejections or exceptions during the outage').toEqual([]);

    // ---- Redis comes back, empty, on the same port.
    redis = await startRedis(port);
    const players = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'q0', 'q1'];
    const stored = new Map<string, number>();
    for (const id of players) {
      const reply = await poll(`GET players/${id} after Redis came back`, 10, async () => {
        const r = await timed('GET', `/v1/ladders/out/players/${id}`);
        return r.status === 200 ? r : undefined;
      });
      expect(reply.body.matches).toBeGreaterThan(0);
      stored.set(id, reply.body.rating);
    }
    const board = await poll('the leaderboard listing every player rated before and during the outage', 10, async () => {
      const r = await timed('GET', '/v1/ladders/out/leaderboard?limit=100');
      if (r.status !== 200) return undefined;
      const ids = (r.body.entries as Array<{ id: string }>).map((e) => e.id).sort();
      return JSON.stringify(ids) === JSON.stringify([...players].sort()) ? r : undefined;
    });
    expect(board.body.total).toBe(players.length);
    for (const entry of board.body.entries as Array<{ id: string; rating: number }>)
      expect(entry.rating, `leaderboard rating of ${entry.id}`).toBeCloseTo(stored.get(entry.id)!, 9);
    const ratings = board.body.entries.map((e: { rating: number }) => e.rating);
    expect(ratings).toEqual([...ratings].sort((x: number, y: number) => y - x));

    // Tickets again, and the timer matches a matchable pair.
    const first = await poll('a ticket accepted after Redis came back', 10, async () => {
      const r = await timed('POST', '/v1/ladders/out/tickets', { id: 'after-1', players: [{ id: 'p0', percentile: 50, pings: { eu: 20 } }] });
      return r.status === 201 ? r : undefined;
    });
    expect(first.body.ticket.status).toBe('waiting');
    const second = await timed('POST', '/v1/ladders/out/tickets', { id: 'after-2', players: [{ id: 'p1', percentile: 51, pings: { eu: 25 } }] });
    expect(second.status).toBe(201);
    for (const id of ['after-1', 'after-2']) {
      const ticket = await poll(`ticket ${id} matched by the timer`, 10, async () => {
        const r = await timed('GET', `/v1/tickets/${id}`);
        return r.status === 200 && r.body.status === 'matched' ? r : undefined;
      });
      expect(ticket.body.match.teams.flat().sort()).toEqual(['after-1', 'after-2']);
    }
    expect((await timed('GET', '/v1/ladders/out/queue')).status).toBe(200);
    expect(unhandled, 'unhandled rejections or exceptions').toEqual([]);
  });
});

describe('a Redis that is not there at start-up', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanups.splice(0).reverse()) await step();
  });

  it('startService rejects within 5 s, naming the address', { timeout: 60_000 }, async () => {
    const dead = await freePort();
    const schema = uniqueName('ladder_noredis');
    cleanups.push(() => cleanupShared(schema, undefined));
    const started = Date.now();
    const outcome = await Promise.race([
      startService({
        port: 0,
        adminKey: ADMIN_KEY,
        databaseUrl: DATABASE_URL,
        databaseSchema: schema,
        redisUrl: `redis://127.0.0.1:${dead}`,
        redisPrefix: `${uniqueName('nr')}:`,
      }).then(
        async (service) => {
          await service.close();
          return { started: true as const };
        },
        (error: unknown) => ({ error }),
      ),
      new Promise<{ hung: true }>((resolve) => setTimeout(() => resolve({ hung: true }), 20_000)),
    ]);
    const elapsed = Date.now() - started;
    expect('hung' in outcome, 'startService neither started nor failed within 20 s').toBe(false);
    expect('started' in outcome, 'startService started without its Redis').toBe(false);
    const error = (outcome as { error: unknown }).error;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`127.0.0.1:${dead}`);
    expect(elapsed, `rejected after ${elapsed} ms`).toBeLessThan(5000);
  });

  it('ladder serve exits with status 2 and one line on stderr naming the address', { timeout: 120_000 }, async () => {
    const dead = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'ladder-noredis-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--no-matchmaking-warm-up', '--data', dataDir], {
      cwd: ROOT,
      env: childEnv({ REDIS_URL: `redis://127.0.0.1:${dead}`, LADDER_ADMIN_KEY: ADMIN_KEY }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => resolve('still running after 90 s'), 90_000);
      child.on('exit', (status, signal) => {
        clearTimeout(timer);
        resolve(status ?? String(signal));
      });
    });
    expect(code, `exit status; stderr: ${stderr.slice(0, 600)}`).toBe(2);
    const lines = stderr.trim().split('\n');
    expect(lines, `stderr: ${stderr.slice(0, 600)}`).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${dead}`);
    expect(stdout).not.toContain('listening');
  });
});
