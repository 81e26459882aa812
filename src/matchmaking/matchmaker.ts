/**
 * The matchmaker: forms two-team matches from waiting tickets.
 *
 * Rules (team rank seed, MATCHMAKING; issue 4):
 * - A ticket's range runs from its lowest-reaching player's `percentile −
 *   within` to its highest-reaching player's `percentile + within` (loose
 *   filters widen with waiting, strict ones never do).
 * - Two tickets are compatible when each range holds every player of the
 *   other; every pair of tickets in a match is compatible at formation time.
 *   Since a ticket's own players always sit inside its own range, that is the
 *   same as: every player of the match lies inside every ticket's range.
 * - A match goes to one region where every player's ping ≤ their maxPing.
 * - Two teams of `teamSize`; a party stays on one team; team rank sums are
 *   balanced (the seed's OA/YA modifier as close to 1 as the chosen tickets
 *   allow).
 * - Oldest tickets are served first: each pass walks the queue oldest-first
 *   and lets each unmatched ticket anchor a match, filling it with the
 *   closest compatible tickets in skill (oldest first within a percentile).
 * - Deterministic: the clock is an argument and ties break by ticket id.
 *
 * Speed: tickets are bucketed by region and whole percentile of their
 * lowest player, so an anchor only looks at buckets inside its range,
 * nearest first; matched entries are skipped with path-compressed skip
 * pointers, and each anchor examines at most `maxCandidates` live tickets.
 */
import { InvalidInputError } from '../core/errors.js';
import { type FilterDefaults, parseTicket, type Ticket } from './ticket.js';
import { effectiveWithin, resolveWidening, type ResolvedWidening, type WideningOptions, wideningStep } from './widening.js';

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
  /** Larger team average ÷ smaller (the seed's OA/YA, folded to ≥ 1). */
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

interface QueuedTicket {
  ticket: Ticket;
  size: number;
  minPercentile: number;
  maxPercentile: number;
  /** Sum of the players' balancing ranks (rating, else percentile). */
  rankSum: number;
  /** Bit r set: every player's ping to region r ≤ their maxPing. */
  regionMask: number;
  /** Worst player ping per region bit (undefined: someone has no ping there). */
  worstPing: number[];
  cancelled: boolean;
  /** Still in the queue (false once matched or cancelled; map entries are swept lazily). */
  waiting: boolean;
}

function compareQueued(a: QueuedTicket, b: QueuedTicket): number {
  return a.ticket.at - b.ticket.at || (a.ticket.id < b.ticket.id ? -1 : a.ticket.id > b.ticket.id ? 1 : 0);
}

/**
 * A queue of tickets with incremental passes: `add` and `cancel` at any
 * time, `pass(now)` forms what it can and removes the matched tickets.
 */
export class Matchmaker {
  readonly teamSize: number;
  readonly widening: ResolvedWidening;
  readonly maxCandidates: number;
  private readonly filterDefaults: FilterDefaults;
  private queue: QueuedTicket[] = [];
  private readonly byTicketId = new Map<string, QueuedTicket>();
  // Both maps may hold entries of tickets that already left (swept in bulk): deleting
  // hundreds of thousands of keys after every pass would cost more than the pass.
  private readonly byPlayerId = new Map<string, QueuedTicket>();
  private liveCount = 0;
  private readonly regionBits = new Map<string, number>();
  private readonly regionNames: string[] = [];
  private cancelledCount = 0;

  constructor(options: MatchmakerOptions = {}) {
    this.teamSize = options.teamSize ?? 6;
    if (!Number.isInteger(this.teamSize) || this.teamSize < 1) throw new InvalidInputError(`must be a positive integer, got ${this.teamSize}`, { field: 'teamSize' });
    this.widening = resolveWidening(options.widening);
    this.filterDefaults = options.filterDefaults ?? {};
    this.maxCandidates = options.maxCandidates ?? 256;
    if (!Number.isInteger(this.maxCandidates) || this.maxCandidates < 1) throw new InvalidInputError(`must be a positive integer, got ${this.maxCandidates}`, { field: 'maxCandidates' });
  }

  /** Tickets waiting. */
  get size(): number {
    return this.liveCount;
  }

  /** Region names in the order first seen. */
  get regions(): readonly string[] {
    return this.regionNames;
  }

