/**
 * Benchmark: how a service start derives a whr ladder with a horizon, from
 * its stored last freeze against from the whole log (`npm run bench --
 * whr-start`, or `node --expose-gc dist/bench/whr-start.js --help`).
 *
 * A synthetic one-on-one log (the generator of whr-horizon.ts: `players`
 * players, `perDay` matches a day), or with --atp the ATP file of
 * `npm run bench -- rating` (619,373 one-on-one matches, 1991–2017, each
 * dated by its tournament), is written into a fresh store (PGlite in
 * a temporary directory, or a PostgreSQL schema with --database-url),
 * without rating it: a derivation reads only the log. The whole log is then
 * derived once and its last freeze stored, as the writer stores it. Each
 * measured run is a process of its own, in the order whole, freeze, whole,
 * freeze, …: the writer's start path (`startHistory` then `deriveInSlices`
 * with the writer's defaults, pages of 100 matches and a turn of the event
 * loop every 20 ms), its wall and CPU time (the process's, PGlite's thread
 * included), the matches it took in, the heap + array buffers retained
 * after a full collection and the maximum resident set; and a digest of
 * every player's state, which must be the same for both.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Database, dropSchema, openPglite, openPostgres } from '../store/database.js';
import { type StoredFreeze, writeFreeze } from '../store/frozen.js';
import { advanceLadder, insertLadder, logHead } from '../store/ladders.js';
import { emptyMatchRows, insertMatches } from '../store/matches.js';
import { migrate } from '../store/migrations.js';
import { LadderHistory, startHistory } from '../service/whole-history.js';
import { isEntry, numberOption, type ScriptSpec, scriptArgs } from '../cli/script-args.js';
import type { Match } from 'ladder-core/core/match.js';
import { WhrHistory } from 'ladder-core/core/whr/index.js';
import { loadAtp } from './rating.js';
import { syntheticLog } from './whr-horizon.js';

/** The prepared ladder's id. */
export const LADDER = 'bench';

export interface Store {
  url?: string;
  schema?: string;
  dataDir?: string;
  /** PGlite's buffer cache in MB (PGlite's own default when absent). */
  sharedBuffersMb?: number;
}

async function open(store: Store): Promise<Database> {
  if (store.url) return openPostgres({ url: store.url, schema: store.schema!, max: 2 });
  return openPglite(store.dataDir!, { thread: true, ...(store.sharedBuffersMb !== undefined ? { sharedBuffersMb: store.sharedBuffersMb } : {}) });
}

function retained(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * The log a benchmark writes: synthetic, or the ATP file's matches in its order (games without a date left
 * out). With `contexts` > 0 each synthetic match is played on one of that many maps (its `context`), in turn.
 */
export type LogSource = { kind: 'synthetic'; matches: number; players: number; perDay: number; contexts?: number } | { kind: 'atp' };

function* logOf(source: LogSource): Generator<Match> {
  if (source.kind === 'synthetic') {
    const contexts = source.contexts ?? 0;
    let i = 0;
    for (const match of syntheticLog(source.matches, source.players, source.perDay)) yield contexts > 0 ? { ...match, context: `map${i++ % contexts}` } : match;
    return;
  }
  const log = loadAtp();
  for (let g = 0; g < log.count; g++) {
    const at = log.at[g]!;
    if (!Number.isFinite(at)) continue;
    // The file's first player won (winner_id, loser_id).
    const first = log.score[g]! >= 0.5;
    yield {
      at,
      teams: [
        { players: [{ id: log.ids[log.a[g]!]! }], rank: first ? 1 : 2 },
        { players: [{ id: log.ids[log.b[g]!]! }], rank: first ? 2 : 1 },
      ],
    };
  }
}

/** What `prepare` wrote: the log's players, its last match's time, and the matches after the stored freeze. */
export interface Prepared {
  playerIds: string[];
  lastAt: number;
  liveMatches: number;
  /** The stored freeze's day. */
  frozenDay: number;
}

