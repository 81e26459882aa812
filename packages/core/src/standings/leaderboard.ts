/**
 * A live leaderboard: who is ranked, at what rank and percentile, with a
 * window that drops players who stopped playing.
 *
 * The ranked population is the active players (a match within `windowMs` of
 * the leaderboard's clock) who finished placement, unless
 * `countPlacementPlayers` is set. Everything else about a player is still
 * kept, so a player who returns or finishes placement re-enters on `upsert`.
 */
import { InvalidInputError } from '../core/errors.js';
import { DEFAULT_DIVISIONS, type Division, divisionOf, percentileOf, validateDivisions } from './percentile.js';
import { RankTree } from './rank-tree.js';

export const DAY_MS = 86_400_000;

export interface LeaderboardOptions {
  /**
   * A player is active while their last match is at most this long before
   * the clock (epoch ms difference).
   * @default 2_592_000_000 (30 days)
   */
  windowMs?: number;
  /**
   * Matches a player must finish before they get a rank and percentile.
   * @default 10
   */
  placementMatches?: number;
  /**
   * Whether players still in placement count in everyone else's percentile.
   * Off by default: their ratings are still moving fast (the team-rank write-up's
   * "first team to win jumps from 1 to 100"), and under team rank they sit at
   * the 1.00 floor in bulk, which would inflate every placed player's number.
   * @default false
   */
  countPlacementPlayers?: boolean;
  /**
   * Named divisions for `standing().division`.
   * @default DEFAULT_DIVISIONS (Bronze 1, Silver 21, Gold 41, Platinum 61, Diamond 81, Master 96)
   */
  divisions?: readonly Division[];
  /** Capacity to reserve up front (players). @default 1024 */
  initialCapacity?: number;
}

export interface ResolvedLeaderboardOptions {
  windowMs: number;
  placementMatches: number;
  countPlacementPlayers: boolean;
  divisions: readonly Division[];
}

export const LEADERBOARD_DEFAULTS: ResolvedLeaderboardOptions = Object.freeze({
  windowMs: 30 * DAY_MS,
  placementMatches: 10,
  countPlacementPlayers: false,
  divisions: DEFAULT_DIVISIONS,
});

/** What the leaderboard knows about one player. */
export interface PlayerRecord {
  id: string;
  rating: number;
  /** Epoch ms of the player's last finished match. */
  lastActiveAt: number;
  /** Finished matches (placement counts them). */
  matches: number;
}

/** A player's public standing. */
export interface Standing extends PlayerRecord {
  /** Matched within the window, measured to the leaderboard's clock. */
  active: boolean;
  /** Placement matches still to play (0 once placed). */
  placementRemaining: number;
  /** Competition rank among the ranked population (ties share; 1 is best), null when not ranked. */
  rank: number | null;
  /** 1–100, null while in placement or inactive. */
  percentile: number | null;
  /** Division name for the percentile, null when `percentile` is null. */
  division: string | null;
}

/** One row of a leaderboard page. */
export interface LeaderboardEntry {
  id: string;
  rating: number;
  /** Competition rank (ties share). */
  rank: number;
  /** 0-based position in (rating desc, id asc) order; pages are cut by position. */
  position: number;
  percentile: number;
}

export function resolveLeaderboardOptions(options: LeaderboardOptions = {}): ResolvedLeaderboardOptions {
  const resolved: ResolvedLeaderboardOptions = {
    windowMs: options.windowMs ?? LEADERBOARD_DEFAULTS.windowMs,
    placementMatches: options.placementMatches ?? LEADERBOARD_DEFAULTS.placementMatches,
    countPlacementPlayers: options.countPlacementPlayers ?? LEADERBOARD_DEFAULTS.countPlacementPlayers,
    divisions: options.divisions ?? LEADERBOARD_DEFAULTS.divisions,
  };
  if (!(resolved.windowMs > 0)) throw new InvalidInputError(`must be a positive number of milliseconds, got ${resolved.windowMs}`, { field: 'windowMs' });
  if (!Number.isInteger(resolved.placementMatches) || resolved.placementMatches < 0) {
    throw new InvalidInputError(`must be a non-negative integer, got ${resolved.placementMatches}`, { field: 'placementMatches' });
  }
  validateDivisions(resolved.divisions);
  return resolved;
}

/** Min-heap of (lastActiveAt, id); entries go stale when a player plays again and are skipped on pop. */
class ActivityHeap {
  private times: number[] = [];
  private ids: string[] = [];

  get length(): number {
    return this.times.length;
  }

  peekTime(): number {
    return this.times[0];
  }

