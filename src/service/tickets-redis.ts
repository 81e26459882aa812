/**
 * Tickets in Redis, shared by every instance (docs/SERVICE.md,
 * "Matchmaking"). Keys under the deployment's prefix, per ladder L:
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
import type { BackfillInput, Ticket } from '../matchmaking/index.js';
import { TicketLostError, UnavailableError } from './errors/index.js';
import { redisCall } from './rankings.js';
import {
  type AddOutcome,
  type AssignmentEvent,
  type BackfillAddOutcome,
  type BackfillPlacement,
  backfillPlayers,
  type Claim,
  type EventBatch,
  type ExpiredEvent,
  type ExpiryCutoffs,
  FIGURES_EPOCH,
  type FormedMatchRecord,
  type IntakeLimits,
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
  type StoredBackfill,
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
local function leave(playersKey, figuresKey, regionsKey, ownersKey, raws, created, epoch)
  if #raws == 0 then return end
  local players, regions, bands, named, owners, age = {}, {}, {}, {}, {}, 0
  for i, raw in ipairs(raws) do
    local close = string.find(raw, '},"id":', ${FIGURES_PREFIX.length + 1}, true)
    local f = cjson.decode(string.sub(raw, ${FIGURES_PREFIX.length + 1}, close))
    for _, p in ipairs(f.players) do players[#players + 1] = p end
    regions[f.region] = (regions[f.region] or 0) + 1
    for _, b in ipairs(f.bands) do bands[b] = (bands[b] or 0) + 1 end
    if type(f.regions) == 'table' then
      for _, r in ipairs(f.regions) do named[r] = (named[r] or 0) + 1 end
    end
    if type(f.owner) == 'string' then owners[f.owner] = (owners[f.owner] or 0) + 1 end
    age = age + (tonumber(created[i]) - epoch)
  end
  for i = 1, #players, 1000 do redis.call('SREM', playersKey, unpack(players, i, math.min(i + 999, #players))) end
  redis.call('HINCRBY', figuresKey, 'n', -#raws)
  redis.call('HINCRBY', figuresKey, 'age', -age)
  for r, c in pairs(regions) do drop(figuresKey, 'r:' .. r, c) end
  for b, c in pairs(bands) do drop(figuresKey, 'b:' .. b, c) end
  for r, c in pairs(named) do drop(regionsKey, r, c) end
  for o, c in pairs(owners) do drop(ownersKey, o, c) end
end`;

/**
 * Queues a batch of tickets of one ladder, each as if alone and in order (a later ticket of the batch
 * sees the earlier ones' ids and players); the counters and the set of queues are written once for
 * the batch. KEYS: queue, players, figures, regions (counts), events, queues, playing, owners, then each
 * ticket's key. ARGV: ladder, events cap, epoch, the ladder's cap on waiting tickets (-1: none), then per
 * ticket: id, createdAt, stored JSON, owner ('' none), the owner's cap (-1: none), player count n, n player
 * ids, region count m, m region names, counted region, band count k, k (band, players) pairs, and where
 * in the stored JSON the matcher's ticket starts (it runs to the last character but one): the event
 * carries only that. Returns per ticket 'ok', 'id', 'player:<index>', 'playing:<index>:<backfill>',
 * 'cap:ladder', 'cap:key' or 'regions'.
 */
