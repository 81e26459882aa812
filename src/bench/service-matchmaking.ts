/**
 * Matchmaking in the service: `ladder serve` child processes on
 * PostgreSQL and Redis, driven over loopback HTTP by this process.
 *
 *   npm run build && npm run bench -- service-matchmaking
 *   node --expose-gc dist/bench/service-matchmaking.js [--only creation,intake,creation-rules,intake-rules,intake2,latency,held,burst,burst-rules] [--sizes 100000,1000000] [--seconds 10] [--rates 2000] [--repeats 1] [--json]
 *
 * - creation, intake: tickets created per second at 64 in flight (one
 *   instance; intake2: two behind one Redis), p50/p99, CPU per ticket of
 *   every process, and a check that every placed ticket is in exactly one
 *   match. `creation` sends tickets that cannot match (creation alone),
 *   `intake` the synthetic 6v6 queue (matching runs meanwhile).
 *   `creation-rules`, `intake-rules`: the same on a rule-set queue (the
 *   6v6 queue written as a rule set, SIX_V_SIX_RULES of ruleset.ts; the
 *   percentile sent as an attribute). With `--repeats N` the team-rank and
 *   rule-set runs alternate N rounds, so both see the same load.
 * - latency: tickets arriving at a steady 2,000/s (1v1, so nearly every
 *   ticket matches at the next pass; sent on raw keep-alive connections, as
 *   many as are in flight; the first 2 s not counted); time from sending a
 *   ticket to its assignment event on the server-sent-event stream.
 * - held: N tickets that cannot match (no region within any player's
 *   maxPing; strict filters) written into Redis through the service's own
 *   intake script, then one instance started: its rebuild (and its event
 *   loop's delay through it, from `/metrics`), its pass time
 *   with a trickle of arrivals (so passes run), `GET /queue` and `/metrics`
 *   latency (1,000 each, one at a time, after 20 not counted; GET /healthz
 *   the same way for comparison) with the server's CPU per request, idle CPU, memory of the instance and of Redis; then the
 *   library's own pass on the same tickets in this process.
 * - burst: N tickets of the library benchmark's synthetic 6v6 queue (most
 *   can match) written into Redis; the instance's first pass over them and
 *   the placement of the matches, against the library's cold pass; the
 *   instance's event loop delay (p99 and longest, from `/metrics`) from
 *   listening through that turn, and the longest stretch its own work held
 *   the loop (`ladder_event_loop_own_stall_seconds`). `burst-rules`: the same
 *   queue as a rule set (SIX_V_SIX_RULES), against the rule-set library.
 *
 * LADDER_BENCH_CLI=<another build>/dist/cli/main.js runs that build's server
 * under this harness (a before/after comparison with the same load);
 * LADDER_BENCH_NODE_ARGS passes node flags to the servers (--cpu-prof …).
 *
 * PostgreSQL from DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test,
 * a throw-away schema), Redis from REDIS_URL (default redis://127.0.0.1:6379,
 * a throw-away key prefix).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import type { Redis } from 'ioredis';
import { mulberry32 } from 'ladder-core/core/random.js';
import { Matchmaker, parseRuleSet, RuleSetMatchmaker, type RuleSetTicketInput, type Ticket } from 'ladder-core/matchmaking';
import { isEntry, numberListOption, numberOption, type ScriptSpec, scriptArgs, textOption, usageError } from '../cli/script-args.js';
import type { PassReport } from '../service/matchmaking-pass.js';
import type { StoredTicket } from '../service/tickets/store.js';
import { RedisTicketStore } from '../service/tickets/redis.js';
import { syntheticQueue } from 'ladder-core/matchmaking/synthetic-queue.js';
import { SIX_V_SIX_RULES } from './ruleset.js';
import { postgresCpuSeconds, processCpuSeconds, startServer as startLadder, stop } from './load.js';

const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const gc = (globalThis as { gc?: () => void }).gc;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  child: ChildProcess;
  url: string;
  pid: number;
  /** Turns traced so far (LADDER_MATCHMAKING_TRACE). */
  turns: PassReport[];
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const turns: PassReport[] = [];
  const { child, url } = await startLadder({ LADDER_ADMIN_KEY: ADMIN_KEY, LADDER_MATCHMAKING_TRACE: '1', ...env }, [], {
    rateLimit: 100_000_000,
    onStderrLine: (line) => {
      if (!line.startsWith('{"matchmakingPass"')) return false;
      turns.push((JSON.parse(line) as { matchmakingPass: PassReport }).matchmakingPass);
      return true;
    },
  });
  return { child, url, pid: child.pid!, turns };
}

