/**
 * Service load benchmark: match submissions per second and p50/p99 latency,
 * measured by this process against `ladder serve` running as a separate
 * child process on loopback, on embedded PGlite and on PostgreSQL; and the
 * server's memory with one million players in a ladder.
 *
 *   node dist/bench/load.js [--backend pglite|postgres|both] [--shape 1v1|6v6|whr|both] [--seconds 20] [--concurrency 64] [--workload writes|mixed] [--memory]
 *
 * `--workload mixed`: 80 % match writes and 20 % reads of the same ladder
 * (half leaderboard pages, half player pages), each kind's rate and p50/p99
 * latency reported apart and together. Its ladder ranks players from their
 * first match, so leaderboard pages are full.
 *
 * PostgreSQL runs use DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
 * in a fresh schema that is dropped afterwards.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from 'ladder-core/core/random.js';
import { choiceOption, isEntry, numberOption, type ScriptSpec, scriptArgs } from '../cli/script-args.js';
import { WHR_MAP_OPTIONS } from 'ladder-core/core/whr/index.js';
import { describeSystem } from 'ladder-core/core/registry.js';

export interface LoadOptions {
  backend: 'pglite' | 'postgres';
  /** Seconds of measured load (after a warm-up of a tenth of it). @default 20 */
  seconds?: number;
  /** Requests in flight. @default 64 */
  concurrency?: number;
  /** Players the matches draw from. @default 10000 */
  players?: number;
  /** '1v1' Glicko-2, '6v6' team rank, or 'whr' one-on-one Whole-History Rating matches (a whole-history ladder: the locked path, one batch at a time). @default '1v1' */
  shape?: Shape;
  /** 'writes': match submissions only; 'mixed': 80 % writes, 10 % leaderboard pages, 10 % player pages. @default 'writes' */
  workload?: Workload;
  /** With the `whr` shape only: 'ep' is the ladder's defaults, 'map' the mode as it was the default (WHR_MAP_OPTIONS). @default 'ep' */
  inference?: 'ep' | 'map';
  /**
   * One-on-one shapes (`1v1`, `whr`): matches carry an `at` whose day advances this many times a second of the run (0: no `at`, the
   * server's clock, so one day), so the run crosses day boundaries and pays for closing days (the window's re-smoothing and the cycle). @default 0
   */
  daysPerSecond?: number;
  /**
   * With the `whr` shape only: the ladder has context deviations (`CONTEXT_OPTIONS`) and each match is played on one of this many
   * maps, drawn uniformly (its `context`): each duel is then a game of four nodes. 0: no contexts. @default 0
   */
  contexts?: number;
  /** With `contexts`: how the deviations are smoothed (the system's option; undefined: its default, joint). */
  contextInference?: 'joint' | 'factorised';
  databaseUrl?: string;
}

/** Whether the shape's rating system has context deviations (`CONTEXT_OPTIONS`), by its descriptor. */
function takesContextDeviations(shape: Shape): boolean {
  return Object.keys(CONTEXT_OPTIONS).every((option) => option in describeSystem(SYSTEM_OF_SHAPE[shape]).options);
}

/** A whr ladder's context deviations in the load runs with `contexts`: the map variances fitted on the Overwatch League (docs/EVALUATION.md, owl row 10). */
export const CONTEXT_OPTIONS = { contextPriorVariance: 2.397, contextDailyVariance: 0.003888 } as const;

export type Workload = 'writes' | 'mixed';
export type Shape = '1v1' | '6v6' | 'whr';
const DAY_MS = 86_400_000;
/** The rating system of each shape's ladder. */
const SYSTEM_OF_SHAPE: Record<Shape, string> = { '1v1': 'glicko2', '6v6': 'teamrank', whr: 'whr' };

/** One kind of request of a mixed run. */
export interface KindResult {
  requests: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  errors: number;
}

export interface LoadResult {
  backend: string;
  shape: string;
  workload: Workload;
  concurrency: number;
  seconds: number;
  matches: number;
  matchesPerSecond: number;
  p50ms: number;
  p99ms: number;
  errors: number;
  /** Write batches the server ran on the one-statement path and on the locked path, and their mean size (from /metrics, whole run). */
  batches: { fast: number; locked: number; meanSize: number };
  /** CPU seconds per measured second (1 = one core busy) of the server, this load generator and every PostgreSQL process. */
  cpu: { server: number; client: number; postgres: number };
  /** Mixed runs: match writes, leaderboard pages, player pages and all requests together. */
  kinds?: { writes: KindResult; leaderboard: KindResult; player: KindResult; overall: KindResult };
}

