/**
 * Matchmaking tickets and assignments. In process (one instance) or in Redis
 * (several instances: tickets, queues and recent matches are shared; a
 * SET NX PX lock lets one instance at a time run a ladder's matchmaking
 * pass; assignments are published on a channel every instance relays to its
 * server-sent-event streams).
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { FormedMatch, Ticket } from '../matchmaking/index.js';
import { redisCall } from './rankings.js';

export interface TicketAssignment {
  id: string;
  region: string;
  /** The ticket's team index. */
  team: number;
  /** Ticket ids per team. */
  teams: string[][];
  /** Player ids per team. */
  players: string[][];
  at: number;
}

export interface StoredTicket {
  id: string;
  ladder: string;
  status: 'waiting' | 'matched' | 'cancelled';
  /** Epoch ms of entry. */
  createdAt: number;
  /** Epoch ms the ticket left the queue. */
  endedAt?: number;
  mode?: string;
  /** The matcher's form (its `at` is in seconds). */
  ticket: Ticket;
  match?: TicketAssignment;
}

export interface RecentMatch {
  matchId: string;
  region: string;
  teams: string[][];
  players: string[][];
  winProbability: number | null;
  waitSeconds: { p50: number; max: number };
  quality: FormedMatch['quality'];
  at: string;
}

export interface AssignmentEvent {
  ladder: string;
  match: RecentMatch;
}

export interface TicketStore {
  add(ticket: StoredTicket): Promise<boolean>;
  get(id: string): Promise<StoredTicket | undefined>;
  /** Cancels a waiting ticket; returns it (with its final status) or undefined when unknown. */
  cancel(id: string): Promise<StoredTicket | undefined>;
  waiting(ladder: string): Promise<StoredTicket[]>;
  /** Ladders with at least one waiting ticket. */
  queues(): Promise<string[]>;
  /** Marks the tickets of each match as matched, skipping a match any of whose tickets left the queue meanwhile. Returns the matches applied. */
  assign(ladder: string, matches: Array<{ recent: RecentMatch; tickets: StoredTicket[] }>): Promise<RecentMatch[]>;
  recent(ladder: string): Promise<RecentMatch[]>;
  /** Runs `work` holding the ladder's matchmaking lock; false when another instance holds it. */
  withPassLock(ladder: string, work: () => Promise<void>): Promise<boolean>;
  readonly events: EventEmitter;
  close(): Promise<void>;
}

const RECENT = 50;
/** Finished tickets stay readable this long. */
const FINISHED_TTL_MS = 3_600_000;

export class MemoryTicketStore implements TicketStore {
  private readonly tickets = new Map<string, StoredTicket>();
  private readonly queuesByLadder = new Map<string, Set<string>>();
  private readonly recentByLadder = new Map<string, RecentMatch[]>();
  readonly events = new EventEmitter();

  constructor() {
    this.events.setMaxListeners(0);
  }

  async add(ticket: StoredTicket): Promise<boolean> {
    if (this.tickets.has(ticket.id)) return false;
    this.tickets.set(ticket.id, ticket);
    let queue = this.queuesByLadder.get(ticket.ladder);
    if (!queue) this.queuesByLadder.set(ticket.ladder, (queue = new Set()));
    queue.add(ticket.id);
    return true;
  }

  async get(id: string) {
    const ticket = this.tickets.get(id);
    if (ticket && ticket.endedAt !== undefined && ticket.endedAt < Date.now() - FINISHED_TTL_MS) {
      this.tickets.delete(id);
      return undefined;
    }
    return ticket;
  }

  async cancel(id: string) {
    const ticket = this.tickets.get(id);
    if (!ticket) return undefined;
    if (ticket.status === 'waiting') {
      ticket.status = 'cancelled';
      ticket.endedAt = Date.now();
      this.queuesByLadder.get(ticket.ladder)?.delete(id);
    }
    return ticket;
  }

  async waiting(ladder: string) {
    return [...(this.queuesByLadder.get(ladder) ?? [])].map((id) => this.tickets.get(id)!);
  }

  async queues() {
    return [...this.queuesByLadder].filter(([, q]) => q.size > 0).map(([ladder]) => ladder);
  }

  async assign(ladder: string, matches: Array<{ recent: RecentMatch; tickets: StoredTicket[] }>) {
    const queue = this.queuesByLadder.get(ladder);
    const applied: RecentMatch[] = [];
    for (const { recent, tickets } of matches) {
      if (!tickets.every((t) => queue?.has(t.id))) continue;
      for (const t of tickets) {
        queue!.delete(t.id);
        this.tickets.set(t.id, t);
      }
      const list = this.recentByLadder.get(ladder) ?? [];
      list.unshift(recent);
      this.recentByLadder.set(ladder, list.slice(0, RECENT));
      applied.push(recent);
      this.events.emit('assignment', { ladder, match: recent } satisfies AssignmentEvent);
    }
    return applied;
  }

  async recent(ladder: string) {
    return this.recentByLadder.get(ladder) ?? [];
  }

  async withPassLock(_ladder: string, work: () => Promise<void>) {
    await work();
    return true;
  }

