/**
 * The availability promise at test scale (docs/SERVICE.md, "Availability: no
 * request stalls the others"): fast-check draws random mixes of cheap
 * requests (match writes, leaderboard reads, `/healthz`) and expensive ones
 * (deep-offset and cursor pages of a long match list and history, 64-player
 * balances into 8 teams, 16 × 64-player predictions, the largest
 * whole-history many-team matches, voids of early matches of a ladder of a
 * few thousand, the integrity report), sent at once from several
 * callers against one in-process instance, while a probe writes to another
 * ladder every 20 ms.
 *
 * Properties, per run:
 * - the longest stretch the loop was held by this process's own work (the
 *   main thread's CPU time between ticks of a 5 ms timer, bounded by the wall
 *   time between them: src/service/loop-stall.ts) stays within the
 *   promise, 100 ms;
 * - the event loop's longest delay in wall-clock time (measured on the loop
 *   the server answers on: the server runs in this process) stays within the
 *   cheap-only baseline + MARGIN_MS;
 * - every probe write to the other ladder is answered 201 within
 *   PROBE_BOUND_MS;
 * - every request of the mix gets a deliberate answer: 200, 201, 409, 429 (a
 *   caller past its cap of heavy jobs) or, on a ladder under a phased
 *   correction, 503; never a 500.
 *
 * Two bounds on the loop. The promise is 100 ms of the process's own work;
 * the machines this suite runs on are shared and busy, and there the wall
 * clock also counts the time other processes had the cores, so the
 * wall-clock bound is relative: the longest loop delay of mixes of cheap
 * requests only, measured in this file with the same clients and probe (what
 * the machine and the clients already cost), plus MARGIN_MS (250 ms: a void
 * of an early match of 3,000 added 60–160 ms of wall-clock delay over its
 * baseline on the 2-core test machine under load). The own-work bound is the
 * promise itself. Balance searches for BALANCE_DEADLINE_MS (600 ms) here,
 * longer than the service's default, so that a balance run on the event loop
 * instead of in a worker (`jobs.threads: 0`) holds the loop well past both:
 * the properties then fail.
 *
 * Both databases: PostgreSQL with Redis, and embedded PGlite (its statements
 * in its own thread, corrections phased so its one connection is free
 * between short steps).
 */
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLadder, STAR } from '../../src/bench/availability.js';
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrations.js';
import { watchLoop } from '../../src/service/loop-stall.js';
import { cleanupShared, type Client, client, DATABASE_URL, freshDataDir, startTestServer, type TestServer, uniqueName } from './helpers.js';

/** Matches of the long ladder: deep pages, voids of its early matches, the integrity report. */
const MATCHES = 3000;
const RUNS = 6;
const BALANCE_DEADLINE_MS = 600;
/** What the mix may add to the baseline's longest loop delay, wall clock (see the header). */
const MARGIN_MS = 250;
/** The promise: the longest stretch of the process's own work on the loop. */
const PROMISE_MS = 100;
/**
 * Generous, a check that the other ladder is never starved rather than a
 * latency figure: its writes took up to 0.6 s under most mixes here, and
 * 3.1 s once while two voids of the long ladder ran back to back.
 */
const PROBE_BOUND_MS = 10_000;
/** Players of the long ladder, each with ~15 matches against its star: ratings spread out, so a balance into 8 teams takes a real search. */
const LOBBY = Array.from({ length: 64 }, (_, i) => `p${i}`);

type Command =
  | { kind: 'write' | 'leaderboard' | 'healthz' | 'balance' | 'predict' | 'whr' | 'void' | 'integrity'; caller: number; gapMs: number }
  | { kind: 'matches' | 'history' | 'matchesBefore' | 'historyBefore'; at: number; caller: number; gapMs: number };

const caller = fc.integer({ min: 0, max: 2 });
const gapMs = fc.integer({ min: 0, max: 40 });
const cheap: fc.Arbitrary<Command> = fc.record({ kind: fc.constantFrom('write' as const, 'leaderboard' as const, 'healthz' as const), caller, gapMs });
const expensive: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constantFrom('balance' as const, 'predict' as const, 'whr' as const, 'void' as const, 'integrity' as const), caller, gapMs }),
  fc.record({
    kind: fc.constantFrom('matches' as const, 'history' as const, 'matchesBefore' as const, 'historyBefore' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    caller,
    gapMs,
  }),
);
const mix = fc.array(fc.oneof({ weight: 1, arbitrary: cheap }, { weight: 1, arbitrary: expensive }), { minLength: 8, maxLength: 16 });
const cheapOnly = fc.array(cheap, { minLength: 8, maxLength: 16 });

