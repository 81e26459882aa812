/**
 * Tickets in Redis, shared by every instance (docs/SERVICE.md,
 * "Matchmaking"). Keys under the deployment's prefix, per ladder L:
 *
 * - `ticket:<id>`: the ticket as JSON. A waiting ticket's text starts with
 *   `{"status":"waiting",`; placing or cancelling it rewrites only that
 *   start (no re-encoding of the rest) and gives the key a TTL.
 * - `queue:L` (sorted set: waiting ticket ids by arrival ms),
 *   `queue:L:players` (set: players with a waiting ticket),
 *   `queue:L:regions` (set: every region the queue has seen, at most 31),
 *   `queue:L:figures` (hash: `n` tickets, `age` sum of arrival − epoch,
 *   `r:<region>` tickets, `b:<band>` players),
 *   `queue:L:events` (stream: `a` <the matcher's ticket JSON> on intake, `c` <id> on
 *   cancel), `recent:L` (list), `mmlock:L` (the matchmaking lock).
 *
 * Intake, cancellation and assignment are each one Lua script that changes
 * the queue, the players set, the counters and the event stream together;
 * intake takes a batch of tickets and assignment a chunk of matches per
 * script, each ticket or match as if alone and in order.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ChainableCommander, Redis } from 'ioredis';
import type { Ticket } from '../matchmaking/index.js';
import { UnavailableError } from './errors/index.js';
import { redisCall } from './rankings.js';
import {
  type AddOutcome,
  type AssignmentEvent,
  type Claim,
  type EventBatch,
  FIGURES_EPOCH,
  figuresOf,
  FINISHED_TTL_MS,
  MAX_QUEUE_REGIONS,
  type Placement,
  type PlacementOutcome,
  type QueueEvent,
  type QueueFigures,
  RECENT,
  type RecentMatch,
  regionsOf,
  type StoredTicket,
  type TicketStore,
} from './tickets.js';

const WAITING_PREFIX = '{"status":"waiting",';

const FIGURES_PREFIX = `${WAITING_PREFIX}"figures":`;

/**
 * Takes tickets out of the set of waiting players and the counters (Lua, shared by the cancel and
 * assign scripts), with one command per set and per counter, however many tickets. Only each ticket's
 * `figures` (the first member after the status) is decoded: it ends at the first `},"id":` of the
 * text, which no JSON string can contain (its quote would be escaped).
 */
const LEAVE = `
local function drop(key, field, by)
  if redis.call('HINCRBY', key, field, -by) <= 0 then redis.call('HDEL', key, field) end
end
local function leave(playersKey, figuresKey, raws, created, epoch)
  if #raws == 0 then return end
  local players, regions, bands, age = {}, {}, {}, 0
  for i, raw in ipairs(raws) do
    local close = string.find(raw, '},"id":', ${FIGURES_PREFIX.length + 1}, true)
    local f = cjson.decode(string.sub(raw, ${FIGURES_PREFIX.length + 1}, close))
    for _, p in ipairs(f.players) do players[#players + 1] = p end
    regions[f.region] = (regions[f.region] or 0) + 1
    for _, b in ipairs(f.bands) do bands[b] = (bands[b] or 0) + 1 end
    age = age + (tonumber(created[i]) - epoch)
  end
  for i = 1, #players, 1000 do redis.call('SREM', playersKey, unpack(players, i, math.min(i + 999, #players))) end
  redis.call('HINCRBY', figuresKey, 'n', -#raws)
  redis.call('HINCRBY', figuresKey, 'age', -age)
  for r, c in pairs(regions) do drop(figuresKey, 'r:' .. r, c) end
  for b, c in pairs(bands) do drop(figuresKey, 'b:' .. b, c) end
end`;

