/**
 * One batch of a rule-set pass: the queued entries, the batch's flat arrays
 * by candidate position (BatchList), the walk over an anchor's candidates
 * (Walk), the numeric batchDistance rules on a forming match (BatchCheck),
 * why tickets were kept out (blameAt), and the batch's sort. The pass's
 * hottest loops live here; matchmaker.ts runs them.
 */
import type { RuleSetTicket } from './ticket.js';
import type { BatchDistanceRule } from './types.js';

export interface Entry {
  ticket: RuleSetTicket;
  seq: number;
  /** The ticket's time and party size, kept on the entry (a queued ticket is fixed, as its batch values and key are): a pass reads them from 100,000 entries without going to the tickets. */
  at: number;
  size: number;
  taken: boolean;
  /** Party value per numeric batchDistance rule. */
  batch: number[];
  /** Key of the string batchDistance values; null when a party disagrees. */
  key: string | null;
  order: number;
  bestRegion: string | undefined;
  /** Worst ping of the party per region every member reports. */
  regionNames: string[];
  /** Aligned with regionNames. */
  regionPing: number[];
  regionMin: number[];
  regionSum: number[];
  /** This pass: the entry's batch list and position in it (kept on the entry, not in a per-pass map of 100k objects). */
  list: BatchList | undefined;
  index: number;
  /** This pass: what kept the entry out of candidate matches, in the order first seen, and how often. */
  whyReasons: string[] | undefined;
  whyCounts: number[] | undefined;
}

/**
 * One batch for a pass, in candidate order, with what the candidate walk and
 * the batch-rule check read kept in flat arrays by position: a window of a
 * thousand candidates is then read from a few contiguous arrays instead of a
 * thousand scattered tickets.
 */
export interface BatchList {
  group: Entry[];
  next: Int32Array;
  prev: Int32Array;
  head: number;
  order: Float64Array;
  at: Float64Array;
  /** The party's value per numeric batchDistance rule, by position (position × rules + rule): one array read per candidate. */
  batch: Float64Array;
  /** The first two reasons (id + 1, 0 for none) that kept each ticket out this pass, and how often; later reasons go on the entry. */
  firstWhy: Int32Array;
  firstCount: Int32Array;
  secondWhy: Int32Array;
  secondCount: Int32Array;
  /** Players in the party, and 1 when it reports pings. */
  size: Int32Array;
  pinged: Uint8Array;
  /** The pass's regions by number, and per position and region (position × regions.length + region) the party's worst ping, best ping and sum there: NaN where it reports none. */
  regions: string[];
  ping: Float64Array;
  pingMin: Float64Array;
  pingSum: Float64Array;
}

export type Step = { waitTimeSeconds: number; value: number };

/**
 * Sorts entries by their order value, stably, reading the values from one
 * flat array rather than from each entry: the distinct values sorted by the
 * engine's numeric sort (no comparator called back), then the entries placed
 * by value in their order (a counting sort over the distinct values).
 * Returns where each entry went: placedAt[j] is the new position of the
 * entry that was at j.
 */
export function sortByOrder(group: Entry[]): Int32Array {
  const n = group.length;
  const key = new Float64Array(n);
  let hasNaN = false;
  for (let k = 0; k < n; k++) {
    // -0 and 0 are one value, as they were to the comparator below.
    key[k] = group[k].order + 0;
    if (key[k] !== key[k]) hasNaN = true;
  }
  const copy = group.slice();
  if (hasNaN) {
    const positions: number[] = Array.from({ length: n }, (_, k) => k);
    positions.sort((a, b) => key[a] - key[b]);
    const placedAt = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      group[k] = copy[positions[k]];
      placedAt[positions[k]] = k;
    }
    return placedAt;
  }
  const values = key.slice().sort();
  let distinct = 0;
  for (let k = 0; k < n; k++) if (k === 0 || values[k] !== values[distinct - 1]) values[distinct++] = values[k];
  const slot = new Int32Array(n);
  const start = new Int32Array(distinct + 1);
  for (let k = 0; k < n; k++) {
    let lo = 0;
    let hi = distinct - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[mid] < key[k]) lo = mid + 1;
      else hi = mid;
    }
    slot[k] = lo;
    start[lo + 1]++;
  }
  for (let v = 0; v < distinct; v++) start[v + 1] += start[v];
  // slot becomes where each entry went.
  for (let k = 0; k < n; k++) {
    const at = start[slot[k]]++;
    group[at] = copy[k];
    slot[k] = at;
  }
  return slot;
}