  async close() {}
}

const ASSIGN_SCRIPT = `
-- KEYS[1] queue zset, KEYS[2] recent list; ARGV[1] ticket key prefix, ARGV[2] ttl ms, ARGV[3] recent json, ARGV[4..] id, json pairs
for i = 4, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then return 0 end
end
for i = 4, #ARGV, 2 do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('SET', ARGV[1] .. ARGV[i], ARGV[i + 1], 'PX', ARGV[2])
end
redis.call('LPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], 0, ${RECENT - 1})
return 1`;

const CANCEL_SCRIPT = `
-- KEYS[1] ticket key; ARGV[1] queue prefix, ARGV[2] now, ARGV[3] ttl
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local t = cjson.decode(raw)
if t.status == 'waiting' then
  if redis.call('ZREM', ARGV[1] .. t.ladder, t.id) == 1 then
    t.status = 'cancelled'
    t.endedAt = tonumber(ARGV[2])
    raw = cjson.encode(t)
    redis.call('SET', KEYS[1], raw, 'PX', ARGV[3])
  else
    raw = redis.call('GET', KEYS[1])
  end
end
return raw`;

const UNLOCK_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class RedisTicketStore implements TicketStore {
  readonly events = new EventEmitter();
  private subscriber: Redis | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.events.setMaxListeners(0);
  }

  /** Starts relaying assignments published by any instance. */
  async start(): Promise<void> {
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => {});
    // The duplicate inherits lazyConnect and no offline queue: connect before subscribing. It
    // reconnects and subscribes again on its own after an outage.
    await this.subscriber.connect();
    await this.subscriber.subscribe(`${this.prefix}assignments`);
    this.subscriber.on('message', (_channel: string, message: string) => {
      try {
        this.events.emit('assignment', JSON.parse(message) as AssignmentEvent);
      } catch {
        // Not ours.
      }
    });
  }

  private ticketKey(id: string) {
    return `${this.prefix}ticket:${id}`;
  }
  private queueKey(ladder: string) {
    return `${this.prefix}queue:${ladder}`;
  }

  async add(ticket: StoredTicket): Promise<boolean> {
    const ok = await redisCall(this.redis.set(this.ticketKey(ticket.id), JSON.stringify(ticket), 'NX'));
    if (ok === null) return false;
    await redisCall(this.redis.multi().zadd(this.queueKey(ticket.ladder), ticket.createdAt, ticket.id).sadd(`${this.prefix}queues`, ticket.ladder).exec());
    return true;
  }

  async get(id: string) {
    const raw = await redisCall(this.redis.get(this.ticketKey(id)));
    return raw === null ? undefined : (JSON.parse(raw) as StoredTicket);
  }

  async cancel(id: string) {
    const raw = (await redisCall(this.redis.eval(CANCEL_SCRIPT, 1, this.ticketKey(id), `${this.prefix}queue:`, Date.now(), FINISHED_TTL_MS)) as string | null);
    return raw === null ? undefined : (JSON.parse(raw) as StoredTicket);
  }

  async waiting(ladder: string) {
    const ids = await redisCall(this.redis.zrange(this.queueKey(ladder), 0, -1));
    if (ids.length === 0) return [];
    const raws = await redisCall(this.redis.mget(ids.map((id) => this.ticketKey(id))));
    return raws.filter((raw): raw is string => raw !== null).map((raw) => JSON.parse(raw) as StoredTicket).filter((t) => t.status === 'waiting');
  }

  async queues() {
    return redisCall(this.redis.smembers(`${this.prefix}queues`));
  }

  async assign(ladder: string, matches: Array<{ recent: RecentMatch; tickets: StoredTicket[] }>) {
    const applied: RecentMatch[] = [];
    for (const { recent, tickets } of matches) {
      const args: (string | number)[] = [`${this.prefix}ticket:`, FINISHED_TTL_MS, JSON.stringify(recent)];
      for (const t of tickets) args.push(t.id, JSON.stringify(t));
      const ok = await redisCall(this.redis.eval(ASSIGN_SCRIPT, 2, this.queueKey(ladder), `${this.prefix}recent:${ladder}`, ...args));
      if (ok === 1) {
        applied.push(recent);
        await redisCall(this.redis.publish(`${this.prefix}assignments`, JSON.stringify({ ladder, match: recent } satisfies AssignmentEvent)));
      }
    }
    return applied;
  }

  async recent(ladder: string) {
    const raws = await redisCall(this.redis.lrange(`${this.prefix}recent:${ladder}`, 0, RECENT - 1));
    return raws.map((raw) => JSON.parse(raw) as RecentMatch);
  }

  async withPassLock(ladder: string, work: () => Promise<void>) {
    const key = `${this.prefix}mmlock:${ladder}`;
    const token = randomBytes(12).toString('hex');
    const ok = await redisCall(this.redis.set(key, token, 'PX', 10_000, 'NX'));
    if (ok === null) return false;
    try {
      await work();
    } finally {
      await redisCall(this.redis.eval(UNLOCK_SCRIPT, 1, key, token));
    }
    return true;
  }

  async close() {
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }
}
