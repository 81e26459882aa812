/**
 * Benchmark: one service instance on a whr ladder of a real ladder's size
 * (`npm run bench -- whr-instance`, or `node dist/bench/whr-instance.js --help`).
 *
 * load.js writes to fresh ladders, whose histories hold a few matches per
 * player; whr-start times a derivation in a bare process. Neither shows what
 * an instance of `ladder serve` costs on a ladder with a long log and a
 * horizon: its whole resident set (the matchmaking worker and, on PGlite,
 * the database's thread included) and its write rate once the history holds
 * the live window.
 *
 * The store is prepared as whr-start prepares it (the synthetic one-on-one
 * log of whr-horizon.ts and the last freeze of the core's batch path, or the
 * ATP file with --atp), then `ladder serve` starts on it, and:
 * - the first write, a match on the day after the log's last, derives the
 *   history from the freeze (the live window: about horizon + horizon/4
 *   days of matches) and closes the log's last day;
 * - `writes` more one-on-one matches follow, `concurrency` in flight, on that
 *   day, or spread over `days` days from it (each new day closes the one
 *   before; a run long enough in days meets the next freeze).
 * The instance's resident set is read from /proc (listening, after the
 * first write, at the end, and its peak, VmHWM), with its CPU and the rate
 * and latency of the writes. LADDER_BENCH_CLI runs another build's server
 * (as load.js); each run prepares a store of its own, since the writes
 * change it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEntry, numberOption, type ScriptSpec, scriptArgs } from '../cli/script-args.js';
import { dropSchema } from '../store/database.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import { CONTEXT_OPTIONS, post, processCpuSeconds, startServer, stop } from './load.js';
import { LADDER, type LogSource, prepare, type Store } from './whr-start.js';

const DAY = 86_400_000;

export interface WhrInstanceOptions {
  /** One-on-one matches of the synthetic log. @default 1000000 */
  matches?: number;
  /** @default 20000 */
  players?: number;
  /** Matches a day of the log. @default 1000 */
  perDay?: number;
  /** The ladder's horizon in days. @default 365 */
  horizon?: number;
  /** The ATP file instead of the synthetic log. */
  atp?: boolean;
  /** Matches written after the first. @default 20000 */
  writes?: number;
  /** Writes in flight. @default 64 */
  concurrency?: number;
  /** Days the writes are spread over, from the day after the log's last. @default 1 */
  days?: number;
  /** PostgreSQL instead of PGlite (a schema of its own, dropped at the end). */
  databaseUrl?: string;
  /** Maps as context: each match on one of this many (the ladder takes load.js's map variances). @default 0 */
  contexts?: number;
  /** The writes start on the day before the ladder reaches its next freeze point (else on the day after the log's last). */
  atFreeze?: boolean;
  /** Writes a second at most, over the whole run (else as fast as `concurrency` allows). */
  rate?: number;
  /** The ladder's `freezeLag` (else the system's default). */
  freezeLag?: number;
}

export interface WhrInstanceResult {
  liveMatches: number;
  firstWriteMs: number;
  writes: number;
  errors: number;
  matchesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The longest write of each day of the run. */
  longestByDayMs: number[];
  rssMb: { listening: number; afterFirstWrite: number; end: number; peak: number };
  serverCpuSeconds: { firstWrite: number; writes: number };
}

