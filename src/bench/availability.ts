/**
 * Availability benchmark: the service's promise under attack. Each attack
 * runs against one `ladder serve` child process while a steady writer posts
 * one-on-one matches to another ladder of the same instance; the benchmark
 * prints the writer's p50/p99, the instance's longest event-loop stall
 * (`ladder_event_loop_delay_seconds{quantile="1"}`, measured since the
 * server listened, and the server is started after its data is loaded, so
 * the figure covers the attack), the server's memory growth, and the
 * attacker's own latency and statuses.
 *
 *   node --expose-gc dist/bench/availability.js [--backend pglite|postgres|both] [--attack NAME,...] [--matches 100000] [--seconds 15]
 *
 * Attacks (the promise in docs/SERVICE.md, "Availability"):
 * - `none`: the writer alone, the baseline of the machine;
 * - `deep-pages`: 40 anonymous clients read a `matches`-long history and
 *   match list at deep offsets and through the cursors, each request
 *   abandoned after 100 ms;
 * - `balance`: 4 anonymous clients in a loop, 64 players into 8 teams;
 * - `whr-teams`: a write key posts the largest many-team matches the
 *   whole-history system accepts (its limits from `GET /v1/systems`);
 * - `whr-restart`: a whole-history ladder of many-team matches is derived
 *   after a restart while the writer runs;
 * - `whr-freeze`: a whole-history ladder with a horizon of 365 days, its log
 *   (200 one-on-one matches a day among 20,000 players) ending the day before
 *   its first freeze, is derived by a first write before the attack; the
 *   attack posts the match whose day makes the freeze (the live window,
 *   about 73,000 games, replayed), then one match every 50 ms;
 * - `whr-void`: the `whr-freeze` ladder's log carried ten days past its
 *   first freeze (the store only: no history derived yet); the attack voids
 *   its first match once, a correction that derives the whole log again,
 *   the freeze among it (its live window of about 73,000 games replayed);
 * - `void`: an admin key corrects match 1 of the `matches`-long ladder again
 *   and again (each time flipping its result, so every correction re-rates
 *   the whole ladder: its star player is in every match), then voids it once
 *   at the end; the writer runs until that void has answered. Each
 *   correction's time is printed.
 *
 * PostgreSQL runs use DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
 * in a fresh schema that is dropped afterwards; PGlite runs a fresh
 * temporary data directory that is removed afterwards.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Match } from 'ladder-core/core/match.js';
import type { PlayerState } from 'ladder-core/core/systems.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import { choiceOption, isEntry, numberOption, type ScriptSpec, scriptArgs, textOption, usageError } from '../cli/script-args.js';
import { Ladders } from '../service/ladders.js';
import { matchChanges } from '../service/rating.js';
import { type Database, dropSchema, openDatabase } from '../store/database.js';
import { advanceLadder } from '../store/ladders.js';
import { emptyMatchRows, insertMatches } from '../store/matches.js';
import { migrate } from '../store/migrations.js';
import { upsertPlayers } from '../store/players.js';
import { startServer, stop } from './load.js';

export type Attack = 'none' | 'deep-pages' | 'balance' | 'whr-teams' | 'whr-restart' | 'whr-freeze' | 'whr-void' | 'void';
export const ATTACKS: Attack[] = ['none', 'deep-pages', 'balance', 'whr-teams', 'whr-restart', 'whr-freeze', 'whr-void', 'void'];
export type Backend = 'pglite' | 'postgres';

export interface AvailabilityOptions {
  backends?: Backend[];
  attacks?: Attack[];
  /** Matches of the attacked ladder (deep pages, void). @default 100000 */
  matches?: number;
  /** Seconds each attack runs. @default 15 */
  seconds?: number;
  databaseUrl?: string;
}

export interface Latency {
  requests: number;
  p50ms: number;
  p99ms: number;
  maxms: number;
  /** Answers by HTTP status ("abandoned" for requests the client gave up on, "error" for failed connections). */
  statuses: Record<string, number>;
}