/**
 * Queues a batch of tickets of one ladder, each as if alone and in order (a later ticket of the batch
 * sees the earlier ones' ids and players); the counters and the set of queues are written once for
 * the batch. KEYS: queue, players, figures, regions, events, queues, then each ticket's key.
 * ARGV: ladder, events cap, epoch, then per ticket: id, createdAt, stored JSON, player count n, n player
 * ids, region count m, m region names, counted region, band count k, k (band, players) pairs, and where
 * in the stored JSON the matcher's ticket starts (it runs to the last character but one): the event
 * carries only that. Returns per ticket 'ok', 'id', 'player:<index>' or 'regions'.
 */
const INTAKE = `
local out = {}
local queued, age, byRegion, byBand = 0, 0, {}, {}
local cap, epoch = ARGV[2], tonumber(ARGV[3])
local a = 4
for t = 1, #KEYS - 6 do
  local id, created, stored = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local n = tonumber(ARGV[a + 3])
  local players = {unpack(ARGV, a + 4, a + 3 + n)}
  local at = a + 4 + n
  local m = tonumber(ARGV[at])
  local counted = ARGV[at + m + 1]
  local k = tonumber(ARGV[at + m + 2])
  local eventAt = at + m + 3 + 2 * k
  local outcome = 'ok'
  if redis.call('EXISTS', KEYS[6 + t]) == 1 then
    outcome = 'id'
  else
    local waiting = redis.call('SMISMEMBER', KEYS[2], unpack(players))
    for i = 1, n do
      if waiting[i] == 1 then
        outcome = 'player:' .. (i - 1)
        break
      end
    end
  end
  if outcome == 'ok' then
    local regions = {unpack(ARGV, at + 1, at + m)}
    local known = redis.call('SMISMEMBER', KEYS[4], unpack(regions))
    local fresh = 0
    for i = 1, m do
      if known[i] == 0 then fresh = fresh + 1 end
    end
    if fresh > 0 then
      if redis.call('SCARD', KEYS[4]) + fresh > ${MAX_QUEUE_REGIONS} then
        outcome = 'regions'
      else
        redis.call('SADD', KEYS[4], unpack(regions))
      end
    end
  end
  if outcome == 'ok' then
    redis.call('SET', KEYS[6 + t], stored)
    redis.call('ZADD', KEYS[1], created, id)
    redis.call('SADD', KEYS[2], unpack(players))
    queued = queued + 1
    age = age + (tonumber(created) - epoch)
    byRegion[counted] = (byRegion[counted] or 0) + 1
    for i = 1, k do
      local band = ARGV[at + m + 1 + 2 * i]
      byBand[band] = (byBand[band] or 0) + tonumber(ARGV[at + m + 2 + 2 * i])
    end
    redis.call('XADD', KEYS[5], 'MAXLEN', '~', cap, '*', 'a', string.sub(stored, tonumber(ARGV[eventAt]), -2))
  end
  out[t] = outcome
  a = eventAt + 1
end
if queued > 0 then
  redis.call('HINCRBY', KEYS[3], 'n', queued)
  redis.call('HINCRBY', KEYS[3], 'age', age)
  for r, c in pairs(byRegion) do redis.call('HINCRBY', KEYS[3], 'r:' .. r, c) end
  for b, c in pairs(byBand) do redis.call('HINCRBY', KEYS[3], 'b:' .. b, c) end
  redis.call('SADD', KEYS[6], ARGV[1])
end
return out`;

/** KEYS: ticket, queue, players, figures, events. ARGV: id, now, ttl, events cap, epoch. Returns the ticket's JSON after, or nil. */
const CANCEL = `${LEAVE}
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
if string.sub(raw, 1, ${WAITING_PREFIX.length}) ~= '${WAITING_PREFIX}' then return raw end
local created = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not created then return raw end
redis.call('ZREM', KEYS[2], ARGV[1])
leave(KEYS[3], KEYS[4], {raw}, {created}, tonumber(ARGV[5]))
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'c', ARGV[1])
local out = '{"status":"cancelled","endedAt":' .. ARGV[2] .. ',' .. string.sub(raw, ${WAITING_PREFIX.length + 1})
redis.call('SET', KEYS[1], out, 'PX', ARGV[3])
return out`;

