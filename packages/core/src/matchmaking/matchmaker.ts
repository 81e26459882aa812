/**
 * The matchmaker: forms two-team matches from waiting tickets.
 *
 * Rules (the team-rank write-up; docs/MATCHMAKING.md):
 * - A ticket's range runs from its lowest-reaching player's `percentile −
 *   within` to its highest-reaching player's `percentile + within` (loose
 *   filters widen with waiting, strict ones never do).
 * - Two tickets are compatible when each range holds every player of the
 *   other; every pair of tickets in a match is compatible at formation time.
 *   Since a ticket's own players always sit inside its own range, that is the
 *   same as: every player of the match lies inside every ticket's range.
 * - A match goes to one region where every player's ping ≤ their maxPing.
 * - Two teams of `teamSize`; a party stays on one team; team rank sums are
 *   balanced (the team-rank write-up's OA/YA modifier as close to 1 as the chosen tickets
 *   allow).
 * - Oldest tickets are served first: each pass walks the queue oldest-first
 *   and lets each unmatched ticket anchor a match, filling it with the
 *   closest compatible tickets in skill (oldest first within a percentile).
 * - Deterministic: the clock is an argument and ties break by ticket id.
 * - Backfill requests (a match in progress with open slots) are served
 *   before new matches form, oldest request first, under the same rules
 *   (backfill.ts): the pass builds its index, fills the requests from it,
 *   then lets the remaining tickets anchor matches.
 *
 * Speed: tickets are bucketed by region and whole percentile of their
 * lowest player, so an anchor only looks at buckets inside its range,
 * nearest first; matched entries are skipped with path-compressed skip
 * pointers, and each anchor examines at most `maxCandidates` live tickets.
 */
import { InvalidInputError } from '../core/errors.js';
import { type Backfill, type BackfillInput, backfillInput, type BackfillResult, BackfillState, copyBackfill, type ParsedBackfill, parseBackfill } from './backfill.js';
import { type FilterDefaults, parseTicketInto, type PlayerFilter, resolveFilterDefaults, type Ticket, TicketColumns, type TicketInput, type TicketPlayer } from './ticket.js';
import { effectiveWithin, resolveWidening, type ResolvedWidening, type WideningOptions } from './widening.js';

export interface MatchmakerOptions {
  /** Players per team (6 for "6v6"). @default 6 */
  teamSize?: number;
  /** Loose-filter widening. @default {steps: [5, 10, 20, 50, 100], everySeconds: 30} */
  widening?: WideningOptions;
  /** Filter values for players who send none. @default {within: 10, strict: false, maxPing: 150} */
  filterDefaults?: FilterDefaults;
  /**
   * Live candidate tickets an anchor may examine per region before giving up
   * for this pass. Bounds the worst case (a narrow strict ticket inside a big
   * crowd) at O(n · maxCandidates); a ticket that gives up gets another try
   * at the next pass.
   * @default 256
   */
  maxCandidates?: number;
}

/** One formed match. */
export interface FormedMatch {
  region: string;
  /** Ticket ids per team; the team holding the oldest ticket first, oldest ticket first within a team. */
  teams: string[][];
  /** Player ids per team, in the same order. */
  players: string[][];
  /** Quality figures at formation. */
  quality: MatchQuality;
}

export interface MatchQuality {
  /** Average rank (rating, or percentile when no rating) of each team. */
  averages: [number, number];
  /** Larger team average ÷ smaller (the team-rank write-up's OA/YA, folded to ≥ 1). */
  balance: number;
  /** Highest minus lowest percentile among the players. */
  percentileSpread: number;
  /** Worst ping of any player in the chosen region (ms). */
  worstPing: number;
  /** Largest widening step any ticket in the match had reached (0 = own filters). */
  wideningStep: number;
  /** Seconds each ticket waited, per team, in `teams` order. */
  waits: number[][];
}

export interface PassResult {
  matches: FormedMatch[];
  /** Ids of the tickets still waiting, oldest first. */
  waiting: string[];
  /** Backfill requests that gained players in this pass, oldest request first. */
  backfills: BackfillResult[];
}

/** Team size from a mode like "6v6" or "1v1". */
export function parseMode(mode: string): number {
  const found = /^(\d+)v(\d+)$/.exec(mode.trim());
  if (!found || found[1] !== found[2] || Number(found[1]) < 1) {
    throw new InvalidInputError(`must look like 6v6 (two equal teams), got ${JSON.stringify(mode)}`, { field: 'mode' });
  }
  return Number(found[1]);
}

const MAX_REGIONS = 31;
const BUCKETS = 100;
// Fields of an entry record of the pass's index (Float64Array, ENTRY slots per entry).
const ENTRY = 8;
const LOW = 0;
const HIGH = 1;
const MIN_P = 2;
const MAX_P = 3;
const SIZE = 4;
const RANK_SUM = 5;
const MASK = 6;
const STEP = 7;

/** Bucket of a lowest percentile: bucket b holds [b+1, b+2); 100 joins 99. */
function bucketOf(percentile: number): number {
  return Math.min(BUCKETS - 1, Math.floor(percentile) - 1);
}

/**
 * Whether a walk outward from bucket `center` has left [low, high] in both
 * directions at `distance`. Ranges only narrow as tickets join, so once out
 * it stays out.
 */
function walkDone(center: number, distance: number, low: number, high: number): boolean {
  const upOut = center + distance >= BUCKETS || center + distance + 1 > high;
  const downOut = center - distance < 0 || center - distance + 2 <= low;
  return upOut && downOut;
}

/**
 * The bucket a walk from `center` visits at `distance` on `side` (0 up, 1
 * down), or -1: off the ladder, distance 0 seen twice, or no lowest
 * percentile there can lie in [low, high] (bucket b holds [b+1, b+2)).
 */
function walkBucket(center: number, distance: number, side: number, low: number, high: number): number {
  if (distance === 0 && side === 1) return -1;
  const b = side === 0 ? center + distance : center - distance;
  if (b < 0 || b >= BUCKETS || b + 2 <= low || b + 1 > high) return -1;
  return b;
}

/**
 * A queue of tickets with incremental passes: `add` and `cancel` at any
 * time, `pass(now)` forms what it can and removes the matched tickets.
 *
 * Storage is struct-of-arrays: each queued ticket owns a slot, and what the
 * pass reads (ranges per widening step, percentiles, sizes, region masks,
 * pings) lives in typed arrays indexed by slot, filled at `add`. The pass then
 * never follows a pointer into per-ticket objects — at a million tickets
 * those pointer chases (cache misses) and the garbage collector were most of
 * its time. Slots are compacted after each pass, in queue order.
 */
export class Matchmaker {
  readonly teamSize: number;
  readonly widening: ResolvedWidening;
  readonly maxCandidates: number;
  private readonly filterDefaults: PlayerFilter;
  /** Widening levels a range can be at: own (0) up to every global step. */
  private readonly levels: number;
  private readonly columns = new TicketColumns();