export interface AvailabilityResult {
  backend: Backend;
  attack: Attack;
  writer: Latency;
  attacker: Latency;
  /** The server's longest event-loop delay since it listened, in ms. */
  eventLoopMaxMs: number;
  /** The longest stretch of it that was the server's own work on its main thread, in ms (undefined: not Linux). */
  ownStallMaxMs: number | undefined;
  /** Growth of the server's resident memory over the attack (peak minus start), in MB. */
  rssGrowthMb: number;
  held: boolean;
  /** The `void` attack: each correction's time (the last one the void), in ms. */
  corrections?: number[];
}

const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const STEADY = 'steady';
/** The whole-history system the many-team attacks use. */
const WHOLE_HISTORY = 'whr';
const TARGET = 'target';
/** The player in every match of the attacked ladder: their history is as long as the ladder. */
export const STAR = 'star';

function summarize(samples: number[], statuses: Record<string, number>): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
  return { requests: samples.length, p50ms: at(0.5), p99ms: at(0.99), maxms: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!, statuses };
}

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
  key?: string;
  /** Abandon the request after this many ms (the socket is destroyed). */
  abandonAfterMs?: number;
}

/** One request; resolves its status (or "abandoned"/"error"), its latency and its body. */
function call(agent: Agent, base: URL, c: Call): Promise<{ status: string; ms: number; body: string }> {
  const started = performance.now();
  const text = c.body === undefined ? undefined : JSON.stringify(c.body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: string, body = '') => {
      if (settled) return;
      settled = true;
      resolve({ status, ms: performance.now() - started, body });
    };
    const headers: Record<string, string | number> = {};
    if (text !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(text);
    }
    if (c.key) headers.authorization = `Bearer ${c.key}`;
    const req = request({ agent, host: base.hostname, port: base.port, path: c.path, method: c.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(String(res.statusCode ?? 0), Buffer.concat(chunks).toString('utf8')));
      res.on('error', () => done('error'));
    });
    req.on('error', () => done(settled ? 'error' : c.abandonAfterMs !== undefined ? 'abandoned' : 'error'));
    if (c.abandonAfterMs !== undefined) {
      setTimeout(() => {
        if (!settled) {
          done('abandoned');
          req.destroy();
        }
      }, c.abandonAfterMs).unref();
    }
    req.end(text);
  });
}

/** Loads `total` Elo one-on-one matches, each between STAR and one of `players` others, straight through the store. */
export async function loadLadder(db: Database, id: string, total: number, players: number): Promise<void> {
  const ladders = new Ladders(db);
  const ladder = await ladders.create({ id, system: 'elo', public: true });
  const system = ladder.rating;
  const random = mulberry32(11);
  const states = new Map<string, PlayerState>();
  const lastSeqs = new Map<string, number>();
  const start = Date.now() - total * 1000;
  const chunk = 10_000;
  for (let first = 0; first < total; first += chunk) {
    const rows = emptyMatchRows();
    for (let i = first; i < Math.min(total, first + chunk); i++) {
      const other = `p${Math.floor(random() * players)}`;
      const win = random() < 0.5;
      const match: Match = {
        id: `m${i + 1}`,
        at: start + i * 1000,
        teams: [
          { players: [{ id: STAR }], rank: win ? 1 : 2 },
          { players: [{ id: other }], rank: win ? 2 : 1 },
        ],
      };
      const probabilities = system.predict(match.teams.map((t) => t.players.map((p) => states.get(p.id) ?? system.initial())));
      const rating = system.rateMatch(match, states, { timeIdle: true });
      const seq = i + 1;
      rows.seq.push(seq);
      rows.id.push(match.id!);
      rows.at.push(match.at!);
      rows.receivedAt.push(match.at!);
      rows.round.push(null);
      rows.body.push(JSON.stringify(match));
      rows.winProbability.push(JSON.stringify(probabilities));
      rows.changes.push(matchChanges(rating.players, (p) => lastSeqs.get(p) ?? null));
      for (const change of rating.players) {
        states.set(change.id, change.after);
        lastSeqs.set(change.id, seq);
      }
    }
    await db.transaction((tx) => insertMatches(tx, id, rows));
  }
  const finals = [...states].map(([player, state]) => ({ id: player, state, lastSeq: lastSeqs.get(player) ?? null }));
  for (let i = 0; i < finals.length; i += chunk) await db.transaction((tx) => upsertPlayers(tx, id, finals.slice(i, i + chunk)));
  await db.transaction((tx) => advanceLadder(tx, id, { nextSeq: total + 1, matchesAdded: total, playersAdded: states.size, roundCount: 0, version: 1 }));
}