/** CPU seconds (user + system) used so far by process `pid`, from /proc (Linux); NaN elsewhere. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ');
    // After the command: state is field 0, utime field 11, stime field 12 (proc(5)), in clock ticks (100/s on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds of every process whose command name is `postgres` (the server and its backends). */
export function postgresCpuSeconds(): number {
  let total = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += processCpuSeconds(Number(entry));
      } catch {
        // The process ended while we looked.
      }
    }
  } catch {
    return NaN;
  }
  return total;
}

function cpuSnapshot(serverPid: number) {
  const own = process.cpuUsage();
  return { server: processCpuSeconds(serverPid), client: (own.user + own.system) / 1e6, postgres: postgresCpuSeconds() };
}

const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

export function cliEntry(): { args: string[] } {
  // LADDER_BENCH_CLI: another build's dist/cli/main.js, to drive an older server with this load generator.
  if (process.env.LADDER_BENCH_CLI) return { args: [process.env.LADDER_BENCH_CLI] };
  const compiled = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  if (existsSync(compiled)) return { args: [compiled] };
  return { args: ['--import', 'tsx', fileURLToPath(new URL('../cli/main.ts', import.meta.url))] };
}

export interface StartOptions {
  /** Requests per minute per key. @default 1000000 */
  rateLimit?: number;
  /** Sees each stderr line first; a line it returns true for is not kept for the exit message. */
  onStderrLine?: (line: string) => boolean;
}

/**
 * `ladder serve` on a free port, resolved with the URL it prints once it listens: the one start-up of
 * every benchmark that drives a server. `env` names every store variable (DATABASE_URL, DATABASE_SCHEMA,
 * REDIS_URL, REDIS_PREFIX), so none comes from the shell.
 */