/** A fresh PostgreSQL schema and Redis prefix, removed by `dispose`. */
class Deployment {
  readonly schema = `ladder_mmbench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  readonly prefix = `mmbench_${randomBytes(4).toString('hex')}:`;
  readonly servers: Server[] = [];
  env(): Record<string, string> {
    return { DATABASE_URL, DATABASE_SCHEMA: this.schema, REDIS_URL, REDIS_PREFIX: this.prefix };
  }
  async start(): Promise<Server> {
    const server = await startServer(this.env());
    this.servers.push(server);
    return server;
  }
  async stopAll(): Promise<void> {
    for (const s of this.servers.splice(0)) await stop(s.child);
  }
  async dispose(redis: Redis): Promise<void> {
    await this.stopAll();
    const { dropSchema } = await import('../store/database.js');
    await dropSchema(DATABASE_URL, this.schema);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 10_000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  }
}

interface Reply {
  status: number;
  text: string;
}

function call(agent: Agent, base: URL, method: string, path: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${ADMIN_KEY}` };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    const req = request({ agent, host: base.hostname, port: base.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A minimal HTTP/1.1 keep-alive connection for the load: one request at a
 * time, the response read by its Content-Length. node's http client costs
 * the load generator about 0.25 ms of CPU per request, which on a 2-core
 * machine is taken from the server being measured; this costs a fraction.
 */
class RawConnection {
  private socket: Socket | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (status: number) => void; reject: (error: unknown) => void } | undefined;
  private readonly head: string;

  constructor(
    private readonly base: URL,
    path: string,
  ) {
    this.head = `POST ${path} HTTP/1.1\r\nhost: ${base.host}\r\nauthorization: Bearer ${ADMIN_KEY}\r\ncontent-type: application/json\r\n`;
  }

  private connect(): Socket {
    const socket = connect({ host: this.base.hostname, port: Number(this.base.port) });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
    const fail = (error: unknown) => {
      this.socket = undefined;
      this.buffer = Buffer.alloc(0);
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('closed')));
    return socket;
  }

  private drain(): void {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end === -1 || this.waiting === undefined) return;
    const head = this.buffer.toString('latin1', 0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.buffer.length < end + 4 + length) return;
    this.buffer = this.buffer.subarray(end + 4 + length);
    const w = this.waiting;
    this.waiting = undefined;
    w.resolve(Number(head.slice(9, 12)));
  }

  post(body: string): Promise<number> {
    this.socket ??= this.connect();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket!.write(`${this.head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
  }

  close(): void {
    this.socket?.destroy();
  }
}

function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function median(values: number[]): number {
  return quantile(Float64Array.from(values).sort(), 0.5);
}

async function redisPid(redis: Redis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? NaN);
}

async function redisUsedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}

/** The API body of a matcher ticket (its `at` is the server's business). */
function body(ticket: Ticket): string {
  return JSON.stringify({ id: ticket.id, players: ticket.players.map((p) => ({ id: p.id, percentile: p.percentile, pings: p.pings, filter: p.filter })) });
}

/** The same ticket for the rule-set queue (SIX_V_SIX_RULES): the percentile as an attribute; no filter. */
function ruleSetBody(ticket: Ticket): string {
  return JSON.stringify({ id: ticket.id, players: ticket.players.map((p) => ({ id: p.id, attributes: { percentile: p.percentile }, pings: p.pings })) });
}

/**
 * Endless 6v6 tickets shaped like the library benchmark's queue, each with its own ids; `held`: made
 * so that none can match (as in the held queue), so the run measures creation alone.
 */
function intakeTickets(seed: number, held = false, ruleSet = false) {
  const pool = syntheticQueue({ tickets: 50_000, seed, spanSeconds: 300 });
  if (held)
    for (const ticket of pool)
      for (const player of ticket.players) {
        player.filter = { within: player.filter.within, strict: true, maxPing: Math.min(...Object.values(player.pings)) - 1 };
        // The rule set's latency rule (150 ms at most) refuses every region then.
        if (ruleSet) player.pings = Object.fromEntries(Object.keys(player.pings).map((region) => [region, 500]));
      }
  const encode = ruleSet ? ruleSetBody : body;
  let n = 0;
  return () => {
    const base = pool[n % pool.length]!;
    const k = n++;
    return encode({ id: `i${seed}-${k}`, at: 0, players: base.players.map((p, j) => ({ ...p, id: `ip${seed}-${k}-${j}` })) });
  };
}

export interface IntakeResult {
  instances: number;
  /** The queue: the team-rank matchmaker, or the same 6v6 queue as a rule set (SIX_V_SIX_RULES). */
  queue: 'team-rank' | 'rule-set';
  /** The tickets could match (matching runs), or none could (creation alone). */
  matching: boolean;
  concurrency: number;
  seconds: number;
  tickets: number;
  perSecond: number;
  perInstance: number[];
  p50ms: number;
  p99ms: number;
  errors: number;
  /** CPU milliseconds per ticket created: each server, this load generator, Redis, every PostgreSQL process. */
  cpuMsPerTicket: { servers: number[]; client: number; redis: number; postgres: number };
  /** Matches placed during the run, and the check of every ticket's placement afterwards. */
  placement: { matched: number; waiting: number; matches: number; problems: number };
  /** The lock holder's turns during the run: median and max milliseconds (whole turn), and the max of the pass alone. */
  turns: { count: number; medianMs: number; maxMs: number; maxPassMs: number; medianFollowMs: number; medianPassMs: number; medianPlaceMs: number; medianEvents: number };
  /** Each instance's event loop delay over its life (p99 and longest, ms): how long requests waited behind synchronous work. */
  eventLoopDelayMs: Array<LoopFigures | null>;
  load: [number, number];
}

/**
 * Tickets per second at `concurrency` in flight, spread over `instances` instances; `matching` false: tickets that cannot match;
 * `ruleSet`: the ladder's queue is the same 6v6 queue written as a rule set.
 */
export async function benchIntake(redis: Redis, instances: number, seconds: number, concurrency = 64, matching = true, ruleSet = false): Promise<IntakeResult> {
  const deployment = new Deployment();
  try {
    const servers: Server[] = [];
    for (let i = 0; i < instances; i++) servers.push(await deployment.start());
    const bases = servers.map((s) => new URL(s.url));
    const agents = servers.map(() => new Agent({ keepAlive: true, maxSockets: concurrency }));
    const created = await call(
      agents[0]!,
      bases[0]!,
      'POST',
      '/v1/ladders',
      // One key sends every ticket: at 9,000 tickets/s, creation alone passes the default cap of 100,000 waiting tickets
      // a key (answered 429) within the run, so the queue's own cap, a million, is the key's too.
      JSON.stringify({ id: 'intake', system: 'teamrank', matchmaking: { maxWaitingPerKey: 1_000_000, ...(ruleSet ? { ruleSet: SIX_V_SIX_RULES } : {}) } }),
    );
    if (created.status !== 201) throw new Error(`creating the ladder answered ${created.status}: ${created.text}`);
    const next = intakeTickets(1, !matching, ruleSet);
    const redisProcess = await redisPid(redis);
    const load0 = loadavg()[0]!;
    const warmupEnd = performance.now() + Math.max(1000, (seconds * 1000) / 10);
    const end = warmupEnd + seconds * 1000;
    const latencies: number[] = [];
    const perInstance = servers.map(() => 0);
    let errors = 0;
    let cpu0: { servers: number[]; client: number; redis: number; postgres: number } | undefined;
    const snapshot = () => {
      const own = process.cpuUsage();
      return {
        servers: servers.map((s) => processCpuSeconds(s.pid)),
        client: (own.user + own.system) / 1e6,
        redis: processCpuSeconds(redisProcess),
        postgres: postgresCpuSeconds(),
      };
    };
    const cpuTimer = setTimeout(() => (cpu0 = snapshot()), warmupEnd - performance.now());
    await Promise.all(
      Array.from({ length: concurrency }, async (_, worker) => {
        const target = worker % servers.length;
        const connection = new RawConnection(bases[target]!, '/v1/ladders/intake/tickets');
        for (;;) {
          const started = performance.now();
          if (started >= end) return connection.close();
          const status = await connection.post(next()).catch(() => 0);
          const finished = performance.now();
          if (started >= warmupEnd && finished <= end) {
            if (status === 201) {
              latencies.push(finished - started);
              perInstance[target]!++;
            } else errors++;
          }
        }
      }),
    );
    clearTimeout(cpuTimer);
    const cpu1 = snapshot();
    const createdTickets = latencies.length;
    const per = (a: number, b: number) => ((b - a) * 1000) / createdTickets;
    const cpuMsPerTicket = cpu0
      ? {
          servers: cpu1.servers.map((c, i) => per(cpu0!.servers[i]!, c)),
          client: per(cpu0.client, cpu1.client),
          redis: per(cpu0.redis, cpu1.redis),
          postgres: per(cpu0.postgres, cpu1.postgres),
        }
      : { servers: [], client: NaN, redis: NaN, postgres: NaN };
    const turns = servers.flatMap((s) => s.turns.filter((t) => !t.skipped && t.ladder === 'intake'));
    const loopDelays = await Promise.all(servers.map((s) => eventLoopDelay(s.url)));
    // Let the last passes run, then check every ticket of the run.
    await sleep(2500);
    const placement = await checkPlacement(redis, deployment.prefix, 'intake');
    for (const agent of agents) agent.destroy();
    const sorted = Float64Array.from(latencies).sort();
    return {
      instances,
      queue: ruleSet ? 'rule-set' : 'team-rank',
      matching,
      concurrency,
      seconds,
      tickets: createdTickets,
      perSecond: createdTickets / seconds,
      perInstance: perInstance.map((n) => n / seconds),
      p50ms: quantile(sorted, 0.5),
      p99ms: quantile(sorted, 0.99),
      errors,
      cpuMsPerTicket,
      placement,
      turns: {
        count: turns.length,
        medianMs: median(turns.map((t) => t.totalMs)),
        maxMs: Math.max(...turns.map((t) => t.totalMs)),
        maxPassMs: Math.max(...turns.map((t) => t.passMs)),
        medianFollowMs: median(turns.map((t) => t.followMs)),
        medianPassMs: median(turns.map((t) => t.passMs)),
        medianPlaceMs: median(turns.map((t) => t.placeMs)),
        medianEvents: median(turns.map((t) => t.events)),
      },
      eventLoopDelayMs: loopDelays,
      load: [load0, loadavg()[0]!],
    };
  } finally {
    await deployment.dispose(redis);
  }
}

/** An instance's event loop since it listened: how late it ran (wall clock, p99 and longest) and the longest stretch its own work held it (ms). */
export interface LoopFigures {
  p99: number;
  max: number;
  /** `ladder_event_loop_own_stall_seconds`; null from a build or a host without it. */
  ownMax: number | null;
}

/**
 * An instance's event loop delay since it listened (p99 and longest, wall clock, ms), from its /metrics, and the longest
 * stretch its own work held the loop (`ladder_event_loop_own_stall_seconds`, ms; null from a build or a host without it);
 * null from a build without the delay metric.
 */
async function eventLoopDelay(url: string): Promise<LoopFigures | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (quantile: string) => {
    const match = new RegExp(`^ladder_event_loop_delay_seconds\\{quantile="${quantile}"\\} (\\S+)$`, 'm').exec(text);
    return match ? Number(match[1]) * 1000 : null;
  };
  const p99 = value('0.99');
  const max = value('1');
  const own = /^ladder_event_loop_own_stall_seconds (\S+)$/m.exec(text);
  return p99 === null || max === null ? null : { p99, max, ownMax: own ? Number(own[1]) * 1000 : null };
}

/** "p99 / max ms (own work at most N ms)" of an instance's event loop, or n/a. */
function loopFigures(d: LoopFigures | null): string {
  if (d === null) return 'n/a';
  return `${f(d.p99)} / ${f(d.max)} ms (own work at most ${d.ownMax === null ? 'n/a' : `${f(d.ownMax)} ms`})`;
}

/**
 * Every ticket of the ladder read back from Redis: a matched ticket's match
 * names it and every other ticket of that match names the same match; the
 * waiting ones are exactly the queue and its counter.
 */
async function checkPlacement(redis: Redis, prefix: string, ladder: string) {
  const tickets = new Map<string, StoredTicket>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}ticket:*`, 'COUNT', 5000);
    cursor = next;
    if (keys.length === 0) continue;
    for (const raw of await redis.mget(keys)) {
      if (raw === null) continue;
      const t = JSON.parse(raw) as StoredTicket;
      if (t.ladder === ladder) tickets.set(t.id, t);
    }
  } while (cursor !== '0');
  let problems = 0;
  const matches = new Set<string>();
  let matched = 0;
  let waiting = 0;
  for (const t of tickets.values()) {
    if (t.status === 'waiting') waiting++;
    if (t.status !== 'matched') continue;
    matched++;
    matches.add(t.match!.id);
    const members = t.match!.teams.flat();
    if (!members.includes(t.id)) problems++;
    for (const other of members) if (tickets.get(other)?.match?.id !== t.match!.id) problems++;
  }
  const queued = await redis.zcard(`${prefix}queue:${ladder}`);
  const counted = Number((await redis.hget(`${prefix}queue:${ladder}:figures`, 'n')) ?? 0);
  if (queued !== waiting) problems++;
  if (counted !== waiting) problems++;
  return { matched, waiting, matches: matches.size, problems };
}