  /**
   * Queues a ticket (validated; unknown input is accepted and checked).
   * Throws InvalidInputError on a bad ticket, a ticket id already queued or
   * a player already queued in another ticket; the queue is unchanged then.
   */
  add(input: Ticket | unknown): void {
    const ticket = parseTicket(input, this.teamSize, this.filterDefaults);
    if (this.byTicketId.get(ticket.id)?.waiting) throw new InvalidInputError(`ticket "${ticket.id}" is already queued`, { field: 'id' });
    ticket.players.forEach((player, index) => {
      const other = this.byPlayerId.get(player.id);
      if (other?.waiting) throw new InvalidInputError(`player "${player.id}" is already queued in ticket "${other.ticket.id}"`, { field: `players[${index}].id` });
    });
    const newRegions = new Set<string>();
    for (const player of ticket.players) for (const region of Object.keys(player.pings)) if (!this.regionBits.has(region)) newRegions.add(region);
    if (this.regionNames.length + newRegions.size > MAX_REGIONS) throw new InvalidInputError(`at most ${MAX_REGIONS} distinct regions are supported`, { field: 'players[].pings' });
    for (const region of newRegions) {
      this.regionBits.set(region, this.regionNames.length);
      this.regionNames.push(region);
    }
    const queued = this.compile(ticket);
    // Sweep here rather than in `pass`: amortised over arrivals, one delete per departed ticket.
    if (this.byTicketId.size > 2 * this.liveCount + 4096) this.sweep();
    this.byTicketId.set(ticket.id, queued);
    for (const player of ticket.players) this.byPlayerId.set(player.id, queued);
    this.liveCount++;
    const last = this.queue[this.queue.length - 1];
    if (last === undefined || compareQueued(last, queued) <= 0) this.queue.push(queued);
    else {
      // Late arrival (an `at` earlier than the newest): keep the queue sorted.
      let low = 0;
      let high = this.queue.length;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (compareQueued(this.queue[mid], queued) <= 0) low = mid + 1;
        else high = mid;
      }
      this.queue.splice(low, 0, queued);
    }
  }

  /** Removes a waiting ticket; returns whether it was waiting. */
  cancel(ticketId: string): boolean {
    const queued = this.byTicketId.get(ticketId);
    if (queued === undefined || !queued.waiting) return false;
    queued.waiting = false;
    this.liveCount--;
    queued.cancelled = true;
    this.cancelledCount++;
    return true;
  }

  /** The waiting tickets, oldest first. */
  waiting(): Ticket[] {
    return this.queue.filter((q) => !q.cancelled).map((q) => q.ticket);
  }

  /**
   * One matchmaking pass at `now` (seconds, same clock as tickets' `at`).
   * Matched tickets leave the queue.
   */
  pass(now: number): PassResult {
    if (typeof now !== 'number' || !Number.isFinite(now)) throw new InvalidInputError(`must be a finite number of seconds, got ${now}`, { field: 'now' });
    if (this.cancelledCount > 0) {
      this.queue = this.queue.filter((q) => !q.cancelled);
      this.cancelledCount = 0;
    }
    const queue = this.queue;
    const n = queue.length;
    const s = this.teamSize;
    const regionCount = this.regionNames.length;

    // Ranges at `now`.
    const lows = new Float64Array(n);
    const highs = new Float64Array(n);
    const steps = new Int32Array(n);
    // Flat copies of the per-ticket numbers the search reads, for cache locality.
    const minPs = new Float64Array(n);
    const maxPs = new Float64Array(n);
    const sizes = new Int32Array(n);
    const masks = new Int32Array(n);
    const rankSums = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const q = queue[i];
      minPs[i] = q.minPercentile;
      maxPs[i] = q.maxPercentile;
      sizes[i] = q.size;
      masks[i] = q.regionMask;
      rankSums[i] = q.rankSum;
      // Steps past the end of the schedule change nothing; report the one in effect.
      const step = Math.min(wideningStep(now - q.ticket.at, this.widening), this.widening.steps.length);
      steps[i] = step;
      let low = Infinity;
      let high = -Infinity;
      for (const player of q.ticket.players) {
        const within = effectiveWithin(player.filter.within, player.filter.strict, step, this.widening);
        if (player.percentile - within < low) low = player.percentile - within;
        if (player.percentile + within > high) high = player.percentile + within;
      }
      lows[i] = low;
      highs[i] = high;
    }

    // Index: region × percentile bucket → queue positions, oldest first (counting sort).
    const BUCKETS = 100;
    const bucketOf = (percentile: number) => Math.min(BUCKETS - 1, Math.floor(percentile) - 1);
    const starts = new Int32Array(regionCount * BUCKETS + 1);
    for (let i = 0; i < n; i++) {
      const q = queue[i];
      let mask = q.regionMask;
      const b = bucketOf(q.minPercentile);
      while (mask !== 0) {
        const r = 31 - Math.clz32(mask & -mask);
        mask &= mask - 1;
        starts[r * BUCKETS + b + 1]++;
      }
    }
    for (let k = 1; k < starts.length; k++) starts[k] += starts[k - 1];
    const total = starts[starts.length - 1];
    const entries = new Int32Array(total);
    const fill = starts.slice(0, starts.length - 1);
    for (let i = 0; i < n; i++) {
      const q = queue[i];
      let mask = q.regionMask;
      const b = bucketOf(q.minPercentile);
      while (mask !== 0) {
        const r = 31 - Math.clz32(mask & -mask);
        mask &= mask - 1;
        entries[fill[r * BUCKETS + b]++] = i;
      }
    }
    // skip[e] > e: every entry in [e, skip[e]) belongs to a matched ticket.
    const skip = new Int32Array(total);
    const matched = new Uint8Array(n);
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
    const matches: FormedMatch[] = [];
    // Scratch for one attempt.
    const chosen: number[] = [];
    const chosenTeam: number[] = [];
    const regionOrder: number[] = [];

    for (let anchor = 0; anchor < n; anchor++) {
      if (matched[anchor] === 1) continue;
      const a = queue[anchor];
      if (a.regionMask === 0) continue;
      // Anchor's regions, best (lowest worst-ping) first.
      regionOrder.length = 0;
      for (let r = 0; r < regionCount; r++) if ((a.regionMask >>> r) & 1) regionOrder.push(r);
      if (regionOrder.length > 1) regionOrder.sort((x, y) => a.worstPing[x] - a.worstPing[y] || x - y);

      for (let regionIndex = 0; regionIndex < regionOrder.length; regionIndex++) {
        const region = regionOrder[regionIndex];
        chosen.length = 0;
        chosenTeam.length = 0;
        chosen.push(anchor);
        chosenTeam.push(0);
        let room0 = s - a.size;
        let room1 = s;
        let sum0 = a.rankSum;
        let sum1 = 0;
        let low = lows[anchor];
        let high = highs[anchor];
        let pMin = a.minPercentile;
        let pMax = a.maxPercentile;
        let mask = a.regionMask;
        let examined = 0;
        const center = bucketOf((a.minPercentile + a.maxPercentile) / 2);
        const base = region * BUCKETS;
        // Walk buckets outward from the anchor's centre while they can still hold compatible tickets.
        search: for (let distance = 0; distance < BUCKETS; distance++) {
          // Ranges only narrow as tickets join, so once both directions leave the range they stay out.
          const upOut = center + distance >= BUCKETS || center + distance + 1 > high;
          const downOut = center - distance < 0 || center - distance + 2 <= low;
          if (upOut && downOut) break;
          for (let side = 0; side < 2; side++) {
            if (distance === 0 && side === 1) continue;
            const b = side === 0 ? center + distance : center - distance;
            if (b < 0 || b >= BUCKETS) continue;
            // Bucket b holds lowest percentiles in [b+1, b+2).
            if (b + 2 <= low || b + 1 > high) continue;
            const end = starts[base + b + 1];
            for (let e = nextLive(starts[base + b], end); e < end; e = nextLive(e + 1, end)) {
              const c = entries[e];
              if (c === anchor) continue;
              if (++examined > maxCandidates) break search;
              const newLow = lows[c] > low ? lows[c] : low;
              const newHigh = highs[c] < high ? highs[c] : high;
              const newPMin = minPs[c] < pMin ? minPs[c] : pMin;
              const newPMax = maxPs[c] > pMax ? maxPs[c] : pMax;
              if (newLow > newPMin || newPMax > newHigh) continue;
              const size = sizes[c];
              let team: number;
              // Fill the team with the lower average rank so far; the final split is rebalanced anyway.
              if (size <= room0 && size <= room1) team = sum0 * (s - room1) <= sum1 * (s - room0) ? 0 : 1;
              else if (size <= room0) team = 0;
              else if (size <= room1) team = 1;
              else continue;
              chosen.push(c);
              chosenTeam.push(team);
              if (team === 0) {
                room0 -= size;
                sum0 += rankSums[c];
              } else {
                room1 -= size;
                sum1 += rankSums[c];
              }
              low = newLow;
              high = newHigh;
              pMin = newPMin;
              pMax = newPMax;
              mask &= masks[c];
              if (room0 + room1 === 0) break search;
            }
          }
        }
        if (room0 + room1 !== 0) continue;
        for (let k = 0; k < chosen.length; k++) matched[chosen[k]] = 1;
        matches.push(this.finish(chosen, chosenTeam, mask, now, steps));
        break;
      }
    }

    const remaining: QueuedTicket[] = [];
    for (let i = 0; i < n; i++) {
      if (matched[i] === 1) queue[i].waiting = false;
      else remaining.push(queue[i]);
    }
    this.liveCount = remaining.length;
    this.queue = remaining;
    return { matches, waiting: remaining.map((q) => q.ticket.id) };
  }

  /** Drops map entries of tickets that left the queue. */
  private sweep(): void {
    for (const [id, queued] of this.byTicketId) if (!queued.waiting) this.byTicketId.delete(id);
    for (const [id, queued] of this.byPlayerId) if (!queued.waiting) this.byPlayerId.delete(id);
  }

  private compile(ticket: Ticket): QueuedTicket {
    let minPercentile = Infinity;
    let maxPercentile = -Infinity;
    let rankSum = 0;
    let regionMask = -1 >>> 1; // all 31 bits
    const worstPing: number[] = new Array(this.regionNames.length).fill(0);
    const seen = new Array<boolean>(this.regionNames.length).fill(false);
    for (const player of ticket.players) {
      minPercentile = Math.min(minPercentile, player.percentile);
      maxPercentile = Math.max(maxPercentile, player.percentile);
      rankSum += player.rating ?? player.percentile;
      let playerMask = 0;
      for (const [region, ping] of Object.entries(player.pings)) {
        const bit = this.regionBits.get(region)!;
        seen[bit] = true;
        if (ping > worstPing[bit]) worstPing[bit] = ping;
        if (ping <= player.filter.maxPing) playerMask |= 1 << bit;
      }
      regionMask &= playerMask;
    }
    for (let bit = 0; bit < worstPing.length; bit++) if (!seen[bit]) worstPing[bit] = Infinity;
    return { ticket, size: ticket.players.length, minPercentile, maxPercentile, rankSum, regionMask, worstPing, cancelled: false, waiting: true };
  }

  /** Balances the chosen tickets into two teams, picks the region and reports quality. */
  private finish(chosen: number[], chosenTeam: number[], mask: number, now: number, steps: Int32Array): FormedMatch {
    const s = this.teamSize;
    const tickets: QueuedTicket[] = [];
    const ticketSizes: number[] = [];
    const ticketSums: number[] = [];
    for (const c of chosen) {
      const q = this.queue[c];
      tickets.push(q);
      ticketSizes.push(q.size);
      ticketSums.push(q.rankSum);
    }
    const team = balanceTeams(ticketSizes, ticketSums, s, chosenTeam);
    // Region: the allowed one with the lowest worst ping; ties to the earlier-seen region.
    let region = -1;
    let regionPing = Infinity;
    for (let r = 0; r < this.regionNames.length; r++) {
      if (((mask >>> r) & 1) === 0) continue;
      let worst = 0;
      for (const t of tickets) {
        const ping = t.worstPing[r] ?? Infinity;
        if (ping > worst) worst = ping;
      }
      if (worst < regionPing) {
        regionPing = worst;
        region = r;
      }
    }
    // Oldest (lowest queue position) first; insertion sort, k is small.
    const order: number[] = [];
    for (let k = 0; k < chosen.length; k++) {
      let at = order.length;
      while (at > 0 && chosen[order[at - 1]] > chosen[k]) {
        order[at] = order[at - 1];
        at--;
      }
      order[at] = k;
    }
    const firstTeam = team[order[0]];
    const teams: string[][] = [[], []];
    const players: string[][] = [[], []];
    const waits: number[][] = [[], []];
    const sums = [0, 0];
    let pMin = Infinity;
    let pMax = -Infinity;
    let step = 0;
    for (const k of order) {
      const c = chosen[k];
      const side = team[k] === firstTeam ? 0 : 1;
      const q = this.queue[c];
      teams[side].push(q.ticket.id);
      waits[side].push(now - q.ticket.at);
      for (const player of q.ticket.players) players[side].push(player.id);
      sums[side] += q.rankSum;
      pMin = Math.min(pMin, q.minPercentile);
      pMax = Math.max(pMax, q.maxPercentile);
      step = Math.max(step, steps[c]);
    }
    const averages: [number, number] = [sums[0] / s, sums[1] / s];
    const balance = Math.max(averages[0], averages[1]) / Math.max(Number.MIN_VALUE, Math.min(averages[0], averages[1]));
    return {
      region: this.regionNames[region],
      teams,
      players,
      quality: { averages, balance, percentileSpread: pMax - pMin, worstPing: regionPing, wideningStep: step, waits },
    };
  }
}