export async function startServer(env: Record<string, string>, extra: string[] = [], options: StartOptions = {}): Promise<{ child: ChildProcess; url: string }> {
  // LADDER_BENCH_NODE_ARGS: extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.LADDER_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // LADDER_BENCH_SERVER_ARGS: extra `ladder serve` flags, e.g. "--no-pglite-thread" to compare a setting in the same build.
  const serverArgs = (process.env.LADDER_BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...cliEntry().args, 'serve', '--port', '0', '--rate-limit', String(options.rateLimit ?? 1_000_000), ...extra, ...serverArgs],
    {
      env: { ...process.env, LADDER_ADMIN_KEY: ADMIN_KEY, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!options.onStderrLine?.(line)) stderr += `${line}\n`;
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{"listening"')) resolve({ child, url: (JSON.parse(line) as { listening: string }).listening });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** A POST on the keep-alive agent with the admin key; resolves the status (the body is read and dropped). */
export function post(agent: Agent, url: URL, path: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${ADMIN_KEY}`, ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A GET on the keep-alive agent with the admin key; resolves the status (the body is read and dropped). */
function getStatus(agent: Agent, url: URL, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: url.hostname, port: url.port, path, method: 'GET', headers: { authorization: `Bearer ${ADMIN_KEY}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function get(url: string): Promise<string> {
  return fetch(url).then((r) => r.text());
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function withBackend<T>(options: { backend: 'pglite' | 'postgres'; databaseUrl?: string }, run: (env: Record<string, string>, extra: string[]) => Promise<T>): Promise<T> {
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (options.backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'ladder-bench-'));
    try {
      return await run({ DATABASE_URL: '', DATABASE_SCHEMA: '', REDIS_URL: '', REDIS_PREFIX: '' }, ['--data', dir]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const schema = `ladder_bench_${Date.now().toString(36)}`;
  try {
    return await run({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema, REDIS_URL: '', REDIS_PREFIX: '' }, []);
  } finally {
    const { dropSchema } = await import('../store/database.js');
    await dropSchema(databaseUrl, schema);
  }
}

/** Runs one load measurement. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const seconds = options.seconds ?? 20;
  const concurrency = options.concurrency ?? 64;
  const players = options.players ?? 10_000;
  const shape = options.shape ?? '1v1';
  const workload = options.workload ?? 'writes';
  return withBackend(options, async (env, extra) => {
    const { child, url } = await startServer(env, extra);
    try {
      const base = new URL(url);
      const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
      const ladder = {
        id: 'bench',
        system: SYSTEM_OF_SHAPE[shape],
        ...(options.inference === 'map' ? { options: { ...WHR_MAP_OPTIONS } } : {}),
        ...((options.contexts ?? 0) > 0
          ? { options: { ...CONTEXT_OPTIONS, ...(options.contextInference !== undefined ? { contextInference: options.contextInference } : {}) } }
          : {}),
        // Mixed runs read the leaderboard: every player ranked from the first match, so pages are full.
        ...(workload === 'mixed' ? { standings: { placementMatches: 0 } } : {}),
      };
      await post(agent, base, '/v1/ladders', JSON.stringify(ladder));
      const random = mulberry32(1);
      let counter = 0;
      // Players some acknowledged match has rated (mixed runs read only those, so a player page is never a 404).
      const rated: string[] = [];
      const ratedSet = new Set<string>();
      // Simulated days (one-on-one matches with daysPerSecond): day k of the run is the epoch's day `firstDay + k`, in the past (the
      // service refuses an `at` more than its clock skew ahead).
      const daysPerSecond = options.daysPerSecond ?? 0;
      const firstDay = Math.floor(Date.now() / DAY_MS) - Math.ceil(seconds * 1.2 * daysPerSecond) - 2;
      const runStart = performance.now();
      const contexts = options.contexts ?? 0;
      const nextMatch = () => {
        counter++;
        const pick = () => `p${Math.floor(random() * players)}`;
        if (shape !== '6v6') {
          const a = pick();
          let b = pick();
          while (b === a) b = pick();
          const at = daysPerSecond > 0 ? (firstDay + Math.floor(((performance.now() - runStart) / 1000) * daysPerSecond)) * DAY_MS + (counter % 1000) : undefined;
          const context = contexts > 0 ? `map${Math.floor(random() * contexts)}` : undefined;
          return {
            ids: [a, b],
            body: JSON.stringify({
              ...(at !== undefined ? { at } : {}),
              ...(context !== undefined ? { context } : {}),
              teams: [
                { players: [a], rank: 1 },
                { players: [b], rank: 2 },
              ],
            }),
          };
        }
        const ids = new Set<string>();
        while (ids.size < 12) ids.add(pick());
        const list = [...ids];
        return {
          ids: list,
          body: JSON.stringify({
            teams: [
              { players: list.slice(0, 6), rank: 1 },
              { players: list.slice(6), rank: 2 },
            ],
          }),
        };
      };
      type Kind = 'writes' | 'leaderboard' | 'player';
      /** The next request: a match write, or in mixed runs one time in five a read (leaderboard page or player page, half each). */
      const nextRequest = (): { kind: Kind; send: () => Promise<number> } => {
        const draw = workload === 'mixed' ? random() : 0;
        if (draw >= 0.8 && rated.length > 0) {
          if (draw < 0.9) {
            const pages = Math.max(1, Math.ceil(rated.length / 50));
            const offset = Math.floor(random() * pages) * 50;
            return { kind: 'leaderboard', send: () => getStatus(agent, base, `/v1/ladders/bench/leaderboard?limit=50&offset=${offset}`) };
          }
          const id = rated[Math.floor(random() * rated.length)]!;
          return { kind: 'player', send: () => getStatus(agent, base, `/v1/ladders/bench/players/${id}`) };
        }
        const match = nextMatch();
        return {
          kind: 'writes',
          send: async () => {
            const status = await post(agent, base, '/v1/ladders/bench/matches', match.body, { 'idempotency-key': `b${process.pid}-${counter}` });
            if (status === 201 && workload === 'mixed') {
              for (const id of match.ids) {
                if (!ratedSet.has(id)) {
                  ratedSet.add(id);
                  rated.push(id);
                }
              }
            }
            return status;
          },
        };
      };
      const warmupEnd = performance.now() + (seconds * 1000) / 10;
      const end = warmupEnd + seconds * 1000;
      const latencies: number[] = [];
      const byKind: Record<Kind, { latencies: number[]; errors: number }> = {
        writes: { latencies, errors: 0 },
        leaderboard: { latencies: [], errors: 0 },
        player: { latencies: [], errors: 0 },
      };
      let errors = 0;
      let measured = 0;
      let cpuStart: ReturnType<typeof cpuSnapshot> | undefined;
      const cpuTimer = setTimeout(() => (cpuStart = cpuSnapshot(child.pid!)), warmupEnd - performance.now());
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (;;) {
            const started = performance.now();
            if (started >= end) return;
            const next = nextRequest();
            const status = await next.send().catch(() => 0);
            const finished = performance.now();
            if (started >= warmupEnd && finished <= end) {
              const ok = next.kind === 'writes' ? status === 201 : status === 200;
              if (ok) {
                if (next.kind === 'writes') measured++;
                byKind[next.kind].latencies.push(finished - started);
              } else {
                byKind[next.kind].errors++;
                if (next.kind === 'writes') errors++;
              }
            }
          }
        }),
      );
      clearTimeout(cpuTimer);
      const cpuEnd = cpuSnapshot(child.pid!);
      const metrics = await get(`${url}/metrics`);
      const metric = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? 0);
      const batches = {
        fast: metric(/^ladder_write_batches_total\{path="fast"\} (\S+)$/m),
        locked: metric(/^ladder_write_batches_total\{path="locked"\} (\S+)$/m),
        meanSize: metric(/^ladder_write_batch_size_sum (\S+)$/m) / metric(/^ladder_write_batch_size_count (\S+)$/m),
      };
      const perSecond = (key: 'server' | 'client' | 'postgres') => (cpuStart ? (cpuEnd[key] - cpuStart[key]) / seconds : NaN);
      agent.destroy();
      const sorted = Float64Array.from(latencies).sort();
      const kind = (list: number[], failed: number): KindResult => {
        const ordered = Float64Array.from(list).sort();
        return { requests: list.length, perSecond: list.length / seconds, p50ms: percentile(ordered, 0.5), p99ms: percentile(ordered, 0.99), errors: failed };
      };
      const kinds =
        workload === 'mixed'
          ? {
              writes: kind(byKind.writes.latencies, byKind.writes.errors),
              leaderboard: kind(byKind.leaderboard.latencies, byKind.leaderboard.errors),
              player: kind(byKind.player.latencies, byKind.player.errors),
              overall: kind(
                [...byKind.writes.latencies, ...byKind.leaderboard.latencies, ...byKind.player.latencies],
                byKind.writes.errors + byKind.leaderboard.errors + byKind.player.errors,
              ),
            }
          : undefined;
      return {
        backend: options.backend,
        shape,
        workload,
        concurrency,
        seconds,
        matches: measured,
        matchesPerSecond: measured / seconds,
        p50ms: percentile(sorted, 0.5),
        p99ms: percentile(sorted, 0.99),
        errors,
        batches,
        cpu: { server: perSecond('server'), client: perSecond('client'), postgres: perSecond('postgres') },
        ...(kinds ? { kinds } : {}),
      };
    } finally {
      await stop(child);
    }
  });
}