export interface LatencyResult {
  rate: number;
  seconds: number;
  sent: number;
  assigned: number;
  /** Milliseconds from sending a ticket to receiving its assignment event. */
  p50ms: number;
  p99ms: number;
  maxMs: number;
  /** Milliseconds from sending a ticket to its 201. */
  createP50ms: number;
  createP99ms: number;
  /** The instance's turns while the tickets arrived: median and max milliseconds. */
  turnMedianMs: number;
  turnMaxMs: number;
  load: [number, number];
}

/** Seconds of tickets sent before those counted in the latency run. */
const LATENCY_WARMUP_SECONDS = 2;

/** Tickets at a steady `rate` per second for `seconds` (after a warm-up); time to the assignment event. */
export async function benchLatency(redis: Redis, rate = 2000, seconds = 15): Promise<LatencyResult> {
  const deployment = new Deployment();
  try {
    const server = await deployment.start();
    const base = new URL(server.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 256 });
    await call(agent, base, 'POST', '/v1/ladders', JSON.stringify({ id: 'latency', system: 'glicko2', public: true }));
    const sentAt = new Map<string, number>();
    const createdIn: number[] = [];
    const delays: number[] = [];
    const controller = new AbortController();
    const stream = (async () => {
      try {
        const response = await fetch(`${server.url}/v1/ladders/latency/assignments`, { signal: controller.signal });
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const now = performance.now();
          buffer += decoder.decode(value, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = /^data: (.*)$/m.exec(block);
            if (!data || !block.startsWith('event: assignment')) continue;
            for (const id of (JSON.parse(data[1]!) as { teams: string[][] }).teams.flat()) {
              const sent = sentAt.get(id);
              if (sent !== undefined) delays.push(now - sent);
            }
          }
        }
      } catch {
        // Aborted.
      }
    })();
    await sleep(300);
    const random = mulberry32(7);
    const load0 = loadavg()[0]!;
    const turnsBefore = server.turns.length;
    // The first WARMUP_SECONDS of tickets are sent at the same rate but not counted: the first tickets
    // of a fresh server wait for its first use of the ladder (standings loaded into Redis, the lock
    // taken, code compiled), seconds in every build.
    const start = performance.now();
    const warmup = rate * LATENCY_WARMUP_SECONDS;
    const total = warmup + rate * seconds;
    let sent = 0;
    let countedFrom = start;
    const inFlight = new Set<Promise<void>>();
    // Raw keep-alive connections (see RawConnection), one request at a time each: a free one, or a new one.
    const idle: RawConnection[] = [];
    const connections = new Set<RawConnection>();
    const post = async (text: string) => {
      const connection = idle.pop() ?? new RawConnection(base, '/v1/ladders/latency/tickets');
      connections.add(connection);
      try {
        return await connection.post(text);
      } finally {
        idle.push(connection);
      }
    };
    // Open loop: every 5 ms, the tickets due by then.
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000));
      for (; sent < due; sent++) {
        const id = `l${sent}`;
        const text = JSON.stringify({ id, players: [{ id: `lp${sent}`, percentile: 1 + Math.floor(random() * 100), pings: { eu: 15 + Math.floor(random() * 40) } }] });
        const at = performance.now();
        const counted = sent >= warmup;
        if (sent === warmup) countedFrom = at;
        if (counted) sentAt.set(id, at);
        const p = post(text).then(
          () => void (counted && createdIn.push(performance.now() - at)),
          () => {},
        );
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
      }
      await sleep(5);
    }
    const elapsed = (performance.now() - countedFrom) / 1000;
    await Promise.all(inFlight);
    for (const connection of connections) connection.close();
    await sleep(3000);
    controller.abort();
    await stream;
    agent.destroy();
    const turns = server.turns
      .slice(turnsBefore)
      .filter((t) => !t.skipped)
      .map((t) => t.totalMs);
    const sorted = Float64Array.from(delays).sort();
    const created = Float64Array.from(createdIn).sort();
    return {
      rate: (sent - warmup) / elapsed,
      seconds,
      sent: sent - warmup,
      assigned: delays.length,
      p50ms: quantile(sorted, 0.5),
      p99ms: quantile(sorted, 0.99),
      maxMs: sorted[sorted.length - 1] ?? NaN,
      createP50ms: quantile(created, 0.5),
      createP99ms: quantile(created, 0.99),
      turnMedianMs: median(turns),
      turnMaxMs: Math.max(...turns),
      load: [load0, loadavg()[0]!],
    };
  } finally {
    await deployment.dispose(redis);
  }
}