  // Per-slot columns (capacity `slotCapacity`, `slotCount` used).
  private slotCapacity = 0;
  private slotCount = 0;
  private ticketIds: string[] = [];
  private arrivals = new Float64Array(0);
  private minPercentiles = new Float64Array(0);
  private maxPercentiles = new Float64Array(0);
  private rankSums = new Float64Array(0);
  private sizes = new Int32Array(0);
  /** Bit r set: every player's ping to region r ≤ their maxPing. */
  private masks = new Int32Array(0);
  private cancelled = new Uint8Array(0);
  /** Slot s's players are player rows [firstPlayer[s], firstPlayer[s] + sizes[s]). */
  private firstPlayer = new Int32Array(0);
  /** [low, high] of slot s at widening level l: ranges[(s · levels + l) · 2 + 0/1]. */
  private ranges = new Float64Array(0);
  /** Worst ping of the ticket's players per region: worstPings[s · regionStride + r] (Infinity: nobody has a ping there). */
  private worstPings = new Float64Array(0);

  // Per-player rows (kept for `waiting()` and the output's player ids).
  private playerCapacity = 0;
  private playerCount = 0;
  private playerIds: string[] = [];
  private playerPercentiles = new Float64Array(0);
  private playerRatings = new Float64Array(0);
  private playerWithin = new Float64Array(0);
  private playerStrict = new Uint8Array(0);
  private playerMaxPing = new Float64Array(0);
  /** playerPings[row · regionStride + r]; NaN when the player sent no ping for region r. */
  private playerPings = new Float64Array(0);

  private regionStride = 4;
  private readonly regionBits = new Map<string, number>();
  private readonly regionNames: string[] = [];

  /** Slots oldest first (cancelled ones stay until the next pass). */
  private order: number[] = [];
  // Both maps may hold entries of tickets that already left (checked on use, swept in bulk):
  // deleting hundreds of thousands of keys after every pass would cost more than the pass.
  private readonly byTicketId = new Map<string, number>();
  private readonly byPlayerId = new Map<string, number>();
  private liveCount = 0;
  private cancelledCount = 0;
  /** Index entries the live tickets need: one per region each can play in. */
  private entryTotal = 0;
  private readonly passBuffers = new PassBuffers();
  /** Open backfill requests, oldest (`at`, then id) first; withdrawn ones stay until the next pass. */
  private backfillQueue: BackfillState[] = [];
  private readonly backfillById = new Map<string, BackfillState>();

  constructor(options: MatchmakerOptions = {}) {
    this.teamSize = options.teamSize ?? 6;
    if (!Number.isInteger(this.teamSize) || this.teamSize < 1) throw new InvalidInputError(`must be a positive integer, got ${this.teamSize}`, { field: 'teamSize' });
    this.widening = resolveWidening(options.widening);
    this.filterDefaults = resolveFilterDefaults(options.filterDefaults);
    this.maxCandidates = options.maxCandidates ?? 256;
    if (!Number.isInteger(this.maxCandidates) || this.maxCandidates < 1)
      throw new InvalidInputError(`must be a positive integer, got ${this.maxCandidates}`, { field: 'maxCandidates' });
    this.levels = this.widening.steps.length + 1;
    this.allocate(1024, 1024);
  }

  /** Tickets waiting. */
  get size(): number {
    return this.liveCount;
  }

  /** Backfill requests open (not yet filled or withdrawn). */
  get backfillCount(): number {
    return this.backfillById.size;
  }

  /** Region names in the order first seen. */
  get regions(): readonly string[] {
    return this.regionNames;
  }