/**
 * Writes the log and the ladder, then derives the whole log once and stores its last freeze. With
 * `converged`, the freeze comes from the core's batch path instead (`addLog`: the log converged between freeze
 * points, no smoothing per match but in each freeze's replay), which is much cheaper for a long log: its priors are those of the converged
 * log rather than the writer's incremental estimates, which changes nothing a start does with them (the same
 * players, the same live matches). `systemOptions`: the ladder's whr options besides its horizon (context
 * variances, say).
 */
export async function prepare(store: Store, source: LogSource, horizon: number, converged: boolean, systemOptions: Record<string, unknown> = {}): Promise<Prepared> {
  const db = await open(store);
  try {
    await migrate(db);
    const options = { horizon, ...systemOptions };
    await insertLadder(db, { id: LADDER, system: 'whr', options, settings: {}, public: false, created_at: Date.now() });
    let rows = emptyMatchRows();
    let seq = 0;
    const players = new Set<string>();
    let firstAt = Number.NaN;
    let lastAt = Number.NaN;
    const core = converged ? new WhrHistory(options) : undefined;
    // The first match of each day (the freeze's live matches start at a day's first, and so does the match that made it).
    const firstOfDay = new Map<number, number>();
    let chunk: Match[] = [];
    const flush = async () => {
      if (rows.seq.length > 0) await insertMatches(db, LADDER, rows);
      rows = emptyMatchRows();
    };
    for (const match of logOf(source)) {
      seq++;
      for (const team of match.teams) for (const player of team.players) players.add(player.id);
      if (seq === 1) firstAt = match.at!;
      lastAt = match.at!;
      rows.seq.push(seq);
      rows.id.push(`m${seq}`);
      rows.at.push(match.at!);
      rows.receivedAt.push(match.at!);
      rows.round.push(null);
      rows.body.push(JSON.stringify({ id: `m${seq}`, ...match }));
      rows.winProbability.push('null');
      rows.changes.push('null');
      if (core) {
        const day = core.dayOf(match.at);
        if (!firstOfDay.has(day)) firstOfDay.set(day, seq);
        chunk.push(match);
      }
      if (rows.seq.length === 5000) {
        await flush();
        core?.addLog(chunk);
        chunk = [];
      }
    }
    await flush();
    core?.addLog(chunk);
    await advanceLadder(db, LADDER, { nextSeq: seq + 1, matchesAdded: seq, playersAdded: players.size, roundCount: 0, version: 1 });
    const head = (await logHead(db, LADDER))!;
    const history = new LadderHistory('whr', options, head.logEpoch);
    let freeze: StoredFreeze | undefined;
    if (core) {
      const past = core.frozen();
      if (past !== undefined) {
        const seqFrom = (day: number) => {
          for (let d = day; d <= day + 10_000; d++) if (firstOfDay.has(d)) return firstOfDay.get(d)!;
          throw new Error(`no match on or after day ${day}`);
        };
        // Live: the matches of days after the freeze; the freeze was made by the first match of a day at or past its day + horizon.
        freeze = { logEpoch: head.logEpoch, options: history.resolvedOptions, fromSeq: seqFrom(past.day + 1), triggerSeq: seqFrom(past.day + horizon), past };
      }
    } else {
      await history.deriveInSlices(db, LADDER, head.lastSeq, { pageSize: 5000, sliceMs: 1e9, sliceMatches: 1e9 });
      freeze = history.freeze();
    }
    if (freeze === undefined) throw new Error('the log never froze: make it longer than the horizon');
    await writeFreeze(db, LADDER, freeze, Date.now());
    console.log(
      `prepared: ${seq} matches (${Math.round((lastAt - firstAt) / 86_400_000) + 1} days), ${players.size} players, horizon ${horizon} days; last freeze at day ${freeze.past.day}, ${freeze.past.players.length} priors, live matches from seq ${freeze.fromSeq} (made by seq ${freeze.triggerSeq})`,
    );
    return { playerIds: [...players], lastAt, liveMatches: seq - freeze.fromSeq + 1, frozenDay: freeze.past.day };
  } finally {
    await db.close();
  }
}