/** `count` 6v6 tickets that can never match: every player's maxPing is below all their pings; strict filters. */
function heldTickets(count: number, seed: number, now: number): Ticket[] {
  const tickets = syntheticQueue({ tickets: count, seed, spanSeconds: 300 });
  for (const ticket of tickets) {
    ticket.id = `h${seed}-${ticket.id}`;
    ticket.at = now / 1000 - 300 + ticket.at;
    for (const player of ticket.players) {
      player.id = `h${seed}-${player.id}`;
      player.filter = { within: player.filter.within, strict: true, maxPing: Math.min(...Object.values(player.pings)) - 1 };
    }
  }
  return tickets;
}

/** Writes tickets into the queue through the service's own intake script (pipelined), as `ladder serve` would. */
async function fill(redis: Redis, prefix: string, ladder: string, tickets: Ticket[]): Promise<number> {
  const store = new RedisTicketStore(redis, prefix);
  const started = performance.now();
  for (let i = 0; i < tickets.length; i += 2000) {
    const outcomes = await Promise.all(
      tickets.slice(i, i + 2000).map((ticket) => store.add({ id: ticket.id, ladder, status: 'waiting', createdAt: Math.round(ticket.at * 1000), ticket })),
    );
    const refused = outcomes.find((o) => !o.ok);
    if (refused) throw new Error(`fill refused a ticket: ${JSON.stringify(refused)}`);
  }
  return (performance.now() - started) / 1000;
}