  /**
   * Queues a ticket. Filters may be left out or partial (`filterDefaults`
   * fill them in). Validated at run time, so untrusted input may be passed
   * in: throws InvalidInputError on a bad ticket, a ticket id already queued
   * or a player already queued in another ticket; the queue is unchanged then.
   */
  add(input: TicketInput): void {
    const t = this.columns;
    parseTicketInto(input, this.teamSize, this.filterDefaults, t);
    if (this.waitingSlotOfTicket(t.id) !== -1) throw new InvalidInputError(`ticket "${t.id}" is already queued`, { field: 'id' });
    for (let k = 0; k < t.count; k++) {
      const other = this.waitingSlotOfPlayer(t.playerIds[k]);
      if (other !== -1) throw new InvalidInputError(`player "${t.playerIds[k]}" is already queued in ticket "${this.ticketIds[other]}"`, { field: `players[${k}].id` });
    }
    let newRegions: Set<string> | undefined;
    const pingCount = t.pingStart[t.count];
    for (let p = 0; p < pingCount; p++) {
      const region = t.pingRegions[p];
      if (!this.regionBits.has(region)) (newRegions ??= new Set()).add(region);
    }
    if (newRegions !== undefined) {
      if (this.regionNames.length + newRegions.size > MAX_REGIONS)
        throw new InvalidInputError(`at most ${MAX_REGIONS} distinct regions are supported`, { field: 'players[].pings' });
      for (const region of newRegions) {
        this.regionBits.set(region, this.regionNames.length);
        this.regionNames.push(region);
      }
      if (this.regionNames.length > this.regionStride) this.widenRegions(Math.min(32, Math.max(this.regionNames.length, 2 * this.regionStride)));
    }

    // Sweep here rather than in `pass`: amortised over arrivals, one delete per departed ticket.
    if (this.byTicketId.size > 2 * this.liveCount + 4096) this.sweep();
    const slot = this.store(t);
    this.byTicketId.set(t.id, slot);
    for (let k = 0; k < t.count; k++) this.byPlayerId.set(t.playerIds[k], slot);
    this.liveCount++;
    const order = this.order;
    const last = order.length === 0 ? -1 : order[order.length - 1];
    if (last === -1 || this.compareSlots(last, slot) <= 0) order.push(slot);
    else {
      // Late arrival (an `at` earlier than the newest): keep the queue sorted.
      let low = 0;
      let high = order.length;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (this.compareSlots(order[mid], slot) <= 0) low = mid + 1;
        else high = mid;
      }
      order.splice(low, 0, slot);
    }
  }

  /** Removes a waiting ticket; returns whether it was waiting. */
  cancel(ticketId: string): boolean {
    const slot = this.waitingSlotOfTicket(ticketId);
    if (slot === -1) return false;
    this.cancelled[slot] = 1;
    this.liveCount--;
    this.cancelledCount++;
    this.entryTotal -= bitCount(this.masks[slot]);
    return true;
  }

  /** Whether a ticket with this id waits: a caller that may offer a ticket twice asks this rather than reading add's refusal. */
  has(ticketId: string): boolean {
    return this.waitingSlotOfTicket(ticketId) !== -1;
  }

  /** Whether a backfill request with this id is open (see `has`). */
  hasBackfill(backfillId: string): boolean {
    return this.backfillById.has(backfillId);
  }

  /**
   * Opens a backfill request: at the next passes, before new matches form,
   * waiting tickets fill its open slots (see backfill.ts for the rules).
   * Throws InvalidInputError naming the field on a bad request, an id
   * already open, or a match player who is waiting in a ticket.
   */
  addBackfill(input: BackfillInput): void {
    const request = parseBackfill(input, this.teamSize, this.filterDefaults, (playerId) => {
      const slot = this.waitingSlotOfPlayer(playerId);
      return slot === -1 ? undefined : this.ticketIds[slot];
    });
    if (this.backfillById.has(request.id)) throw new InvalidInputError(`backfill "${request.id}" is already open`, { field: 'id' });
    const state = new BackfillState(request, this.widening);
    this.backfillById.set(request.id, state);
    const queue = this.backfillQueue;
    const before = (a: ParsedBackfill) => a.at < request.at || (a.at === request.at && a.id < request.id);
    if (queue.length === 0 || before(queue[queue.length - 1].request)) {
      queue.push(state);
      return;
    }
    // Late arrival: binary search for its place.
    let low = 0;
    let high = queue.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (before(queue[mid].request)) low = mid + 1;
      else high = mid;
    }
    queue.splice(low, 0, state);
  }

  /** Withdraws an open backfill request; returns whether it was open. */
  removeBackfill(backfillId: string): boolean {
    const state = this.backfillById.get(backfillId);
    if (state === undefined) return false;
    state.removed = true;
    this.backfillById.delete(backfillId);
    return true;
  }

  /** The open backfill requests, oldest first, with the players they have gained so far. */
  backfills(): Backfill[] {
    const open: Backfill[] = [];
    for (const state of this.backfillQueue) if (!state.removed) open.push(copyBackfill(state.request));
    return open;
  }

  /**
   * The waiting tickets, oldest first, as validated (filter defaults filled
   * in). Each player's `pings` lists regions in the order the queue first saw
   * them, which may differ from the order the ticket sent them in.
   */
  waiting(): Ticket[] {
    const result: Ticket[] = [];
    const stride = this.regionStride;
    for (const slot of this.order) {
      if (this.cancelled[slot] === 1) continue;
      const players: TicketPlayer[] = [];
      for (let row = this.firstPlayer[slot], end = row + this.sizes[slot]; row < end; row++) {
        const pings: Record<string, number> = {};
        for (let r = 0; r < this.regionNames.length; r++) {
          const ping = this.playerPings[row * stride + r];
          if (!Number.isNaN(ping)) pings[this.regionNames[r]] = ping;
        }
        const player: TicketPlayer = {
          id: this.playerIds[row],
          percentile: this.playerPercentiles[row],
          pings,
          filter: { within: this.playerWithin[row], strict: this.playerStrict[row] === 1, maxPing: this.playerMaxPing[row] },
        };
        if (!Number.isNaN(this.playerRatings[row])) player.rating = this.playerRatings[row];
        players.push(player);
      }
      result.push({ id: this.ticketIds[slot], at: this.arrivals[slot], players });
    }
    return result;
  }

  /**
   * One matchmaking pass at `now` (seconds, same clock as tickets' `at`).
   * Matched tickets leave the queue.
   */
  pass(now: number): PassResult {
    if (typeof now !== 'number' || !Number.isFinite(now)) throw new InvalidInputError(`must be a finite number of seconds, got ${now}`, { field: 'now' });
    const n = this.liveCount;
    const buffers = this.passBuffers;
    buffers.fit(n, this.entryTotal, this.regionNames.length * BUCKETS + 1);
    // Queue position i → slot.
    const slots = buffers.slots;
    {
      let i = 0;
      for (const slot of this.order) if (this.cancelled[slot] === 0) slots[i++] = slot;
    }
    const s = this.teamSize;
    const regionCount = this.regionNames.length;
    const levels = this.levels;
    const lastLevel = levels - 1;
    const everySeconds = this.widening.everySeconds;
    const slotRanges = this.ranges;
    const slotMasks = this.masks;
    const slotMin = this.minPercentiles;

    // Index: region × percentile bucket → entries, oldest first (a counting
    // sort). Each entry is a copy of what the search reads about its ticket
    // (ENTRY fields): an anchor scans candidates bucket by bucket, so their
    // fields sit next to each other in memory instead of costing a cache miss
    // apiece. The fill reads tickets in queue order and appends to one
    // stream per bucket, so it is sequential on both sides.
    const starts = buffers.starts;
    const bucketCount = regionCount * BUCKETS + 1;
    starts.fill(0, 0, bucketCount);
    const bucket = buffers.bucket;
    for (let i = 0; i < n; i++) {
      const slot = slots[i];
      let mask = slotMasks[slot];
      const b = bucketOf(slotMin[slot]);
      bucket[i] = b;
      while (mask !== 0) {
        const r = 31 - Math.clz32(mask & -mask);
        mask &= mask - 1;
        starts[r * BUCKETS + b + 1]++;
      }
    }
    for (let k = 1; k < bucketCount; k++) starts[k] += starts[k - 1];
    const total = starts[bucketCount - 1];
    const fill = buffers.fill;
    fill.set(starts.subarray(0, bucketCount - 1));
    const entries = buffers.entries;
    const entryRec = buffers.entryRec;
    const firstEntry = buffers.firstEntry;
    for (let i = 0; i < n; i++) {
      const slot = slots[i];
      const slotMask = slotMasks[slot];
      if (slotMask === 0) {
        firstEntry[i] = -1;
        continue;
      }
      // Steps past the end of the schedule change nothing; report the one in effect.
      const waited = now - this.arrivals[slot];
      const step = waited <= 0 ? 0 : Math.min(Math.floor(waited / everySeconds), lastLevel);
      const at = (slot * levels + step) * 2;
      const low = slotRanges[at];
      const high = slotRanges[at + 1];
      const minP = slotMin[slot];
      const maxP = this.maxPercentiles[slot];
      const size = this.sizes[slot];
      const rankSum = this.rankSums[slot];
      const b = bucket[i];
      let mask = slotMask;
      let first = -1;
      while (mask !== 0) {
        const r = 31 - Math.clz32(mask & -mask);
        mask &= mask - 1;
        const e = fill[r * BUCKETS + b]++;
        if (first === -1) first = e;
        entries[e] = i;
        const o = e * ENTRY;
        entryRec[o + LOW] = low;
        entryRec[o + HIGH] = high;
        entryRec[o + MIN_P] = minP;
        entryRec[o + MAX_P] = maxP;
        entryRec[o + SIZE] = size;
        entryRec[o + RANK_SUM] = rankSum;
        entryRec[o + MASK] = slotMask;
        entryRec[o + STEP] = step;
      }
      firstEntry[i] = first;
    }
    // skip[e] > e: every entry in [e, skip[e]) belongs to a matched ticket.
    const skip = buffers.skip;
    skip.fill(0, 0, total);
    const matched = buffers.matched;
    matched.fill(0, 0, n);
    const nextLive = (from: number, end: number): number => {
      let x = from;
      while (x < end && matched[entries[x]] === 1) x = skip[x] > x ? skip[x] : x + 1;
      let y = from;
      while (y < x) {
        const next = skip[y] > y ? skip[y] : y + 1;
        skip[y] = x;
        y = next;
      }
      return x;
    };

    const maxCandidates = this.maxCandidates;
    // Open backfills first: the tickets they take are marked matched, so the anchors below pass them over.
    const backfills = this.backfillById.size === 0 ? [] : this.fillBackfills(now, slots, starts, entries, entryRec, matched, nextLive);
    if (this.backfillById.size === 0 && this.backfillQueue.length > 0) this.backfillQueue = []; // only withdrawn ones were left
    const matches: FormedMatch[] = [];
    // Scratch for one attempt: a match holds at most 2·teamSize tickets.
    const chosen = new Int32Array(2 * s);
    const chosenEntry = new Int32Array(2 * s);
    const chosenTeam = new Int32Array(2 * s);
    const regionOrder = new Int32Array(MAX_REGIONS);
    const stride = this.regionStride;
    const worstPings = this.worstPings;

    for (let anchor = 0; anchor < n; anchor++) {
      if (matched[anchor] === 1) continue;
      const anchorEntry = firstEntry[anchor];
      if (anchorEntry === -1) continue; // no region within every player's maxPing
      const ao = anchorEntry * ENTRY;
      const anchorMask = entryRec[ao + MASK];
      // Anchor's regions, best (lowest worst-ping) first, ties to the earlier region (insertion sort, stable).
      const pingBase = slots[anchor] * stride;
      let regionsToTry = 0;
      for (let r = 0; r < regionCount; r++) {
        if (((anchorMask >>> r) & 1) === 0) continue;
        const ping = worstPings[pingBase + r];
        let at = regionsToTry++;
        while (at > 0 && worstPings[pingBase + regionOrder[at - 1]] > ping) {
          regionOrder[at] = regionOrder[at - 1];
          at--;
        }
        regionOrder[at] = r;
      }

      for (let regionIndex = 0; regionIndex < regionsToTry; regionIndex++) {
        const region = regionOrder[regionIndex];
        let chosenCount = 1;
        chosen[0] = anchor;
        chosenEntry[0] = anchorEntry;
        chosenTeam[0] = 0;
        let room0 = s - entryRec[ao + SIZE];
        let room1 = s;
        let sum0 = entryRec[ao + RANK_SUM];
        let sum1 = 0;
        let low = entryRec[ao + LOW];
        let high = entryRec[ao + HIGH];
        let pMin = entryRec[ao + MIN_P];
        let pMax = entryRec[ao + MAX_P];
        let mask = anchorMask;
        let examined = 0;
        const center = bucketOf((pMin + pMax) / 2);
        const base = region * BUCKETS;
        // Walk buckets outward from the anchor's centre while they can still hold compatible tickets.
        search: for (let distance = 0; distance < BUCKETS; distance++) {
          if (walkDone(center, distance, low, high)) break;
          for (let side = 0; side < 2; side++) {
            const b = walkBucket(center, distance, side, low, high);
            if (b === -1) continue;
            const end = starts[base + b + 1];
            for (let e = nextLive(starts[base + b], end); e < end; e = nextLive(e + 1, end)) {
              const c = entries[e];
              if (c === anchor) continue;
              if (++examined > maxCandidates) break search;
              const co = e * ENTRY;
              const cLow = entryRec[co + LOW];
              const cHigh = entryRec[co + HIGH];
              const cMin = entryRec[co + MIN_P];
              const cMax = entryRec[co + MAX_P];
              const newLow = cLow > low ? cLow : low;
              const newHigh = cHigh < high ? cHigh : high;
              const newPMin = cMin < pMin ? cMin : pMin;
              const newPMax = cMax > pMax ? cMax : pMax;
              if (newLow > newPMin || newPMax > newHigh) continue;
              const size = entryRec[co + SIZE];
              let team: number;
              // Fill the team with the lower average rank so far; the final split is rebalanced anyway.
              if (size <= room0 && size <= room1) team = sum0 * (s - room1) <= sum1 * (s - room0) ? 0 : 1;
              else if (size <= room0) team = 0;
              else if (size <= room1) team = 1;
              else continue;
              chosen[chosenCount] = c;
              chosenEntry[chosenCount] = e;
              chosenTeam[chosenCount] = team;
              chosenCount++;
              if (team === 0) {
                room0 -= size;
                sum0 += entryRec[co + RANK_SUM];
              } else {
                room1 -= size;
                sum1 += entryRec[co + RANK_SUM];
              }
              low = newLow;
              high = newHigh;
              pMin = newPMin;
              pMax = newPMax;
              mask &= entryRec[co + MASK];
              if (room0 + room1 === 0) break search;
            }
          }
        }
        if (room0 + room1 !== 0) continue;
        for (let k = 0; k < chosenCount; k++) matched[chosen[k]] = 1;
        matches.push(this.finish(chosen, chosenEntry, chosenTeam, chosenCount, mask, now, slots, entryRec));
        break;
      }
    }

    // Matched tickets leave like cancelled ones. The columns are compacted (the unmatched tickets
    // renumbered 0… in queue order) only once a quarter of the slots are dead: a queue that mostly
    // waits would otherwise be copied whole, and its id maps rewritten, at every pass.
    let remaining = 0;
    for (let i = 0; i < n; i++) {
      if (matched[i] === 0) slots[remaining++] = slots[i];
      else {
        const slot = slots[i];
        this.cancelled[slot] = 1;
        this.liveCount--;
        this.cancelledCount++;
        this.entryTotal -= bitCount(this.masks[slot]);
      }
    }
    const kept = slots.subarray(0, remaining);
    const waiting = new Array<string>(remaining);
    for (let i = 0; i < remaining; i++) waiting[i] = this.ticketIds[kept[i]];
    // Compacting moves every live slot; do it once a quarter of the slots are dead, not after every pass.
    if (this.cancelledCount > 0 && this.cancelledCount * 4 >= this.slotCount) this.compact(kept);
    return { matches, waiting, backfills };
  }

  /**
   * Fills the open backfill requests, oldest first, from the pass's index.
   * For each: the entries of its region, buckets outward from the middle of
   * its players' percentiles, oldest first within a bucket (as an anchor
   * walks them), at most `maxCandidates` examined; a ticket joins when its
   * range holds every player of the match (newcomers included) and every
   * player's and newcomer's range holds its players (the match's players
   * need not hold each other), its worst ping in the region is within the request's maxPing, none of
   * its players is already in the match, and a team has room for the whole
   * party — the team with the most open slots, ties to the lower average
   * rank. The newcomers are then exchanged between teams (equal player
   * counts) while that narrows the spread of team average ranks.
   */
  private fillBackfills(
    now: number,
    slots: Int32Array,
    starts: Int32Array,
    entries: Int32Array,
    entryRec: Float64Array,
    matched: Uint8Array,
    nextLive: (from: number, end: number) => number,
  ): BackfillResult[] {
    const results: BackfillResult[] = [];
    const lastLevel = this.levels - 1;
    const stride = this.regionStride;
    const maxCandidates = this.maxCandidates;
    for (const state of this.backfillQueue) {
      if (state.removed) continue;
      const request = state.request;
      const region = this.regionBits.get(request.region);
      if (region === undefined) continue; // no ticket has ever named the region
      const waited = now - request.at;
      const step = waited <= 0 ? 0 : Math.min(Math.floor(waited / this.widening.everySeconds), lastLevel);
      let low = state.ranges[2 * step];
      let high = state.ranges[2 * step + 1];
      let pMin = state.minPercentile;
      let pMax = state.maxPercentile;
      const teamCount = request.teams.length;
      const open = request.teams.map((_, t) => state.open(t));
      const sums = [...state.rankSums];
      const counts = [...state.counts];
      let openTotal = open.reduce((a, b) => a + b, 0);
      // Chosen tickets: queue position, team, size, rank sum.
      const chosen: Array<{ position: number; team: number; size: number; rankSum: number }> = [];
      const center = pMin <= pMax ? bucketOf((pMin + pMax) / 2) : BUCKETS / 2; // an emptied match starts mid-ladder
      const base = region * BUCKETS;
      let examined = 0;
      search: for (let distance = 0; distance < BUCKETS; distance++) {
        if (walkDone(center, distance, low, high)) break;
        for (let side = 0; side < 2; side++) {
          const b = walkBucket(center, distance, side, low, high);
          if (b === -1) continue;
          const end = starts[base + b + 1];
          for (let e = nextLive(starts[base + b], end); e < end; e = nextLive(e + 1, end)) {
            if (++examined > maxCandidates) break search;
            const c = entries[e];
            const co = e * ENTRY;
            const cLow = entryRec[co + LOW];
            const cHigh = entryRec[co + HIGH];
            const cMin = entryRec[co + MIN_P];
            const cMax = entryRec[co + MAX_P];
            // Both ways: the ticket's range holds every player, every player's (and newcomer's) range holds the ticket's players.
            // Unlike an anchor's match, the match's own players need not hold each other: they are already playing.
            if (cLow > pMin || pMax > cHigh || cMin < low || cMax > high) continue;
            const slot = slots[c];
            if (this.worstPings[slot * stride + region] > request.maxPing) continue;
            if (this.inRoster(slot, state.roster)) continue;
            const size = entryRec[co + SIZE];
            let team = -1;
            for (let t = 0; t < teamCount; t++) {
              if (open[t] < size) continue;
              if (team === -1 || open[t] > open[team] || (open[t] === open[team] && sums[t] * Math.max(1, counts[team]) < sums[team] * Math.max(1, counts[t]))) team = t;
            }
            if (team === -1) continue;
            const rankSum = entryRec[co + RANK_SUM];
            matched[c] = 1;
            chosen.push({ position: c, team, size, rankSum });
            open[team] -= size;
            openTotal -= size;
            sums[team] += rankSum;
            counts[team] += size;
            low = Math.max(low, cLow);
            high = Math.min(high, cHigh);
            pMin = Math.min(pMin, cMin);
            pMax = Math.max(pMax, cMax);
            if (openTotal === 0) break search;
          }
        }
      }
      if (chosen.length === 0) continue;
      rebalanceNewcomers(chosen, sums, counts);
      chosen.sort((a, b) => a.position - b.position);
      const added: string[][] = request.teams.map(() => []);
      for (const { position, team } of chosen) {
        const slot = slots[position];
        added[team].push(this.ticketIds[slot]);
        const players = [];
        for (let row = this.firstPlayer[slot], end = row + this.sizes[slot]; row < end; row++) {
          players.push({
            id: this.playerIds[row],
            percentile: this.playerPercentiles[row],
            rating: this.playerRatings[row],
            within: this.playerWithin[row],
            strict: this.playerStrict[row] === 1,
          });
        }
        state.join(team, players);
      }
      results.push({
        id: request.id,
        match: request.match,
        region: request.region,
        added,
        players: request.teams.map((team) => [...team]),
        open: request.teams.map((_, t) => state.open(t)),
        filled: openTotal === 0,
        ...(openTotal === 0 ? {} : { remaining: backfillInput(request) }),
      });
    }
    for (const result of results) {
      if (!result.filled) continue;
      this.backfillById.get(result.id)!.removed = true;
      this.backfillById.delete(result.id);
    }
    this.backfillQueue = this.backfillQueue.filter((state) => !state.removed);
    return results;
  }

  /** Whether any player of the ticket in `slot` is in the set. */
  private inRoster(slot: number, roster: ReadonlySet<string>): boolean {
    for (let row = this.firstPlayer[slot], end = row + this.sizes[slot]; row < end; row++) if (roster.has(this.playerIds[row])) return true;
    return false;
  }

  /** Slot of the waiting ticket with this id, or -1. */
  private waitingSlotOfTicket(ticketId: string): number {
    const slot = this.byTicketId.get(ticketId);
    if (slot === undefined || slot >= this.slotCount || this.cancelled[slot] === 1 || this.ticketIds[slot] !== ticketId) return -1;
    return slot;
  }

  /** Slot of the waiting ticket holding this player, or -1. */
  private waitingSlotOfPlayer(playerId: string): number {
    const slot = this.byPlayerId.get(playerId);
    if (slot === undefined || slot >= this.slotCount || this.cancelled[slot] === 1) return -1;
    for (let row = this.firstPlayer[slot], end = row + this.sizes[slot]; row < end; row++) if (this.playerIds[row] === playerId) return slot;
    return -1;
  }

  /** Oldest first, ties by ticket id. */
  private compareSlots(a: number, b: number): number {
    const idA = this.ticketIds[a];
    const idB = this.ticketIds[b];
    return this.arrivals[a] - this.arrivals[b] || (idA < idB ? -1 : idA > idB ? 1 : 0);
  }

  /** Drops map entries of tickets that left the queue. */
  private sweep(): void {
    for (const [id] of this.byTicketId) if (this.waitingSlotOfTicket(id) === -1) this.byTicketId.delete(id);
    for (const [id] of this.byPlayerId) if (this.waitingSlotOfPlayer(id) === -1) this.byPlayerId.delete(id);
  }

  /** Fresh columns with room for `slots` tickets and `players` players (contents dropped). */
  private allocate(slots: number, players: number): void {
    const levels = this.levels;
    const stride = this.regionStride;
    this.slotCapacity = slots;
    // Plain arrays filled in order (appends): `new Array(n)` above ~100k would start in slow dictionary mode.
    this.ticketIds = [];
    this.arrivals = new Float64Array(slots);
    this.minPercentiles = new Float64Array(slots);
    this.maxPercentiles = new Float64Array(slots);
    this.rankSums = new Float64Array(slots);
    this.sizes = new Int32Array(slots);
    this.masks = new Int32Array(slots);
    this.cancelled = new Uint8Array(slots);
    this.firstPlayer = new Int32Array(slots);
    this.ranges = new Float64Array(slots * levels * 2);
    this.worstPings = new Float64Array(slots * stride);
    this.playerCapacity = players;
    this.playerIds = [];
    this.playerPercentiles = new Float64Array(players);
    this.playerRatings = new Float64Array(players);
    this.playerWithin = new Float64Array(players);
    this.playerStrict = new Uint8Array(players);
    this.playerMaxPing = new Float64Array(players);
    this.playerPings = new Float64Array(players * stride);
  }

  /** Copies the given slots, in this order, into fresh columns as slots 0…; remaps the id maps. */
  private compact(kept: Int32Array): void {
    const old = {
      ticketIds: this.ticketIds,
      arrivals: this.arrivals,
      minPercentiles: this.minPercentiles,
      maxPercentiles: this.maxPercentiles,
      rankSums: this.rankSums,
      sizes: this.sizes,
      masks: this.masks,
      firstPlayer: this.firstPlayer,
      ranges: this.ranges,
      worstPings: this.worstPings,
      playerIds: this.playerIds,
      playerPercentiles: this.playerPercentiles,
      playerRatings: this.playerRatings,
      playerWithin: this.playerWithin,
      playerStrict: this.playerStrict,
      playerMaxPing: this.playerMaxPing,
      playerPings: this.playerPings,
    };
    const m = kept.length;
    let players = 0;
    for (let i = 0; i < m; i++) players += old.sizes[kept[i]];
    this.allocate(Math.max(1024, m * 2), Math.max(1024, players * 2));
    const levels2 = this.levels * 2;
    const stride = this.regionStride;
    let row = 0;
    for (let slot = 0; slot < m; slot++) {
      const from = kept[slot];
      const id = old.ticketIds[from];
      this.ticketIds[slot] = id;
      this.arrivals[slot] = old.arrivals[from];
      this.minPercentiles[slot] = old.minPercentiles[from];
      this.maxPercentiles[slot] = old.maxPercentiles[from];
      this.rankSums[slot] = old.rankSums[from];
      this.sizes[slot] = old.sizes[from];
      this.masks[slot] = old.masks[from];
      this.firstPlayer[slot] = row;
      this.ranges.set(old.ranges.subarray(from * levels2, (from + 1) * levels2), slot * levels2);
      this.worstPings.set(old.worstPings.subarray(from * stride, (from + 1) * stride), slot * stride);
      this.byTicketId.set(id, slot);
      for (let p = old.firstPlayer[from], end = p + old.sizes[from]; p < end; p++, row++) {
        this.playerIds[row] = old.playerIds[p];
        this.playerPercentiles[row] = old.playerPercentiles[p];
        this.playerRatings[row] = old.playerRatings[p];
        this.playerWithin[row] = old.playerWithin[p];
        this.playerStrict[row] = old.playerStrict[p];
        this.playerMaxPing[row] = old.playerMaxPing[p];
        this.playerPings.set(old.playerPings.subarray(p * stride, (p + 1) * stride), row * stride);
        this.byPlayerId.set(old.playerIds[p], slot);
      }
    }
    this.slotCount = m;
    this.playerCount = row;
    this.order = Array.from({ length: m }, (_, i) => i);
    this.liveCount = m;
    this.cancelledCount = 0;
    let entryTotal = 0;
    for (let slot = 0; slot < m; slot++) entryTotal += bitCount(this.masks[slot]);
    this.entryTotal = entryTotal;
  }

  /** Grows the columns (doubling), keeping their contents. */
  private grow(slotsNeeded: number, playersNeeded: number): void {
    const levels = this.levels;
    const stride = this.regionStride;
    if (slotsNeeded > this.slotCapacity) {
      let capacity = this.slotCapacity;
      while (capacity < slotsNeeded) capacity *= 2;
      this.slotCapacity = capacity;
      this.arrivals = grown(this.arrivals, capacity);
      this.minPercentiles = grown(this.minPercentiles, capacity);
      this.maxPercentiles = grown(this.maxPercentiles, capacity);
      this.rankSums = grown(this.rankSums, capacity);
      this.sizes = grown(this.sizes, capacity);
      this.masks = grown(this.masks, capacity);
      this.cancelled = grown(this.cancelled, capacity);
      this.firstPlayer = grown(this.firstPlayer, capacity);
      this.ranges = grown(this.ranges, capacity * levels * 2);
      this.worstPings = grown(this.worstPings, capacity * stride);
    }
    if (playersNeeded > this.playerCapacity) {
      let capacity = this.playerCapacity;
      while (capacity < playersNeeded) capacity *= 2;
      this.playerCapacity = capacity;
      this.playerPercentiles = grown(this.playerPercentiles, capacity);
      this.playerRatings = grown(this.playerRatings, capacity);
      this.playerWithin = grown(this.playerWithin, capacity);
      this.playerStrict = grown(this.playerStrict, capacity);
      this.playerMaxPing = grown(this.playerMaxPing, capacity);
      this.playerPings = grown(this.playerPings, capacity * stride);
    }
  }

  /** Re-lays the per-region columns out with room for `stride` regions. */
  private widenRegions(stride: number): void {
    const relayout = (from: Float64Array, rows: number, fillValue: number): Float64Array<ArrayBuffer> => {
      const to = new Float64Array((from.length / this.regionStride) * stride).fill(fillValue);
      for (let row = 0; row < rows; row++) to.set(from.subarray(row * this.regionStride, (row + 1) * this.regionStride), row * stride);
      return to;
    };
    this.worstPings = relayout(this.worstPings, this.slotCount, Infinity);
    this.playerPings = relayout(this.playerPings, this.playerCount, NaN);
    this.regionStride = stride;
  }

  /** Writes a parsed ticket into a new slot; returns the slot. */
  private store(t: TicketColumns): number {
    this.grow(this.slotCount + 1, this.playerCount + t.count);
    const slot = this.slotCount++;
    const firstRow = this.playerCount;
    this.playerCount += t.count;
    const stride = this.regionStride;
    const widening = this.widening;
    const levels = this.levels;
    const worstBase = slot * stride;
    for (let r = 0; r < stride; r++) this.worstPings[worstBase + r] = -1; // -1: no player has a ping there yet
    let minPercentile = Infinity;
    let maxPercentile = -Infinity;
    let rankSum = 0;
    let regionMask = -1 >>> 1; // all 31 bits
    for (let k = 0; k < t.count; k++) {
      const row = firstRow + k;
      const percentile = t.percentiles[k];
      const rating = t.ratings[k];
      const maxPing = t.maxPing[k];
      this.playerIds[row] = t.playerIds[k];
      this.playerPercentiles[row] = percentile;
      this.playerRatings[row] = rating;
      this.playerWithin[row] = t.within[k];
      this.playerStrict[row] = t.strict[k] ? 1 : 0;
      this.playerMaxPing[row] = maxPing;
      minPercentile = Math.min(minPercentile, percentile);
      maxPercentile = Math.max(maxPercentile, percentile);
      rankSum += Number.isNaN(rating) ? percentile : rating;
      const pingBase = row * stride;
      for (let r = 0; r < stride; r++) this.playerPings[pingBase + r] = NaN;
      let playerMask = 0;
      for (let p = t.pingStart[k]; p < t.pingStart[k + 1]; p++) {
        const bit = this.regionBits.get(t.pingRegions[p])!;
        const ping = t.pingValues[p];
        this.playerPings[pingBase + bit] = ping;
        if (ping > this.worstPings[worstBase + bit]) this.worstPings[worstBase + bit] = ping;
        if (ping <= maxPing) playerMask |= 1 << bit;
      }
      regionMask &= playerMask;
    }
    for (let r = 0; r < stride; r++) if (this.worstPings[worstBase + r] === -1) this.worstPings[worstBase + r] = Infinity;
    // The range at every widening level, so a pass only looks one up.
    for (let level = 0; level < levels; level++) {
      let low = Infinity;
      let high = -Infinity;
      for (let k = 0; k < t.count; k++) {
        const percentile = t.percentiles[k];
        const within = effectiveWithin(t.within[k], t.strict[k], level, widening);
        if (percentile - within < low) low = percentile - within;
        if (percentile + within > high) high = percentile + within;
      }
      this.ranges[(slot * levels + level) * 2] = low;
      this.ranges[(slot * levels + level) * 2 + 1] = high;
    }
    this.ticketIds[slot] = t.id;
    this.arrivals[slot] = t.at;
    this.minPercentiles[slot] = minPercentile;
    this.maxPercentiles[slot] = maxPercentile;
    this.rankSums[slot] = rankSum;
    this.sizes[slot] = t.count;
    this.masks[slot] = regionMask;
    this.cancelled[slot] = 0;
    this.firstPlayer[slot] = firstRow;
    this.entryTotal += bitCount(regionMask);
    // The pass's working arrays grow here, with the queue, so a pass itself
    // allocates nothing in proportion to the queue but its output.
    this.passBuffers.fit(this.liveCount + 1, this.entryTotal, this.regionNames.length * BUCKETS + 1, false);
    return slot;
  }

  /**
   * Balances the chosen tickets into two teams, picks the region and reports
   * quality. `chosen` holds queue positions, `chosenEntry` each one's entry
   * record.
   */
  private finish(
    chosen: Int32Array,
    chosenEntry: Int32Array,
    chosenTeam: Int32Array,
    k: number,
    mask: number,
    now: number,
    slots: Int32Array,
    entryRec: Float64Array,
  ): FormedMatch {
    const s = this.teamSize;
    const scratch = this.balanceScratch();
    for (let i = 0; i < k; i++) {
      scratch.sizes[i] = entryRec[chosenEntry[i] * ENTRY + SIZE];
      scratch.sums[i] = entryRec[chosenEntry[i] * ENTRY + RANK_SUM];
    }
    const team = scratch.team;
    balanceInto(k, scratch.sizes, scratch.sums, s, chosenTeam, team, scratch);
    // Region: the allowed one with the lowest worst ping; ties to the earlier-seen region.
    const stride = this.regionStride;
    let region = -1;
    let regionPing = Infinity;
    for (let r = 0; r < this.regionNames.length; r++) {
      if (((mask >>> r) & 1) === 0) continue;
      let worst = 0;
      for (let i = 0; i < k; i++) {
        const ping = this.worstPings[slots[chosen[i]] * stride + r];
        if (ping > worst) worst = ping;
      }
      if (worst < regionPing) {
        regionPing = worst;
        region = r;
      }
    }
    // Oldest (lowest queue position) first; insertion sort, k is small.
    const order = scratch.order;
    for (let i = 0; i < k; i++) {
      let at = i;
      while (at > 0 && chosen[order[at - 1]] > chosen[i]) {
        order[at] = order[at - 1];
        at--;
      }
      order[at] = i;
    }
    const firstTeam = team[order[0]];
    // Output arrays at their exact sizes: grown by push, each would carry spare
    // capacity, and at a million tickets the output is most of what the pass allocates.
    let firstTeamTickets = 0;
    for (let i = 0; i < k; i++) if (team[i] === firstTeam) firstTeamTickets++;
    const teams: string[][] = [new Array<string>(firstTeamTickets), new Array<string>(k - firstTeamTickets)];
    const players: string[][] = [new Array<string>(s), new Array<string>(s)];
    const waits: number[][] = [new Array<number>(firstTeamTickets), new Array<number>(k - firstTeamTickets)];
    let sum0 = 0;
    let sum1 = 0;
    let pMin = Infinity;
    let pMax = -Infinity;
    let step = 0;
    // Next free index in each team's output arrays.
    let tickets0 = 0;
    let tickets1 = 0;
    let players0 = 0;
    let players1 = 0;
    for (let j = 0; j < k; j++) {
      const i = order[j];
      const c = chosen[i];
      const slot = slots[c];
      const ticketId = this.ticketIds[slot];
      const wait = now - this.arrivals[slot];
      const firstRow = this.firstPlayer[slot];
      const endRow = firstRow + this.sizes[slot];
      const co = chosenEntry[i] * ENTRY;
      if (team[i] === firstTeam) {
        teams[0][tickets0] = ticketId;
        waits[0][tickets0++] = wait;
        for (let row = firstRow; row < endRow; row++) players[0][players0++] = this.playerIds[row];
        sum0 += entryRec[co + RANK_SUM];
      } else {
        teams[1][tickets1] = ticketId;
        waits[1][tickets1++] = wait;
        for (let row = firstRow; row < endRow; row++) players[1][players1++] = this.playerIds[row];
        sum1 += entryRec[co + RANK_SUM];
      }
      pMin = Math.min(pMin, entryRec[co + MIN_P]);
      pMax = Math.max(pMax, entryRec[co + MAX_P]);
      step = Math.max(step, entryRec[co + STEP]);
    }
    const averages: [number, number] = [sum0 / s, sum1 / s];
    const balance = Math.max(averages[0], averages[1]) / Math.max(Number.MIN_VALUE, Math.min(averages[0], averages[1]));
    return {
      region: this.regionNames[region],
      teams,
      players,
      quality: { averages, balance, percentileSpread: pMax - pMin, worstPing: regionPing, wideningStep: step, waits },
    };
  }

  private scratch: BalanceScratch | undefined;

  private balanceScratch(): BalanceScratch {
    return (this.scratch ??= newBalanceScratch(2 * this.teamSize));
  }
}