/** The `whr-freeze` ladder: a horizon of this many days, its log of PER_DAY matches a day among FREEZE_PLAYERS players. */
const FREEZE_HORIZON = 365;
const FREEZE_PER_DAY = 200;
const FREEZE_PLAYERS = 20_000;
const DAY_MS = 86_400_000;

/**
 * The `whr-freeze` ladder's day `d` (days after its first), at midnight UTC. Freeze points are multiples
 * of ⌈horizon / 4⌉ days since 1970 and the first is on or after the first day: day 0 is such a multiple,
 * so the first freeze comes with day FREEZE_HORIZON, which is yesterday at the latest.
 */
function freezeDay(d: number): number {
  const step = Math.ceil(FREEZE_HORIZON / 4);
  const first = Math.floor((Math.floor(Date.now() / DAY_MS) - 1 - FREEZE_HORIZON) / step) * step;
  return (first + d) * DAY_MS;
}

/** A one-on-one match of the `whr-freeze` ladder on day `d`. */
function freezeMatch(random: () => number, d: number, minute: number, id?: string): Match {
  const a = Math.floor(random() * FREEZE_PLAYERS);
  const b = (a + 1 + Math.floor(random() * (FREEZE_PLAYERS - 1))) % FREEZE_PLAYERS;
  return {
    ...(id !== undefined ? { id } : {}),
    at: freezeDay(d) + minute * 60_000,
    teams: [
      { players: [{ id: `f${a}` }], rank: 1 },
      { players: [{ id: `f${b}` }], rank: 2 },
    ],
  };
}

/**
 * Loads the `whr-freeze` ladder's log straight through the store: days 0 …
 * `days` − 1 of FREEZE_PER_DAY matches (by default up to the day before the
 * first freeze). Only the log: the service derives the history (and writes
 * the states) from it on the first write.
 */
async function loadFreezeLog(db: Database, id: string, days = FREEZE_HORIZON): Promise<void> {
  const ladders = new Ladders(db);
  await ladders.create({ id, system: WHOLE_HISTORY, public: true, options: { horizon: FREEZE_HORIZON } });
  const random = mulberry32(17);
  let seq = 0;
  for (let d = 0; d < days; d += 10) {
    const rows = emptyMatchRows();
    for (let day = d; day < Math.min(days, d + 10); day++) {
      for (let i = 0; i < FREEZE_PER_DAY; i++) {
        const match = freezeMatch(random, day, i, `m${seq + 1}`);
        rows.seq.push(++seq);
        rows.id.push(match.id!);
        rows.at.push(match.at!);
        rows.receivedAt.push(match.at!);
        rows.round.push(null);
        rows.body.push(JSON.stringify(match));
        rows.winProbability.push('[0.5,0.5]');
        rows.changes.push('[]');
      }
    }
    await db.transaction((tx) => insertMatches(tx, id, rows));
  }
  await db.transaction((tx) => advanceLadder(tx, id, { nextSeq: seq + 1, matchesAdded: seq, playersAdded: 0, roundCount: 0, version: 1 }));
}

/** A database prepared for one attack, and the server arguments that open it. */
interface Prepared {
  env: Record<string, string>;
  extra: string[];
  cleanup(): Promise<void>;
}

