/**
 * Corrections benchmark: voiding a match far back in a big ladder. Builds a
 * ladder of `matches` Elo 1v1 matches among `players` players (rated here
 * and bulk-loaded through the store, as the writer would have stored them),
 * then voids one match per run (`--target N`: match mN, default the first;
 * `--back B`: the match B before the end), a different one each run. For
 * each void it reports the time, the growth of the process's resident
 * memory and heap over the void (sampled every 20 ms), the event loop's
 * longest delay (perf_hooks.monitorEventLoopDelay) and the slowest of the
 * small reads of another ladder sent every 50 ms meanwhile.
 *
 *   node --expose-gc dist/bench/corrections.js [--matches 100000] [--players 10000] [--target 1 | --back B] [--runs 1] [--chunk 1000] [--backend postgres|pglite] [--mode transaction|phased] [--profile]
 *
 * PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
 * in a fresh schema dropped afterwards; PGlite: a temporary directory.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Match } from 'ladder-core/core/match.js';
import type { PlayerState } from 'ladder-core/core/systems.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import { choiceOption, isEntry, numberOption, type ScriptSpec, scriptArgs, textOption } from '../cli/script-args.js';
import { type CorrectionMode, correctMatch } from '../service/corrections.js';
import { Ladders } from '../service/ladders.js';
import { matchChanges } from '../service/rating.js';
import { type Database, dropSchema, openDatabase, type Queryable } from '../store/database.js';
import { advanceLadder, ladderCounts } from '../store/ladders.js';
import { emptyMatchRows, insertMatches } from '../store/matches.js';
import { migrate } from '../store/migrations.js';
import { upsertPlayers } from '../store/players.js';

export interface CorrectionsOptions {
  matches?: number;
  players?: number;
  /** The match voided first (m1 is the first of the log); later runs void the ones after it. @default 1 */
  target?: number;
  /** Instead of `target`: the match this many before the end. */
  back?: number;
  runs?: number;
  /** Matches per page of the correction. @default the service's */
  chunk?: number;
  /** How the correction is written. @default the backend's default (corrections.ts) */
  mode?: CorrectionMode;
  backend?: 'postgres' | 'pglite';
  databaseUrl?: string;
  /** Print the time spent in each kind of statement. */
  profile?: boolean;
}

/** The database with the time of each kind of statement run in transactions added up (`--profile`). */
function profiled(db: Database, spent: Map<string, { ms: number; count: number }>): Database {
  const kindOf = (sql: string) => sql.trim().split(/\s+/).slice(0, 4).join(' ');
  const wrap = (tx: Queryable): Queryable => ({
    query: async <Row>(sql: string, params?: readonly unknown[], options?: { name?: string }) => {
      const started = performance.now();
      try {
        return await tx.query<Row>(sql, params, options);
      } finally {
        const entry = spent.get(kindOf(sql)) ?? { ms: 0, count: 0 };
        entry.ms += performance.now() - started;
        entry.count++;
        spent.set(kindOf(sql), entry);
      }
    },
    exec: (sql: string) => tx.exec(sql),
  });
  // Each transaction's length, from its first statement's start to the commit: what another ladder's write may wait for.
  const transaction: Database['transaction'] = async (work) => {
    const started = performance.now();
    const kinds: string[] = [];
    try {
      return await db.transaction((tx) => {
        const inner = wrap(tx);
        return work({ query: (sql, params, options) => (kinds.push(kindOf(sql)), inner.query(sql, params, options)), exec: inner.exec } as Queryable);
      });
    } finally {
      const ms = performance.now() - started;
      longest.push({ ms, kinds: [...new Set(kinds)].join('; ') });
      longest.sort((a, b) => b.ms - a.ms);
      longest.length = Math.min(longest.length, 5);
      const all = spent.get('(transactions)') ?? { ms: 0, count: 0 };
      all.ms += ms;
      all.count++;
      spent.set('(transactions)', all);
    }
  };
  return { ...db, transaction } as Database;
}

/** The longest transactions of the profiled void, with the kinds of statement each ran. */
const longest: Array<{ ms: number; kinds: string }> = [];