function bitCount(mask: number): number {
  let count = 0;
  for (let m = mask; m !== 0; m &= m - 1) count++;
  return count;
}

/**
 * The pass's working arrays, kept between passes: per queue position, and
 * per index entry (a ticket has one entry per region it can play in).
 * Allocating them in the pass (over 100 MB at a million tickets) cost more
 * than the search itself, mostly in the full garbage collection that such
 * an allocation sets off.
 */
class PassBuffers {
  /** Queue position → slot. */
  slots = new Int32Array(0);
  /** Percentile bucket of each position's lowest player. */
  bucket = new Int32Array(0);
  /** 1 once the position's ticket is in a match. */
  matched = new Uint8Array(0);
  /** Each position's first index entry, or -1 (it can play in no region). */
  firstEntry = new Int32Array(0);
  /** Entry → queue position. */
  entries = new Int32Array(0);
  /** ENTRY fields per entry. */
  entryRec = new Float64Array(0);
  /** Skip pointers over matched entries. */
  skip = new Int32Array(0);
  /** First entry of each region × bucket, and a running copy for the fill. */
  starts = new Int32Array(0);
  fill = new Int32Array(0);

  /**
   * Room for `tickets` positions, `entries` entries and `buckets` bucket
   * starts. Grows by doubling; with `shrink`, also gives memory back when
   * more than four times what is needed (after a pass emptied a big queue).
   */
  fit(tickets: number, entries: number, buckets: number, shrink = true): void {
    const resize = (capacity: number, needed: number): number => {
      if (needed > capacity) return Math.max(1024, needed, 2 * capacity);
      if (shrink && capacity > 4 * Math.max(1024, needed)) return Math.max(1024, 2 * needed);
      return capacity;
    };
    const positions = resize(this.slots.length, tickets);
    if (positions !== this.slots.length) {
      this.slots = new Int32Array(positions);
      this.bucket = new Int32Array(positions);
      this.matched = new Uint8Array(positions);
      this.firstEntry = new Int32Array(positions);
    }
    const entryCapacity = resize(this.entries.length, entries);
    if (entryCapacity !== this.entries.length) {
      this.entries = new Int32Array(entryCapacity);
      this.entryRec = new Float64Array(entryCapacity * ENTRY);
      this.skip = new Int32Array(entryCapacity);
    }
    if (buckets > this.starts.length) {
      this.starts = new Int32Array(buckets);
      this.fill = new Int32Array(buckets);
    }
  }
}

