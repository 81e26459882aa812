/**
 * The Redis ticket store's Lua scripts (redis.ts runs them). Each script is
 * one atomic step of the contract in store.ts; its comment names the rule
 * of the contract it keeps, and the conformance suite (conformance.ts) holds
 * the rule for both stores.
 */
import type { Redis } from 'ioredis';
import { MAX_QUEUE_REGIONS } from './store.js';

/** The start of a waiting ticket's stored text: a script tells a waiting ticket from a finished one by it alone. */
export const WAITING_PREFIX = '{"status":"waiting",';

export const FIGURES_PREFIX = `${WAITING_PREFIX}"figures":`;

/**
 * Takes tickets out of the set of waiting players and the counters (Lua, shared by the cancel and
 * assign scripts), with one command per set and per counter, however many tickets. Only each ticket's
 * `figures` (the first member after the status) is decoded: it ends at the first `},"id":` of the
 * text, which no JSON string can contain (its quote would be escaped).
 * Keeps: figures change together with the queue (every counter a ticket raised on intake falls when it leaves).
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
 * Keeps: at most one waiting ticket per player; no queuing while in a backfill's match; the caps (maxWaiting, maxWaitingPerKey) and MAX_QUEUE_REGIONS; figures and the event log change together with the queue.
 */
export const INTAKE = `
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

/** KEYS: ticket, queue, players, figures, events, regions, owners. ARGV: id, now, ttl, events cap, epoch. Returns the ticket's JSON after, or nil. Keeps: a ticket is matched or cancelled, never both, never twice (only a waiting ticket is cancelled, and logged once). */
export const CANCEL = `${LEAVE}
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
 * Places tickets (Lua, shared by the assign and fill scripts): the (ticket id, team) pairs are ARGV[from],
 * ARGV[from + 1], … to the end. Unless every one is still in the queue, changes nothing and returns false;
 * else takes them out of the queue, the players set and the counters and rewrites each as matched with
 * `body` (JSON members without braces) and its team.
 * Keeps: a match is placed only if every one of its tickets still waits.
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
 * Keeps: a match is placed only if every ticket still waits and the caller still holds the lock (the lock check comes first).
 */
export const ASSIGN = `${LEAVE}
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
 * Keeps the backfill rules: none of its players waits in a ticket or is in another open backfill; one backfill per id.
 */
export const BACKFILL_INTAKE = `
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
 * Keeps the backfill rules: a closed backfill's players are free to queue again.
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

/** KEYS: backfill, backfills, playing, events. ARGV: id, now, ttl, events cap. Returns [status, fills, json, endedAt] after, or nil. Keeps the backfill rules: only an open backfill is cancelled, once, with one event. */
export const BACKFILL_CANCEL = `${CLOSE}
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
 * Keeps the backfill rules: a fill is placed only while the caller holds the lock, the backfill is open as the caller saw it (`fills`) and every added ticket waits.
 */
export const FILL = `${PLACE}
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

/** KEYS: lock. ARGV: value held, new value, ttl. Renews (with a new value) while the lock is ours. Keeps lock takeover safe: only the holder renews. */
export const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
/** KEYS: lock, events. ARGV: value held, first id to keep. Keeps the event log's trimming: only the lock holder trims. */
export const TRIM = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('XTRIM', KEYS[2], 'MINID', '~', ARGV[2]) end return -1`;
/** KEYS: queues. ARGV: key prefix. Every ladder that has had tickets and its waiting tickets, flat. Keeps: figures are read from the counters, never by scanning a queue. */
export const WAITING = `
local out = {}
for i, ladder in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  out[2 * i - 1] = ladder
  out[2 * i] = redis.call('HGET', ARGV[1] .. 'queue:' .. ladder .. ':figures', 'n') or '0'