export interface VoidRun {
  target: string;
  ms: number;
  rerated: number;
  changed: number;
  /** Growth over the void, MB: resident set and JS heap (peak during the void minus before it). */
  rssMb: number;
  heapMb: number;
  /** The event loop's longest delay during the void, ms. */
  loopMaxMs: number;
  /** The longest stretch between two 20 ms ticks spent on the CPU, ms (the part of a delay that is the process's own work, not the scheduler's). */
  busyMaxMs: number;
  /** The slowest read of another ladder sent during the void, ms. */
  otherMaxMs: number;
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/corrections.js',
  name: 'corrections',
  summary: `Builds an Elo 1v1 ladder of --matches matches, then voids one match per run and reports the time,
the memory growth, the event loop's longest delay and the slowest read of another ladder meanwhile.`,
  options: {
    matches: { type: 'string', value: 'N', description: 'matches in the ladder (default 100000)' },
    players: { type: 'string', value: 'N', description: 'players (default a tenth of the matches, at least 100)' },
    target: { type: 'string', value: 'N', description: 'void match mN first, the ones after it in later runs (default 1)' },
    back: { type: 'string', value: 'B', description: 'instead of --target: the match B before the end' },
    runs: { type: 'string', value: 'N', description: 'voids, one match each (default 1)' },
    chunk: { type: 'string', value: 'N', description: "matches per page of the correction (default the service's)" },
    backend: { type: 'string', value: 'postgres|pglite', description: 'the database (default postgres, from DATABASE_URL)' },
    mode: { type: 'string', value: 'transaction|phased', description: "how the correction is written (default the backend's)" },
    profile: { type: 'boolean', description: 'print the time spent in each kind of statement' },
  },
  notes: 'PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), in a fresh schema dropped afterwards.',
};