/** Copy of `from` with a larger length. */
function grown<T extends Float64Array | Int32Array | Uint8Array>(from: T, length: number): T {
  const to = new (from.constructor as new (length: number) => T)(length);
  to.set(from);
  return to;
}

interface BalanceScratch {
  sizes: Int32Array;
  sums: Float64Array;
  team: Int32Array;
  order: Int32Array;
  side0: Int32Array;
  side1: Int32Array;
  teamSums: Float64Array;
}

function newBalanceScratch(tickets: number): BalanceScratch {
  return {
    sizes: new Int32Array(tickets),
    sums: new Float64Array(tickets),
    team: new Int32Array(tickets),
    order: new Int32Array(tickets),
    side0: new Int32Array(tickets),
    side1: new Int32Array(tickets),
    teamSums: new Float64Array(2),
  };
}

/**
 * Splits tickets (party sizes, rank sums) into two teams of exactly
 * `teamSize` players, minimising the difference of rank sums — equal sizes,
 * so that is the team-rank write-up's OA/YA closest to 1. Greedy largest-first, then
 * improving swaps (one-for-one and one-for-two of equal player counts) until
 * none helps. `fallback` is a valid split used when the greedy one cannot
 * fill both teams exactly. Returns each ticket's team (0 or 1).
 */