async function prepare(backend: Backend, databaseUrl: string, fill: (db: Database) => Promise<void>): Promise<Prepared> {
  if (backend === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'ladder-bench-'));
    const db = await openDatabase({ dataDir: dir });
    try {
      await migrate(db);
      await fill(db);
    } finally {
      await db.close();
    }
    return {
      env: { DATABASE_URL: '', DATABASE_SCHEMA: '', REDIS_URL: '', REDIS_PREFIX: '' },
      extra: ['--data', dir],
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `ladder_bench_${randomBytes(4).toString('hex')}`;
  const db = await openDatabase({ databaseUrl, schema, poolSize: 2 });
  try {
    await migrate(db);
    await fill(db);
    await db.exec('ANALYZE');
  } finally {
    await db.close();
  }
  return { env: { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema, REDIS_URL: '', REDIS_PREFIX: '' }, extra: [], cleanup: () => dropSchema(databaseUrl, schema) };
}

function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The server's longest event-loop delay, and the longest own-work stall where it reports one, in ms. */
async function eventLoopMaxMs(agent: Agent, base: URL): Promise<{ wall: number; own: number | undefined }> {
  const { body } = await call(agent, base, { method: 'GET', path: '/metrics', key: ADMIN_KEY });
  const wall = /^ladder_event_loop_delay_seconds\{quantile="1"\} (\S+)$/m.exec(body);
  const own = /^ladder_event_loop_own_stall_seconds (\S+)$/m.exec(body);
  return { wall: wall ? Number(wall[1]) * 1000 : NaN, own: own ? Number(own[1]) * 1000 : undefined };
}

/** Runs `body` in a loop on `workers` concurrent clients until `until`; collects latency and statuses. */
async function loop(workers: number, until: () => boolean, body: (worker: number, n: number) => Promise<{ status: string; ms: number }>, pauseMs = 0): Promise<Latency> {
  const samples: number[] = [];
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let n = 0; !until(); n++) {
        const { status, ms } = await body(worker, n);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status !== 'abandoned' && status !== 'error') samples.push(ms);
        if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    }),
  );
  return summarize(samples, statuses);
}

/** The whole-history system's largest accepted match, from `GET /v1/systems` (64 teams of 64 players where it states none). */
async function whrShape(agent: Agent, base: URL, system = WHOLE_HISTORY): Promise<{ teams: number; players: number }> {
  const { body } = await call(agent, base, { method: 'GET', path: '/v1/systems' });
  try {
    const parsed = JSON.parse(body) as
      | { systems?: Array<{ name?: string; id?: string; limits?: { teams?: number; players?: number; playersPerTeam?: number } }> }
      | Array<{ name?: string; id?: string; limits?: { teams?: number; players?: number; playersPerTeam?: number } }>;
    const list = Array.isArray(parsed) ? parsed : (parsed.systems ?? []);
    const whr = list.find((s) => s.name === system || s.id === system);
    const teams = Math.min(64, whr?.limits?.teams ?? 64);
    const players = Math.min(4096, whr?.limits?.players ?? 4096);
    const perTeam = Math.max(1, Math.min(whr?.limits?.playersPerTeam ?? 64, Math.floor(players / teams)));
    return { teams, players: perTeam };
  } catch {
    return { teams: 64, players: 64 };
  }
}

function manyTeamMatch(teams: number, perTeam: number, tag: string): unknown {
  return { teams: Array.from({ length: teams }, (_, t) => ({ players: Array.from({ length: perTeam }, (_, p) => `${tag}t${t}p${p}`), rank: t + 1 })) };
}