  push(time: number, id: string): void {
    const times = this.times;
    const ids = this.ids;
    let i = times.length;
    times.push(time);
    ids.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (times[parent] <= time) break;
      times[i] = times[parent];
      ids[i] = ids[parent];
      i = parent;
    }
    times[i] = time;
    ids[i] = id;
  }

  pop(): { time: number; id: string } {
    const times = this.times;
    const ids = this.ids;
    const top = { time: times[0], id: ids[0] };
    const lastTime = times.pop()!;
    const lastId = ids.pop()!;
    const n = times.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && times[child + 1] < times[child]) child++;
        if (times[child] >= lastTime) break;
        times[i] = times[child];
        ids[i] = ids[child];
        i = child;
      }
      times[i] = lastTime;
      ids[i] = lastId;
    }
    return top;
  }
}

interface InternalRecord extends PlayerRecord {
  ranked: boolean;
}

/**
 * Ranks, percentiles and pages over the active, placed players.
 *
 * Time moves forward only: `expire(now)` (called by every query that takes a
 * `now`) advances the clock and drops players whose last match fell out of
 * the window; asking about an earlier `now` than the clock is an error.
 * All queries are O(log n) expected; pages add O(page size).
 */
export class Leaderboard {
  readonly options: ResolvedLeaderboardOptions;
  private readonly tree: RankTree;
  private readonly records = new Map<string, InternalRecord>();
  private readonly activity = new ActivityHeap();
  private clock = -Infinity;
  private readonly counts = { above: 0, below: 0 };
  // The last rating counted, valid until the tree changes: a page that shows a
  // player's rank and percentile asks for the same counts twice in a row.
  private treeVersion = 0;
  private countedVersion = -1;
  private countedRating = NaN;

  constructor(options: LeaderboardOptions = {}) {
    this.options = resolveLeaderboardOptions(options);
    this.tree = new RankTree(options.initialCapacity ?? 1024);
  }

  /** Size of the ranked population (active and, by default, placed). */
  get rankedCount(): number {
    return this.tree.size;
  }

  /** Every player the leaderboard knows, active or not. */
  get playerCount(): number {
    return this.records.size;
  }

  /** The latest `now` the leaderboard has expired to (-Infinity before any). */
  get now(): number {
    return this.clock;
  }

  /**
   * Adds or updates a player. `lastActiveAt` is the epoch ms of their last
   * finished match, `matches` how many they have finished.
   */
  upsert(id: string, rating: number, lastActiveAt: number, matches: number): void {
    if (typeof id !== 'string' || id.length === 0) throw new InvalidInputError('must be a non-empty string', { field: 'id' });
    if (!Number.isFinite(rating)) throw new InvalidInputError(`must be a finite number, got ${rating}`, { field: 'rating' });
    if (!Number.isFinite(lastActiveAt)) throw new InvalidInputError(`must be a finite number, got ${lastActiveAt}`, { field: 'lastActiveAt' });
    if (!Number.isInteger(matches) || matches < 0) throw new InvalidInputError(`must be a non-negative integer, got ${matches}`, { field: 'matches' });
    let record = this.records.get(id);
    if (record === undefined) {
      record = { id, rating, lastActiveAt, matches, ranked: false };
      this.records.set(id, record);
    } else {
      if (record.ranked) this.tree.remove(id, record.rating);
      this.treeVersion++;
      record.ranked = false;
      const pushed = record.lastActiveAt !== lastActiveAt;
      record.rating = rating;
      record.lastActiveAt = lastActiveAt;
      record.matches = matches;
      if (!pushed) {
        this.place(record);
        return;
      }
    }
    this.activity.push(lastActiveAt, id);
    this.place(record);
  }

  /** Forgets a player entirely; returns whether they were known. */
  remove(id: string): boolean {
    const record = this.records.get(id);
    if (record === undefined) return false;
    if (record.ranked) this.tree.remove(id, record.rating);
    this.treeVersion++;
    this.records.delete(id);
    return true;
  }

  /**
   * Advances the clock to `now` (epoch ms) and drops from the ranking every
   * player whose last match is older than `now - windowMs`. Returns the ids
   * dropped. Amortised O(log n) per expired or superseded activity entry.
   */
  expire(now: number): string[] {
    if (!Number.isFinite(now)) throw new InvalidInputError(`must be a finite number, got ${now}`, { field: 'now' });
    if (now < this.clock) throw new InvalidInputError(`must not be earlier than the leaderboard clock ${this.clock}, got ${now}`, { field: 'now' });
    this.clock = now;
    const cutoff = now - this.options.windowMs;
    const dropped: string[] = [];
    while (this.activity.length > 0 && this.activity.peekTime() < cutoff) {
      const { time, id } = this.activity.pop();
      const record = this.records.get(id);
      // A stale entry: the player has played since (or was removed).
      if (record === undefined || record.lastActiveAt !== time) continue;
      if (record.ranked) {
        this.tree.remove(id, record.rating);
        this.treeVersion++;
        record.ranked = false;
        dropped.push(id);
      }
    }
    return dropped;
  }

  get(id: string): PlayerRecord | undefined {
    const record = this.records.get(id);
    return record === undefined ? undefined : { id, rating: record.rating, lastActiveAt: record.lastActiveAt, matches: record.matches };
  }

