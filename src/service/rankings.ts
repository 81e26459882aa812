/**
 * Leaderboard order, percentiles and divisions. Two implementations behind
 * one interface: in process (the standings library's Leaderboard, one per
 * ladder, loaded from the database on first use) and in Redis (sorted sets
 * shared by every instance). Rules are the standings library's: a player is
 * ranked once placed and while their last match is within the window.
 */
import type { Redis } from 'ioredis';
import { divisionOf, Leaderboard, percentileOf } from 'ladder-core/standings';
import type { Database } from '../store/database.js';
import { syncPoint } from '../store/ladders.js';
import { playerPages, playersChangedSince } from '../store/players.js';
import type { PlayerRow } from '../store/rows.js';
import { UnavailableError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import { redisCall } from './redis.js';
import { keepsWholeHistory } from './whole-history.js';
import type { CommittedPlayer } from './writer/plan.js';

export interface StandingView {
  rank: number | null;
  percentile: number | null;
  division: string | null;
  placementRemaining: number;
}

/** A player as a new ticket sees them. */
export interface PlayerFacts {
  /** The ladder's percentile; null unless the player is ranked and past placement. */
  percentile: number | null;
  /** The stored rating; null for a player the ladder does not know. */
  rating: number | null;
}

export interface RankedEntry {
  id: string;
  rating: number;
  rank: number;
  percentile: number;
}

export interface Rankings {
  /** Applies committed player states. */
  update(ladder: Ladder, players: readonly CommittedPlayer[], lastSeq: number): Promise<void>;
  standing(ladder: Ladder, player: { id: string; rating: number; matches: number; lastAt: number | null }): Promise<StandingView>;
  /** What matchmaking needs to know of each player, all of them in one read. */
  facts(ladder: Ladder, ids: readonly string[]): Promise<PlayerFacts[]>;
  page(ladder: Ladder, offset: number, limit: number): Promise<{ total: number; offset: number; entries: RankedEntry[] }>;
  /** Offset of the page centred on `id`, or null when not ranked. */
  positionOf(ladder: Ladder, id: string): Promise<number | null>;
  /** Forgets a ladder's order; the next read loads it again from the database (after a correction, a new season, a settings change). */
  reset(ladder: string): Promise<void>;
  close(): Promise<void>;
}

/** In-process leaderboards: correct for one instance (other instances' writes are not seen). */
export class MemoryRankings implements Rankings {
  private readonly boards = new Map<string, Promise<Leaderboard>>();
  constructor(private readonly db: Database) {}

  private board(ladder: Ladder): Promise<Leaderboard> {
    let board = this.boards.get(ladder.id);
    if (!board) {
      board = (async () => {
        const lb = new Leaderboard(ladder.standings);
        // A page at a time, so that a large ladder's load leaves the loop to other requests between pages. A state
        // committed meanwhile reaches the board through `update`, which waits for this load and applies it after.
        for await (const rows of playerPages(this.db, ladder.id)) {
          // Only players who have played in the current season count.
          for (const row of rows) if ((row.last_at ?? 0) >= ladder.seasonStartedAt) lb.upsert(row.id, row.rating, row.last_at ?? 0, row.matches);
        }
        return lb;
      })();
      board.catch(() => this.boards.delete(ladder.id));
      this.boards.set(ladder.id, board);
    }
    return board;
  }

  private async fresh(ladder: Ladder): Promise<Leaderboard> {
    const board = await this.board(ladder);
    board.expire(Math.max(board.now, Date.now()));
    return board;
  }

  async update(ladder: Ladder, players: readonly CommittedPlayer[]): Promise<void> {
    // A board not yet loaded will read these states from the database when first used.
    if (!this.boards.has(ladder.id)) return;
    const board = await this.board(ladder);
    for (const p of players) if ((p.state.lastAt ?? 0) >= ladder.seasonStartedAt) board.upsert(p.id, p.state.rating, p.state.lastAt ?? 0, p.state.matches);
  }

  async reset(ladder: string): Promise<void> {
    this.boards.delete(ladder);
  }

  async standing(ladder: Ladder, player: { id: string; rating: number; matches: number; lastAt: number | null }): Promise<StandingView> {
    const board = await this.fresh(ladder);
    const s = board.standing(player.id);
    const placementRemaining = Math.max(0, ladder.resolvedStandings.placementMatches - player.matches);
    if (!s) return { rank: null, percentile: null, division: null, placementRemaining };
    return { rank: s.rank, percentile: s.percentile, division: s.division, placementRemaining: s.placementRemaining };
  }

  async facts(ladder: Ladder, ids: readonly string[]): Promise<PlayerFacts[]> {
    const board = await this.fresh(ladder);
    return ids.map((id) => ({ percentile: board.percentile(id), rating: board.get(id)?.rating ?? null }));
  }

  async page(ladder: Ladder, offset: number, limit: number) {
    const board = await this.fresh(ladder);
    return { total: board.rankedCount, offset, entries: board.top(limit, offset).map(({ id, rating, rank, percentile }) => ({ id, rating, rank, percentile })) };
  }

  async positionOf(ladder: Ladder, id: string): Promise<number | null> {
    const board = await this.fresh(ladder);
    const around = board.around(id, 0);
    return around.length === 0 ? null : around[0]!.position;
  }

  async close(): Promise<void> {
    this.boards.clear();
  }
}

/**
 * Applies a batch of player states to the sorted sets, skipping any player
 * whose stored version (match seq) is newer: two instances committing one
 * after the other may reach Redis in the opposite order.
 * KEYS: rank zset (score -rating), seen zset (score lastAt), versions hash (id → "seq:-rating:placement
 * done 0/1", what a new ticket reads), synced seq.
 * ARGV: count, cutoff, then per player id, -rating, lastAt, placed(0/1: ranked when active), seq, placement
 * done (0/1); then load(1: a load from the database, which also creates the synced key; 0: an update,
 * skipped while the ladder is not loaded), and last the batch seq.
 */
const UPDATE_SCRIPT = `
-- Not loaded (never, or Redis came back empty): the next read loads everything from the database.
if ARGV[#ARGV - 1] == '0' and redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
local n = tonumber(ARGV[1])
local cutoff = tonumber(ARGV[2])
local i = 3
for k = 1, n do
  local id = ARGV[i]
  local score = ARGV[i + 1]
  local lastAt = tonumber(ARGV[i + 2])
  local placed = ARGV[i + 3]
  local seq = tonumber(ARGV[i + 4])
  local done = ARGV[i + 5]
  i = i + 6
  local current = tonumber(string.match(redis.call('HGET', KEYS[3], id) or '0', '^[^:]+'))
  if seq >= current then
    redis.call('HSET', KEYS[3], id, seq .. ':' .. score .. ':' .. done)
    if placed == '1' then
      redis.call('ZADD', KEYS[2], lastAt, id)
      if lastAt >= cutoff then redis.call('ZADD', KEYS[1], score, id) else redis.call('ZREM', KEYS[1], id) end
    else
      redis.call('ZREM', KEYS[1], id)
      redis.call('ZREM', KEYS[2], id)
    end
  end
end
local synced = tonumber(redis.call('GET', KEYS[4]) or '-1')
if ARGV[i] ~= '2' and tonumber(ARGV[i + 1]) > synced then redis.call('SET', KEYS[4], ARGV[i + 1]) end
return 1`;

/** Drops players whose last match left the window. KEYS: rank, seen. ARGV: cutoff. */
const EXPIRE_SCRIPT = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
for i = 1, #ids, 500 do
  local j = math.min(i + 499, #ids)
  redis.call('ZREM', KEYS[1], unpack(ids, i, j))
end
return #ids`;

/**
 * Per id: its -rating ('' when unknown), and the players above and below it
 * in the rank set (-1, -1 when it is not ranked or still in placement).
 * KEYS: rank, versions. ARGV: ids.
 */
const FACTS_SCRIPT = `
local out = {}
for i, id in ipairs(ARGV) do
  local v = redis.call('HGET', KEYS[2], id)
  local score, done
  if v then score, done = string.match(v, '^[^:]*:([^:]+):([01])$') end
  out[3 * i - 2] = score or ''
  out[3 * i - 1] = -1
  out[3 * i] = -1
  if done == '1' then
    local s = redis.call('ZSCORE', KEYS[1], id)
    if s then
      out[3 * i - 1] = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. s)
      out[3 * i] = redis.call('ZCOUNT', KEYS[1], '(' .. s, '+inf')
    end
  end
end
return out`;

/** Shared leaderboards in Redis sorted sets, for several instances behind one address. */
export class RedisRankings implements Rankings {
  private readonly lastExpire = new Map<string, number>();
  /** When each ladder was last checked against the database (a Redis that restarted empty is noticed within a second). */
  private readonly checkedAt = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly db: Database,
    private readonly prefix: string,
  ) {
    // After a reconnection Redis may be a new, empty server: check every ladder again before trusting it.
    redis.on('ready', () => this.checkedAt.clear());
    redis.defineCommand('ladderPlayerFacts', { numberOfKeys: 2, lua: FACTS_SCRIPT });
  }

  private keys(ladder: string): [string, string, string, string] {
    const base = `${this.prefix}lb:${ladder}:`;
    // synced2: the versions hash carries each player's rating and placement since this key (a ladder
    // loaded before is loaded again in full).
    return [`${base}rank`, `${base}seen`, `${base}ver`, `${base}synced2`];
  }

  /** The ladder's corrections count (`ladders.corrections`) as of the last full load. */
  private correctionsKey(ladder: string): string {
    return `${this.prefix}lb:${ladder}:corrections`;
  }

  private placed(ladder: Ladder, matches: number): boolean {
    return ladder.resolvedStandings.countPlacementPlayers || matches >= ladder.resolvedStandings.placementMatches;
  }

  /** `final`: this batch ends a load (a load in several batches writes the synced key with its final one's last chunk only). */
  private async apply(
    ladder: Ladder,
    players: ReadonlyArray<{ id: string; rating: number; matches: number; lastAt: number; seq: number }>,
    batchSeq: number,
    load: boolean,
    final = true,
  ) {
    const keys = this.keys(ladder.id);
    // Only players who have played in the current season count.
    const cutoff = Math.max(Date.now() - ladder.resolvedStandings.windowMs, ladder.seasonStartedAt);
    // A load writes its chunks first and the synced key with the last one, so a read never trusts half a load.
    const chunks = Math.max(1, Math.ceil(players.length / 2000));
    for (let c = 0; c < chunks; c++) {
      const chunk = players.slice(c * 2000, (c + 1) * 2000);
      const last = c === chunks - 1 && final;
      const args: (string | number)[] = [chunk.length, cutoff];
      for (const p of chunk)
        args.push(p.id, -p.rating, p.lastAt, this.placed(ladder, p.matches) ? '1' : '0', p.seq, p.matches >= ladder.resolvedStandings.placementMatches ? '1' : '0');
      args.push(load ? (last ? '1' : '2') : '0', last || !load ? batchSeq : -1);
      await redisCall(this.redis.eval(UPDATE_SCRIPT, 4, ...keys, ...args));
    }
  }

  /**
   * Brings the sorted sets up to the database: fully when they were never
   * loaded, else the players changed after the last synced seq (a crash
   * between commit and Redis write leaves that gap; every player of a
   * whole-history ladder, whose matches move players outside them). A void,
   * a correction or a season moves states but no sequence number: the
   * ladder counts them (`ladders.corrections`), and when the count differs
   * from the one stored with the sets (a correction made while Redis was
   * away, or whose Redis write failed) the sets are dropped and loaded again
   * in full.
   */
  async sync(ladder: Ladder): Promise<void> {
    const keys = this.keys(ladder.id);
    const [synced, loadedAt, point] = await Promise.all([
      redisCall(this.redis.get(keys[3])),
      redisCall(this.redis.get(this.correctionsKey(ladder.id))),
      syncPoint(this.db, ladder.id),
    ]);
    if (!point) return;
    const last = point.lastSeq;
    const corrected = loadedAt !== String(point.corrections);
    const from = synced === null ? 0 : Number(synced);
    if (!corrected && synced !== null && from >= last) return;
    // Players a correction removed are in no row: only dropping the sets forgets them.
    if (corrected) await redisCall(this.redis.del(...keys));
    // A whole-history ladder's match also moves players outside it, who have no history entry in it: reload them all.
    const entries = (rows: readonly PlayerRow[]) => rows.map((r) => ({ id: r.id, rating: r.rating, matches: r.matches, lastAt: r.last_at ?? 0, seq: last }));
    if (corrected || synced === null || keepsWholeHistory(ladder.system)) {
      // A full load, a page at a time: each page is written before the next is read, so neither the loop nor the
      // memory holds the whole ladder. The page after is read first, so that the last page's last chunk is known: it
      // writes the synced key, and no read trusts the sets before it.
      const pages = playerPages(this.db, ladder.id);
      let page = await pages.next();
      if (page.done) await this.apply(ladder, [], last, true);
      while (!page.done) {
        const next = await pages.next();
        await this.apply(ladder, entries(page.value), last, true, next.done === true);
        page = next;
      }
    } else await this.apply(ladder, entries(await playersChangedSince(this.db, ladder.id, from)), last, true);
    // The count was read before the players: a correction committed since makes the next check load again.
    if (corrected) await redisCall(this.redis.set(this.correctionsKey(ladder.id), String(point.corrections)));
  }

  private async ready(ladder: Ladder): Promise<void> {
    const now = Date.now();
    if ((this.checkedAt.get(ladder.id) ?? 0) < now - 1000) {
      await this.sync(ladder);
      this.checkedAt.set(ladder.id, now);
    }
    if ((this.lastExpire.get(ladder.id) ?? 0) < now - 1000) {
      this.lastExpire.set(ladder.id, now);
      const [rank, seen] = this.keys(ladder.id);
      await redisCall(this.redis.eval(EXPIRE_SCRIPT, 2, rank, seen, Math.max(now - ladder.resolvedStandings.windowMs, ladder.seasonStartedAt)));
    }
  }

  async update(ladder: Ladder, players: readonly CommittedPlayer[], lastSeq: number): Promise<void> {
    await this.apply(
      ladder,
      players.map((p) => ({ id: p.id, rating: p.state.rating, matches: p.state.matches, lastAt: p.state.lastAt ?? 0, seq: p.seq })),
      lastSeq,
      false,
    );
  }

  /** Players above and below each rating, for all of them in one round trip. */
  private async counts(rankKey: string, ratings: readonly number[]): Promise<Array<{ above: number; below: number }>> {
    if (ratings.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const rating of ratings) pipeline.zcount(rankKey, '-inf', `(${-rating}`).zcount(rankKey, `(${-rating}`, '+inf');
    const results = (await redisCall(pipeline.exec())) ?? [];
    for (const [error] of results) if (error) throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
    return ratings.map((_, i) => ({ above: Number(results[2 * i]![1]), below: Number(results[2 * i + 1]![1]) }));
  }

  async standing(ladder: Ladder, player: { id: string; rating: number; matches: number; lastAt: number | null }): Promise<StandingView> {
    await this.ready(ladder);
    const placementRemaining = Math.max(0, ladder.resolvedStandings.placementMatches - player.matches);
    const [rankKey] = this.keys(ladder.id);
    const score = await redisCall(this.redis.zscore(rankKey, player.id));
    if (score === null) return { rank: null, percentile: null, division: null, placementRemaining };
    const [{ above, below }] = (await this.counts(rankKey, [-Number(score)])) as [{ above: number; below: number }];
    const percentile = placementRemaining === 0 ? percentileOf(below, above) : null;
    return { rank: 1 + above, percentile, division: percentile === null ? null : divisionOf(percentile, ladder.resolvedStandings.divisions).name, placementRemaining };
  }

  async facts(ladder: Ladder, ids: readonly string[]): Promise<PlayerFacts[]> {
    if (ids.length === 0) return [];
    await this.ready(ladder);
    const [rankKey, , versionsKey] = this.keys(ladder.id);
    const out =
      (await redisCall((this.redis as unknown as { ladderPlayerFacts(...args: string[]): Promise<Array<string | number>> }).ladderPlayerFacts(rankKey, versionsKey, ...ids))) ?? [];
    return ids.map((_, i) => {
      const score = out[3 * i];
      const above = Number(out[3 * i + 1]);
      const below = Number(out[3 * i + 2]);
      return { percentile: above < 0 ? null : percentileOf(below, above), rating: score === '' || score === undefined ? null : -Number(score) };
    });
  }

  async page(ladder: Ladder, offset: number, limit: number) {
    await this.ready(ladder);
    const [rankKey] = this.keys(ladder.id);
    const [total, flat] = await Promise.all([redisCall(this.redis.zcard(rankKey)), redisCall(this.redis.zrange(rankKey, offset, offset + limit - 1, 'WITHSCORES'))]);
    const ratings: number[] = [];
    for (let i = 1; i < flat.length; i += 2) ratings.push(-Number(flat[i]));
    const distinct = [...new Set(ratings)];
    const counted = new Map<number, { above: number; below: number }>();
    (await this.counts(rankKey, distinct)).forEach((c, i) => counted.set(distinct[i]!, c));
    const entries: RankedEntry[] = ratings.map((rating, i) => {
      const c = counted.get(rating)!;
      return { id: flat[2 * i]!, rating, rank: 1 + c.above, percentile: percentileOf(c.below, c.above) };
    });
    return { total, offset, entries };
  }

  async positionOf(ladder: Ladder, id: string): Promise<number | null> {
    await this.ready(ladder);
    const [rankKey] = this.keys(ladder.id);
    return redisCall(this.redis.zrank(rankKey, id));
  }

  /** Removes every key of a ladder (rebuild --fix reloads them). */
  async reset(ladder: string): Promise<void> {
    await redisCall(this.redis.del(...this.keys(ladder), this.correctionsKey(ladder)));
    this.checkedAt.delete(ladder);
  }

  async close(): Promise<void> {}
}