interface Measured {
  loopMaxMs: number;
  /** Undefined where the main thread's CPU time cannot be read (not Linux). */
  ownMaxMs: number | undefined;
  probeMaxMs: number;
  probeStatuses: number[];
  statuses: Array<[string, number]>;
}

describe.each(['postgres+redis', 'pglite'] as const)('the event loop under random mixes of cheap and expensive requests (%s, in process)', (backend) => {
  let server: TestServer;
  const schema = backend === 'pglite' ? undefined : uniqueName('ladder_test');
  const prefix = backend === 'pglite' ? undefined : `${uniqueName('lt')}:`;
  let dataDir: string | undefined;
  /** Early matches not voided yet: each void takes the next, so every one re-rates the matches after it. */
  let nextVoid = 1;
  let admin: Client;
  let callers: Client[];
  let whrShape: { teams: number; perTeam: number };
  let baselineMs = 0;
  let written = 0;

  /** One request of the mix; resolves its status. */
  async function send(command: Command): Promise<number> {
    const who = callers[command.caller]!;
    const n = written++;
    switch (command.kind) {
      case 'write':
        return (
          await admin.post('/v1/ladders/mixed/matches', {
            teams: [
              { players: [`m${n % 40}`], rank: 1 },
              { players: [`m${(n + 11) % 40}`], rank: 2 },
            ],
          })
        ).status;
      case 'leaderboard':
        return (await who.get('/v1/ladders/target/leaderboard?limit=50')).status;
      case 'healthz':
        return (await who.get('/healthz')).status;
      case 'matches':
        return (await who.get(`/v1/ladders/target/matches?limit=50&offset=${Math.floor(command.at * Math.min(5000, MATCHES - 50))}`)).status;
      case 'history':
        return (await who.get(`/v1/ladders/target/players/${STAR}/history?limit=50&offset=${Math.floor(command.at * 1000)}`)).status;
      case 'matchesBefore':
        return (await who.get(`/v1/ladders/target/matches?limit=50&before=${2 + Math.floor(command.at * (MATCHES - 2))}`)).status;
      case 'historyBefore':
        return (await who.get(`/v1/ladders/target/players/${STAR}/history?limit=50&before=${2 + Math.floor(command.at * (MATCHES - 2))}`)).status;
      case 'balance':
        return (await who.post('/v1/ladders/target/balance', { players: LOBBY, teams: 8 })).status;
      case 'predict':
        return (
          await who.post('/v1/ladders/lobby/predict', {
            teams: Array.from({ length: 16 }, (_, t) => ({ players: Array.from({ length: 64 }, (_, p) => `u${t}-${p}`) })),
          })
        ).status;
      case 'whr':
        return (
          await admin.post('/v1/ladders/whr/matches', {
            teams: Array.from({ length: whrShape.teams }, (_, t) => ({ players: Array.from({ length: whrShape.perTeam }, (_, p) => `w${n % 3}t${t}p${p}`), rank: t + 1 })),
          })
        ).status;
      case 'void': {
        // An early match (its star plays in every later one, so all of them are rated again); a voided match stays void, so each void takes the next.
        const reply = await admin.post(`/v1/ladders/target/matches/m${nextVoid++}/void`, { reason: 'event-loop mix' });
        if (reply.status === 200) expect(reply.body.rerated).toBeGreaterThan(MATCHES / 2);
        return reply.status;
      }
      case 'integrity':
        return (await admin.get('/v1/ladders/target/reports/integrity')).status;
    }
  }

  /** Sends `commands` (each `gapMs` after the one before, none awaited) while the probe writes to another ladder; measures the loop over it all. */
  async function measure(commands: Command[]): Promise<Measured> {
    const watch = watchLoop();
    let done = false;
    const probeMs: number[] = [];
    const probeStatuses: number[] = [];
    const probe = (async () => {
      for (let i = 0; !done; i++) {
        const started = performance.now();
        const reply = await admin.post('/v1/ladders/steady/matches', {
          teams: [
            { players: [`s${i % 20}`], rank: 1 },
            { players: [`s${(i + 7) % 20}`], rank: 2 },
          ],
        });
        probeMs.push(performance.now() - started);
        probeStatuses.push(reply.status);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const sent: Array<Promise<[string, number]>> = [];
    for (const command of commands) {
      if (command.gapMs > 0) await new Promise((resolve) => setTimeout(resolve, command.gapMs));
      sent.push(send(command).then((status) => [command.kind, status]));
    }
    const statuses = await Promise.all(sent);
    done = true;
    await probe;
    const loop = watch.stop();
    return { loopMaxMs: loop.wallMaxMs, ownMaxMs: loop.ownMaxMs, probeMaxMs: Math.max(...probeMs), probeStatuses, statuses };
  }

  beforeAll(async () => {
    if (backend === 'pglite') dataDir = await freshDataDir();
    const db = await openDatabase(dataDir ? { dataDir } : { databaseUrl: DATABASE_URL, schema, poolSize: 2 });
    try {
      await migrate(db);
      await loadLadder(db, 'target', MATCHES, 200);
      await db.exec('ANALYZE');
    } finally {
      await db.close();
    }
    const options = { jobs: { balanceDeadlineMs: BALANCE_DEADLINE_MS } };
    server = await startTestServer(dataDir ? { backend, dataDir, options } : { backend, schema, prefix, options });
    admin = client(server.url, server.admin);
    const readKey = async (name: string) => (await admin.post('/v1/keys', { name, scopes: ['read'] })).body.key as string;
    callers = [client(server.url), client(server.url, await readKey('reader-a')), client(server.url, await readKey('reader-b'))];
    for (const [id, system] of [
      ['steady', 'glicko2'],
      ['mixed', 'glicko2'],
      ['lobby', 'glicko2'],
      ['whr', 'whr'],
    ] as const)
      expect((await admin.post('/v1/ladders', { id, system, public: true })).status).toBe(201);
    // The largest many-team match the whole-history system takes, capped at 64 teams of 8 at this scale.
    const systems = (await admin.get('/v1/systems')).body as { systems: Array<{ name: string; limits: { teams: number; players: number; playersPerTeam: number } }> };
    const limits = systems.systems.find((system) => system.name === 'whr')!.limits;
    const teams = Math.min(64, limits.teams);
    whrShape = { teams, perTeam: Math.max(1, Math.min(8, limits.playersPerTeam, Math.floor(limits.players / teams))) };
    // The baseline: the worst of three mixes of cheap requests alone, after one that warms the routes up.
    const [warmUp, ...baselines] = fc.sample(cheapOnly, { numRuns: 4, seed: 1 });
    await measure(warmUp!);
    for (const commands of baselines) {
      const measured = await measure(commands);
      for (const [, status] of measured.statuses) expect([200, 201]).toContain(status);
      baselineMs = Math.max(baselineMs, measured.loopMaxMs);
    }
  }, 120_000);

  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(schema, prefix);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('holds the loop ≤ 100 ms with its own work, keeps its wall-clock delay within the cheap-only baseline + 250 ms, and answers another ladder’s writes, whatever the mix', async () => {
    const seen: string[] = [];
    await fc.assert(
      fc.asyncProperty(mix, async (commands) => {
        const measured = await measure(commands);
        seen.push(`${measured.loopMaxMs.toFixed(0)} (own ${measured.ownMaxMs?.toFixed(0) ?? '?'})`);
        // 503: a write or read of the long ladder while a phased correction of it runs (it says so, with Retry-After).
        for (const [kind, status] of measured.statuses) expect([kind, [200, 201, 409, 429, 503].includes(status) ? 'answered' : status]).toEqual([kind, 'answered']);
        for (const status of measured.probeStatuses) expect(status).toBe(201);
        expect(measured.probeMaxMs).toBeLessThanOrEqual(PROBE_BOUND_MS);
        expect(measured.loopMaxMs).toBeLessThanOrEqual(baselineMs + MARGIN_MS);
        if (process.platform === 'linux') expect(measured.ownMaxMs).toBeLessThanOrEqual(PROMISE_MS);
      }),
      // No shrinking: each run takes seconds, and the failing mix as drawn already names its requests.
      { numRuns: RUNS, endOnFailure: true },
    );
    console.log(`event-loop mix (${backend}): baseline ${baselineMs.toFixed(0)} ms; runs ${seen.join(', ')} ms`);
  }, 120_000);
});