/**
 * Places a chunk of matches, each as if alone and in order: a match is placed only if every one of
 * its tickets still waits; the counters and the players set are written once for the chunk, the
 * placed matches pushed to the recent list and published in one message.
 * KEYS: queue, players, figures, lock, recent.
 * ARGV: lock value, ticket key prefix, ttl, now, epoch, recent list length, channel, ladder (as JSON),
 * then per match: its body (JSON members without braces), its recent entry (JSON), ticket count c,
 * c (ticket id, team) pairs. Returns -1 when the lock is not ours (nothing placed), else per match
 * 1 placed or 0 a ticket had left.
 */
const ASSIGN = `${LEAVE}
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return -1 end
local out, placed = {}, {}
local leaving, leavingCreated = {}, {}
local a = 9
while a <= #ARGV do
  local body, recent, c = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  local ids, teams, keys = {}, {}, {}
  for i = 1, c do
    local at = a + 1 + 2 * i
    ids[i] = ARGV[at]
    teams[i] = ARGV[at + 1]
    keys[i] = ARGV[2] .. ARGV[at]
  end
  a = a + 3 + 2 * c
  local created = redis.call('ZMSCORE', KEYS[1], unpack(ids))
  local all = true
  for i = 1, c do
    if not created[i] then
      all = false
      break
    end
  end
  if all then
    redis.call('ZREM', KEYS[1], unpack(ids))
    local raws = redis.call('MGET', unpack(keys))
    for i = 1, c do
      local raw = raws[i]
      if raw and string.sub(raw, 1, ${WAITING_PREFIX.length}) == '${WAITING_PREFIX}' then
        leaving[#leaving + 1] = raw
        leavingCreated[#leavingCreated + 1] = created[i]
        redis.call('SET', keys[i], '{"status":"matched","endedAt":' .. ARGV[4] .. ',"match":{"team":' .. teams[i] .. ',' .. body .. '},' .. string.sub(raw, ${WAITING_PREFIX.length + 1}), 'PX', ARGV[3])
      end
    end
    placed[#placed + 1] = recent
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
leave(KEYS[2], KEYS[3], leaving, leavingCreated, tonumber(ARGV[5]))
if #placed > 0 then
  local keep = tonumber(ARGV[6])
  local from = math.max(1, #placed - keep + 1)
  redis.call('LPUSH', KEYS[5], unpack(placed, from, #placed))
  redis.call('LTRIM', KEYS[5], 0, keep - 1)
  redis.call('PUBLISH', ARGV[7], '{"ladder":' .. ARGV[8] .. ',"matches":[' .. table.concat(placed, ',') .. ']}')
end
return out`;

/** KEYS: lock. ARGV: value held, new value, ttl. Renews (with a new value) while the lock is ours. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
/** KEYS: lock, events. ARGV: value held, first id to keep. */
const TRIM = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('XTRIM', KEYS[2], 'MINID', '~', ARGV[2]) end return -1`;
/** KEYS: queues. ARGV: key prefix. Every ladder that has had tickets and its waiting tickets, flat. */
const WAITING = `
local out = {}
for i, ladder in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  out[2 * i - 1] = ladder
  out[2 * i] = redis.call('HGET', ARGV[1] .. 'queue:' .. ladder .. ':figures', 'n') or '0'
end
return out`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

type Script = (...args: Array<string | number>) => Promise<unknown>;

interface PendingAdd {
  ticket: StoredTicket;
  resolve: (outcome: AddOutcome) => void;
  reject: (error: unknown) => void;
}

/** Tickets per intake script at most (a batch of more is split), so one script never holds Redis long. */
const INTAKE_CHUNK = 200;
/** Tickets a lock holder keeps for its own intake events, per ladder (see ownEvents). */
const OWN_EVENTS = 50_000;
interface Scripts {
  ladderIntake: Script;
  ladderCancel: Script;
  ladderAssign: Script;
  ladderRenew: Script;
  ladderTrim: Script;
  ladderRelease: Script;
  ladderWaiting: Script;
}

export interface RedisTicketOptions {
  /** Milliseconds a matchmaking lock lasts unless renewed. @default 10000 */
  lockMs?: number;
  /** Events kept in a ladder's stream at most (about), when no lock holder trims it. @default 1000000 */
  eventsCap?: number;
}

/** The stream id just after `id` (MINID keeps ids ≥ it). */
function nextId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq) + 1}`;
}