/**
 * Splits tickets (party sizes, rank sums) into two teams of exactly
 * `teamSize` players, minimising the difference of rank sums — equal sizes,
 * so that is the seed's OA/YA closest to 1. Greedy largest-first, then
 * improving swaps (one-for-one and one-for-two of equal player counts) until
 * none helps. `fallback` is a valid split used when the greedy one cannot
 * fill both teams exactly. Returns each ticket's team (0 or 1).
 */
export function balanceTeams(sizes: readonly number[], rankSums: readonly number[], teamSize: number, fallback: readonly number[]): number[] {
  const k = sizes.length;
  // Largest party first, then highest rank; insertion sort (k ≤ 2·teamSize is small).
  const order: number[] = [];
  for (let i = 0; i < k; i++) {
    let at = order.length;
    while (at > 0) {
      const o = order[at - 1];
      if (sizes[o] > sizes[i] || (sizes[o] === sizes[i] && rankSums[o] >= rankSums[i])) break;
      order[at] = o;
      at--;
    }
    order[at] = i;
  }
  let team = new Array<number>(k).fill(-1);
  const room = [teamSize, teamSize];
  const sums = [0, 0];
  let ok = true;
  for (const i of order) {
    const fits0 = sizes[i] <= room[0];
    const fits1 = sizes[i] <= room[1];
    let side: number;
    if (fits0 && fits1) side = sums[0] <= sums[1] ? 0 : 1;
    else if (fits0) side = 0;
    else if (fits1) side = 1;
    else {
      ok = false;
      break;
    }
    team[i] = side;
    room[side] -= sizes[i];
    sums[side] += rankSums[i];
  }
  if (!ok || room[0] !== 0 || room[1] !== 0) {
    team = [...fallback];
    sums[0] = 0;
    sums[1] = 0;
    for (let i = 0; i < k; i++) sums[team[i]] += rankSums[i];
  }
  // Local improvement: the best size-preserving exchange, repeated. Matches
  // hold at most 2·teamSize tickets, so the O(k³) scan per round is small.
  const sides: number[][] = [[], []];
  for (let round = 0; round < k; round++) {
    sides[0].length = 0;
    sides[1].length = 0;
    for (let i = 0; i < k; i++) sides[team[i]].push(i);
    const diff = sums[0] - sums[1];
    let bestGain = 1e-12;
    let b0 = -1;
    let b1 = -1;
    let b2 = -1;
    for (const i of sides[0]) {
      for (const j of sides[1]) {
        if (sizes[i] !== sizes[j]) continue;
        const gain = Math.abs(diff) - Math.abs(diff - 2 * (rankSums[i] - rankSums[j]));
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
      const own = sides[side];
      const other = sides[1 - side];
      for (const i of own) {
        for (let x = 0; x < other.length; x++) {
          const j = other[x];
          if (sizes[j] >= sizes[i]) continue;
          for (let y = x + 1; y < other.length; y++) {
            const m = other[y];
            if (sizes[j] + sizes[m] !== sizes[i]) continue;
            const gain = Math.abs(diff) - Math.abs(diff - 2 * sign * (rankSums[i] - rankSums[j] - rankSums[m]));
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
    for (const t of b2 === -1 ? [b0, b1] : [b0, b1, b2]) {
      sums[team[t]] -= rankSums[t];
      team[t] = 1 - team[t];
      sums[team[t]] += rankSums[t];
    }
  }
  return team;
}

/**
 * One pass over a batch of tickets (pure: a fresh queue each call). Tickets
 * are validated; a bad one throws InvalidInputError naming its index.
 */
export function matchmake(tickets: readonly unknown[], now: number, options: MatchmakerOptions = {}): PassResult {
  const matchmaker = new Matchmaker(options);
  tickets.forEach((ticket, index) => {
    try {
      matchmaker.add(ticket);
    } catch (error) {
      if (error instanceof InvalidInputError) throw new InvalidInputError(`ticket ${index}: ${error.message}`, { field: error.field });
      throw error;
    }
  });
  return matchmaker.pass(now);
}