  /** Competition rank (1 + players rated strictly higher), or null when not ranked. */
  rank(id: string, now?: number): number | null {
    if (now !== undefined) this.expire(now);
    const record = this.records.get(id);
    if (record === undefined || !record.ranked) return null;
    return 1 + this.above(record.rating);
  }

  /** Percentile (see percentile.ts for the formula), or null in placement / inactive / unknown. */
  percentile(id: string, now?: number): number | null {
    if (now !== undefined) this.expire(now);
    const record = this.records.get(id);
    if (record === undefined || !record.ranked || record.matches < this.options.placementMatches) return null;
    return this.percentileOfRating(record.rating);
  }

  /**
   * The percentile a rating would have against the current ranked population
   * (as if one more player held it). Used to give players still in placement
   * a matchmaking coordinate; null when nobody is ranked yet.
   */
  percentileForRating(rating: number): number | null {
    if (this.tree.size === 0) return null;
    this.count(rating);
    return percentileOf(this.counts.below, this.counts.above);
  }

  /** Full public standing of a player; undefined when the player is unknown. */
  standing(id: string, now?: number): Standing | undefined {
    if (now !== undefined) this.expire(now);
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    const placementRemaining = Math.max(0, this.options.placementMatches - record.matches);
    const active = this.isActive(record);
    const rank = record.ranked ? 1 + this.above(record.rating) : null;
    const percentile = record.ranked && placementRemaining === 0 ? this.percentileOfRating(record.rating) : null;
    return {
      id,
      rating: record.rating,
      lastActiveAt: record.lastActiveAt,
      matches: record.matches,
      active,
      placementRemaining,
      rank,
      percentile,
      division: percentile === null ? null : divisionOf(percentile, this.options.divisions).name,
    };
  }

  /** The page of `k` ranked players starting at 0-based position `offset` (best first). */
  top(k: number, offset = 0): LeaderboardEntry[] {
    return this.page(Math.max(0, offset), k);
  }

  /**
   * The player's page: up to `n` ranked players above them, the player, and up
   * to `n` below. Empty when the player is not ranked.
   */
  around(id: string, n: number): LeaderboardEntry[] {
    const record = this.records.get(id);
    if (record === undefined || !record.ranked) return [];
    const position = this.tree.positionOf(id, record.rating);
    const start = Math.max(0, position - n);
    return this.page(start, position - start + n + 1);
  }

  private page(start: number, count: number): LeaderboardEntry[] {
    const rows = this.tree.slice(start, count);
    const entries: LeaderboardEntry[] = [];
    let previousRating = NaN;
    let rank = 0;
    let percentile = 0;
    rows.forEach((row, index) => {
      if (row.rating !== previousRating) {
        rank = 1 + this.above(row.rating);
        percentile = this.percentileOfRating(row.rating);
        previousRating = row.rating;
      }
      entries.push({ id: row.id, rating: row.rating, rank, position: start + index, percentile });
    });
    return entries;
  }

  private percentileOfRating(rating: number): number {
    this.count(rating);
    return percentileOf(this.counts.below, this.counts.above);
  }

  /** Players strictly above `rating` (competition rank − 1). */
  private above(rating: number): number {
    this.count(rating);
    return this.counts.above;
  }

  private count(rating: number): void {
    if (this.countedVersion === this.treeVersion && this.countedRating === rating) return;
    this.tree.countAround(rating, this.counts);
    this.countedVersion = this.treeVersion;
    this.countedRating = rating;
  }

  private isActive(record: PlayerRecord): boolean {
    return this.clock === -Infinity || record.lastActiveAt >= this.clock - this.options.windowMs;
  }

  /** Puts a record in the ranked tree if it belongs there now. */
  private place(record: InternalRecord): void {
    const placed = this.options.countPlacementPlayers || record.matches >= this.options.placementMatches;
    if (placed && this.isActive(record)) {
      this.tree.insert(record.id, record.rating);
      this.treeVersion++;
      record.ranked = true;
    }
  }
}

/** A player as the replay (or a store) knows them, for `standingsAt`. */
export interface StandingInput {
  id: string;
  rating: number;
  lastActiveAt: number;
  matches: number;
}

/**
 * Standings of a whole population at one moment, e.g. at the time of the
 * last match of a replay. Same rules as `Leaderboard`.
 */
export function standingsAt(players: Iterable<StandingInput>, now: number, options: LeaderboardOptions = {}): Map<string, Standing> {
  const board = new Leaderboard(options);
  const ids: string[] = [];
  for (const player of players) {
    board.upsert(player.id, player.rating, player.lastActiveAt, player.matches);
    ids.push(player.id);
  }
  board.expire(now);
  const result = new Map<string, Standing>();
  for (const id of ids) result.set(id, board.standing(id)!);
  return result;
}