export interface MemoryResult {
  backend: string;
  players: number;
  rssMiB: number;
  /** Seconds until the first leaderboard answer (loading the in-process leaderboard). */
  firstLeaderboardSeconds: number;
  /** The server's event loop from listening through those reads: its longest delay and the longest stretch its own work held it (ms; null where the metric is absent). */
  loopMaxMs: number | null;
  loopOwnMaxMs: number | null;
}

/**
 * Server memory (resident set) with `players` players in one ladder, after a
 * leaderboard and a player page have been served (so the in-process
 * leaderboard is loaded). The players are written straight into the database.
 */
export async function runMemory(options: { backend: 'pglite' | 'postgres'; players?: number; databaseUrl?: string }): Promise<MemoryResult> {
  const players = options.players ?? 1_000_000;
  return withBackend(options, async (env, extra) => {
    let { child, url } = await startServer(env, extra);
    const base = new URL(url);
    const agent = new Agent({ keepAlive: true });
    await post(agent, base, '/v1/ladders', JSON.stringify({ id: 'big', system: 'glicko2', public: true }));
    await post(
      agent,
      base,
      '/v1/ladders/big/matches',
      JSON.stringify({
        teams: [
          { players: ['seed-a'], rank: 1 },
          { players: ['seed-b'], rank: 2 },
        ],
      }),
    );
    agent.destroy();
    await stop(child);
    // Fill the database directly (the service would take minutes to rate a million players' matches).
    const { openDatabase } = await import('../store/database.js');
    const { seedSyntheticPlayers } = await import('../store/players.js');
    const { addPlayerCount } = await import('../store/ladders.js');
    const db =
      options.backend === 'pglite' ? await openDatabase({ dataDir: extra[1]! }) : await openDatabase({ databaseUrl: env.DATABASE_URL, schema: env.DATABASE_SCHEMA, poolSize: 1 });
    try {
      await seedSyntheticPlayers(db, 'big', players, Date.now());
      await addPlayerCount(db, 'big', players);
    } finally {
      await db.close();
    }
    ({ child, url } = await startServer(env, extra));
    try {
      const started = performance.now();
      const board = JSON.parse(await get(`${url}/v1/ladders/big/leaderboard?limit=10`)) as { total?: number };
      const firstLeaderboardSeconds = (performance.now() - started) / 1000;
      if (board.total !== players) throw new Error(`leaderboard holds ${board.total} players, expected ${players}`);
      await get(`${url}/v1/ladders/big/players/p12345`);
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((r) => setTimeout(r, 1000));
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
      const metrics = await get(`${url}/metrics`);
      const gauge = (pattern: RegExp) => {
        const m = pattern.exec(metrics);
        return m ? Number(m[1]) * 1000 : null;
      };
      return {
        backend: options.backend,
        players,
        rssMiB: rssKiB / 1024,
        firstLeaderboardSeconds,
        loopMaxMs: gauge(/^ladder_event_loop_delay_seconds\{quantile="1"\} (\S+)$/m),
        loopOwnMaxMs: gauge(/^ladder_event_loop_own_stall_seconds (\S+)$/m),
      };
    } finally {
      await stop(child);
    }
  });
}