/** Blames the ticket at position k of a batch, by reason id (names: the reasons by id). */
export function blameAt(l: BatchList, k: number, id: number, names: readonly string[]): void {
  const first = l.firstWhy[k];
  if (first === id + 1) l.firstCount[k]++;
  else if (first === 0) {
    l.firstWhy[k] = id + 1;
    l.firstCount[k] = 1;
  } else if (l.secondWhy[k] === id + 1) l.secondCount[k]++;
  else if (l.secondWhy[k] === 0) {
    l.secondWhy[k] = id + 1;
    l.secondCount[k] = 1;
  } else later(l.group[k], names[id]);
}

/** Blames a ticket on the entry itself: a third reason and beyond, or a ticket outside every batch. */
export function later(entry: Entry, reason: string): void {
  const reasons = entry.whyReasons;
  if (reasons === undefined) {
    entry.whyReasons = [reason];
    entry.whyCounts = [1];
    return;
  }
  const k = reasons.indexOf(reason);
  if (k >= 0) entry.whyCounts![k]++;
  else {
    reasons.push(reason);
    entry.whyCounts!.push(1);
  }
}

/**
 * What narrows an anchor's walk as its match forms: the numeric batch rule
 * (its index) on the value candidates are ordered by, and the widest
 * maxDistance a match of a given age can still have (over the ages it can
 * reach as tickets join: only lower when expansions follow the newest ticket,
 * only higher when they follow the oldest).
 */
export interface Narrowing {
  rule: number;
  widestFrom(age: number): number;
}

/**
 * An anchor's candidates taken lazily from its batch, one per next(): in age
 * order (outward is false), or outward from the anchor's ordering value,
 * nearest first, stopping at the widest a batch rule on that value can reach
 * (the first ticket past it on each side is blamed on that rule, and cut is
 * set). At most `left` candidates.
 */
export class Walk {
  cut = false;
  /** The match age the widest reach was last worked out for, and that reach (narrowing only). */
  private narrowAge = NaN;
  private widest = Infinity;
  private lo: number;
  private hi: number;
  private k: number;

  constructor(
    private readonly l: BatchList,
    private readonly index: number,
    private readonly outward: boolean,
    private left: number,
    private readonly centre: number,
    private readonly reach: number,
    private readonly reachId: number,
    private readonly names: readonly string[],
    private readonly narrow?: Narrowing,
  ) {
    this.k = l.head;
    this.lo = l.prev[index];
    this.hi = l.next[index];
    if (outward) {
      if (this.lo >= 0 && this.beyond(this.lo)) this.lo = -1;
      if (this.hi >= 0 && this.beyond(this.hi)) this.hi = -1;
    }
  }

  /** The next candidate's position in the batch, or -1 when there is none. */
  next(): number {
    const { next, prev, order } = this.l;
    if (!this.outward) {
      let k = this.k;
      if (k === this.index) k = next[k];
      if (k < 0 || this.left-- <= 0) {
        this.k = k;
        return -1;
      }
      this.k = next[k];
      return k;
    }
    if (this.left-- <= 0) return -1;
    const lo = this.lo;
    const hi = this.hi;
    if (lo < 0 && hi < 0) return -1;
    if (hi < 0 || (lo >= 0 && this.centre - order[lo] <= order[hi] - this.centre)) {
      const p = prev[lo];
      this.lo = p >= 0 && this.beyond(p) ? -1 : p;
      return lo;
    }
    const n = next[hi];
    this.hi = n >= 0 && this.beyond(n) ? -1 : n;
    return hi;
  }