async function waitForTurn(server: Server, test: (t: PassReport) => boolean, seconds: number): Promise<PassReport> {
  const deadline = performance.now() + seconds * 1000;
  for (let seen = 0; performance.now() < deadline; await sleep(50)) {
    for (; seen < server.turns.length; seen++) if (test(server.turns[seen]!)) return server.turns[seen]!;
  }
  throw new Error('no such matchmaking turn');
}

export interface LibraryPass {
  coldMs: number;
  /** Wall and CPU milliseconds of the passes after the first few (the pass compiled, as in a service that runs one every second). */
  warmMs: number[];
  warmCpuMs: number[];
  addSeconds: number;
}

/** The library's own passes over the same tickets at the same clock, in this process. */
function libraryPasses(tickets: () => Ticket[], options: ConstructorParameters<typeof Matchmaker>[0], now: number, warm: number): LibraryPass {
  const matchmaker = new Matchmaker(options);
  const addSeconds = ((list) => {
    const begun = performance.now();
    for (const t of list) matchmaker.add(t);
    return (performance.now() - begun) / 1000;
  })(tickets());
  gc?.();
  let started = performance.now();
  matchmaker.pass(now);
  const coldMs = performance.now() - started;
  const warmMs: number[] = [];
  const warmCpuMs: number[] = [];
  for (let i = 0; i < warm + 5; i++) {
    // As in the service: a new arrival between passes.
    matchmaker.add({ id: `extra-${i}`, at: now, players: [{ id: `extra-p${i}`, percentile: 50, pings: { eu: 500 }, filter: { within: 1, strict: true, maxPing: 10 } }] });
    gc?.();
    const cpu = process.cpuUsage();
    started = performance.now();
    matchmaker.pass(now + i + 1);
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    // The first five passes run while V8 is still compiling the pass for this queue.
    if (i >= 5) {
      warmMs.push(wall);
      warmCpuMs.push((used.user + used.system) / 1000);
    }
  }
  return { coldMs, warmMs, warmCpuMs, addSeconds };
}

export interface HeldResult {
  tickets: number;
  players: number;
  fillSeconds: number;
  /** The instance taking the lock: the rebuild from Redis (ms). */
  rebuildMs: number;
  /** The instance's event loop delay from listening through the rebuild's turn (p99 and longest, ms); null from a build without the metric. */
  rebuildLoopDelayMs: LoopFigures | null;
  /** Turns with arrivals (so the pass ran): the library's pass inside them and the whole turn, ms. */
  passMs: { median: number; min: number; max: number; runs: number; cpuMedian: number };
  turnMs: { median: number; min: number; max: number };
  library: LibraryPass;
  /** GET /v1/ladders/held/queue and GET /metrics, one at a time after a warm-up: ms, and the server's CPU µs per request. */
  queueMs: { p50: number; p99: number; max: number; cpuUs: number };
  metricsMs: { p50: number; p99: number; max: number; cpuUs: number };
  /** GET /healthz the same way, for comparison. */
  healthMs: { p50: number; p99: number; max: number; cpuUs: number };
  /** Idle (no arrivals) CPU of the instance, % of one core over `idleSeconds`. */
  idleCpuPercent: number;
  idleSeconds: number;
  serverRssMiB: number;
  redisMiB: number;
  load: [number, number];
}