/** Everything, for `npm run bench` and the standalone command. */
export async function runServiceLoadBenchmarks(
  options: {
    backends?: Array<'pglite' | 'postgres'>;
    shapes?: Shape[];
    seconds?: number;
    concurrency?: number;
    memory?: boolean;
    workload?: Workload;
    inference?: 'ep' | 'map';
    daysPerSecond?: number;
    contexts?: number;
    contextInference?: 'joint' | 'factorised';
  } = {},
) {
  const loads: LoadResult[] = [];
  const memory: MemoryResult[] = [];
  for (const backend of options.backends ?? ['pglite', 'postgres']) {
    for (const shape of options.shapes ?? (['1v1', '6v6'] as const)) {
      loads.push(
        await runLoad({
          backend,
          shape,
          seconds: options.seconds,
          concurrency: options.concurrency,
          workload: options.workload,
          inference: options.inference,
          daysPerSecond: options.daysPerSecond,
          contexts: options.contexts,
          ...(options.contextInference !== undefined ? { contextInference: options.contextInference } : {}),
        }),
      );
    }
    if (options.memory) memory.push(await runMemory({ backend }));
  }
  return { loads, memory };
}

/** A run's CPU cell: cores used by the server, the client and PostgreSQL. */
function cpuCell(r: LoadResult): string {
  return `${r.cpu.server.toFixed(2)} / ${r.cpu.client.toFixed(2)} / ${r.cpu.postgres.toFixed(2)}`;
}

/** A run's batches cell: fast and locked write batches, and their mean size. */
function batchesCell(r: LoadResult): string {
  return `${r.batches.fast} / ${r.batches.locked}, ${r.batches.meanSize.toFixed(1)}`;
}