  /**
   * The next candidate the numeric batch rules let through, or -1 when there
   * is none: those they refuse on the way are blamed on the ticket and counted
   * for the anchor (anchorCounts by reason id, anchorReasons in the order
   * first seen). The pass's hottest loop: most candidates end here.
   */
  nextAdmitted(check: BatchCheck, anchorCounts: number[], anchorReasons: number[]): number {
    const l = this.l;
    const names = this.names;
    const { firstWhy, firstCount } = l;
    if (!this.outward) {
      for (;;) {
        const k = this.next();
        if (k < 0) return -1;
        const reason = check.refusalAtAge(k);
        if (reason < 0) return k;
        if (firstWhy[k] === reason + 1) firstCount[k]++;
        else blameAt(l, k, reason, names);
        if (anchorCounts[reason]++ === 0) anchorReasons.push(reason);
      }
    }
    // next() and check.refusalAtAge() written out over local copies of the walk's and the check's state.
    const { next, prev, order } = l;
    const { centre, reach } = this;
    let { lo, hi, left } = this;
    const { values, bounds, count, reasons, at, now, newest, age } = check;
    let { limitFrom, limitBefore } = check;
    // The forming match's spread on the ordering value: a candidate further than the widest maxDistance the match can still have
    // from its lowest value (on the high side) or its highest (on the low side) can never join, nor can any beyond it on that side.
    let low = -Infinity;
    let high = Infinity;
    let widest = Infinity;
    const narrow = this.narrow;
    if (narrow !== undefined) {
      if (age !== this.narrowAge) {
        this.narrowAge = age;
        this.widest = narrow.widestFrom(age);
      }
      widest = this.widest;
      low = bounds[3 * narrow.rule];
      high = bounds[3 * narrow.rule + 1];
      if (hi >= 0 && order[hi] - low > widest) hi = this.cutAt(hi);
      if (lo >= 0 && high - order[lo] > widest) lo = this.cutAt(lo);
    }
    let found = -1;
    for (;;) {
      if (left-- <= 0) break;
      if (lo < 0 && hi < 0) break;
      let k: number;
      // A neighbour with the same order value as k is within reach as k was: only a new value is measured against it.
      if (hi < 0 || (lo >= 0 && centre - order[lo] <= order[hi] - centre)) {
        k = lo;
        const p = prev[lo];
        lo = p >= 0 && order[p] !== order[k] && (!(Math.abs(order[p] - centre) <= reach) || high - order[p] > widest) ? this.cutAt(p) : p;
      } else {
        k = hi;
        const n = next[hi];
        hi = n >= 0 && order[n] !== order[k] && (!(Math.abs(order[n] - centre) <= reach) || order[n] - low > widest) ? this.cutAt(n) : n;
      }
      // The match's age with this ticket (the anchor has joined, so the age is a number), and the batch rules' limits for it.
      const ticketAge = now - at[k];
      const a = newest ? (ticketAge < age ? ticketAge : age) : ticketAge > age ? ticketAge : age;
      if (!(a >= limitFrom && a < limitBefore)) {
        check.limitsAt(a);
        limitFrom = check.limitFrom;
        limitBefore = check.limitBefore;
      }
      let reason = -1;
      const base = k * count;
      for (let r = 0; r < count; r++) {
        const v = values[base + r];
        // Math.max and Math.min written out (a NaN value refuses nothing, as there).
        const low = bounds[3 * r];
        const high = bounds[3 * r + 1];
        if ((v > high ? v : high) - (v < low ? v : low) > bounds[3 * r + 2] && v === v) {
          reason = reasons[r];
          break;
        }
      }
      if (reason < 0) {
        found = k;
        break;
      }
      if (firstWhy[k] === reason + 1) firstCount[k]++;
      else blameAt(l, k, reason, names);
      if (anchorCounts[reason]++ === 0) anchorReasons.push(reason);
    }
    this.lo = lo;
    this.hi = hi;
    this.left = left;
    return found;
  }

  /** The ticket at position k is past the reach: blamed on the reach rule; returns -1, the end of that side. */
  private cutAt(k: number): number {
    this.cut = true;
    blameAt(this.l, k, this.reachId, this.names);
    return -1;
  }

  private beyond(k: number): boolean {
    if (Math.abs(this.l.order[k] - this.centre) <= this.reach) return false;
    this.cutAt(k);
    return true;
  }
}