end
return out`;
/**
 * Forgets a ladder's queue once nothing waits in it: nothing is lost if a ticket arrived meanwhile
 * (returns 0, and the caller cancels again). KEYS: queue, backfills, players, figures, regions,
 * events, playing, recent, queues, owners, the set of regions of earlier versions, why-waiting,
 * tickets asked about. ARGV: ladder.
 * Returns 1 when forgotten.
 * Keeps closing a queue lossless: nothing waiting is forgotten.
 */
export const FORGET = `
if redis.call('ZCARD', KEYS[1]) > 0 or redis.call('ZCARD', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[10], KEYS[11], KEYS[12], KEYS[13])
redis.call('SREM', KEYS[9], ARGV[1])
return 1`;

/**
 * Marks a ticket as asked about and reads its why-waiting reason. KEYS: tickets asked about (sorted
 * by the time of asking), why-waiting hash. ARGV: ticket id, now, most kept, how long the set lives
 * unasked (ms). Returns [pass time, rule], or false before a pass wrote the ticket's reason.
 * Keeps the asked-about set bounded: the most recently asked only, and gone when nobody asks.
 */
export const ASK_WHY = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[3]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local got = redis.call('HMGET', KEYS[2], 's:at', 't:' .. ARGV[1])
if not got[1] or not got[2] then return false end
return got`;

/**
 * Replaces the why-waiting hash with a pass's summary and the reasons of the tickets asked about, while
 * the caller holds the lock. KEYS: lock, why-waiting hash. ARGV: value held, pass time, the summary
 * (JSON), then ticket id and rule pairs. Returns 1, or -1 when the lock is not held.
 * Keeps why-waiting a lock holder's word: an instance that lost the lock writes nothing.
 */
export const SET_WHY = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 's:at', ARGV[2], 's:heldBy', ARGV[3])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], 't:' .. ARGV[i], ARGV[i + 1]) end
return 1`;

/**
 * Ends what is past its time-to-live (at most ARGV[9] tickets and as many backfills per call), each
 * as its cancellation would, with the status 'expired'; announces them on the expiry channel.
 * KEYS: queue, players, figures, regions, owners, events, backfills, playing.
 * ARGV: ticket key prefix, backfill key prefix, ticket cutoff, backfill cutoff, now, ttl, events cap,
 * epoch, limit, channel, ladder (as JSON). Returns [expired ticket ids, expired backfill ids, the
 * oldest waiting ticket's arrival or '', the oldest open backfill's creation or ''].
 * Keeps the time-to-live sweep: what is expired ends as its cancellation would (out of the queue and its figures, players freed, an event logged).
 */
export const EXPIRE = `${LEAVE}
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

/**
 * KEYS: events. The stream's XINFO STREAM reply, or nil when there is no stream yet (told by EXISTS in
 * the same step, not by the error's text). Keeps a snapshot's position: every change after it is in the log.
 */
export const STREAM_POSITION = `if redis.call('EXISTS', KEYS[1]) == 0 then return false end return redis.call('XINFO', 'STREAM', KEYS[1])`;

/** Keeps lock takeover safe: only the holder gives the lock up. */
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Returns the epoch, writing `ARGV[1]` first when there is none (an empty Redis); when the caller
 * knew another (`ARGV[2]`, '' for none), the data were lost since: `epoch:lost` is set to `ARGV[3]`
 * (ms) unless another instance noticed first, for `ARGV[4]` ms. KEYS: epoch, epoch:lost.
 * Keeps a lost queue told apart from an unknown ticket.
 */
export const EPOCH = `
local current = redis.call('GET', KEYS[1])
if not current then
  current = ARGV[1]
  redis.call('SET', KEYS[1], current)
end
if ARGV[2] ~= '' and ARGV[2] ~= current then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4], 'NX') end
return current`;

type Script = (...args: Array<string | number>) => Promise<unknown>;

/** The scripts as commands of one client (ioredis sends EVALSHA, and the script itself when Redis lacks it). */
export interface Scripts {
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
  ladderStreamPosition: Script;
  ladderAskWhy: Script;
  ladderSetWhy: Script;
}

/** Registers every script on `redis`. */
export function defineScripts(redis: Redis): Scripts {
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
  redis.defineCommand('ladderForget', { numberOfKeys: 13, lua: FORGET });
  redis.defineCommand('ladderAskWhy', { numberOfKeys: 2, lua: ASK_WHY });
  redis.defineCommand('ladderSetWhy', { numberOfKeys: 2, lua: SET_WHY });
  redis.defineCommand('ladderWaiting', { numberOfKeys: 1, lua: WAITING });
  redis.defineCommand('ladderEpoch', { numberOfKeys: 2, lua: EPOCH });
  redis.defineCommand('ladderExpire', { numberOfKeys: 8, lua: EXPIRE });
  redis.defineCommand('ladderStreamPosition', { numberOfKeys: 1, lua: STREAM_POSITION });
  return redis as unknown as Scripts;
}