/** The instance's resident set now and its peak (VmHWM), in MB: every thread of the process. */
function residentSet(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function runWhrInstance(options: WhrInstanceOptions = {}): Promise<WhrInstanceResult> {
  const horizon = options.horizon ?? 365;
  const perDay = options.perDay ?? 1000;
  const matches = options.matches ?? 1_000_000;
  const players = options.players ?? 20_000;
  const writes = options.writes ?? 20_000;
  const concurrency = options.concurrency ?? 64;
  const days = options.days ?? 1;
  const store: Store = options.databaseUrl ? { url: options.databaseUrl, schema: `whr_instance_${process.pid}` } : { dataDir: mkdtempSync(join(tmpdir(), 'ladder-whr-instance-')) };
  const contexts = options.contexts ?? 0;
  const source: LogSource = options.atp ? { kind: 'atp' } : { kind: 'synthetic', matches, players, perDay, contexts };
  try {
    const systemOptions: Record<string, unknown> = contexts > 0 ? { ...CONTEXT_OPTIONS } : {};
    if (options.freezeLag !== undefined) systemOptions.freezeLag = options.freezeLag;
    const prepared = await prepare(store, source, horizon, true, systemOptions);
    // At a freeze: the day before the next freeze point (the stored freeze's day, a step and the horizon on) is reached.
    const firstDay = options.atFreeze ? prepared.frozenDay + Math.ceil(horizon / 4) + horizon - 1 : Math.floor(prepared.lastAt / DAY) + 1;
    const env: Record<string, string> = store.url ? { DATABASE_URL: store.url, DATABASE_SCHEMA: store.schema! } : {};
    const { child, url } = await startServer(env, store.dataDir ? ['--data', store.dataDir] : []);
    const pid = child.pid!;
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    const base = new URL(url);
    const path = `/v1/ladders/${LADDER}/matches`;
    const random = mulberry32(29);
    const ids = prepared.playerIds;
    const body = (i: number) => {
      const a = Math.floor(random() * ids.length);
      let b = Math.floor(random() * (ids.length - 1));
      if (b >= a) b++;
      const win = random() < 0.5;
      // The first day, then one more every writes/days matches.
      const day = Math.floor((i * days) / Math.max(1, writes));
      const at = options.atFreeze ? (firstDay + day) * DAY : prepared.lastAt + (1 + day) * DAY;
      return JSON.stringify({
        at,
        ...(contexts > 0 ? { context: `map${i % contexts}` } : {}),
        teams: [
          { players: [{ id: ids[a] }], rank: win ? 1 : 2 },
          { players: [{ id: ids[b] }], rank: win ? 2 : 1 },
        ],
      });
    };
    try {
      const listening = residentSet(pid).now;
      let cpu = processCpuSeconds(pid);
      let started = performance.now();
      const firstStatus = await post(agent, base, path, body(0));
      if (firstStatus !== 201) throw new Error(`the first write answered ${firstStatus}`);
      const firstWriteMs = performance.now() - started;
      const firstCpu = processCpuSeconds(pid) - cpu;
      const afterFirstWrite = residentSet(pid).now;
      cpu = processCpuSeconds(pid);
      started = performance.now();
      const latencies: number[] = [];
      const longestByDay: number[] = [];
      let next = 0;
      let errors = 0;
      const rate = options.rate;
      const worker = async () => {
        while (next < writes) {
          const i = next++;
          const payload = body(i);
          // Paced: write i goes no sooner than i / rate seconds into the run.
          const due = rate === undefined ? 0 : started + (i * 1000) / rate - performance.now();
          if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
          const t = performance.now();
          const status = await post(agent, base, path, payload);
          const ms = performance.now() - t;
          latencies.push(ms);
          const day = Math.floor((i * days) / Math.max(1, writes));
          longestByDay[day] = Math.max(longestByDay[day] ?? 0, ms);
          if (status !== 201) errors++;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      const seconds = (performance.now() - started) / 1000;
      const writesCpu = processCpuSeconds(pid) - cpu;
      const end = residentSet(pid);
      latencies.sort((x, y) => x - y);
      return {
        liveMatches: prepared.liveMatches,
        firstWriteMs,
        writes,
        errors,
        matchesPerSecond: writes / seconds,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        maxMs: latencies.at(-1) ?? Number.NaN,
        longestByDayMs: longestByDay,
        rssMb: { listening, afterFirstWrite, end: end.now, peak: end.peak },
        serverCpuSeconds: { firstWrite: firstCpu, writes: writesCpu },
      };
    } finally {
      agent.destroy();
      await stop(child);
    }
  } finally {
    if (store.url) await dropSchema(store.url, store.schema!);
    else rmSync(store.dataDir!, { recursive: true, force: true });
  }
}

/** Runs one instance and prints its figures on one line. */
export async function benchWhrInstance(options: WhrInstanceOptions = {}): Promise<void> {
  const load = loadavg()[0]!;
  const r = await runWhrInstance(options);
  const mb = (x: number) => `${x.toFixed(0)} MB`;
  console.log(
    `whr instance on ${options.databaseUrl ? 'PostgreSQL' : 'PGlite'}, horizon ${options.horizon ?? 365} days${options.contexts ? `, ${options.contexts} maps as context` : ''}, ${r.liveMatches} live matches: ` +
      `first write ${(r.firstWriteMs / 1000).toFixed(1)} s (${r.serverCpuSeconds.firstWrite.toFixed(1)} s CPU); ` +
      `${r.writes} writes at ${r.matchesPerSecond.toFixed(0)} matches/s, p50 ${r.p50Ms.toFixed(1)} / p99 ${r.p99Ms.toFixed(1)} / max ${r.maxMs.toFixed(0)} ms, ${r.errors} errors, server CPU ${r.serverCpuSeconds.writes.toFixed(1)} s; ` +
      (r.longestByDayMs.length > 1 ? `longest write by day ${r.longestByDayMs.map((ms) => ms.toFixed(0)).join(' / ')} ms; ` : '') +
      `resident set listening ${mb(r.rssMb.listening)}, after the first write ${mb(r.rssMb.afterFirstWrite)}, end ${mb(r.rssMb.end)}, peak ${mb(r.rssMb.peak)}; load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
  );
}

const USAGE: ScriptSpec = {
  command: 'node dist/bench/whr-instance.js',
  name: 'whr-instance',
  summary: 'One `ladder serve` instance on a large whr ladder with a horizon: its whole resident set and its write rate once the history holds the live window.',
  options: {
    matches: { type: 'string', value: 'N', description: 'one-on-one matches of the synthetic log (default 1000000)' },
    players: { type: 'string', value: 'N', description: 'players (default 20000)' },
    'per-day': { type: 'string', value: 'N', description: 'matches a day of the log (default 1000)' },
    horizon: { type: 'string', value: 'DAYS', description: "the ladder's horizon (default 365)" },
    atp: { type: 'boolean', description: "the ATP file's 619,373 matches instead of the synthetic log" },
    writes: { type: 'string', value: 'N', description: 'matches written after the first (default 20000)' },
    concurrency: { type: 'string', value: 'N', description: 'writes in flight (default 64)' },
    days: { type: 'string', value: 'N', description: "days the writes are spread over, from the day after the log's last (default 1)" },
    'database-url': { type: 'string', value: 'URL', description: 'PostgreSQL instead of PGlite (a schema of its own, dropped at the end)' },
    contexts: { type: 'string', value: 'N', description: "maps as context: each match on one of N (the map variances of load.js's --contexts; default 0)" },
    'at-freeze': {
      type: 'boolean',
      description: 'the writes start on the day before the ladder reaches its next freeze point (with --days 3: that day, the freeze point, the day after)',
    },
    rate: { type: 'string', value: 'N', description: 'writes a second at most (default: as fast as --concurrency allows); a day of the ladder then lasts writes/days/N seconds' },
    'freeze-lag': {
      type: 'string',
      value: 'N',
      description: "the ladder's freezeLag (default the system's, 1: a freeze is rebuilt beside the history for a day; 0: in the reaching match)",
    },
  },
  notes: 'LADDER_BENCH_CLI=<another build>/dist/cli/main.js runs that build\'s server; LADDER_BENCH_NODE_ARGS adds node flags to it (e.g. "--max-old-space-size=160").',
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  // freezeLag 0 is a value of its own (a freeze in the reaching match); every other number is positive.
  const get = (name: string) => numberOption(USAGE, args, name, name === 'freeze-lag' ? 'any' : 'positive');
  const url = typeof args.values['database-url'] === 'string' ? args.values['database-url'] : undefined;
  const options: WhrInstanceOptions = {
    ...(args.values.atp === true ? { atp: true } : {}),
    ...(args.values['at-freeze'] === true ? { atFreeze: true } : {}),
    ...(url !== undefined ? { databaseUrl: url } : {}),
  };
  for (const [name, key] of [
    ['matches', 'matches'],
    ['players', 'players'],
    ['per-day', 'perDay'],
    ['horizon', 'horizon'],
    ['writes', 'writes'],
    ['concurrency', 'concurrency'],
    ['days', 'days'],
    ['contexts', 'contexts'],
    ['rate', 'rate'],
    ['freeze-lag', 'freezeLag'],
  ] as const) {
    const value = get(name);
    if (value !== undefined) options[key] = value;
  }
  await benchWhrInstance(options);
}