export function balanceTeams(sizes: readonly number[], rankSums: readonly number[], teamSize: number, fallback: readonly number[]): number[] {
  const k = sizes.length;
  const scratch = newBalanceScratch(k);
  scratch.sizes.set(sizes);
  scratch.sums.set(rankSums);
  balanceInto(k, scratch.sizes, scratch.sums, teamSize, Int32Array.from(fallback), scratch.team, scratch);
  return Array.from(scratch.team);
}

/**
 * `balanceTeams` on typed scratch arrays (the pass calls it once per match,
 * so it allocates nothing). Writes each ticket's team into `team`.
 */
function balanceInto(k: number, sizes: Int32Array, rankSums: Float64Array, teamSize: number, fallback: Int32Array, team: Int32Array, scratch: BalanceScratch): void {
  // Largest party first, then highest rank; insertion sort (k ≤ 2·teamSize is small).
  const order = scratch.order;
  for (let i = 0; i < k; i++) {
    let at = i;
    while (at > 0) {
      const o = order[at - 1];
      if (sizes[o] > sizes[i] || (sizes[o] === sizes[i] && rankSums[o] >= rankSums[i])) break;
      order[at] = o;
      at--;
    }
    order[at] = i;
  }
  team.fill(-1, 0, k);
  let room0 = teamSize;
  let room1 = teamSize;
  let sum0 = 0;
  let sum1 = 0;
  let ok = true;
  for (let j = 0; j < k; j++) {
    const i = order[j];
    const fits0 = sizes[i] <= room0;
    const fits1 = sizes[i] <= room1;
    let side: number;
    if (fits0 && fits1) side = sum0 <= sum1 ? 0 : 1;
    else if (fits0) side = 0;
    else if (fits1) side = 1;
    else {
      ok = false;
      break;
    }
    team[i] = side;
    if (side === 0) {
      room0 -= sizes[i];
      sum0 += rankSums[i];
    } else {
      room1 -= sizes[i];
      sum1 += rankSums[i];
    }
  }
  if (!ok || room0 !== 0 || room1 !== 0) {
    sum0 = 0;
    sum1 = 0;
    for (let i = 0; i < k; i++) {
      team[i] = fallback[i];
      if (team[i] === 0) sum0 += rankSums[i];
      else sum1 += rankSums[i];
    }
  }
  // Local improvement: the best size-preserving exchange, repeated. Matches
  // hold at most 2·teamSize tickets, so the O(k³) scan per round is small.
  const side0 = scratch.side0;
  const side1 = scratch.side1;
  for (let round = 0; round < k; round++) {
    let n0 = 0;
    let n1 = 0;
    for (let i = 0; i < k; i++) {
      if (team[i] === 0) side0[n0++] = i;
      else side1[n1++] = i;
    }
    const diff = sum0 - sum1;
    const absDiff = Math.abs(diff);
    let bestGain = 1e-12;
    let b0 = -1;
    let b1 = -1;
    let b2 = -1;
    for (let x = 0; x < n0; x++) {
      const i = side0[x];
      for (let y = 0; y < n1; y++) {
        const j = side1[y];
        if (sizes[i] !== sizes[j]) continue;
        const gain = absDiff - Math.abs(diff - 2 * (rankSums[i] - rankSums[j]));
        if (gain > bestGain) {
          bestGain = gain;
          b0 = i;
          b1 = j;
          b2 = -1;
        }
      }
    }
    // One ticket against two from the other team (a duo for two solos, either way).
    for (let side = 0; side < 2; side++) {
      const sign = side === 0 ? 1 : -1;
      const own = side === 0 ? side0 : side1;
      const ownCount = side === 0 ? n0 : n1;
      const other = side === 0 ? side1 : side0;
      const otherCount = side === 0 ? n1 : n0;
      for (let w = 0; w < ownCount; w++) {
        const i = own[w];
        // A solo cannot be traded for two.
        if (sizes[i] < 2) continue;
        for (let x = 0; x < otherCount; x++) {
          const j = other[x];
          if (sizes[j] >= sizes[i]) continue;
          for (let y = x + 1; y < otherCount; y++) {
            const m = other[y];
            if (sizes[j] + sizes[m] !== sizes[i]) continue;
            const gain = absDiff - Math.abs(diff - 2 * sign * (rankSums[i] - rankSums[j] - rankSums[m]));
            if (gain > bestGain) {
              bestGain = gain;
              b0 = i;
              b1 = j;
              b2 = m;
            }
          }
        }
      }
    }
    if (b0 === -1) break;
    const flip = (t: number) => {
      if (team[t] === 0) {
        sum0 -= rankSums[t];
        sum1 += rankSums[t];
        team[t] = 1;
      } else {
        sum1 -= rankSums[t];
        sum0 += rankSums[t];
        team[t] = 0;
      }
    };
    flip(b0);
    flip(b1);
    if (b2 !== -1) flip(b2);
  }
}