export async function runAttack(backend: Backend, attack: Attack, options: { matches: number; seconds: number; databaseUrl: string }): Promise<AvailabilityResult> {
  const { matches, seconds, databaseUrl } = options;
  const prepared = await prepare(backend, databaseUrl, async (db) => {
    if (attack === 'deep-pages' || attack === 'void') await loadLadder(db, TARGET, matches, 1000);
    if (attack === 'whr-freeze') await loadFreezeLog(db, TARGET);
    // Ten days past the first freeze, which comes with day FREEZE_HORIZON.
    if (attack === 'whr-void') await loadFreezeLog(db, TARGET, FREEZE_HORIZON + 10);
  });
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    server = await startServer({ ...prepared.env, LADDER_ADMIN_KEY: ADMIN_KEY }, prepared.extra);
    let base = new URL(server.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 256 });
    // The steady writer has connections of its own: the attackers' abandoned sockets never delay its requests in this process.
    const writerAgent = new Agent({ keepAlive: true, maxSockets: 8 });
    const admin = (c: Omit<Call, 'key'>) => call(agent, base, { ...c, key: ADMIN_KEY });
    await admin({ method: 'POST', path: '/v1/ladders', body: { id: STEADY, system: 'glicko2' } });
    if (attack === 'balance') {
      await admin({ method: 'POST', path: '/v1/ladders', body: { id: TARGET, system: 'glicko2', public: true } });
      for (let i = 0; i < 64; i += 2)
        await admin({
          method: 'POST',
          path: `/v1/ladders/${TARGET}/matches`,
          body: {
            teams: [
              { players: [`b${i}`], rank: 1 },
              { players: [`b${i + 1}`], rank: 2 },
            ],
          },
        });
    }
    if (attack === 'whr-teams' || attack === 'whr-restart') await admin({ method: 'POST', path: '/v1/ladders', body: { id: TARGET, system: WHOLE_HISTORY, public: true } });
    if (attack === 'whr-restart') {
      // A history of many-team matches, then a restart: the attack is the derivation that follows.
      const shape = await whrShape(agent, base);
      for (let i = 0; i < 40; i++)
        await admin({ method: 'POST', path: `/v1/ladders/${TARGET}/matches`, body: manyTeamMatch(shape.teams, Math.min(shape.players, 8), `r${i % 5}`) });
      await stop(server.child);
      server = await startServer({ ...prepared.env, LADDER_ADMIN_KEY: ADMIN_KEY }, prepared.extra);
      base = new URL(server.url);
    }
    const freezeRandom = mulberry32(23);
    if (attack === 'whr-freeze') {
      // The first write derives the history from the log (outside the attack); the attack's first match then makes the freeze.
      const first = await admin({ method: 'POST', path: `/v1/ladders/${TARGET}/matches`, body: freezeMatch(freezeRandom, FREEZE_HORIZON - 1, 23 * 60) });
      if (first.status !== '201') throw new Error(`the whr-freeze ladder's first write answered ${first.status}: ${first.body}`);
    }
    const pid = server.child.pid!;
    const rssStart = rssMb(pid);
    let rssPeak = rssStart;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(pid))), 100);
    const random = mulberry32(5);
    const deadline = performance.now() + seconds * 1000;
    const until = () => performance.now() >= deadline;
    // The writer runs until the attacker's last request has answered.
    let attackDone = false;
    const writerUntil = () => until() && attackDone;
    const corrections: number[] = [];
    let writes = 0;
    // The steady writer: 4 clients, each a match every 20 ms or so, to another ladder.
    const writer = loop(
      4,
      writerUntil,
      (w) => {
        const n = writes++;
        return call(writerAgent, base, {
          key: ADMIN_KEY,
          method: 'POST',
          path: `/v1/ladders/${STEADY}/matches`,
          body: {
            teams: [
              { players: [`s${w}-${n % 50}`], rank: 1 },
              { players: [`s${w}-${(n + 7) % 50}`], rank: 2 },
            ],
          },
        });
      },
      20,
    );
    let attacker: Promise<Latency>;
    switch (attack) {
      case 'none':
        attacker = Promise.resolve(summarize([], {}));
        break;
      case 'deep-pages': {
        // Deep offsets (the 400 that names the cursor, or today's walk) and deep cursor pages, each abandoned after 100 ms.
        attacker = loop(40, until, (_, n) => {
          const deep = Math.floor(random() * matches);
          const paths = [
            `/v1/ladders/${TARGET}/players/${STAR}/history?limit=50&offset=${deep}`,
            `/v1/ladders/${TARGET}/matches?limit=50&offset=${deep}`,
            `/v1/ladders/${TARGET}/players/${STAR}/history?limit=50&before=${Math.max(2, deep)}`,
            `/v1/ladders/${TARGET}/matches?limit=50&before=${Math.max(2, deep)}`,
          ];
          return call(agent, base, { method: 'GET', path: paths[n % paths.length]!, abandonAfterMs: 100 });
        });
        break;
      }
      case 'balance':
        attacker = loop(4, until, () =>
          call(agent, base, { method: 'POST', path: `/v1/ladders/${TARGET}/balance`, body: { players: Array.from({ length: 64 }, (_, i) => `b${i}`), teams: 8 } }),
        );
        break;
      case 'whr-teams': {
        const shape = await whrShape(agent, base);
        attacker = loop(1, until, (_, n) => admin({ method: 'POST', path: `/v1/ladders/${TARGET}/matches`, body: manyTeamMatch(shape.teams, shape.players, `w${n % 3}`) }));
        break;
      }
      case 'whr-restart':
        // The first write after the restart derives the ladder; later ones rate one match each.
        attacker = loop(
          1,
          until,
          (_, n) =>
            admin({
              method: 'POST',
              path: `/v1/ladders/${TARGET}/matches`,
              body: {
                teams: [
                  { players: [`r0t0p${n % 8}`], rank: 1 },
                  { players: [`r1t1p${n % 8}`], rank: 2 },
                ],
              },
            }),
          50,
        );
        break;
      case 'whr-freeze':
        // The first match is of the day that makes the freeze; the rest of that day follows, one every 50 ms.
        attacker = loop(1, until, (_, n) => admin({ method: 'POST', path: `/v1/ladders/${TARGET}/matches`, body: freezeMatch(freezeRandom, FREEZE_HORIZON, n % 600) }), 50);
        break;
      case 'whr-void':
        // One correction: the whole log derived again, its freeze among it.
        attacker = (async () => {
          const result = await admin({ method: 'POST', path: `/v1/ladders/${TARGET}/matches/m1/void`, body: { reason: 'availability benchmark' } });
          corrections.push(result.ms);
          return summarize([result.ms], { [result.status]: 1 });
        })();
        break;
      case 'void':
        attacker = (async () => {
          const samples: number[] = [];
          const statuses: Record<string, number> = {};
          const record = ({ status, ms }: { status: string; ms: number }) => {
            statuses[status] = (statuses[status] ?? 0) + 1;
            samples.push(ms);
            corrections.push(ms);
          };
          // A voided match cannot be corrected: corrections that flip its result first, the void last.
          for (let n = 0; !until(); n++) {
            const starWins = n % 2 === 1;
            record(
              await admin({
                method: 'PUT',
                path: `/v1/ladders/${TARGET}/matches/m1`,
                body: {
                  teams: [
                    { players: [STAR], rank: starWins ? 1 : 2 },
                    { players: ['p0'], rank: starWins ? 2 : 1 },
                  ],
                },
              }),
            );
          }
          record(await admin({ method: 'POST', path: `/v1/ladders/${TARGET}/matches/m1/void`, body: { reason: 'availability benchmark' } }));
          return summarize(samples, statuses);
        })();
        break;
    }
    void attacker.finally(() => {
      attackDone = true;
    });
    const [writerLatency, attackerLatency] = await Promise.all([writer, attacker]);
    clearInterval(sampler);
    const eventLoopMax = await eventLoopMaxMs(agent, base);
    agent.destroy();
    writerAgent.destroy();
    const result: AvailabilityResult = {
      backend,
      attack,
      writer: writerLatency,
      attacker: attackerLatency,
      eventLoopMaxMs: eventLoopMax.wall,
      ownStallMaxMs: eventLoopMax.own,
      rssGrowthMb: rssPeak - rssStart,
      held: writerLatency.p99ms < 100 && eventLoopMax.wall <= 100 && (writerLatency.statuses['201'] ?? 0) === writerLatency.requests,
      ...(attack === 'void' || attack === 'whr-void' ? { corrections } : {}),
    };
    return result;
  } finally {
    if (server) await stop(server.child);
    await prepared.cleanup();
  }
}