/** One start: the history derived as the writer derives it, from the freeze or (`whole`) from the whole log. */
async function start(store: Store, mode: 'whole' | 'freeze', horizon: number): Promise<void> {
  const db = await open(store);
  try {
    const head = (await logHead(db, LADDER))!;
    const options = { horizon };
    const base = retained();
    const load = loadavg()[0]!;
    const cpu = process.cpuUsage();
    const wall = performance.now();
    const history =
      mode === 'whole' ? new LadderHistory('whr', options, head.logEpoch) : await startHistory(db, { id: LADDER, system: 'whr', options }, head.logEpoch, head.lastSeq);
    await history.deriveInSlices(db, LADDER, head.lastSeq);
    const ms = performance.now() - wall;
    const used = process.cpuUsage(cpu);
    const end = retained();
    const digest = createHash('sha256');
    for (const id of [...history.states.keys()].sort()) digest.update(`${id}:${JSON.stringify(history.states.get(id))}\n`);
    console.log(
      `${mode === 'whole' ? 'whole log' : 'from freeze'}: ${(ms / 1000).toFixed(1)} s wall, ${((used.user + used.system) / 1e6).toFixed(1)} s CPU, ${history.counted} matches taken in; retained ${end !== undefined && base !== undefined ? `${((end - base) / 2 ** 20).toFixed(0)} MB` : 'n/a (no --expose-gc)'}, max resident set ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB, resident set after a full collection ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB; load ${load.toFixed(1)}; states ${digest.digest('hex').slice(0, 16)}`,
    );
  } finally {
    await db.close();
  }
}

export interface WhrStartBenchOptions {
  /** The ATP file instead of the synthetic log (matches, players and perDay are then the file's). */
  atp?: boolean;
  matches?: number;
  players?: number;
  perDay?: number;
  horizon?: number;
  /** Starts of each kind, interleaved. @default 2 */
  repeats?: number;
  /** PostgreSQL instead of PGlite. */
  databaseUrl?: string;
  /** The stored freeze from the core's batch path (see `prepare`), for logs too long to derive match by match. */
  convergedFreeze?: boolean;
  /** The starts' V8 old-space limit in MB (`--max-old-space-size`), as an instance would be run with a memory budget. */
  heapMb?: number;
  /** PGlite's buffer cache in MB for the starts (`sharedBuffersMb`). */
  pgliteSharedBuffersMb?: number;
}