/**
 * The numeric batchDistance rules on one anchor's forming match: each rule's
 * lowest and highest party value so far, and its maxDistance for the ages in
 * [limitFrom, limitBefore) (between two expansion steps it is one value;
 * candidates' ages mostly fall in the same interval).
 */
export class BatchCheck {
  /** The match's age (the anchor's until another ticket joins). */
  age = NaN;
  newest: boolean;
  readonly count: number;
  /** Per rule (rule × 3): the lowest party value so far, the highest, and the maxDistance for the ages in [limitFrom, limitBefore). */
  readonly bounds: Float64Array;
  limitFrom = NaN;
  limitBefore = NaN;
  values: Float64Array;
  at: Float64Array;

  constructor(
    l: BatchList,
    public now: number,
    newest: boolean,
    private readonly rules: readonly BatchDistanceRule[],
    private readonly steps: ReadonlyArray<Step[] | undefined>,
    private readonly waits: readonly number[],
    readonly reasons: readonly number[],
  ) {
    this.newest = newest;
    this.count = rules.length;
    this.bounds = new Float64Array(3 * this.count);
    this.values = l.batch;
    this.at = l.at;
    this.reset(l, now, newest);
  }

  /** Empty again, for an anchor of batch l. */
  reset(l: BatchList, now: number, newest: boolean): void {
    this.values = l.batch;
    this.at = l.at;
    this.now = now;
    this.newest = newest;
    this.age = NaN;
    for (let k = 0; k < this.count; k++) {
      this.bounds[3 * k] = Infinity;
      this.bounds[3 * k + 1] = -Infinity;
    }
  }

  /** The reason id of the first rule the ticket at position i breaks for a match of age a, or -1. */
  refusal(i: number, a: number): number {
    if (!(a >= this.limitFrom && a < this.limitBefore)) this.limitsAt(a);
    const { values, bounds, count } = this;
    const base = i * count;
    for (let k = 0; k < count; k++) {
      const v = values[base + k];
      // Math.max and Math.min written out (a NaN value refuses nothing, as there): the pass's hottest comparison.
      const low = bounds[3 * k];
      const high = bounds[3 * k + 1];
      if ((v > high ? v : high) - (v < low ? v : low) > bounds[3 * k + 2] && v === v) return this.reasons[k];
    }
    return -1;
  }

  /** refusal() for the age the match would have with the ticket at position i. */
  refusalAtAge(i: number): number {
    const ticketAge = this.now - this.at[i];
    return this.refusal(i, this.newest ? Math.min(this.age, ticketAge) : Math.max(this.age, ticketAge));
  }

  /** The ticket at position i joined: its values widen the spreads. */
  join(i: number): void {
    const { values, bounds, count } = this;
    for (let k = 0; k < count; k++) {
      const v = values[i * count + k];
      bounds[3 * k] = Math.min(bounds[3 * k], v);
      bounds[3 * k + 1] = Math.max(bounds[3 * k + 1], v);
    }
  }

  /** Sets the batch rules' maxDistance for age a, and the interval of ages [limitFrom, limitBefore) it holds for. */
  limitsAt(a: number): void {
    // No maxDistance bounds nothing: a spread is never above it, as never above Infinity.
    for (let k = 0; k < this.count; k++) this.bounds[3 * k + 2] = stepped(this.steps[k], this.rules[k].maxDistance, a) ?? Infinity;
    // A NaN age is worked out each time (no interval holds it).
    this.limitFrom = Number.isNaN(a) ? NaN : -Infinity;
    this.limitBefore = Infinity;
    for (let w = 0; w < this.waits.length; w++) {
      if (this.waits[w] <= a) this.limitFrom = this.waits[w];
      else {
        this.limitBefore = this.waits[w];
        break;
      }
    }
  }
}

/** A property's value under expansion steps (sorted by wait) for a match of the given age. */
export function stepped(steps: readonly Step[] | undefined, base: number | undefined, age: number): number | undefined {
  if (steps === undefined) return base;
  let value = base;
  for (let k = 0; k < steps.length; k++) if (steps[k].waitTimeSeconds <= age) value = steps[k].value;
  return value;
}