function format(r: AvailabilityResult): string {
  const statuses = (l: Latency) =>
    Object.entries(l.statuses)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
  return [
    r.backend.padEnd(8),
    r.attack.padEnd(12),
    `writer ${r.writer.requests} p50 ${r.writer.p50ms.toFixed(1)} p99 ${r.writer.p99ms.toFixed(1)} max ${r.writer.maxms.toFixed(0)} ms`,
    `loop max ${r.eventLoopMaxMs.toFixed(0)} ms (own work ${r.ownStallMaxMs === undefined ? '?' : r.ownStallMaxMs.toFixed(0)})`,
    `rss +${r.rssGrowthMb.toFixed(0)} MB`,
    `attacker p50 ${r.attacker.p50ms.toFixed(0)} p99 ${r.attacker.p99ms.toFixed(0)} max ${r.attacker.maxms.toFixed(0)} ms [${statuses(r.attacker)}]`,
    ...(r.corrections ? [`corrections ${r.corrections.map((ms) => (ms / 1000).toFixed(1)).join(' ')} s`] : []),
    r.held ? 'held' : 'NOT HELD',
  ].join(' | ');
}

export async function benchAvailability(options: AvailabilityOptions = {}): Promise<AvailabilityResult[]> {
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const results: AvailabilityResult[] = [];
  for (const backend of options.backends ?? ['pglite', 'postgres']) {
    for (const attack of options.attacks ?? ATTACKS) {
      const result = await runAttack(backend, attack, { matches: options.matches ?? 100_000, seconds: options.seconds ?? 15, databaseUrl });
      console.log(format(result));
      results.push(result);
    }
  }
  return results;
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/availability.js',
  name: 'availability',
  summary: `Runs each attack against a \`ladder serve\` child while a steady writer posts matches to another
ladder, and prints the writer's p50/p99, the longest event-loop stall and the memory growth.
Exits 1 when an attack broke the promise. Attacks: ${ATTACKS.join(', ')}.`,
  options: {
    backend: { type: 'string', value: 'pglite|postgres|both', description: 'database of the server (default both; PostgreSQL from DATABASE_URL)' },
    attack: { type: 'string', value: 'NAME,...', description: 'the attacks to run, or all (default all)' },
    matches: { type: 'string', value: 'N', description: 'matches in the attacked ladder (default 100000)' },
    seconds: { type: 'string', value: 'S', description: 'seconds of each attack (default 15)' },
  },
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const backend = choiceOption(USAGE, args, 'backend', ['pglite', 'postgres', 'both'] as const, 'both');
  const attackText = textOption(args, 'attack') ?? 'all';
  const attacks = attackText === 'all' ? ATTACKS : (attackText.split(',') as Attack[]);
  for (const a of attacks) {
    if (!ATTACKS.includes(a)) usageError(USAGE, `unknown attack ${JSON.stringify(a)}; choose from ${ATTACKS.join(', ')}`);
  }
  const results = await benchAvailability({
    backends: backend === 'both' ? ['pglite', 'postgres'] : [backend],
    attacks,
    matches: numberOption(USAGE, args, 'matches') ?? 100_000,
    seconds: numberOption(USAGE, args, 'seconds') ?? 15,
  });
  process.exitCode = results.every((r) => r.held) ? 0 : 1;
}
