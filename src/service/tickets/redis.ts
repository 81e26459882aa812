/**
 * The ticket store in Redis (store.ts states the contract), shared by every
 * instance (docs/SERVICE.md, "Matchmaking"); its Lua scripts are in
 * redis-scripts.ts. Keys under the deployment's prefix, per ladder L:
 *
 * - `ticket:<id>`: the ticket as JSON. A waiting ticket's text starts with
 *   `{"status":"waiting",`; placing or cancelling it rewrites only that
 *   start (no re-encoding of the rest) and gives the key a TTL.
 * - `queue:L` (sorted set: waiting ticket ids by arrival ms),
 *   `queue:L:players` (set: players with a waiting ticket),
 *   `queue:L:regioncount` (hash: region → waiting tickets naming it, at most
 *   31 regions; a region none names leaves), `queue:L:owners` (hash: key id →
 *   its waiting tickets),
 *   `queue:L:figures` (hash: `n` tickets, `age` sum of arrival − epoch,
 *   `r:<region>` tickets, `b:<band>` players),
 *   `queue:L:events` (stream: `a` <the matcher's ticket JSON> on intake, `c` <id> on
 *   cancel, `b` <the backfill request JSON> when a backfill opens, `u` <id> when
 *   one is cancelled), `recent:L` (list), `mmlock:L` (the matchmaking lock),
 *   `formed:<match id>` (a match the matchmaker formed, for backfills to name;
 *   as long as finished tickets).
 * - Backfills: `backfill:<id>` (hash: `status`, `fills`, `json` the rest of the
 *   record, `players` a JSON array of the match's players now, `endedAt`;
 *   a TTL once finished), `queue:L:backfills` (sorted set: open backfill ids
 *   by creation ms), `queue:L:playing` (hash: player → the open backfill whose
 *   match they are in).
 * - `epoch`: a random token written on first use of an empty Redis, and
 *   `epoch:lost` (the time an instance that knew an earlier token noticed it
 *   gone, kept an hour): Redis lost its data in between (restarted without
 *   persistence, or flushed). Ticket ids Ladder issues end with the token,
 *   so a lost one answers "lost with the queue" rather than "unknown".
 *
 * Intake, cancellation and assignment are each one Lua script that changes
 * the queue, the players set, the counters and the event stream together;
 * so are a backfill's opening, cancellation and fills. Intake takes a batch
 * of tickets and assignment a chunk of matches per script, each ticket or
 * match as if alone and in order.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ChainableCommander, Redis } from 'ioredis';
import type { BackfillInput, Ticket } from 'ladder-core/matchmaking';
import { TicketLostError, UnavailableError } from '../errors/index.js';
import { redisCall } from '../redis.js';
import { defineScripts, type Scripts, WAITING_PREFIX } from './redis-scripts.js';
import { intakeOutcome, intakeScriptArgs, type PendingAdd, queueKeys } from './redis-keys.js';
import { ISSUED_ID, nextId, RecentLists, relayTo, streamInfo } from './redis-wire.js';
import {
  type AddOutcome,
  type BackfillAddOutcome,
  type BackfillPlacement,
  backfillPlayers,
  type Claim,
  type EventBatch,
  type ExpiryCutoffs,
  FIGURES_EPOCH,
  type FormedMatchRecord,
  type IntakeLimits,
  FINISHED_TTL_MS,
  type Placement,
  type PlacementOutcome,
  type QueueEvent,
  type QueueFigures,
  MAX_WHY_ASKED,
  RECENT,
  type RecentMatch,
  type StoredBackfill,
  type StoredTicket,
  type TicketStore,
  type TicketWhy,
  WHY_ASKED_MS,
  type WhyWaiting,
} from './store.js';

/** Tickets per intake script at most (a batch of more is split), so one script never holds Redis long. */
const INTAKE_CHUNK = 200;
/** Tickets a lock holder keeps for its own intake events, per ladder (see ownEvents). */
const OWN_EVENTS = 50_000;
/** Tickets of a snapshot's read decoded between turns of the event loop (a read is 5,000). */
const SNAPSHOT_PART = 1000;
export interface RedisTicketOptions {
  /** Milliseconds a matchmaking lock lasts unless renewed. @default 10000 */
  lockMs?: number;
  /** Events kept in a ladder's stream at most (about), when no lock holder trims it. @default 1000000 */
  eventsCap?: number;
}