/** GETs one at a time: `warmup` first (not counted), then `count` timed, with the server's CPU per request (µs). */
async function timedGets(agent: Agent, base: URL, path: string, count: number, pid: number, warmup = 20) {
  for (let i = 0; i < warmup; i++) await call(agent, base, 'GET', path);
  const times: number[] = [];
  const cpu0 = processCpuSeconds(pid);
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const reply = await call(agent, base, 'GET', path);
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status}`);
    times.push(performance.now() - started);
  }
  const cpuUs = ((processCpuSeconds(pid) - cpu0) * 1e6) / count;
  const sorted = Float64Array.from(times).sort();
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1]!, cpuUs };
}

/** Timed GETs of each read. */
const READS = 1000;

/** N held tickets: rebuild, passes, reads, idle CPU, memory; the library on the same tickets. */
export async function benchHeld(redis: Redis, count: number, options: { idleSeconds?: number; trickleSeconds?: number } = {}): Promise<HeldResult> {
  const idleSeconds = options.idleSeconds ?? 10;
  const trickleSeconds = options.trickleSeconds ?? 12;
  const deployment = new Deployment();
  const load0 = loadavg()[0]!;
  try {
    let server = await deployment.start();
    let base = new URL(server.url);
    let agent = new Agent({ keepAlive: true });
    // Room past the held tickets for the trickle below: at the default caps (a million waiting, 100,000 a key) a queue
    // held at a million refuses every arrival with 429, and no turn would have events to run a pass for.
    const room = { maxWaiting: 2 * count + 1000, maxWaitingPerKey: 2 * count + 1000 };
    await call(agent, base, 'POST', '/v1/ladders', JSON.stringify({ id: 'held', system: 'teamrank', public: true, matchmaking: room }));
    await deployment.stopAll();
    const now = Date.now();
    const redisBefore = await redisUsedMemory(redis);
    let players = 0;
    let fillSeconds: number;
    {
      const tickets = heldTickets(count, 1, now);
      for (const t of tickets) players += t.players.length;
      fillSeconds = await fill(redis, deployment.prefix, 'held', tickets);
    }
    gc?.();
    server = await deployment.start();
    base = new URL(server.url);
    agent = new Agent({ keepAlive: true });
    const rebuild = await waitForTurn(server, (t) => t.ladder === 'held' && t.rebuilt, 600);
    // Over the rebuild (the metric counts from listening): before the reads below add their own.
    const rebuildLoopDelayMs = await eventLoopDelay(server.url);
    // A trickle of arrivals (that cannot match either), so each turn has events and runs its pass.
    const trickle = heldTickets(trickleSeconds * 5, 2, Date.now());
    const before = server.turns.length;
    for (let i = 0; i < trickle.length; i++) {
      const reply = await call(agent, base, 'POST', '/v1/ladders/held/tickets', body(trickle[i]!));
      if (reply.status !== 201) throw new Error(`a trickle ticket was answered ${reply.status}: ${reply.text}`);
      await sleep(200);
    }
    const turns = server.turns.slice(before).filter((t) => t.ladder === 'held' && !t.skipped && !t.rebuilt);
    const passes = turns.map((t) => t.passMs);
    const totals = turns.map((t) => t.totalMs);
    await sleep(1500);
    const queueMs = await timedGets(agent, base, '/v1/ladders/held/queue', READS, server.pid);
    const metricsMs = await timedGets(agent, base, '/metrics', READS, server.pid);
    // The same for a route that does one database round trip and nothing else: the floor this machine sets.
    const healthMs = await timedGets(agent, base, '/healthz', READS, server.pid);
    const cpu0 = processCpuSeconds(server.pid);
    await sleep(idleSeconds * 1000);
    const idleCpuPercent = ((processCpuSeconds(server.pid) - cpu0) / idleSeconds) * 100;
    const serverRssMiB = rssMiB(server.pid);
    const redisMiB = ((await redisUsedMemory(redis)) - redisBefore) / 1048576;
    agent.destroy();
    await deployment.stopAll();
    const library = libraryPasses(() => heldTickets(count, 1, now), { teamSize: 6 }, Date.now() / 1000, 5);
    return {
      tickets: count,
      players,
      fillSeconds,
      rebuildMs: rebuild.claimMs,
      rebuildLoopDelayMs,
      passMs: { median: median(passes), min: Math.min(...passes), max: Math.max(...passes), runs: passes.length, cpuMedian: median(turns.map((t) => t.passCpuMs)) },
      turnMs: { median: median(totals), min: Math.min(...totals), max: Math.max(...totals) },
      library,
      queueMs,
      metricsMs,
      healthMs,
      idleCpuPercent,
      idleSeconds,
      serverRssMiB,
      redisMiB,
      load: [load0, loadavg()[0]!],
    };
  } finally {
    await deployment.dispose(redis);
  }
}

export interface BurstResult {
  tickets: number;
  rebuildMs: number;
  passMs: number;
  placeMs: number;
  ratingsMs: number;
  assignMs: number;
  formed: number;
  placed: number;
  libraryColdMs: number;
  libraryFormed: number;
  /** The instance's event loop delay from listening through the turn (p99 and longest, ms); null from a build without the metric. */
  eventLoopDelayMs: LoopFigures | null;
  load: [number, number];
}

/**
 * N tickets of the synthetic 6v6 queue waiting when the instance starts: its first pass and the placements. `ruleSet`:
 * the same queue as a rule set (SIX_V_SIX_RULES, the percentile as an attribute), against the library's rule-set pass.
 */
export async function benchBurst(redis: Redis, count: number, ruleSet = false): Promise<BurstResult> {
  const deployment = new Deployment();
  const load0 = loadavg()[0]!;
  try {
    let server = await deployment.start();
    const agent = new Agent({ keepAlive: true });
    // Tickets that outlive a slow fill and rebuild on a loaded host (the default 600 s would expire them before the pass).
    await call(
      agent,
      new URL(server.url),
      'POST',
      '/v1/ladders',
      JSON.stringify({ id: 'burst', system: 'teamrank', public: true, matchmaking: { ticketTtlSeconds: 86_400, ...(ruleSet ? { ruleSet: SIX_V_SIX_RULES } : {}) } }),
    );
    agent.destroy();
    await deployment.stopAll();
    const now = Date.now();
    const make = () => {
      const tickets = syntheticQueue({ tickets: count, seed: 42, spanSeconds: 300 });
      for (const t of tickets) {
        t.at = now / 1000 - 300 + t.at;
        // As intake stores a rule-set queue's ticket: the attributes its rules read.
        if (ruleSet) for (const p of t.players) Object.assign(p, { attributes: { percentile: p.percentile } });
      }
      return tickets;
    };
    await fill(redis, deployment.prefix, 'burst', make());
    gc?.();
    server = await deployment.start();
    const turn = await waitForTurn(server, (t) => t.ladder === 'burst' && t.rebuilt, 900);
    const eventLoopDelayMs = await eventLoopDelay(server.url);
    await deployment.stopAll();
    const library = ruleSet ? new RuleSetMatchmaker(parseRuleSet(SIX_V_SIX_RULES)) : new Matchmaker({ teamSize: 6 });
    for (const t of make()) {
      if (library instanceof Matchmaker) library.add(t);
      else
        library.add({
          id: t.id,
          at: t.at,
          players: t.players.map((p): RuleSetTicketInput['players'][number] => ({ id: p.id, attributes: { percentile: p.percentile }, pings: { ...p.pings } })),
        });
    }
    gc?.();
    const started = performance.now();
    const result = library.pass(now / 1000);
    return {
      tickets: count,
      rebuildMs: turn.claimMs,
      passMs: turn.passMs,
      placeMs: turn.placeMs,
      ratingsMs: turn.ratingsMs,
      assignMs: turn.assignMs,
      formed: turn.formed,
      placed: turn.placed,
      libraryColdMs: performance.now() - started,
      libraryFormed: result.matches.length,
      eventLoopDelayMs,
      load: [load0, loadavg()[0]!],
    };
  } finally {
    await deployment.dispose(redis);
  }
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));

const PARTS = ['creation', 'creation-rules', 'intake', 'intake-rules', 'intake2', 'latency', 'held', 'burst', 'burst-rules'];
/** What runs without --only: creation on a rule-set queue only when asked. */
const DEFAULT_PARTS = ['creation', 'intake', 'intake-rules', 'intake2', 'latency', 'held', 'burst', 'burst-rules'];

export async function benchServiceMatchmaking(options: { only?: string[]; sizes?: number[]; seconds?: number; rates?: number[]; repeats?: number } = {}) {
  const only = new Set(options.only ?? DEFAULT_PARTS);
  const sizes = options.sizes ?? [100_000, 1_000_000];
  const seconds = options.seconds ?? 10;
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL);
  const results: Record<string, unknown> = {};
  try {
    // The team-rank and rule-set runs alternate (`repeats` rounds), so that both see the same load.
    const repeats = options.repeats ?? 1;
    for (let round = 0; round < repeats; round++)
      for (const matching of [false, true])
        for (const rules of [false, true]) {
          const name = `${matching ? 'intake' : 'creation'}${rules ? '-rules' : ''}`;
          if (!only.has(name)) continue;
          const r = await benchIntake(redis, 1, seconds, 64, matching, rules);
          if (repeats === 1) results[name] = r;
          else ((results[name] ??= []) as IntakeResult[]).push(r);
          console.log(
            `${rules ? 'rule-set 6v6 queue' : 'team-rank 6v6 queue'}: intake${matching ? '' : ' (tickets that cannot match: creation alone)'}, 1 instance, ${r.concurrency} in flight: ${f(r.perSecond, 0)} tickets/s, p50 ${f(r.p50ms)} ms, p99 ${f(r.p99ms)} ms, ${r.errors} errors; ` +
              `CPU ms/ticket server ${r.cpuMsPerTicket.servers.map((c) => f(c, 3)).join('+')}, client ${f(r.cpuMsPerTicket.client, 3)}, redis ${f(r.cpuMsPerTicket.redis, 3)}, postgres ${f(r.cpuMsPerTicket.postgres, 3)}; ` +
              `placed ${r.placement.matches} matches (${r.placement.matched} tickets), ${r.placement.waiting} waiting, ${r.placement.problems} problems; ` +
              `${r.turns.count} turns, median ${f(r.turns.medianMs)} ms (${f(r.turns.medianEvents, 0)} events: follow ${f(r.turns.medianFollowMs)}, pass ${f(r.turns.medianPassMs)}, place ${f(r.turns.medianPlaceMs)}), max ${f(r.turns.maxMs)} ms (pass ${f(r.turns.maxPassMs)}); ` +
              `event loop delay p99 / max ${r.eventLoopDelayMs.map(loopFigures).join(', ')}; load ${f(r.load[0], 2)} → ${f(r.load[1], 2)}`,
          );
        }
    if (only.has('intake2')) {
      const r = await benchIntake(redis, 2, seconds);
      results.intake2 = r;
      const serverMs = r.cpuMsPerTicket.servers.reduce((a, b) => a + b, 0);
      const redisCapacity = 1000 / r.cpuMsPerTicket.redis;
      console.log(
        `intake, 2 instances, ${r.concurrency} in flight: ${f(r.perSecond, 0)} tickets/s (${r.perInstance.map((n) => f(n, 0)).join(' + ')}), p50 ${f(r.p50ms)} ms, p99 ${f(r.p99ms)} ms, ${r.errors} errors; ` +
          `CPU ms/ticket servers ${f(serverMs, 3)} (${r.cpuMsPerTicket.servers.map((c) => f(c, 3)).join('+')}), client ${f(r.cpuMsPerTicket.client, 3)}, redis ${f(r.cpuMsPerTicket.redis, 3)}, postgres ${f(r.cpuMsPerTicket.postgres, 3)}; ` +
          `one core per instance would give ~${f(1000 / serverMs, 0)} tickets/s per instance, Redis (one core) ~${f(redisCapacity, 0)} tickets/s in all; ` +
          `placed ${r.placement.matches} matches (${r.placement.matched} tickets), ${r.placement.waiting} waiting, ${r.placement.problems} problems; load ${f(r.load[0], 2)} → ${f(r.load[1], 2)}`,
      );
    }
    if (only.has('latency')) {
      const latency: LatencyResult[] = [];
      for (const rate of options.rates ?? [2000]) {
        const r = await benchLatency(redis, rate, Math.max(10, seconds));
        latency.push(r);
        console.log(
          `creation to assignment event at ${f(r.rate, 0)} tickets/s for ${r.seconds} s: p50 ${f(r.p50ms, 0)} ms, p99 ${f(r.p99ms, 0)} ms, max ${f(r.maxMs, 0)} ms (${r.assigned} of ${r.sent} assigned); ` +
            `creation p50 ${f(r.createP50ms)} ms, p99 ${f(r.createP99ms)} ms; turns median ${f(r.turnMedianMs)} ms, max ${f(r.turnMaxMs)} ms; load ${f(r.load[0], 2)} → ${f(r.load[1], 2)}`,
        );
      }
      results.latency = latency;
    }
    if (only.has('held')) {
      const held: HeldResult[] = [];
      for (const size of sizes) {
        const r = await benchHeld(redis, size);
        held.push(r);
        const lib = r.library;
        console.log(
          `held ${size} tickets (${r.players} players) that cannot match: fill ${f(r.fillSeconds)} s, rebuild ${f(r.rebuildMs / 1000, 2)} s (event loop delay p99 / max through it ${loopFigures(r.rebuildLoopDelayMs)}); ` +
            `service pass median ${f(r.passMs.median)} ms wall, ${f(r.passMs.cpuMedian)} ms CPU (min ${f(r.passMs.min)}, max ${f(r.passMs.max)}, ${r.passMs.runs} passes), whole turn median ${f(r.turnMs.median)} ms (min ${f(r.turnMs.min)}); ` +
            `library pass cold ${f(lib.coldMs)} ms, warm median ${f(median(lib.warmMs))} ms wall, ${f(median(lib.warmCpuMs))} ms CPU (min ${f(Math.min(...lib.warmMs))}); ratio turn/library (wall medians) ${f(r.turnMs.median / median(lib.warmMs), 2)}; ` +
            `GET queue p50 ${f(r.queueMs.p50, 2)} p99 ${f(r.queueMs.p99, 2)} max ${f(r.queueMs.max, 1)} ms (server CPU ${f(r.queueMs.cpuUs, 0)} µs), metrics p50 ${f(r.metricsMs.p50, 2)} p99 ${f(r.metricsMs.p99, 2)} max ${f(r.metricsMs.max, 1)} ms (${f(r.metricsMs.cpuUs, 0)} µs), healthz p50 ${f(r.healthMs.p50, 2)} p99 ${f(r.healthMs.p99, 2)} ms (${f(r.healthMs.cpuUs, 0)} µs); ` +
            `idle CPU ${f(r.idleCpuPercent)} % of a core over ${r.idleSeconds} s; RSS ${f(r.serverRssMiB, 0)} MiB, Redis +${f(r.redisMiB, 0)} MiB; load ${f(r.load[0], 2)} → ${f(r.load[1], 2)}`,
        );
      }
      results.held = held;
    }
    for (const ruleSet of [false, true]) {
      const name = ruleSet ? 'burst-rules' : 'burst';
      if (!only.has(name)) continue;
      const burst: BurstResult[] = [];
      for (const size of sizes) {
        const r = await benchBurst(redis, size, ruleSet);
        burst.push(r);
        console.log(
          `${ruleSet ? 'rule-set' : 'team-rank'} burst ${size} synthetic 6v6 tickets waiting at start: rebuild ${f(r.rebuildMs / 1000, 2)} s, service pass ${f(r.passMs)} ms (${r.formed} matches), placing ${f(r.placeMs)} ms (${r.placed} placed; ratings read ${f(r.ratingsMs)} ms, assign scripts ${f(r.assignMs)} ms); ` +
            `library cold pass ${f(r.libraryColdMs)} ms (${r.libraryFormed} matches); event loop delay p99 / max ${loopFigures(r.eventLoopDelayMs)}; load ${f(r.load[0], 2)} → ${f(r.load[1], 2)}`,
        );
      }
      results[name] = burst;
    }
  } finally {
    redis.disconnect();
  }
  return results;
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/service-matchmaking.js',
  name: 'service-matchmaking',
  summary: '`ladder serve` children on PostgreSQL and Redis, driven over loopback HTTP: ticket intake, assignment latency, held tickets, bursts.',
  options: {
    only: { type: 'string', value: 'PART,...', description: `the parts to run, of ${PARTS.join(',')} (default ${DEFAULT_PARTS.join(',')})` },
    sizes: { type: 'string', value: 'N,...', description: 'ticket counts of held and burst (default 100000,1000000)' },
    seconds: { type: 'string', value: 'S', description: 'seconds of each measured run (default 10)' },
    rates: { type: 'string', value: 'R,...', description: 'arrivals per second of the latency part (default 2000)' },
    repeats: { type: 'string', value: 'N', description: 'runs of each intake and creation part, team-rank and rule-set queues alternated (default 1)' },
    json: { type: 'boolean', description: 'also print the results as JSON' },
  },
  notes: `PostgreSQL from DATABASE_URL, Redis from REDIS_URL; LADDER_BENCH_CLI=<another build>/dist/cli/main.js runs that
build's server; LADDER_BENCH_NODE_ARGS passes node flags to the servers.`,
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const only = textOption(args, 'only')?.split(',');
  for (const part of only ?? []) if (!PARTS.includes(part)) usageError(USAGE, `unknown part ${JSON.stringify(part)} in --only; choose from ${PARTS.join(', ')}`);
  const results = await benchServiceMatchmaking({
    only,
    sizes: numberListOption(USAGE, args, 'sizes'),
    seconds: numberOption(USAGE, args, 'seconds'),
    rates: numberListOption(USAGE, args, 'rates'),
    repeats: numberOption(USAGE, args, 'repeats'),
  });
  if (args.values.json === true) console.log(JSON.stringify(results));
}