/**
 * Exchanges newcomers of equal player counts between teams while that
 * narrows the spread (highest − lowest) of the teams' average ranks. `sums`
 * and `counts` are the teams' totals with the newcomers in; updated in place.
 */
function rebalanceNewcomers(chosen: Array<{ team: number; size: number; rankSum: number }>, sums: number[], counts: number[]): void {
  const spread = () => {
    let low = Infinity;
    let high = -Infinity;
    for (let t = 0; t < sums.length; t++) {
      if (counts[t] === 0) continue;
      const average = sums[t] / counts[t];
      low = Math.min(low, average);
      high = Math.max(high, average);
    }
    return high - low;
  };
  const exchange = (a: (typeof chosen)[number], b: (typeof chosen)[number]) => {
    sums[a.team] += b.rankSum - a.rankSum;
    sums[b.team] += a.rankSum - b.rankSum;
    [a.team, b.team] = [b.team, a.team];
  };
  for (let round = 0; round < chosen.length; round++) {
    let best = spread() - 1e-12;
    let pick: [number, number] | null = null;
    for (let i = 0; i < chosen.length; i++) {
      for (let j = i + 1; j < chosen.length; j++) {
        if (chosen[i].team === chosen[j].team || chosen[i].size !== chosen[j].size) continue;
        exchange(chosen[i], chosen[j]);
        const after = spread();
        exchange(chosen[i], chosen[j]);
        if (after < best) {
          best = after;
          pick = [i, j];
        }
      }
    }
    if (pick === null) break;
    exchange(chosen[pick[0]], chosen[pick[1]]);
  }
}

/**
 * One pass over a batch of tickets and backfill requests (pure: a fresh
 * queue each call). Everything is validated; a bad ticket or request throws
 * InvalidInputError naming its index and field.
 */
export function matchmake(tickets: readonly TicketInput[], now: number, options: MatchmakerOptions = {}, backfills: readonly BackfillInput[] = []): PassResult {
  const matchmaker = new Matchmaker(options);
  const each = <T>(items: readonly T[], what: string, add: (item: T) => void) =>
    items.forEach((item, index) => {
      try {
        add(item);
      } catch (error) {
        if (error instanceof InvalidInputError) throw new InvalidInputError(`${what} ${index}: ${error.message}`, { field: error.field });
        throw error;
      }
    });
  each(tickets, 'ticket', (ticket) => matchmaker.add(ticket));
  each(backfills, 'backfill', (backfill) => matchmaker.addBackfill(backfill));
  return matchmaker.pass(now);
}