export class RedisTicketStore implements TicketStore {
  readonly events = new EventEmitter();
  private subscriber: Redis | undefined;
  private readonly scripts: Scripts;
  private readonly lockMs: number;
  private readonly eventsCap: number;
  /** This instance's Redis client id (0 when CLIENT ID is refused): lock values start with it, so others can see the holder is gone. */
  private clientId = 0;
  /** Lock values this instance holds, by ladder. */
  private readonly locks = new Map<string, string>();
  private pendingAdds: PendingAdd[] = [];
  /**
   * Tickets queued through this instance into a ladder whose lock it holds, by the text of their
   * intake event: following the events it takes them from here instead of decoding that text again.
   * Emptied with the lock; at most OWN_EVENTS per ladder (the oldest go: their events are decoded).
   */
  private readonly ownEvents = new Map<string, Map<string, Ticket>>();
  /** The epoch of the shared state this instance last saw (see EPOCH); undefined before start. */
  private epoch: string | undefined;
  /** The last decoded recent list of each ladder. */
  private readonly recentLists = new RecentLists();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    options: RedisTicketOptions = {},
  ) {
    this.events.setMaxListeners(0);
    this.lockMs = options.lockMs ?? 10_000;
    this.eventsCap = options.eventsCap ?? 1_000_000;
    this.scripts = defineScripts(redis);
    redis.on('ready', () => {
      void this.learnClientId();
      // After a reconnect: a Redis that came back empty gets a new epoch, and the loss is recorded.
      if (this.epoch !== undefined) void this.checkEpoch().catch(() => {});
    });
  }

  /** Reads the shared epoch (writing one into an empty Redis) and remembers it. */
  private async checkEpoch(): Promise<string> {
    const current = String(
      await this.scripts.ladderEpoch(this.key('epoch'), this.key('epoch:lost'), randomBytes(6).toString('hex'), this.epoch ?? '', Date.now(), FINISHED_TTL_MS),
    );
    this.epoch = current;
    return current;
  }

  newTicketId(): string {
    return this.epoch === undefined ? randomUUID() : `${randomUUID()}.${this.epoch}`;
  }

  private async learnClientId(): Promise<void> {
    try {
      this.clientId = Number(await this.redis.client('ID'));
    } catch {
      this.clientId = 0;
    }
  }

  /** Starts relaying assignments published by any instance. */
  async start(): Promise<void> {
    await this.learnClientId();
    await this.checkEpoch();
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => {});
    // The duplicate inherits lazyConnect and no offline queue: connect before subscribing. It
    // reconnects and subscribes again on its own after an outage.
    await this.subscriber.connect();
    await this.subscriber.subscribe(this.key('assignments'), this.key('expirations'));
    const relay = relayTo(this.events, this.key('expirations'));
    this.subscriber.on('message', relay);
  }

  private key(name: string): string {
    return this.prefix + name;
  }
  private ticketKey(id: string) {
    return `${this.prefix}ticket:${id}`;
  }
  private queueKeys(ladder: string) {
    return queueKeys(this.prefix, ladder);
  }

  private backfillKey(id: string) {
    return `${this.prefix}backfill:${id}`;
  }

  add(ticket: StoredTicket, limits?: IntakeLimits): Promise<AddOutcome> {
    return new Promise((resolve, reject) => {
      // Tickets created in the same event-loop turn go to Redis in one pipeline.
      if (this.pendingAdds.length === 0) setImmediate(() => void this.flushAdds());
      this.pendingAdds.push({ ticket, limits, resolve, reject });
    });
  }

  private async flushAdds(): Promise<void> {
    const batch = this.pendingAdds;
    this.pendingAdds = [];
    // One intake script per ladder (and per INTAKE_CHUNK tickets) for the whole batch, all in one round trip.
    // Grouped by ladder and ladder cap (one script carries one cap; tickets of a ladder normally share it).
    const byLadder = new Map<string, PendingAdd[]>();
    for (const p of batch) {
      const group = byLadder.get(`${p.limits?.maxWaiting ?? -1} ${p.ticket.ladder}`);
      if (group) group.push(p);
      else byLadder.set(`${p.limits?.maxWaiting ?? -1} ${p.ticket.ladder}`, [p]);
    }
    const pipeline = this.redis.pipeline() as ChainableCommander & Record<string, (...args: Array<string | number>) => unknown>;
    const chunks: Array<{ ladder: string; adds: PendingAdd[]; events: string[] }> = [];
    for (const adds of byLadder.values()) {
      const ladder = adds[0]!.ticket.ladder;
      for (let i = 0; i < adds.length; i += INTAKE_CHUNK) {
        const chunk = { ladder, adds: adds.slice(i, i + INTAKE_CHUNK), events: [] as string[] };
        chunks.push(chunk);
        pipeline.ladderIntake!(...this.intakeArgs(ladder, chunk.adds, chunk.events));
      }
    }
    let results: Array<[Error | null, unknown]>;
    try {
      results = ((await redisCall(pipeline.exec())) ?? []) as Array<[Error | null, unknown]>;
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    const queued = new Set<string>();
    chunks.forEach(({ ladder, adds, events }, c) => {
      const [error, reply] = results[c] ?? [new Error('no reply'), null];
      const outcomes = (Array.isArray(reply) ? reply : []) as string[];
      const own = this.locks.has(ladder) ? this.ownEventsOf(ladder) : undefined;
      adds.forEach((p, i) => {
        const outcome = outcomes[i];
        if (error || outcome === undefined)
          p.reject(new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error ?? new Error('no reply') }));
        else {
          const decoded = intakeOutcome(outcome);
          if (decoded.ok) {
            queued.add(ladder);
            if (own !== undefined) {
              own.set(events[i]!, p.ticket.ticket);
              if (own.size > OWN_EVENTS) own.delete(own.keys().next().value!);
            }
          }
          p.resolve(decoded);
        }
      });
    });
    for (const ladder of queued) this.events.emit('queued', ladder);
  }

  private ownEventsOf(ladder: string): Map<string, Ticket> {
    let own = this.ownEvents.get(ladder);
    if (own === undefined) this.ownEvents.set(ladder, (own = new Map()));
    return own;
  }

  private dropLock(ladder: string): void {
    this.locks.delete(ladder);
    this.ownEvents.delete(ladder);
  }

  /** The intake script's keys and arguments for tickets of one ladder; each ticket's event text goes to `events`. */
  private intakeArgs(ladder: string, adds: readonly PendingAdd[], events: string[]): Array<string | number> {
    const k = this.queueKeys(ladder);
    return intakeScriptArgs(
      {
        ladder,
        keys: [k.queue, k.players, k.figures, k.regions, k.events, this.key('queues'), k.playing, k.owners],
        ticketKey: (id) => this.ticketKey(id),
        eventsCap: this.eventsCap,
      },
      adds,
      events,
    );
  }

  async get(id: string) {
    const [raw, epoch, lostAt] = await redisCall(this.redis.mget(this.ticketKey(id), this.key('epoch'), this.key('epoch:lost')));
    if (raw !== null) return JSON.parse(raw) as StoredTicket;
    if (this.epoch === undefined) return undefined;
    // No epoch at all: Redis is empty since this instance last looked, and nobody has noticed yet.
    const current = epoch ?? (await redisCall(this.checkEpoch()));
    const noticed = epoch === null ? Date.now() : lostAt !== null ? Number(lostAt) : undefined;
    const issuedUnder = ISSUED_ID.exec(id)?.[1];
    if (issuedUnder !== undefined) {
      if (issuedUnder !== current) throw new TicketLostError(id, true, noticed);
    } else if (noticed !== undefined) {
      throw new TicketLostError(id, false, noticed);
    }
    return undefined;
  }

  async getMany(ids: readonly string[]) {
    if (ids.length === 0) return [];
    const raws = await redisCall(this.redis.mget(ids.map((id) => this.ticketKey(id))));
    return raws.map((raw) => (raw === null ? undefined : (JSON.parse(raw) as StoredTicket)));
  }

  async cancel(ticket: StoredTicket) {
    const k = this.queueKeys(ticket.ladder);
    const raw = (await redisCall(
      this.scripts.ladderCancel(
        this.ticketKey(ticket.id),
        k.queue,
        k.players,
        k.figures,
        k.events,
        k.regions,
        k.owners,
        ticket.id,
        Date.now(),
        FINISHED_TTL_MS,
        this.eventsCap,
        FIGURES_EPOCH,
      ),
    )) as string | null;
    return raw === null ? undefined : (JSON.parse(raw) as StoredTicket);
  }

  async figures(ladder: string): Promise<QueueFigures> {
    return (await this.readQueue(ladder, false)).figures;
  }

  async summary(ladder: string) {
    return this.readQueue(ladder, true);
  }

  /** The counters and the oldest arrival, and with `withRecent` the recent list, in one MULTI. */
  private async readQueue(ladder: string, withRecent: boolean): Promise<{ figures: QueueFigures; recent: RecentMatch[]; why?: WhyWaiting }> {
    const k = this.queueKeys(ladder);
    const multi = this.redis.multi().call('HGETALL', k.figures).zrange(k.queue, 0, 0, 'WITHSCORES');
    if (withRecent) multi.lrange(k.recent, 0, RECENT - 1).hmget(k.why, 's:at', 's:heldBy');
    const results = (await redisCall(multi.exec())) ?? [];
    for (const [error] of results) if (error) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
    const flat = results[0]![1] as string[];
    const oldest = results[1]![1] as string[];
    const figures: QueueFigures = {
      waiting: 0,
      byRegion: new Map(),
      byBand: new Array<number>(10).fill(0),
      createdSum: 0,
      oldestCreatedAt: oldest.length === 2 ? Number(oldest[1]) : null,
    };
    for (let i = 0; i < flat.length; i += 2) {
      const field = flat[i]!;
      const value = Number(flat[i + 1]);
      if (field === 'n') figures.waiting = value;
      else if (field === 'age') figures.createdSum = value;
      else if (field.startsWith('r:')) {
        if (value > 0) figures.byRegion.set(field.slice(2), value);
      } else if (field.startsWith('b:')) {
        const band = Number(field.slice(2));
        if (band >= 0 && band < 10) figures.byBand[band] = value;
      }
    }
    if (!withRecent) return { figures, recent: [] };
    const [whyAt, heldBy] = results[3]![1] as Array<string | null>;
    const why = whyAt !== null && whyAt !== undefined && typeof heldBy === 'string' ? { at: Number(whyAt), heldBy: JSON.parse(heldBy) as Record<string, number> } : undefined;
    return { figures, recent: this.recentLists.decode(ladder, results[2]![1] as string[]), ...(why !== undefined ? { why } : {}) };
  }

  async askWhy(ladder: string, id: string): Promise<TicketWhy | undefined> {
    const k = this.queueKeys(ladder);
    const reply = (await redisCall(this.scripts.ladderAskWhy(k.asked, k.why, id, Date.now(), MAX_WHY_ASKED, WHY_ASKED_MS))) as [string, string] | null;
    return Array.isArray(reply) ? { at: Number(reply[0]), rule: reply[1] } : undefined;
  }

  async whyAsked(ladder: string): Promise<string[]> {
    const { asked } = this.queueKeys(ladder);
    const results =
      (await redisCall(
        this.redis
          .multi()
          .zremrangebyscore(asked, '-inf', Date.now() - WHY_ASKED_MS)
          .zrevrange(asked, 0, MAX_WHY_ASKED - 1)
          .exec(),
      )) ?? [];
    for (const [error] of results) if (error) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
    return (results[1]?.[1] as string[] | undefined) ?? [];
  }

  async setWhy(ladder: string, why: WhyWaiting, reasons: Readonly<Record<string, string>>): Promise<boolean> {
    const held = this.locks.get(ladder);
    if (held === undefined) return false;
    const k = this.queueKeys(ladder);
    const args: Array<string | number> = [held, why.at, JSON.stringify(why.heldBy)];
    for (const [id, rule] of Object.entries(reasons).slice(0, MAX_WHY_ASKED)) args.push(id, rule);
    const reply = await redisCall(this.scripts.ladderSetWhy(k.lock, k.why, ...args));
    if (reply === -1) {
      this.dropLock(ladder);
      return false;
    }
    return true;
  }

  async waitingByQueue(): Promise<Array<[string, number]>> {
    const flat = (await redisCall(this.scripts.ladderWaiting(this.key('queues'), this.prefix))) as string[];
    const out: Array<[string, number]> = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
    return out;
  }

  async queues() {
    return redisCall(this.redis.smembers(this.key('queues')));
  }

  async recent(ladder: string) {
    return this.recentLists.decode(ladder, await redisCall(this.redis.lrange(this.queueKeys(ladder).recent, 0, RECENT - 1)));
  }

  private lockValue(token: string): string {
    return `${this.clientId}:${token}`;
  }

  async claim(ladder: string): Promise<Claim> {
    const { lock } = this.queueKeys(ladder);
    const held = this.locks.get(ladder);
    if (held !== undefined) {
      // Renewed with the current client id, which changes when the connection is re-established.
      const value = this.lockValue(held.slice(held.indexOf(':') + 1));
      if ((await redisCall(this.scripts.ladderRenew(lock, held, value, this.lockMs))) === 1) {
        this.locks.set(ladder, value);
        return 'held';
      }
      this.dropLock(ladder);
    }
    const value = this.lockValue(randomBytes(12).toString('hex'));
    const previous = await redisCall(this.redis.set(lock, value, 'PX', this.lockMs, 'NX', 'GET'));
    if (previous === null) {
      this.locks.set(ladder, value);
      return 'acquired';
    }
    // Held by another instance: if that instance's connection is gone (the process died), take over now
    // rather than when the lock expires.
    const holder = Number(previous.slice(0, previous.indexOf(':')));
    if (holder > 0 && holder !== this.clientId) {
      let alive = true;
      try {
        alive = String(await this.redis.call('CLIENT', 'LIST', 'ID', String(holder))).trim() !== '';
      } catch {
        // CLIENT LIST refused (a managed Redis): wait for the lock to expire.
      }
      if (!alive && (await redisCall(this.scripts.ladderRenew(lock, previous, value, this.lockMs))) === 1) {
        this.locks.set(ladder, value);
        return 'acquired';
      }
    }
    return 'busy';
  }

  async release(ladder: string) {
    const held = this.locks.get(ladder);
    if (held === undefined) return;
    this.dropLock(ladder);
    await redisCall(this.scripts.ladderRelease(this.queueKeys(ladder).lock, held));
  }

  async snapshot(ladder: string, onBatch: (tickets: Ticket[]) => void | Promise<void>, onBackfills?: (backfills: BackfillInput[]) => void | Promise<void>): Promise<string> {
    const k = this.queueKeys(ladder);
    // The position first: every change after it is in the stream, so a ticket the scan misses or sees
    // in an older state is put right by the events that follow.
    // No stream yet (null): every event will come after it.
    const reply = (await redisCall(this.scripts.ladderStreamPosition(k.events))) as unknown[] | null;
    let cursor = '0-0@0';
    if (Array.isArray(reply)) {
      const info = streamInfo(reply);
      cursor = `${info.lastId}@${info.added}`;
    }
    // Open backfills before the tickets (see TicketStore.snapshot), oldest first.
    if (onBackfills) {
      const ids = await redisCall(this.redis.zrange(k.backfills, 0, -1));
      const open = (await this.getBackfills(ids)).filter((b): b is StoredBackfill => b !== undefined && b.status === 'waiting');
      if (open.length > 0) await onBackfills(open.map((b) => b.request));
    }
    // In arrival order (the matchmaker inserts a late arrival into its sorted queue, which at a million
    // tickets in random order would be quadratic), in chunks continuing from the last arrival time read
    // (ids already read at exactly that time are skipped). A ticket present at the position is either
    // read here or removed by an event after it; one added later comes as an event.
    const chunk = 5000;
    let from = '-inf';
    let seenAtFrom = new Set<string>();
    for (;;) {
      const flat = await redisCall(this.redis.zrange(k.queue, from, '+inf', 'BYSCORE', 'LIMIT', 0, chunk + seenAtFrom.size, 'WITHSCORES'));
      const ids: string[] = [];
      let last = from;
      let atLast = new Set<string>();
      for (let i = 0; i < flat.length; i += 2) {
        const id = flat[i]!;
        const score = flat[i + 1]!;
        if (score === from && seenAtFrom.has(id)) continue;
        ids.push(id);
        if (score !== last) {
          last = score;
          atLast = score === from ? new Set(seenAtFrom) : new Set();
        }
        atLast.add(id);
      }
      if (ids.length > 0) {
        const raws = await redisCall(this.redis.mget(ids.map((id) => this.ticketKey(id))));
        // Decoded a part at a time with a turn of the event loop between parts (decoding the whole read
        // in one go would hold it for tens of milliseconds), then handed over as one batch: the caller's
        // round trips per batch stay as they were.
        const batch: Ticket[] = [];
        for (let from = 0; from < raws.length; from += SNAPSHOT_PART) {
          if (from > 0) await new Promise((resolve) => setImmediate(resolve));
          for (let i = from; i < Math.min(from + SNAPSHOT_PART, raws.length); i++) {
            const raw = raws[i];
            if (raw?.startsWith(WAITING_PREFIX)) batch.push((JSON.parse(raw) as StoredTicket).ticket);
          }
        }
        await onBatch(batch);
      }
      if (flat.length / 2 < chunk + seenAtFrom.size) break;
      from = last;
      seenAtFrom = atLast;
    }
    return cursor;
  }

  /**
   * A cursor is `<stream id>@<entries added to the stream up to it>`: when a
   * read reaches the end of the stream, the events read must make up every
   * entry added since, else some were trimmed unread (or Redis restarted
   * empty) and the reader must rebuild.
   */
  async readEvents(ladder: string, cursor: string, max: number): Promise<EventBatch> {
    const k = this.queueKeys(ladder);
    const [from, addedText] = cursor.split('@') as [string, string | undefined];
    const added = Number(addedText ?? 0);
    const results =
      (await redisCall(this.redis.multi().xread('COUNT', max, 'STREAMS', k.events, from).hget(k.figures, 'n').call('XINFO', 'STREAM', k.events).zcard(k.backfills).exec())) ?? [];
    const [readError, read] = results[0] ?? [null, null];
    const [countError, count] = results[1] ?? [null, null];
    const [backfillsError, backfills] = results[3] ?? [null, 0];
    if (readError || countError || backfillsError)
      throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: readError ?? countError ?? backfillsError });
    // XINFO fails only when the stream does not exist: nothing was ever added then.
    const [, info] = results[2] ?? [null, null];
    const total = Array.isArray(info) ? streamInfo(info).added : 0;
    const entries = ((read as Array<[string, Array<[string, string[]]>]> | null)?.[0]?.[1] ?? []) as Array<[string, string[]]>;
    const events: QueueEvent[] = [];
    const own = this.ownEvents.get(ladder);
    let next = from;
    for (const [id, fields] of entries) {
      next = id;
      const at = Number(id.slice(0, id.indexOf('-')));
      if (fields[0] === 'a') {
        const text = fields[1]!;
        let ticket = own?.get(text);
        if (ticket === undefined) ticket = JSON.parse(text) as Ticket;
        else own!.delete(text);
        events.push({ kind: 'add', ticket, at });
      } else if (fields[0] === 'c') events.push({ kind: 'cancel', id: fields[1]!, at });
      else if (fields[0] === 'b') events.push({ kind: 'backfill', backfill: JSON.parse(fields[1]!) as BackfillInput, at });
      else if (fields[0] === 'u') events.push({ kind: 'unbackfill', id: fields[1]!, at });
    }
    const consumed = added + entries.length;
    const complete = entries.length < max;
    const gap = total < consumed || (complete && consumed < total);
    return { events, cursor: `${next}@${consumed}`, waiting: Number(count ?? 0), backfills: Number(backfills ?? 0), complete, gap };
  }

  async trimEvents(ladder: string, cursor: string) {
    const held = this.locks.get(ladder);
    const id = cursor.split('@')[0]!;
    if (held === undefined || id === '0-0') return;
    const k = this.queueKeys(ladder);
    await redisCall(this.scripts.ladderTrim(k.lock, k.events, held, nextId(id)));
  }

  async assign(ladder: string, placements: readonly Placement[]): Promise<PlacementOutcome[]> {
    if (placements.length === 0) return [];
    const held = this.locks.get(ladder);
    if (held === undefined) return placements.map(() => 'lost');
    const k = this.queueKeys(ladder);
    const args: Array<string | number> = [
      held,
      this.key('ticket:'),
      FINISHED_TTL_MS,
      Date.now(),
      FIGURES_EPOCH,
      RECENT,
      this.key('assignments'),
      JSON.stringify(ladder),
      this.key('formed:'),
    ];
    for (const { match, recent, tickets } of placements) {
      args.push(JSON.stringify(match).slice(1, -1), JSON.stringify(recent), match.id, match.teams.length, tickets.length);
      for (const t of tickets) args.push(t.id, t.team);
    }
    const reply = (await redisCall(this.scripts.ladderAssign(k.queue, k.players, k.figures, k.lock, k.recent, k.regions, k.owners, ...args))) as number | number[];
    if (reply === -1) {
      this.dropLock(ladder);
      return placements.map(() => 'lost');
    }
    return placements.map((_, i): PlacementOutcome => ((reply as number[])[i] === 1 ? 'placed' : 'gone'));
  }

  /** The recent list and the announcement, once for all the matches placed (newest first in the list). */
  private async announce(ladder: string, recents: readonly RecentMatch[]): Promise<void> {
    if (recents.length === 0) return;
    const placed = recents.map((recent) => JSON.stringify(recent));
    const k = this.queueKeys(ladder);
    await redisCall(
      this.redis
        .multi()
        .lpush(k.recent, ...placed.slice(-RECENT))
        .ltrim(k.recent, 0, RECENT - 1)
        .publish(this.key('assignments'), `{"ladder":${JSON.stringify(ladder)},"matches":[${placed.join(',')}]}`)
        .exec(),
    );
  }

  async addBackfill(backfill: StoredBackfill): Promise<BackfillAddOutcome> {
    const k = this.queueKeys(backfill.ladder);
    const { status: _status, endedAt: _endedAt, fills: _fills, ...record } = backfill;
    const teams = backfill.request.teams;
    const args: Array<string | number> = [
      this.backfillKey(backfill.id),
      k.players,
      k.playing,
      k.backfills,
      k.events,
      this.key('queues'),
      backfill.id,
      backfill.createdAt,
      backfill.ladder,
      JSON.stringify(record),
      JSON.stringify(backfillPlayers(backfill.request)),
      this.eventsCap,
      JSON.stringify(backfill.request),
      teams.length,
    ];
    for (const team of teams) args.push(team.length, ...team);
    const reply = String(await redisCall(this.scripts.ladderBackfillIntake(...args)));
    if (reply === 'ok') return { ok: true };
    if (reply === 'id') return { ok: false, reason: 'id' };
    const [kind, team, index, ...rest] = reply.split(':');
    if (kind === 'waiting') return { ok: false, reason: 'waiting', team: Number(team), index: Number(index) };
    return { ok: false, reason: 'playing', team: Number(team), index: Number(index), backfill: rest.join(':') };
  }

  /** A record from its hash fields [status, fills, json, endedAt]. */
  private backfillOf(fields: Array<string | null>): StoredBackfill | undefined {
    const [status, fills, json, endedAt] = fields;
    if (!status || !json) return undefined;
    const record = JSON.parse(json) as Omit<StoredBackfill, 'status' | 'fills' | 'endedAt'>;
    return { ...record, status: status as StoredBackfill['status'], fills: Number(fills ?? 0), ...(endedAt ? { endedAt: Number(endedAt) } : {}) };
  }

  async getBackfill(id: string) {
    return this.backfillOf(await redisCall(this.redis.hmget(this.backfillKey(id), 'status', 'fills', 'json', 'endedAt')));
  }

  async getBackfills(ids: readonly string[]) {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(this.backfillKey(id), 'status', 'fills', 'json', 'endedAt');
    const results = (await redisCall(pipeline.exec())) ?? [];
    return ids.map((_, i) => {
      const [error, fields] = results[i] ?? [new Error('no reply'), null];
      if (error) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
      return this.backfillOf(fields as Array<string | null>);
    });
  }

  async cancelBackfill(backfill: StoredBackfill) {
    const k = this.queueKeys(backfill.ladder);
    const fields = (await redisCall(
      this.scripts.ladderBackfillCancel(this.backfillKey(backfill.id), k.backfills, k.playing, k.events, backfill.id, Date.now(), FINISHED_TTL_MS, this.eventsCap),
    )) as Array<string | null> | null;
    return fields === null ? undefined : this.backfillOf(fields);
  }

  async closeQueue(ladder: string) {
    const k = this.queueKeys(ladder);
    /** Cancels every member of a sorted set of ids, a thousand at a time, each through its own cancellation script; counts those it cancelled. */
    const cancelAll = async (set: string, cancel: (id: string) => Promise<{ status: string } | undefined>) => {
      let count = 0;
      for (;;) {
        const ids = await redisCall(this.redis.zrange(set, 0, 999));
        if (ids.length === 0) return count;
        const after = await Promise.all(ids.map(cancel));
        count += after.filter((x) => x?.status === 'cancelled').length;
        // An id whose record has gone (it cannot be cancelled) leaves the set too.
        await redisCall(this.redis.zrem(set, ...ids));
      }
    };
    let tickets = 0;
    let backfills = 0;
    for (;;) {
      backfills += await cancelAll(k.backfills, (id) => this.cancelBackfill({ id, ladder } as StoredBackfill));
      tickets += await cancelAll(k.queue, (id) => this.cancel({ id, ladder } as StoredTicket));
      const forgotten = await redisCall(
        this.scripts.ladderForget(
          k.queue,
          k.backfills,
          k.players,
          k.figures,
          k.regions,
          k.events,
          k.playing,
          k.recent,
          this.key('queues'),
          k.owners,
          k.regionSet,
          k.why,
          k.asked,
          ladder,
        ),
      );
      if (forgotten === 1) break;
    }
    this.recentLists.forget(ladder);
    return { tickets, backfills };
  }

  async fill(ladder: string, placements: readonly BackfillPlacement[]): Promise<PlacementOutcome[]> {
    if (placements.length === 0) return [];
    const held = this.locks.get(ladder);
    if (held === undefined) return placements.map(() => 'lost');
    const k = this.queueKeys(ladder);
    const now = Date.now();
    const pipeline = this.redis.pipeline() as ChainableCommander & Record<string, (...args: Array<string | number>) => unknown>;
    for (const placement of placements) {
      const { filled, ...after } = placement.after;
      const args: Array<string | number> = [
        held,
        this.key('ticket:'),
        FINISHED_TTL_MS,
        now,
        JSON.stringify(placement.match).slice(1, -1),
        FIGURES_EPOCH,
        placement.backfill,
        placement.fills,
        JSON.stringify(after),
        JSON.stringify(backfillPlayers(after.request)),
        filled ? 1 : 0,
        placement.newcomers.length,
        ...placement.newcomers,
      ];
      for (const t of placement.tickets) args.push(t.id, t.team);
      pipeline.ladderFill!(k.queue, k.players, k.figures, k.lock, this.backfillKey(placement.backfill), k.backfills, k.playing, k.regions, k.owners, ...args);
    }
    const results = ((await redisCall(pipeline.exec())) ?? []) as Array<[Error | null, unknown]>;
    const outcomes = placements.map((_, i): PlacementOutcome => {
      const [error, reply] = results[i] ?? [new Error('no reply'), null];
      if (error) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
      if (reply === -1) {
        this.dropLock(ladder);
        return 'lost';
      }
      return reply === 1 ? 'placed' : 'gone';
    });
    await this.announce(
      ladder,
      placements.filter((_, i) => outcomes[i] === 'placed').map((p) => p.recent),
    );
    return outcomes;
  }

  async expire(ladder: string, cutoffs: ExpiryCutoffs, now: number) {
    const k = this.queueKeys(ladder);
    const tickets: string[] = [];
    const backfills: string[] = [];
    const limit = 1000;
    // A thousand of each per script, so one script never holds Redis long however many expire at once.
    for (;;) {
      const reply = (await redisCall(
        this.scripts.ladderExpire(
          k.queue,
          k.players,
          k.figures,
          k.regions,
          k.owners,
          k.events,
          k.backfills,
          k.playing,
          this.key('ticket:'),
          this.key('backfill:'),
          cutoffs.tickets,
          cutoffs.backfills,
          now,
          FINISHED_TTL_MS,
          this.eventsCap,
          FIGURES_EPOCH,
          limit,
          this.key('expirations'),
          JSON.stringify(ladder),
        ),
      )) as [string[], string[], string, string];
      tickets.push(...reply[0]);
      backfills.push(...reply[1]);
      if (reply[0].length < limit && reply[1].length < limit)
        return { tickets, backfills, oldestTicket: reply[2] === '' ? null : Number(reply[2]), oldestBackfill: reply[3] === '' ? null : Number(reply[3]) };
    }
  }

  async formedMatch(id: string): Promise<FormedMatchRecord | undefined> {
    const raw = await redisCall(this.redis.get(this.key(`formed:${id}`)));
    return raw === null ? undefined : (JSON.parse(raw) as FormedMatchRecord);
  }

  async close() {
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }
}