function format(result: Awaited<ReturnType<typeof runServiceLoadBenchmarks>>): string {
  const lines: string[] = [];
  const writes = result.loads.filter((r) => r.workload === 'writes');
  const mixed = result.loads.filter((r) => r.workload === 'mixed');
  if (writes.length > 0)
    lines.push(
      '| backend | match | concurrency | matches/s | p50 ms | p99 ms | errors | CPU server / client / postgres | batches fast / locked, mean size |',
      '|---|---|---|---|---|---|---|---|---|',
    );
  for (const r of writes) {
    lines.push(
      `| ${r.backend} | ${r.shape} | ${r.concurrency} | ${r.matchesPerSecond.toFixed(0)} | ${r.p50ms.toFixed(1)} | ${r.p99ms.toFixed(1)} | ${r.errors} | ${cpuCell(r)} | ${batchesCell(r)} |`,
    );
  }
  if (mixed.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push('Mixed: 80 % match writes, 10 % leaderboard pages (limit 50), 10 % player pages, one ladder.', '');
    lines.push(
      '| backend | match | concurrency | kind | requests/s | p50 ms | p99 ms | errors | CPU server / client / postgres | batches fast / locked, mean size |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of mixed) {
      const cpu = cpuCell(r);
      const batches = batchesCell(r);
      for (const name of ['writes', 'leaderboard', 'player', 'overall'] as const) {
        const k = r.kinds![name];
        lines.push(
          `| ${r.backend} | ${r.shape} | ${r.concurrency} | ${name} | ${k.perSecond.toFixed(0)} | ${k.p50ms.toFixed(1)} | ${k.p99ms.toFixed(1)} | ${k.errors} | ${name === 'overall' ? cpu : ''} | ${name === 'overall' ? batches : ''} |`,
        );
      }
    }
  }
  if (result.memory.length > 0) {
    lines.push('', '| backend | players | server RSS MiB | first leaderboard s | event loop late at most, ms (own work) |', '|---|---|---|---|---|');
    const ms = (v: number | null) => (v === null ? '—' : v.toFixed(0));
    for (const m of result.memory)
      lines.push(`| ${m.backend} | ${m.players} | ${m.rssMiB.toFixed(0)} | ${m.firstLeaderboardSeconds.toFixed(1)} | ${ms(m.loopMaxMs)} (${ms(m.loopOwnMaxMs)}) |`);
  }
  return lines.join('\n');
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/load.js',
  name: 'load',
  summary: "Match submissions per second and p50/p99 latency against `ladder serve` in a child process; the server's memory with one million players.",
  options: {
    backend: { type: 'string', value: 'pglite|postgres|both', description: 'database of the server (default both; PostgreSQL from DATABASE_URL)' },
    shape: { type: 'string', value: '1v1|6v6|whr|both', description: 'Glicko-2 duels, 6v6 team rank matches or Whole-History Rating duels (default both: 1v1 and 6v6)' },
    seconds: { type: 'string', value: 'N', description: 'measured seconds per run, after a warm-up of a tenth of it (default 20)' },
    concurrency: { type: 'string', value: 'N', description: 'requests in flight (default 64)' },
    workload: { type: 'string', value: 'writes|mixed', description: 'match writes only (default), or 80 % writes + 10 % leaderboard pages + 10 % player pages' },
    inference: { type: 'string', value: 'ep|map', description: "with --shape whr: the ladder's defaults (ep), or the mode as it was the default (map)" },
    'days-per-second': {
      type: 'string',
      value: 'N',
      description: "one-on-one shapes (1v1, whr): the matches' day advances N times a second (default: no `at`, one day), so a whr run pays for closing days",
    },
    contexts: {
      type: 'string',
      value: 'N',
      description: 'with --shape whr: context deviations on, each match on one of N maps (its context; default 0: none)',
    },
    'context-inference': {
      type: 'string',
      value: 'joint|factorised',
      description: "with --contexts: how the deviations are smoothed (default: the system's, joint)",
    },
    memory: { type: 'boolean', description: "also measure the server's memory with one million players" },
  },
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const backendArg = choiceOption(USAGE, args, 'backend', ['pglite', 'postgres', 'both'] as const, 'both');
  const backends = backendArg === 'both' ? (['pglite', 'postgres'] as const) : ([backendArg] as Array<'pglite' | 'postgres'>);
  const shapeArg = choiceOption(USAGE, args, 'shape', ['1v1', '6v6', 'whr', 'both'] as const, 'both');
  const shapes: Shape[] = shapeArg === 'both' ? ['1v1', '6v6'] : [shapeArg];
  const contexts = numberOption(USAGE, args, 'contexts') ?? 0;
  // Context deviations are options of the shape's system (Whole-History Rating's), under expectation propagation.
  if (contexts > 0 && (shapes.some((shape) => !takesContextDeviations(shape)) || args.values.inference === 'map')) {
    process.stderr.write('load: --contexts needs --shape whr and expectation propagation (not --inference map)\n');
    process.exit(2);
  }
  const result = await runServiceLoadBenchmarks({
    backends: [...backends],
    shapes: [...shapes],
    seconds: numberOption(USAGE, args, 'seconds') ?? 20,
    concurrency: Math.round(numberOption(USAGE, args, 'concurrency') ?? 64),
    memory: args.values.memory === true,
    workload: choiceOption(USAGE, args, 'workload', ['writes', 'mixed'] as const, 'writes'),
    inference: choiceOption(USAGE, args, 'inference', ['ep', 'map'] as const, 'ep'),
    daysPerSecond: numberOption(USAGE, args, 'days-per-second') ?? 0,
    contexts,
    ...(args.values['context-inference'] !== undefined ? { contextInference: choiceOption(USAGE, args, 'context-inference', ['joint', 'factorised'] as const, 'joint') } : {}),
  });
  process.stdout.write(`${format(result)}\n`);
}