const INTAKE = `
local out = {}
local queued, age, byRegion, byBand = 0, 0, {}, {}
local cap, epoch = ARGV[2], tonumber(ARGV[3])
local ladderCap = tonumber(ARGV[4])
local waitingBefore = tonumber(redis.call('HGET', KEYS[3], 'n') or '0')
local a = 5
for t = 1, #KEYS - 8 do
  local id, created, stored, owner, ownerCap = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], tonumber(ARGV[a + 4])
  a = a + 2
  local n = tonumber(ARGV[a + 3])
  local players = {unpack(ARGV, a + 4, a + 3 + n)}
  local at = a + 4 + n
  local m = tonumber(ARGV[at])
  local counted = ARGV[at + m + 1]
  local k = tonumber(ARGV[at + m + 2])
  local eventAt = at + m + 3 + 2 * k
  local outcome = 'ok'
  if redis.call('EXISTS', KEYS[8 + t]) == 1 then
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
    local playing = redis.call('HMGET', KEYS[7], unpack(players))
    for i = 1, n do
      if playing[i] then
        outcome = 'playing:' .. (i - 1) .. ':' .. playing[i]
        break
      end
    end
  end
  if outcome == 'ok' and ladderCap >= 0 and waitingBefore + queued >= ladderCap then outcome = 'cap:ladder' end
  if outcome == 'ok' and owner ~= '' and ownerCap >= 0 and tonumber(redis.call('HGET', KEYS[8], owner) or '0') >= ownerCap then outcome = 'cap:key' end
  if outcome == 'ok' then
    local regions = {unpack(ARGV, at + 1, at + m)}
    local known = redis.call('HMGET', KEYS[4], unpack(regions))
    local fresh = 0
    for i = 1, m do
      if not known[i] then fresh = fresh + 1 end
    end
    if fresh > 0 and redis.call('HLEN', KEYS[4]) + fresh > ${MAX_QUEUE_REGIONS} then
      outcome = 'regions'
    else
      for i = 1, m do redis.call('HINCRBY', KEYS[4], regions[i], 1) end
    end
  end
  if outcome == 'ok' then
    if owner ~= '' then redis.call('HINCRBY', KEYS[8], owner, 1) end
    redis.call('SET', KEYS[8 + t], stored)
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

/** KEYS: ticket, queue, players, figures, events, regions, owners. ARGV: id, now, ttl, events cap, epoch. Returns the ticket's JSON after, or nil. */
const CANCEL = `${LEAVE}
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
if string.sub(raw, 1, ${WAITING_PREFIX.length}) ~= '${WAITING_PREFIX}' then return raw end
local created = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not created then return raw end
redis.call('ZREM', KEYS[2], ARGV[1])
leave(KEYS[3], KEYS[4], KEYS[6], KEYS[7], {raw}, {created}, tonumber(ARGV[5]))
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'c', ARGV[1])
local out = '{"status":"cancelled","endedAt":' .. ARGV[2] .. ',' .. string.sub(raw, ${WAITING_PREFIX.length + 1})
redis.call('SET', KEYS[1], out, 'PX', ARGV[3])
return out`;

/**
/**
 * Places tickets (Lua, shared by the assign and fill scripts): the (ticket id, team) pairs are ARGV[from],
 * ARGV[from + 1], … to the end. Unless every one is still in the queue, changes nothing and returns false;
 * else takes them out of the queue, the players set and the counters and rewrites each as matched with
 * `body` (JSON members without braces) and its team.
 */
const PLACE = `${LEAVE}
local function place(queueKey, playersKey, figuresKey, regionsKey, ownersKey, prefix, ttl, now, body, epoch, from)
  local ids, teams, keys = {}, {}, {}
  for i = from, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
    teams[#teams + 1] = ARGV[i + 1]
    keys[#keys + 1] = prefix .. ARGV[i]
  end
  local created = redis.call('ZMSCORE', queueKey, unpack(ids))
  for i = 1, #ids do
    if not created[i] then return false end
  end
  redis.call('ZREM', queueKey, unpack(ids))
  local raws = redis.call('MGET', unpack(keys))
  local leaving, leavingCreated = {}, {}
  for i = 1, #ids do
    local raw = raws[i]
    if raw and string.sub(raw, 1, ${WAITING_PREFIX.length}) == '${WAITING_PREFIX}' then
      leaving[#leaving + 1] = raw
      leavingCreated[#leavingCreated + 1] = created[i]
      redis.call('SET', keys[i], '{"status":"matched","endedAt":' .. now .. ',"match":{"team":' .. teams[i] .. ',' .. body .. '},' .. string.sub(raw, ${WAITING_PREFIX.length + 1}), 'PX', ttl)
    end
  end
  leave(playersKey, figuresKey, regionsKey, ownersKey, leaving, leavingCreated, epoch)
  return true
end`;

/**
 * Places a chunk of matches, each as if alone and in order: a match is placed only if every one of
 * its tickets still waits; the counters and the players set are written once for the chunk, the
 * placed matches pushed to the recent list and published in one message.
 * Each placed match is recorded as formed (`formed:<match id>`, for backfills to name).
 * KEYS: queue, players, figures, lock, recent, regions, owners.
 * ARGV: lock value, ticket key prefix, ttl, now, epoch, recent list length, channel, ladder (as JSON),
 * formed-match key prefix, then per match: its body (JSON members without braces), its recent entry
 * (JSON), its id, its team count, ticket count c, c (ticket id, team) pairs. Returns -1 when the lock is
 * not ours (nothing placed), else per match 1 placed or 0 a ticket had left.
 */
const ASSIGN = `${LEAVE}
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return -1 end
local out, placed = {}, {}
local leaving, leavingCreated = {}, {}
local a = 10
while a <= #ARGV do
  local body, recent, matchId, teamCount, c = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], tonumber(ARGV[a + 4])
  a = a + 2
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
    redis.call('SET', ARGV[9] .. matchId, '{"ladder":' .. ARGV[8] .. ',"teams":' .. teamCount .. '}', 'PX', ARGV[3])
    placed[#placed + 1] = recent
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
leave(KEYS[2], KEYS[3], KEYS[6], KEYS[7], leaving, leavingCreated, tonumber(ARGV[5]))
if #placed > 0 then
  local keep = tonumber(ARGV[6])
  local from = math.max(1, #placed - keep + 1)
  redis.call('LPUSH', KEYS[5], unpack(placed, from, #placed))
  redis.call('LTRIM', KEYS[5], 0, keep - 1)
  redis.call('PUBLISH', ARGV[7], '{"ladder":' .. ARGV[8] .. ',"matches":[' .. table.concat(placed, ',') .. ']}')
end
return out`;

/**
 * KEYS: backfill, players, playing, backfills, events, queues.
 * ARGV: id, createdAt, ladder, record JSON, players JSON, events cap, event payload, team count k, then
 * per team its player count and its players. Returns 'ok', 'id', 'waiting:<team>:<index>' or
 * 'playing:<team>:<index>:<backfill>'.
 */
const BACKFILL_INTAKE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'id' end
local k = tonumber(ARGV[8])
local at = 9
local all, where = {}, {}
for t = 1, k do
  local n = tonumber(ARGV[at])
  for i = 1, n do
    all[#all + 1] = ARGV[at + i]
    where[#where + 1] = (t - 1) .. ':' .. (i - 1)
  end
  at = at + n + 1
end
if #all > 0 then
  local waiting = redis.call('SMISMEMBER', KEYS[2], unpack(all))
  for i = 1, #all do
    if waiting[i] == 1 then return 'waiting:' .. where[i] end
  end
  local playing = redis.call('HMGET', KEYS[3], unpack(all))
  for i = 1, #all do
    if playing[i] then return 'playing:' .. where[i] .. ':' .. playing[i] end
  end
  for i = 1, #all do redis.call('HSET', KEYS[3], all[i], ARGV[1]) end
end
redis.call('HSET', KEYS[1], 'status', 'waiting', 'fills', 0, 'json', ARGV[4], 'players', ARGV[5])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[6], '*', 'b', ARGV[7])
redis.call('SADD', KEYS[6], ARGV[3])
return 'ok'`;

/**
 * Closes an open backfill (Lua, shared by the cancel and fill scripts): its status and end, out of the
 * open set, its players (a JSON array) out of the playing hash, and a TTL.
 */
const CLOSE = `
local function close(backfillKey, backfillsKey, playingKey, id, status, now, ttl, playersJson)
  redis.call('HSET', backfillKey, 'status', status, 'endedAt', now)
  redis.call('ZREM', backfillsKey, id)
  local players = cjson.decode(playersJson)
  for _, p in ipairs(players) do
    if redis.call('HGET', playingKey, p) == id then redis.call('HDEL', playingKey, p) end
  end
  redis.call('PEXPIRE', backfillKey, ttl)
end`;

/** KEYS: backfill, backfills, playing, events. ARGV: id, now, ttl, events cap. Returns [status, fills, json, endedAt] after, or nil. */
const BACKFILL_CANCEL = `${CLOSE}
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return false end
if status == 'waiting' then
  close(KEYS[1], KEYS[2], KEYS[3], ARGV[1], 'cancelled', ARGV[2], ARGV[3], redis.call('HGET', KEYS[1], 'players'))
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'u', ARGV[1])
end
return redis.call('HMGET', KEYS[1], 'status', 'fills', 'json', 'endedAt')`;

/**
 * KEYS: queue, players, figures, lock, backfill, backfills, playing, regions, owners.
 * ARGV: lock value, ticket key prefix, ttl, now, match body, epoch, backfill id, fills seen, record JSON
 * after, players JSON after, filled (1 or 0), newcomer count m, m newcomer ids, then (ticket id, team)
 * pairs. Returns 1 placed, 0 a ticket left or the backfill is closed or changed, -1 the lock is not ours.
 */
const FILL = `${PLACE}
${CLOSE}
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return -1 end
local state = redis.call('HMGET', KEYS[5], 'status', 'fills')
if state[1] ~= 'waiting' or state[2] ~= ARGV[8] then return 0 end
local m = tonumber(ARGV[12])
if not place(KEYS[1], KEYS[2], KEYS[3], KEYS[8], KEYS[9], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), 13 + m) then return 0 end
redis.call('HSET', KEYS[5], 'fills', tonumber(state[2]) + 1, 'json', ARGV[9], 'players', ARGV[10])
if ARGV[11] == '1' then
  close(KEYS[5], KEYS[6], KEYS[7], ARGV[7], 'filled', ARGV[4], ARGV[3], ARGV[10])
else
  for i = 13, 12 + m do redis.call('HSET', KEYS[7], ARGV[i], ARGV[7]) end
end
return 1`;

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
/**
 * Forgets a ladder's queue once nothing waits in it: nothing is lost if a ticket arrived meanwhile
 * (returns 0, and the caller cancels again). KEYS: queue, backfills, players, figures, regions,
 * events, playing, recent, queues, owners, the set of regions of earlier versions. ARGV: ladder.
 * Returns 1 when forgotten.
 */
const FORGET = `
if redis.call('ZCARD', KEYS[1]) > 0 or redis.call('ZCARD', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[10], KEYS[11])
redis.call('SREM', KEYS[9], ARGV[1])
return 1`;

/**
 * Ends what is past its time-to-live (at most ARGV[9] tickets and as many backfills per call), each
 * as its cancellation would, with the status 'expired'; announces them on the expiry channel.
 * KEYS: queue, players, figures, regions, owners, events, backfills, playing.
 * ARGV: ticket key prefix, backfill key prefix, ticket cutoff, backfill cutoff, now, ttl, events cap,
 * epoch, limit, channel, ladder (as JSON). Returns [expired ticket ids, expired backfill ids, the
 * oldest waiting ticket's arrival or '', the oldest open backfill's creation or ''].
 */
const EXPIRE = `${LEAVE}
${CLOSE}
local flat = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[3], 'BYSCORE', 'LIMIT', 0, ARGV[9], 'WITHSCORES')
local tickets, leaving, leavingCreated = {}, {}, {}
for i = 1, #flat, 2 do
  local id = flat[i]
  local key = ARGV[1] .. id
  local raw = redis.call('GET', key)
  redis.call('ZREM', KEYS[1], id)
  if raw and string.sub(raw, 1, ${WAITING_PREFIX.length}) == '${WAITING_PREFIX}' then
    leaving[#leaving + 1] = raw
    leavingCreated[#leavingCreated + 1] = flat[i + 1]
    redis.call('SET', key, '{"status":"expired","endedAt":' .. ARGV[5] .. ',' .. string.sub(raw, ${WAITING_PREFIX.length + 1}), 'PX', ARGV[6])
    redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[7], '*', 'c', id)
    tickets[#tickets + 1] = id
  end
end
leave(KEYS[2], KEYS[3], KEYS[4], KEYS[5], leaving, leavingCreated, tonumber(ARGV[8]))
local backfills = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[7], '-inf', ARGV[4], 'BYSCORE', 'LIMIT', 0, ARGV[9])) do
  local key = ARGV[2] .. id
  if redis.call('HGET', key, 'status') == 'waiting' then
    close(key, KEYS[7], KEYS[8], id, 'expired', ARGV[5], ARGV[6], redis.call('HGET', key, 'players'))
    redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[7], '*', 'u', id)
    backfills[#backfills + 1] = id
  else
    redis.call('ZREM', KEYS[7], id)
  end
end
if #tickets > 0 or #backfills > 0 then
  redis.call('PUBLISH', ARGV[10], cjson.encode({ladder = cjson.decode(ARGV[11]), tickets = tickets, backfills = backfills}))
end
local oldestTicket = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or ''
local oldestBackfill = redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')[2] or ''
return {tickets, backfills, oldestTicket, oldestBackfill}`;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

type Script = (...args: Array<string | number>) => Promise<unknown>;

interface PendingAdd {
  ticket: StoredTicket;
  limits: IntakeLimits | undefined;
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
  ladderBackfillIntake: Script;
  ladderBackfillCancel: Script;
  ladderFill: Script;
  ladderRenew: Script;
  ladderTrim: Script;
  ladderRelease: Script;
  ladderForget: Script;
  ladderWaiting: Script;
  ladderEpoch: Script;
  ladderExpire: Script;
}

export interface RedisTicketOptions {
  /** Milliseconds a matchmaking lock lasts unless renewed. @default 10000 */
  lockMs?: number;
  /** Events kept in a ladder's stream at most (about), when no lock holder trims it. @default 1000000 */
  eventsCap?: number;
}

/**
 * Returns the epoch, writing `ARGV[1]` first when there is none (an empty Redis); when the caller
 * knew another (`ARGV[2]`, '' for none), the data were lost since: `epoch:lost` is set to `ARGV[3]`
 * (ms) unless another instance noticed first, for `ARGV[4]` ms. KEYS: epoch, epoch:lost.
 */
const EPOCH = `
local current = redis.call('GET', KEYS[1])
if not current then
  current = ARGV[1]
  redis.call('SET', KEYS[1], current)
end
if ARGV[2] ~= '' and ARGV[2] ~= current then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4], 'NX') end
return current`;

/** A ticket id Ladder issued: a UUID, a dot, the epoch it was issued under (12 hex digits). */
const ISSUED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.([0-9a-f]{12})$/;

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
  /** The epoch of the shared state this instance last saw (see EPOCH); undefined before start. */
  private epoch: string | undefined;
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
    redis.defineCommand('ladderCancel', { numberOfKeys: 7, lua: CANCEL });
    redis.defineCommand('ladderAssign', { numberOfKeys: 7, lua: ASSIGN });
    redis.defineCommand('ladderBackfillIntake', { numberOfKeys: 6, lua: BACKFILL_INTAKE });
    redis.defineCommand('ladderBackfillCancel', { numberOfKeys: 4, lua: BACKFILL_CANCEL });
    redis.defineCommand('ladderFill', { numberOfKeys: 9, lua: FILL });
    redis.defineCommand('ladderRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('ladderTrim', { numberOfKeys: 2, lua: TRIM });
    redis.defineCommand('ladderRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('ladderForget', { numberOfKeys: 11, lua: FORGET });
    redis.defineCommand('ladderWaiting', { numberOfKeys: 1, lua: WAITING });
    redis.defineCommand('ladderEpoch', { numberOfKeys: 2, lua: EPOCH });
    redis.defineCommand('ladderExpire', { numberOfKeys: 8, lua: EXPIRE });
    this.scripts = redis as unknown as Scripts;
    redis.on('ready', () => {
      void this.learnClientId();
      // After a reconnect: a Redis that came back empty gets a new epoch, and the loss is recorded.
      if (this.epoch !== undefined) void this.checkEpoch().catch(() => {});
    });
  }

  /** Reads the shared epoch (writing one into an empty Redis) and remembers it. */
  private async checkEpoch(): Promise<string> {
    const current = String(await this.scripts.ladderEpoch(this.key('epoch'), this.key('epoch:lost'), randomBytes(6).toString('hex'), this.epoch ?? '', Date.now(), FINISHED_TTL_MS));
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
    const expirations = this.key('expirations');
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === expirations) {
        if (this.events.listenerCount('expired') === 0) return;
        try {
          const published = JSON.parse(message) as { ladder: string; tickets?: unknown; backfills?: unknown };
          // Lua's cjson writes an empty list as {}.
          const list = (value: unknown) => (Array.isArray(value) ? (value as string[]) : []);
          this.events.emit('expired', { ladder: published.ladder, tickets: list(published.tickets), backfills: list(published.backfills) } satisfies ExpiredEvent);
        } catch {
          // Not ours.
        }
        return;
      }
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
    return {
      queue,
      players: `${queue}:players`,
      figures: `${queue}:figures`,
      regions: `${queue}:regioncount`,
      /** The set of every region seen, of earlier versions (deleted with the queue). */
      regionSet: `${queue}:regions`,
      owners: `${queue}:owners`,
      events: `${queue}:events`,
      backfills: `${queue}:backfills`,
      playing: `${queue}:playing`,
      recent: `${this.prefix}recent:${ladder}`,
      lock: `${this.prefix}mmlock:${ladder}`,
    };
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
        else if (outcome === 'cap:ladder' || outcome === 'cap:key') p.resolve({ ok: false, reason: 'cap', cap: outcome === 'cap:key' ? 'key' : 'ladder' });
        else if (outcome.startsWith('playing:')) {
          const rest = outcome.slice('playing:'.length);
          const colon = rest.indexOf(':');
          p.resolve({ ok: false, reason: 'playing', index: Number(rest.slice(0, colon)), backfill: rest.slice(colon + 1) });
        } else p.resolve({ ok: false, reason: 'player', index: Number(outcome.slice('player:'.length)) });
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
    const keys: string[] = [k.queue, k.players, k.figures, k.regions, k.events, this.key('queues'), k.playing, k.owners];
    const args: Array<string | number> = [ladder, this.eventsCap, FIGURES_EPOCH, adds[0]?.limits?.maxWaiting ?? -1];
    for (const { ticket, limits } of adds) {
      keys.push(this.ticketKey(ticket.id));
      const figures = figuresOf(ticket.ticket);
      if (ticket.owner !== undefined) figures.owner = ticket.owner;
      // The text starts with the waiting status, which placement and cancellation rewrite in place.
      const head = `${FIGURES_PREFIX}${JSON.stringify(figures)},"id":${JSON.stringify(ticket.id)},"ladder":${JSON.stringify(ticket.ladder)},"createdAt":${ticket.createdAt}${ticket.mode !== undefined ? `,"mode":${JSON.stringify(ticket.mode)}` : ''}${ticket.owner !== undefined ? `,"owner":${JSON.stringify(ticket.owner)}` : ''},"ticket":`;
      const event = JSON.stringify(ticket.ticket);
      events.push(event);
      args.push(ticket.id, ticket.createdAt, `${head}${event}}`, ticket.owner ?? '', limits?.maxWaitingPerKey ?? -1, ticket.ticket.players.length);
      for (const p of ticket.ticket.players) args.push(p.id);
      const regions = figures.regions ?? regionsOf(ticket.ticket);
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
    const raw = (await redisCall(this.scripts.ladderCancel(this.ticketKey(ticket.id), k.queue, k.players, k.figures, k.events, k.regions, k.owners, ticket.id, Date.now(), FINISHED_TTL_MS, this.eventsCap, FIGURES_EPOCH))) as string | null;
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

  async snapshot(ladder: string, onBatch: (tickets: Ticket[]) => void | Promise<void>, onBackfills?: (backfills: BackfillInput[]) => void | Promise<void>): Promise<string> {
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
    const results = (await redisCall(this.redis.multi().xread('COUNT', max, 'STREAMS', k.events, from).hget(k.figures, 'n').call('XINFO', 'STREAM', k.events).zcard(k.backfills).exec())) ?? [];
    const [readError, read] = results[0] ?? [null, null];
    const [countError, count] = results[1] ?? [null, null];
    const [backfillsError, backfills] = results[3] ?? [null, 0];
    if (readError || countError || backfillsError) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: readError ?? countError ?? backfillsError });
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
    const args: Array<string | number> = [held, this.key('ticket:'), FINISHED_TTL_MS, Date.now(), FIGURES_EPOCH, RECENT, this.key('assignments'), JSON.stringify(ladder), this.key('formed:')];
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
      this.backfillKey(backfill.id), k.players, k.playing, k.backfills, k.events, this.key('queues'),
      backfill.id, backfill.createdAt, backfill.ladder, JSON.stringify(record), JSON.stringify(backfillPlayers(backfill.request)), this.eventsCap, JSON.stringify(backfill.request), teams.length,
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
    const fields = (await redisCall(this.scripts.ladderBackfillCancel(this.backfillKey(backfill.id), k.backfills, k.playing, k.events, backfill.id, Date.now(), FINISHED_TTL_MS, this.eventsCap))) as Array<string | null> | null;
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
      const forgotten = await redisCall(this.scripts.ladderForget(k.queue, k.backfills, k.players, k.figures, k.regions, k.events, k.playing, k.recent, this.key('queues'), k.owners, k.regionSet, ladder));
      if (forgotten === 1) break;
    }
    this.recentCache.delete(ladder);
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
        held, this.key('ticket:'), FINISHED_TTL_MS, now, JSON.stringify(placement.match).slice(1, -1), FIGURES_EPOCH,
        placement.backfill, placement.fills, JSON.stringify(after), JSON.stringify(backfillPlayers(after.request)), filled ? 1 : 0,
        placement.newcomers.length, ...placement.newcomers,
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
    await this.announce(ladder, placements.filter((_, i) => outcomes[i] === 'placed').map((p) => p.recent));
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
        this.scripts.ladderExpire(k.queue, k.players, k.figures, k.regions, k.owners, k.events, k.backfills, k.playing, this.key('ticket:'), this.key('backfill:'), cutoffs.tickets, cutoffs.backfills, now, FINISHED_TTL_MS, this.eventsCap, FIGURES_EPOCH, limit, this.key('expirations'), JSON.stringify(ladder)),
      )) as [string[], string[], string, string];
      tickets.push(...reply[0]);
      backfills.push(...reply[1]);
      if (reply[0].length < limit && reply[1].length < limit) return { tickets, backfills, oldestTicket: reply[2] === '' ? null : Number(reply[2]), oldestBackfill: reply[3] === '' ? null : Number(reply[3]) };
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