export async function benchCorrections(options: CorrectionsOptions = {}): Promise<{ loadSeconds: number; runs: VoidRun[] }> {
  const total = options.matches ?? 100_000;
  const players = options.players ?? Math.max(100, Math.floor(total / 10));
  const first = options.back !== undefined ? total - options.back : (options.target ?? 1);
  const runs = options.runs ?? 1;
  const backend = options.backend ?? 'postgres';
  const schema = `ladder_bench_${randomBytes(4).toString('hex')}`;
  const url = options.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dataDir = backend === 'pglite' ? mkdtempSync(join(tmpdir(), 'ladder-bench-corrections-')) : undefined;
  const db = await openDatabase(dataDir ? { dataDir } : { databaseUrl: url, schema, poolSize: 4 });
  try {
    await migrate(db);
    const ladders = new Ladders(db);
    const ladder = await ladders.create({ id: 'big', system: 'elo' });
    const other = await ladders.create({ id: 'other', system: 'elo' });
    const system = ladder.rating;
    const random = mulberry32(7);
    const states = new Map<string, PlayerState>();
    const lastSeqs = new Map<string, number>();
    const start = Date.now() - total * 1000;
    const loadStarted = performance.now();
    const chunk = 20_000;
    for (let first = 0; first < total; first += chunk) {
      const matchRows = emptyMatchRows();
      for (let i = first; i < Math.min(total, first + chunk); i++) {
        const a = Math.floor(random() * players);
        const b = (a + 1 + Math.floor(random() * (players - 1))) % players;
        const win = random() < 0.5;
        const match: Match = {
          id: `m${i + 1}`,
          at: start + i * 1000,
          teams: [
            { players: [{ id: `p${a}` }], rank: win ? 1 : 2 },
            { players: [{ id: `p${b}` }], rank: win ? 2 : 1 },
          ],
        };
        const probabilities = system.predict(match.teams.map((t) => t.players.map((p) => states.get(p.id) ?? system.initial())));
        const rating = system.rateMatch(match, states, { timeIdle: true });
        const seq = i + 1;
        matchRows.seq.push(seq);
        matchRows.id.push(match.id!);
        matchRows.at.push(match.at!);
        matchRows.receivedAt.push(match.at!);
        matchRows.round.push(null);
        matchRows.body.push(JSON.stringify(match));
        matchRows.winProbability.push(JSON.stringify(probabilities));
        matchRows.changes.push(matchChanges(rating.players, (id) => lastSeqs.get(id) ?? null));
        for (const change of rating.players) {
          states.set(change.id, change.after);
          lastSeqs.set(change.id, seq);
        }
      }
      await db.transaction(async (tx) => {
        await insertMatches(tx, ladder.id, matchRows);
      });
    }
    const finals = [...states].map(([id, state]) => ({ id, state, lastSeq: lastSeqs.get(id) ?? null }));
    for (let i = 0; i < finals.length; i += chunk) await db.transaction((tx) => upsertPlayers(tx, ladder.id, finals.slice(i, i + chunk)));
    await db.transaction((tx) => advanceLadder(tx, ladder.id, { nextSeq: total + 1, matchesAdded: total, playersAdded: states.size, roundCount: 0, version: 1 }));
    await db.exec('ANALYZE');
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    console.log(`loaded ${total} matches of ${states.size} players in ${loadSeconds.toFixed(1)} s`);
    console.log(`${backend}: voiding from m${first}, ${runs} run(s)${options.chunk ? `, pages of ${options.chunk}` : ''}`);
    // The machine's own noise: the event loop's longest delay over a second with nothing to do.
    const idle = monitorEventLoopDelay({ resolution: 10 });
    idle.enable();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    idle.disable();
    console.log(`event loop max delay idle (1 s): ${(idle.max / 1e6).toFixed(1)} ms`);
    const results: VoidRun[] = [];
    for (let run = 0; run < runs; run++) {
      const target = `m${first + run * 7}`;
      (globalThis as { gc?: () => void }).gc?.();
      const base = process.memoryUsage();
      let peakRss = base.rss;
      let peakHeap = base.heapUsed;
      // A delay of the event loop is ours only when the process spent it on the CPU: on a loaded machine
      // the scheduler also delays it. Each tick notes the CPU time used since the last one, bounded by the wall time.
      let lastTick = performance.now();
      let lastCpu = process.cpuUsage();
      let busyMax = 0;
      const sampler = setInterval(() => {
        const now = process.memoryUsage();
        peakRss = Math.max(peakRss, now.rss);
        peakHeap = Math.max(peakHeap, now.heapUsed);
        const wall = performance.now();
        const cpu = process.cpuUsage(lastCpu);
        busyMax = Math.max(busyMax, Math.min(wall - lastTick, (cpu.user + cpu.system) / 1000));
        lastTick = wall;
        lastCpu = process.cpuUsage();
      }, 20);
      // Another ladder's reads meanwhile: what a client of another ladder waits.
      let otherMax = 0;
      let probing = true;
      const probes = (async () => {
        while (probing) {
          const sent = performance.now();
          await ladderCounts(db, other.id);
          otherMax = Math.max(otherMax, performance.now() - sent);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const started = performance.now();
      const spent = new Map<string, { ms: number; count: number }>();
      const result = await correctMatch(options.profile ? profiled(db, spent) : db, ladder, target, { kind: 'void', reason: 'benchmark' }, Date.now(), {
        ...(options.chunk ? { chunk: options.chunk } : {}),
        ...(options.mode ? { mode: options.mode } : {}),
      });
      const ms = performance.now() - started;
      loop.disable();
      probing = false;
      await probes;
      clearInterval(sampler);
      const end = process.memoryUsage();
      peakRss = Math.max(peakRss, end.rss);
      peakHeap = Math.max(peakHeap, end.heapUsed);
      const row: VoidRun = {
        target,
        ms,
        rerated: result.rerated,
        changed: result.players.length,
        rssMb: (peakRss - base.rss) / 2 ** 20,
        heapMb: (peakHeap - base.heapUsed) / 2 ** 20,
        loopMaxMs: loop.max / 1e6,
        busyMaxMs: busyMax,
        otherMaxMs: otherMax,
      };
      results.push(row);
      for (const [kind, { ms, count }] of [...spent].sort((a, b) => b[1].ms - a[1].ms)) console.log(`  ${ms.toFixed(0).padStart(7)} ms in ${count} × ${kind}`);
      for (const { ms, kinds } of longest) console.log(`  longest transaction ${ms.toFixed(1)} ms: ${kinds}`);
      longest.length = 0;
      console.log(
        `void ${target}: ${ms.toFixed(0)} ms, ${row.rerated} later matches re-rated, ${row.changed} players changed; ` +
          `memory +${row.rssMb.toFixed(0)} MB resident (heap +${row.heapMb.toFixed(0)} MB), event loop max delay ${row.loopMaxMs.toFixed(1)} ms (longest stretch on the CPU ${row.busyMaxMs.toFixed(0)} ms), ` +
          `another ladder's reads ≤ ${row.otherMaxMs.toFixed(1)} ms`,
      );
    }
    return { loadSeconds, runs: results };
  } finally {
    await db.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    else await dropSchema(url, schema);
  }
}

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const number = (name: string) => numberOption(USAGE, args, name);
  const backend = choiceOption(USAGE, args, 'backend', ['postgres', 'pglite'] as const, 'postgres');
  const mode = textOption(args, 'mode') === undefined ? undefined : choiceOption(USAGE, args, 'mode', ['transaction', 'phased'] as const, 'transaction');
  await benchCorrections({
    matches: number('matches'),
    players: number('players'),
    target: number('target'),
    back: numberOption(USAGE, args, 'back', 'any'),
    runs: number('runs'),
    chunk: number('chunk'),
    backend,
    profile: args.values.profile === true,
    ...(mode ? { mode } : {}),
  });
}