/** The last id and the count of entries ever added, from an XINFO STREAM reply. */
function streamInfo(reply: unknown[]): { lastId: string; added: number } {
  const lastAt = reply.indexOf('last-generated-id');
  const addedAt = reply.indexOf('entries-added');
  return { lastId: lastAt === -1 ? '0-0' : String(reply[lastAt + 1]), added: addedAt === -1 ? 0 : Number(reply[addedAt + 1]) };
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
  /** The last decoded recent list of each ladder (see parseRecent). */
  private readonly recentCache = new Map<string, { head: string | undefined; length: number; parsed: RecentMatch[] }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    options: RedisTicketOptions = {},
  ) {
    this.events.setMaxListeners(0);
    this.lockMs = options.lockMs ?? 10_000;
    this.eventsCap = options.eventsCap ?? 1_000_000;
    // The number of keys goes first: one key per ticket of the batch.
    redis.defineCommand('ladderIntake', { lua: INTAKE });
    redis.defineCommand('ladderCancel', { numberOfKeys: 5, lua: CANCEL });
    redis.defineCommand('ladderAssign', { numberOfKeys: 5, lua: ASSIGN });
    redis.defineCommand('ladderRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('ladderTrim', { numberOfKeys: 2, lua: TRIM });
    redis.defineCommand('ladderRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('ladderWaiting', { numberOfKeys: 1, lua: WAITING });
    this.scripts = redis as unknown as Scripts;
    redis.on('ready', () => void this.learnClientId());
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
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => {});
    // The duplicate inherits lazyConnect and no offline queue: connect before subscribing. It
    // reconnects and subscribes again on its own after an outage.
    await this.subscriber.connect();
    await this.subscriber.subscribe(this.key('assignments'));
    this.subscriber.on('message', (_channel: string, message: string) => {
      // Nobody streams assignments from this instance: nothing to decode them for.
      if (this.events.listenerCount('assignment') === 0) return;
      try {
        // One message carries the matches a turn placed (an instance of an earlier version sends one each).
        const published = JSON.parse(message) as AssignmentEvent | { ladder: string; matches: RecentMatch[] };
        if ('matches' in published) for (const match of published.matches) this.events.emit('assignment', { ladder: published.ladder, match } satisfies AssignmentEvent);
        else this.events.emit('assignment', published);
      } catch {
        // Not ours.
      }
    });
  }

  private key(name: string): string {
    return this.prefix + name;
  }
  private ticketKey(id: string) {
    return `${this.prefix}ticket:${id}`;
  }
  private queueKeys(ladder: string) {
    const queue = `${this.prefix}queue:${ladder}`;
    return { queue, players: `${queue}:players`, figures: `${queue}:figures`, regions: `${queue}:regions`, events: `${queue}:events`, recent: `${this.prefix}recent:${ladder}`, lock: `${this.prefix}mmlock:${ladder}` };
  }

  add(ticket: StoredTicket): Promise<AddOutcome> {
    return new Promise((resolve, reject) => {
      // Tickets created in the same event-loop turn go to Redis in one pipeline.
      if (this.pendingAdds.length === 0) setImmediate(() => void this.flushAdds());
      this.pendingAdds.push({ ticket, resolve, reject });
    });
  }

  private async flushAdds(): Promise<void> {
    const batch = this.pendingAdds;
    this.pendingAdds = [];
    // One intake script per ladder (and per INTAKE_CHUNK tickets) for the whole batch, all in one round trip.
    const byLadder = new Map<string, PendingAdd[]>();
    for (const p of batch) {
      const group = byLadder.get(p.ticket.ladder);
      if (group) group.push(p);
      else byLadder.set(p.ticket.ladder, [p]);
    }
    const pipeline = this.redis.pipeline() as ChainableCommander & Record<string, (...args: Array<string | number>) => unknown>;
    const chunks: Array<{ ladder: string; adds: PendingAdd[]; events: string[] }> = [];
    for (const [ladder, adds] of byLadder) {
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
        if (error || outcome === undefined) p.reject(new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error ?? new Error('no reply') }));
        else if (outcome === 'ok') {
          queued.add(ladder);
          if (own !== undefined) {
            own.set(events[i]!, p.ticket.ticket);
            if (own.size > OWN_EVENTS) own.delete(own.keys().next().value!);
          }
          p.resolve({ ok: true });
        } else if (outcome === 'id') p.resolve({ ok: false, reason: 'id' });
        else if (outcome === 'regions') p.resolve({ ok: false, reason: 'regions' });
        else p.resolve({ ok: false, reason: 'player', index: Number(outcome.slice('player:'.length)) });
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
    const keys: string[] = [k.queue, k.players, k.figures, k.regions, k.events, this.key('queues')];
    const args: Array<string | number> = [ladder, this.eventsCap, FIGURES_EPOCH];
    for (const { ticket } of adds) {
      keys.push(this.ticketKey(ticket.id));
      const figures = figuresOf(ticket.ticket);
      // The text starts with the waiting status, which placement and cancellation rewrite in place.
      const head = `${FIGURES_PREFIX}${JSON.stringify(figures)},"id":${JSON.stringify(ticket.id)},"ladder":${JSON.stringify(ticket.ladder)},"createdAt":${ticket.createdAt}${ticket.mode !== undefined ? `,"mode":${JSON.stringify(ticket.mode)}` : ''},"ticket":`;
      const event = JSON.stringify(ticket.ticket);
      events.push(event);
      args.push(ticket.id, ticket.createdAt, `${head}${event}}`, ticket.ticket.players.length);
      for (const p of ticket.ticket.players) args.push(p.id);
      const regions = regionsOf(ticket.ticket);
      args.push(regions.length);
      for (const r of regions) args.push(r);
      args.push(figures.region);
      const bands = new Map<number, number>();
      for (const band of figures.bands) bands.set(band, (bands.get(band) ?? 0) + 1);
      args.push(bands.size);
      for (const [band, players] of bands) args.push(band, players);
      // Lua counts bytes from 1.
      args.push(Buffer.byteLength(head) + 1);
    }
    return [keys.length, ...keys, ...args];
  }

  async get(id: string) {
    const raw = await redisCall(this.redis.get(this.ticketKey(id)));
    return raw === null ? undefined : (JSON.parse(raw) as StoredTicket);
  }

  async getMany(ids: readonly string[]) {
    if (ids.length === 0) return [];
    const raws = await redisCall(this.redis.mget(ids.map((id) => this.ticketKey(id))));
    return raws.map((raw) => (raw === null ? undefined : (JSON.parse(raw) as StoredTicket)));
  }

  async cancel(ticket: StoredTicket) {
    const k = this.queueKeys(ticket.ladder);
    const raw = (await redisCall(this.scripts.ladderCancel(this.ticketKey(ticket.id), k.queue, k.players, k.figures, k.events, ticket.id, Date.now(), FINISHED_TTL_MS, this.eventsCap, FIGURES_EPOCH))) as string | null;
    return raw === null ? undefined : (JSON.parse(raw) as StoredTicket);
  }

  async figures(ladder: string): Promise<QueueFigures> {
    return (await this.readQueue(ladder, false)).figures;
  }

  async summary(ladder: string) {
    return this.readQueue(ladder, true);
  }

  /** The counters and the oldest arrival, and with `withRecent` the recent list, in one MULTI. */
  private async readQueue(ladder: string, withRecent: boolean): Promise<{ figures: QueueFigures; recent: RecentMatch[] }> {
    const k = this.queueKeys(ladder);
    const multi = this.redis.multi().call('HGETALL', k.figures).zrange(k.queue, 0, 0, 'WITHSCORES');
    if (withRecent) multi.lrange(k.recent, 0, RECENT - 1);
    const results = (await redisCall(multi.exec())) ?? [];
    for (const [error] of results) if (error) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
    const flat = results[0]![1] as string[];
    const oldest = results[1]![1] as string[];
    const figures: QueueFigures = { waiting: 0, byRegion: new Map(), byBand: new Array<number>(10).fill(0), createdSum: 0, oldestCreatedAt: oldest.length === 2 ? Number(oldest[1]) : null };
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
    return { figures, recent: withRecent ? this.parseRecent(ladder, results[2]![1] as string[]) : [] };
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
    return this.parseRecent(ladder, await redisCall(this.redis.lrange(this.queueKeys(ladder).recent, 0, RECENT - 1)));
  }

  /**
   * The recent list decoded, reusing the last decoding while the list is unchanged: matches are
   * only pushed at its head (each with a new id) and it is only trimmed after a push, so the same
   * head and length mean the same list.
   */
  private parseRecent(ladder: string, raws: string[]): RecentMatch[] {
    const cached = this.recentCache.get(ladder);
    if (cached !== undefined && cached.length === raws.length && cached.head === raws[0]) return cached.parsed;
    const parsed = raws.map((raw) => JSON.parse(raw) as RecentMatch);
    this.recentCache.set(ladder, { head: raws[0], length: raws.length, parsed });
    return parsed;
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

  async snapshot(ladder: string, onBatch: (tickets: Ticket[]) => void | Promise<void>): Promise<string> {
    const k = this.queueKeys(ladder);
    // The position first: every change after it is in the stream, so a ticket the scan misses or sees
    // in an older state is put right by the events that follow.
    let cursor = '0-0@0';
    try {
      const info = streamInfo((await this.redis.call('XINFO', 'STREAM', k.events)) as unknown[]);
      cursor = `${info.lastId}@${info.added}`;
    } catch (error) {
      // No stream yet: every event will come after it.
      if (!String((error as Error).message).includes('no such key')) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
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
        const batch: Ticket[] = [];
        for (const raw of raws) if (raw !== null && raw.startsWith(WAITING_PREFIX)) batch.push((JSON.parse(raw) as StoredTicket).ticket);
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
    const results = (await redisCall(this.redis.multi().xread('COUNT', max, 'STREAMS', k.events, from).hget(k.figures, 'n').call('XINFO', 'STREAM', k.events).exec())) ?? [];
    const [readError, read] = results[0] ?? [null, null];
    const [countError, count] = results[1] ?? [null, null];
    if (readError || countError) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: readError ?? countError });
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
    }
    const consumed = added + entries.length;
    const complete = entries.length < max;
    const gap = total < consumed || (complete && consumed < total);
    return { events, cursor: `${next}@${consumed}`, waiting: Number(count ?? 0), complete, gap };
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
    const args: Array<string | number> = [held, this.key('ticket:'), FINISHED_TTL_MS, Date.now(), FIGURES_EPOCH, RECENT, this.key('assignments'), JSON.stringify(ladder)];
    for (const { match, recent, tickets } of placements) {
      args.push(JSON.stringify(match).slice(1, -1), JSON.stringify(recent), tickets.length);
      for (const t of tickets) args.push(t.id, t.team);
    }
    const reply = (await redisCall(this.scripts.ladderAssign(k.queue, k.players, k.figures, k.lock, k.recent, ...args))) as number | number[];
    if (reply === -1) {
      this.dropLock(ladder);
      return placements.map(() => 'lost');
    }
    return placements.map((_, i): PlacementOutcome => ((reply as number[])[i] === 1 ? 'placed' : 'gone'));
  }

  async close() {
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }
}