export async function benchWhrStart(options: WhrStartBenchOptions = {}): Promise<void> {
  const matches = options.matches ?? 400_000;
  const players = options.players ?? 20_000;
  const perDay = options.perDay ?? 200;
  const horizon = options.horizon ?? 730;
  const repeats = options.repeats ?? 2;
  const store: Store = options.databaseUrl ? { url: options.databaseUrl, schema: `whr_start_${process.pid}` } : { dataDir: mkdtempSync(join(tmpdir(), 'ladder-whr-start-')) };
  const buffers = options.pgliteSharedBuffersMb !== undefined ? ['--pglite-shared-buffers', String(options.pgliteSharedBuffersMb)] : [];
  const storeArgs = store.url ? ['--database-url', store.url, '--schema', store.schema!] : ['--data-dir', store.dataDir!, ...buffers];
  try {
    const source: LogSource = options.atp ? { kind: 'atp' } : { kind: 'synthetic', matches, players, perDay };
    console.log(`whr start with a horizon on ${store.url ? 'PostgreSQL' : 'PGlite'}, ${options.atp ? 'the ATP file' : 'a synthetic log'}`);
    await prepare(store, source, horizon, options.convergedFreeze === true);
    for (let r = 0; r < repeats; r++) {
      // A converged freeze is no state the writer's derivation of the whole log reaches: only starts from it.
      for (const mode of options.convergedFreeze ? ['freeze'] : ['whole', 'freeze']) {
        const heap = options.heapMb !== undefined ? [`--max-old-space-size=${options.heapMb}`] : [];
        const child = spawnSync(process.execPath, ['--expose-gc', ...heap, fileURLToPath(import.meta.url), ...storeArgs, '--horizon', String(horizon), '--only', mode], {
          stdio: 'inherit',
        });
        if (child.status !== 0) console.log(`${mode}: exit ${child.status}`);
      }
    }
  } finally {
    if (store.url) await dropSchema(store.url, store.schema!);
    else rmSync(store.dataDir!, { recursive: true, force: true });
  }
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/whr-start.js',
  name: 'whr-start',
  summary: 'A service start deriving a whr ladder with a horizon: from the stored last freeze against from the whole log (time, memory, and the same states).',
  options: {
    atp: { type: 'boolean', description: "the ATP file's 619,373 matches instead of the synthetic log" },
    'pglite-shared-buffers': { type: 'string', value: 'MB', description: "PGlite's buffer cache for the starts (default PGlite's 128)" },
    'heap-mb': { type: 'string', value: 'MB', description: "the starts' V8 old-space limit (--max-old-space-size), as an instance run with a memory budget" },
    'converged-freeze': {
      type: 'boolean',
      description: "the stored freeze from the core's batch path (the log converged between freeze points), not the writer's derivation: for long logs",
    },
    matches: { type: 'string', value: 'N', description: 'one-on-one matches of the log (default 400000)' },
    players: { type: 'string', value: 'N', description: 'players (default 20000)' },
    'per-day': { type: 'string', value: 'N', description: 'matches a day (default 200)' },
    horizon: { type: 'string', value: 'DAYS', description: "the ladder's horizon (default 730)" },
    repeats: { type: 'string', value: 'N', description: 'starts of each kind, interleaved (default 2)' },
    'database-url': { type: 'string', value: 'URL', description: 'PostgreSQL instead of PGlite (a schema of its own, dropped at the end)' },
    'data-dir': { type: 'string', value: 'DIR', description: 'with --only: the PGlite store prepared' },
    schema: { type: 'string', value: 'NAME', description: 'with --only and --database-url: the schema prepared' },
    only: { type: 'string', value: 'whole|freeze', description: 'one start in this process, on a prepared store' },
  },
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const horizon = numberOption(USAGE, args, 'horizon');
  const only = args.values.only;
  const url = typeof args.values['database-url'] === 'string' ? args.values['database-url'] : undefined;
  const buffers = numberOption(USAGE, args, 'pglite-shared-buffers');
  if (only === 'whole' || only === 'freeze') {
    const store: Store = url
      ? { url, schema: String(args.values.schema) }
      : { dataDir: String(args.values['data-dir']), ...(buffers !== undefined ? { sharedBuffersMb: buffers } : {}) };
    await start(store, only, horizon ?? 730);
  } else {
    const matches = numberOption(USAGE, args, 'matches');
    const players = numberOption(USAGE, args, 'players');
    const perDay = numberOption(USAGE, args, 'per-day');
    const repeats = numberOption(USAGE, args, 'repeats');
    const heapMb = numberOption(USAGE, args, 'heap-mb');
    await benchWhrStart({
      ...(args.values.atp === true ? { atp: true } : {}),
      ...(args.values['converged-freeze'] === true ? { convergedFreeze: true } : {}),
      ...(matches !== undefined ? { matches } : {}),
      ...(players !== undefined ? { players } : {}),
      ...(perDay !== undefined ? { perDay } : {}),
      ...(horizon !== undefined ? { horizon } : {}),
      ...(repeats !== undefined ? { repeats } : {}),
      ...(heapMb !== undefined ? { heapMb } : {}),
      ...(buffers !== undefined ? { pgliteSharedBuffersMb: buffers } : {}),
      ...(url !== undefined ? { databaseUrl: url } : {}),
    });
  }
}
