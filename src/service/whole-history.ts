/**
 * Ladders of a system that keeps whole histories (`capabilities.wholeHistory`,
 * Whole-History Rating): a player's state is not enough to rate their next
 * match, the system needs every match of the ladder. A `LadderHistory` is one
 * such system object derived from the ladder's match log in sequence order,
 * one match at a time (voided matches skipped), and the states it gives.
 *
 * The writer keeps one per ladder in memory and adds each posted match to it
 * (`add`); `ladder rebuild` and a correction derive a fresh one from the log
 * with the same `add`, so both reach the same states to the last bit. A
 * match may move players outside it (Whole-History Rating re-smooths the
 * players of a day when the day closes): `add` reports every player whose
 * state changed, and the writer stores them all.
 */
import { InvalidInputError, LadderError } from 'ladder-core/core/errors.js';
import type { Match } from 'ladder-core/core/match.js';
import { describeSystem } from 'ladder-core/core/registry.js';
import { createWholeHistorySystem, type MatchRating, type PlayerState, type WholeHistorySystem } from 'ladder-core/core/systems.js';
import type { Queryable } from '../store/database.js';
import { readFreeze, type StoredFreeze } from '../store/frozen.js';
import { matchesAfter } from '../store/matches.js';
import { rateUnit, type StoredMatch } from './rating.js';
import { Turns } from './turns.js';

/** Whether ladders of this system are rated through a whole history. */
export function keepsWholeHistory(system: string): boolean {
  return describeSystem(system).capabilities.wholeHistory;
}

/** What adding one match did. */
export interface HistoryStep {
  /** The match's players, before and after. */
  rating: MatchRating;
  /** Every player whose state changed, the match's players among them. */
  changed: Map<string, PlayerState>;
}

const NO_STATES: ReadonlyMap<string, PlayerState> = new Map();

function identical(a: PlayerState, b: PlayerState): boolean {
  return (
    a.rating === b.rating &&
    a.rd === b.rd &&
    a.volatility === b.volatility &&
    a.matches === b.matches &&
    a.lastAt === b.lastAt &&
    // A context deviation may move alone (the cycle re-smooths it after its player's skill).
    (a.contexts === b.contexts || JSON.stringify(a.contexts ?? null) === JSON.stringify(b.contexts ?? null))
  );
}

/** Matches read per query when a history is derived from the log. */
const PAGE = 20_000;

/**
 * How a history is derived outside a transaction (`deriveInSlices`): the
 * log read `pageSize` matches per query, and the event loop given a turn
 * after every `sliceMs` of work or `sliceMatches` matches, whichever comes
 * first.
 */
export interface DerivationOptions {
  /** @default 100 (PGlite runs one query at a time for every ladder: a page of 1,000 matches held it for 130–290 ms here, one of 100 for 5–30 ms of CPU) */
  pageSize?: number;
  /** @default 20 */
  sliceMs?: number;
  /** @default 2000 */
  sliceMatches?: number;
  /**
   * A freeze run before the lock (`freezeBeforeLock`) gives the loop a turn after every this many ms of
   * work. @default 5 (shorter than `sliceMs`: a freeze of seconds competes with requests that each need
   * a few turns; on the `whr-freeze` attack of `npm run bench -- availability`, another ladder's writes
   * had p99 73–117 ms with 5 ms against 122–140 ms with 20)
   */
  freezeSliceMs?: number;
  /**
   * A pending freeze's rebuild that has not run for this many ms takes a slice of `freezeSliceMs` before
   * the ladder's next write (`LadderHistory.shareFreeze`): at most a tenth of the ladder's time at the
   * defaults, and only while its writes leave the rebuild no time between them. @default 50 (a slice
   * before every write, the first form, made writes at 200 a second wait: p50 56 ms against 9.6, one run
   * each, docs/BENCHMARKS.md "A freeze rebuilt beside the history")
   */
  freezeShareMs?: number;
}

/** A freeze's slice of work between two turns of the event loop, in ms: see DerivationOptions.freezeSliceMs. */
export const FREEZE_SLICE_MS = 5;
/** See DerivationOptions.freezeShareMs. */
export const FREEZE_SHARE_MS = 50;

/** Games of a pending freeze's rebuild between two checks of the slice's time (`rebuildFreeze`): well under a millisecond. */
const REBUILD_SLICE_GAMES = 16;

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A freeze run before the write's transaction (`LadderHistory.freezeBeforeLock`)
 * was not followed by its match: another instance wrote first, or the match
 * was refused. The history is broken; the writer derives it again and writes
 * the batch with the freeze inside the transaction. A LadderError, so the
 * database layer passes it through a transaction unchanged.
 */
export class FreezeAheadMismatchError extends LadderError {
  constructor() {
    super('the match a freeze ran ahead of was not the next one taken in');
    this.name = 'FreezeAheadMismatchError';
  }
}

export class LadderHistory {
  private readonly system: WholeHistorySystem;
  private readonly current = new Map<string, PlayerState>();
  /** The last sequence number taken in (a voided match included). */
  lastSeq = 0;
  /** Matches taken in that count (after a `restore`, only those read after the freeze). */
  counted = 0;
  /** Set when an `add` failed half-way: the history can no longer be trusted. */
  broken = false;
  /**
   * With a horizon: the counted matches since the earliest one live at the
   * last freeze (the window a next freeze's `fromSeq` is found in), as runs
   * of consecutive matches on one day: the first's sequence number and the
   * day (+∞ for a match without a time, which no freeze holds). A few runs
   * a day, not a sequence number and a time for every live match (about 14
   * MB at 447,000 live matches, most of it boxed times the collector walks).
   */
  private windowSeqs: number[] = [];
  private windowDays: number[] = [];
  /** The system's freezes as last seen, and where the last freeze's live matches start in the log. */
  private seenFreezes = 0;
  private lastFreeze: { fromSeq: number; triggerSeq: number } | undefined;
  /** A freeze not stored yet (the writer stores it with the batch it writes). */
  freezeUnsaved = false;
  /** Restored from a stored freeze: before `triggerSeq`, matches of days on or before `day` are in the priors. */
  private restoredFrom: { day: number; triggerSeq: number } | undefined;
  /**
   * The match a freeze (or a day's close) ran ahead of before the lock (`freezeBeforeLock`): the next match taken in
   * must be it (after a close alone: it, or any other for which the system's `closeHolds` says yes).
   */
  private aheadOf: Match | undefined;
  /** What ran ahead of `aheadOf` was the close of the latest day alone, no freeze. */
  private aheadClosed = false;
  /** A `rebuildFreeze` is running. */
  private rebuilding = false;
  /** When the pending freeze's rebuild last ran (`rebuildFreeze` or `shareFreeze`; performance.now()). */
  private rebuiltAt = -Infinity;

  /**
   * @param system the ladder's system name
   * @param options the ladder's options (as stored)
   * @param logEpoch the ladder's log epoch the history is derived at
   */
  constructor(
    system: string,
    readonly options: Readonly<Record<string, unknown>>,
    readonly logEpoch: number,
  ) {
    this.system = createWholeHistorySystem(system, options);
  }

  /** Whether the system freezes its past (a horizon): its freezes are stored, and a start restores the last one. */
  get freezes(): boolean {
    return this.system.horizon !== undefined;
  }

  /** The system's options, defaults filled in (in the schema's order, so two histories' options compare as JSON). */
  get resolvedOptions(): Readonly<object> {
    return this.system.options;
  }

  /** Every player's current state. */
  get states(): ReadonlyMap<string, PlayerState> {
    return this.current;
  }

  /** A player's current state, or a new player's. */
  stateOf(id: string): PlayerState {
    return this.current.get(id) ?? this.system.initial();
  }

  /** Win probabilities of a match from the states as they stand (before it is added). */
  predict(match: Match): number[] {
    return this.system.predict(match.teams.map((team) => team.players.map((p) => this.stateOf(p.id))));
  }

  /**
   * Takes in the next match of the log (`seq` after every one taken in): a
   * voided one only moves `lastSeq`; a counted one is rated by the system,
   * which adds it to its history. Returns null for a voided match.
   */
  add(seq: number, match: Match, voided = false): HistoryStep | null {
    if (!this.admit(seq, match, voided)) return null;
    let rating: MatchRating;
    let moved: Map<string, PlayerState>;
    try {
      rating = rateUnit(this.system, [match], NO_STATES, false)[0]!;
      moved = this.system.takeMoved();
    } catch (error) {
      this.broken = true;
      throw error;
    }
    this.noteCounted(seq, match);
    const changed = new Map<string, PlayerState>();
    for (const [id, state] of moved) {
      const before = this.current.get(id);
      if (before && identical(before, state)) continue;
      this.current.set(id, state);
      changed.set(id, state);
    }
    return { rating, changed };
  }

  /**
   * Takes in the next match of the log as `add` does, for a derivation: the
   * system adds it without rating it (`absorb`), and the states of the
   * players it moved are left to `takeInMoved`. A state is then built once
   * per player and slice, not for every player of every match and every
   * player a day's close re-smooths, which was most of a derivation's
   * garbage (and the instance's heap grew with it). The states reached are
   * the same: a player's estimate moves only when the system reports it
   * moved.
   */
  private take(seq: number, match: Match, voided: boolean): void {
    if (!this.admit(seq, match, voided)) return;
    try {
      this.system.absorb(match);
    } catch (error) {
      this.broken = true;
      throw error;
    }
    this.noteCounted(seq, match);
  }

  /** The current states of the players moved since the last call (after `take`). */
  private takeInMoved(): void {
    for (const [id, state] of this.system.takeMoved()) this.current.set(id, state);
  }

  /** The checks of `add` and `take`; false when the match moves only `lastSeq` (voided, or in a restored freeze's priors). */
  private admit(seq: number, match: Match, voided: boolean): boolean {
    if (this.broken) throw new Error('this history failed half-way through a match; derive it again from the log');
    if (!(seq > this.lastSeq)) throw new Error(`match ${seq} comes after ${this.lastSeq} in the log`);
    if (this.aheadOf !== undefined && this.aheadClosed) {
      // The latest day closed ahead of a match of a later day: any match of a later day that makes no freeze may come
      // first (it finds the day closed, as it would have closed it); one the history never takes in changes nothing.
      if (!voided && !this.inRestoredPriors(seq, match)) {
        if (match !== this.aheadOf && (match.at === undefined || this.system.closeHolds?.(match.at) !== true)) {
          this.broken = true;
          throw new FreezeAheadMismatchError();
        }
        this.aheadOf = undefined;
      }
    } else if (this.aheadOf !== undefined) {
      // Frozen for that match's day: any other match first would be rated on a freeze the log does not make.
      if (match !== this.aheadOf || voided) {
        this.broken = true;
        throw new FreezeAheadMismatchError();
      }
      this.aheadOf = undefined;
    }
    if (voided || this.inRestoredPriors(seq, match)) {
      this.lastSeq = seq;
      return false;
    }
    return true;
  }

  /** A counted match taken in. */
  private noteCounted(seq: number, match: Match): void {
    this.lastSeq = seq;
    this.counted++;
    if (this.system.horizon) this.noteWindow(seq, match.at);
  }

  /**
   * Runs the freeze the match would make first (a horizon whose point its
   * day passes), in slices with a turn of the event loop between them
   * (`turns`), so that a freeze of seconds does not hold the loop: the
   * history is then the one rating the match alone reaches (the freeze is
   * the first thing a match of a new day does). Nothing may use the history
   * meanwhile: the writer holds it for the batch. Left half-way, it is
   * broken (derived again).
   */
  async freezeAhead(match: Match, turns: Turns): Promise<boolean> {
    return this.runAhead(match.at === undefined ? undefined : this.system.horizon?.freezeAhead(match.at), turns);
  }

  /**
   * Runs the close of the latest day that the match would run first (the
   * system's `closeAhead`: the day's players re-smoothed, and a slice of the
   * cycle; up to 156 ms in one piece at 20,000 players), in slices as
   * `freezeAhead` does; nothing when it closes none or makes a freeze
   * first. Says whether it ran. Left half-way, the history is broken.
   */
  async closeAhead(match: Match, turns: Turns): Promise<boolean> {
    return this.runAhead(match.at === undefined ? undefined : this.system.closeAhead?.(match.at), turns);
  }

  /** Runs steps the system gave (none: false) with a turn of the loop between them; the history is broken until they end. */
  private async runAhead(steps: Iterable<void> | undefined, turns: Turns): Promise<boolean> {
    if (steps === undefined) return false;
    this.broken = true;
    for (const _ of steps) await turns.pause();
    this.broken = false;
    return true;
  }

  /**
   * `freezeAhead` run by the writer before it locks the ladder and opens the
   * write's transaction, so that a freeze of seconds holds neither the
   * ladder's lock nor, on PGlite, the one connection every ladder's queries
   * share. The history is then bound to that match: the next match `add`
   * takes in must be this very object, or the history breaks with a
   * FreezeAheadMismatchError (another instance wrote in between, or the
   * match was refused: the freeze belongs to a log that was not written);
   * `freezeAheadPending` says the match has not come yet. Says whether a
   * freeze ran. A match the horizon refuses (`refuseFrozen`) runs none.
   * With no freeze to run, the close of the latest day that the match
   * would run first (`closeAhead`) runs ahead the same way, on any whole
   * history, horizon or not; the next match taken in may then be any that
   * finds the day closed as it would have closed it (of a later day, and
   * making no freeze: the system's `closeHolds`), another instance's
   * included, and otherwise the history breaks as above.
   */
  async freezeBeforeLock(match: Match, turns: Turns): Promise<boolean> {
    if (this.broken || this.aheadOf !== undefined) return false;
    try {
      this.refuseFrozen(match);
    } catch {
      return false;
    }
    if (await this.freezeAhead(match, turns)) {
      this.aheadOf = match;
      this.aheadClosed = false;
      return true;
    }
    // No freeze: the close of the latest day the match would run first, likewise ahead, bound more loosely.
    if (await this.closeAhead(match, turns)) {
      this.aheadOf = match;
      this.aheadClosed = true;
    }
    return false;
  }

  /**
   * Runs in slices the freeze that taking this match of the log in would
   * make first (`freezeAhead`), for a derivation (a start, a catch-up, a
   * correction's replay): inside `add` or `take` the freeze replays the
   * whole live window in one piece, seconds on a large ladder (22 s at
   * 447,000 live matches). Nothing for a match that only moves `lastSeq`
   * (voided, or in a restored freeze's priors), which the history never
   * takes in. Then take the same match in (`add`, `addStored`).
   */
  async freezeBefore(seq: number, match: Match, voided: boolean, turns: Turns): Promise<boolean> {
    if (voided || this.broken || this.aheadOf !== undefined) return false;
    if (!(seq > this.lastSeq) || this.inRestoredPriors(seq, match)) return false;
    if (await this.freezeAhead(match, turns)) return true;
    // Or the close of the latest day, in slices too (a derivation meets one a day).
    await this.closeAhead(match, turns);
    return false;
  }

  /**
   * Runs the rebuild of a freeze not in effect yet (the system's
   * `freezeLag`: the match that reached a freeze point started it beside
   * the history) a slice at a time, with a turn of the event loop between
   * slices, until it has caught up with the matches taken in, the history
   * breaks, or `when` says stop (the history is no longer in use); while
   * `when` says wait (the ladder's own writes are running) it runs nothing
   * and looks again a millisecond later, so the rebuild takes the time
   * between the ladder's writes and never delays them by more than a
   * slice. The writer starts it after each batch it writes while a freeze
   * is pending, so that the freeze's day of effect finds little left to do
   * and the ladder's writes never wait for a whole window's replay. Changes
   * no state the history reports; it may run between any two calls, `add`
   * included. One at a time: a second call while one runs returns at once.
   */
  async rebuildFreeze(turns: Turns, when: () => 'run' | 'wait' | 'stop' = () => 'run'): Promise<void> {
    const horizon = this.system.horizon;
    if (horizon === undefined || this.rebuilding) return;
    this.rebuilding = true;
    try {
      for (;;) {
        if (this.broken || !horizon.freezePending()) return;
        const now = when();
        if (now === 'stop') return;
        if (now === 'wait') {
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        this.rebuiltAt = performance.now();
        if (horizon.advanceFreeze(REBUILD_SLICE_GAMES)) return;
        await turns.pause();
      }
    } catch {
      // A rebuild that failed half-way cannot take effect: derived again from the log on the next write.
      this.broken = true;
    } finally {
      this.rebuilding = false;
    }
  }

  /**
   * A write's share of a pending freeze's rebuild: when the rebuild has not
   * run for `everyMs`, runs it at once for one slice of about `ms` (at least
   * a few games). `rebuildFreeze` takes only the time between the ladder's
   * writes, and a ladder written without a pause (its queue never empties)
   * leaves it none: its rebuild would wait for the day of effect, whose
   * writes would then wait for the rest of the replay. With the share such
   * a ladder gives the rebuild at most `ms` in every `everyMs` of its time,
   * and the rebuild finishes within the lag at any rate that leaves it that
   * much (a whole window's replay, 15–20 s at 447,000 live matches, in
   * 150–200 s at 5 ms in 50). Returns whether it ran; a rebuild that fails
   * breaks the history, as in `rebuildFreeze`.
   */
  shareFreeze(ms: number, everyMs: number): boolean {
    const horizon = this.system.horizon;
    if (horizon === undefined || this.broken || !horizon.freezePending()) return false;
    const now = performance.now();
    if (now - this.rebuiltAt < everyMs) return false;
    const end = now + ms;
    try {
      while (!horizon.advanceFreeze(REBUILD_SLICE_GAMES) && performance.now() < end);
    } catch {
      this.broken = true;
    }
    this.rebuiltAt = performance.now();
    return true;
  }

  /** Whether a freeze is being rebuilt beside the history (see `rebuildFreeze`). */
  get freezeRebuilding(): boolean {
    return this.system.horizon?.freezePending() === true;
  }

  /** A freeze ran before the lock and its match has not been taken in yet. */
  get freezeAheadPending(): boolean {
    return this.aheadOf !== undefined;
  }

  /** Keeps the window of counted matches a freeze's `fromSeq` is found in; on a freeze, finds it and drops what came before. */
  private noteWindow(seq: number, at: number | undefined): void {
    const horizon = this.system.horizon!;
    const day = at === undefined ? Infinity : horizon.dayOf(at);
    if (this.windowDays.length === 0 || this.windowDays[this.windowDays.length - 1] !== day) {
      this.windowSeqs.push(seq);
      this.windowDays.push(day);
    }
    const freezes = horizon.freezes();
    if (freezes === this.seenFreezes) return;
    this.seenFreezes = freezes;
    // The freeze came with this match (its day reached the point): the live matches are the window's of days after the freeze, and this one.
    const frozenDay = horizon.frozenDay()!;
    let first = this.windowDays.length - 1;
    for (let i = 0; i < this.windowDays.length; i++) {
      if (this.windowDays[i]! > frozenDay) {
        first = i;
        break;
      }
    }
    this.lastFreeze = { fromSeq: this.windowSeqs[first]!, triggerSeq: seq };
    this.windowSeqs = this.windowSeqs.slice(first);
    this.windowDays = this.windowDays.slice(first);
    this.freezeUnsaved = true;
  }

  /**
   * Refuses a new match dated on or before the last freeze: its players'
   * timelines up to that day are priors now, so it could not be rated as
   * the whole history would rate it (a match more than a horizon older
   * than the ladder's latest day). The log's matches are never refused.
   */
  refuseFrozen(match: Match): void {
    const horizon = this.system.horizon;
    // The day alone (`frozen()` would build a prior per player, for every match written), a freeze still being
    // rebuilt included: its rebuild leaves out what is dated on or before it, as a restart from it does.
    const day = horizon?.refusedThrough();
    if (day === undefined || !horizon!.onOrBefore(match.at, day)) return;
    const after = new Date(horizon!.timeOf(day + 1)).toISOString();
    throw new InvalidInputError(`this ladder's past before ${after} is frozen (its horizon): a match must be dated at or after that time`, { field: 'at' });
  }

  /** Whether the match is one a restored history's priors hold already: before the freeze's trigger, of a day on or before it. */
  private inRestoredPriors(seq: number, match: Match): boolean {
    const from = this.restoredFrom;
    if (from === undefined || seq >= from.triggerSeq) return false;
    return this.system.horizon!.onOrBefore(match.at, from.day);
  }

  /** The last freeze, to store (undefined without a horizon or before the first freeze). */
  freeze(): StoredFreeze | undefined {
    const past = this.system.horizon?.frozen();
    if (past === undefined || this.lastFreeze === undefined) return undefined;
    return { logEpoch: this.logEpoch, options: this.resolvedOptions, fromSeq: this.lastFreeze.fromSeq, triggerSeq: this.lastFreeze.triggerSeq, past };
  }

  /**
   * Starts this (new) history from a stored freeze: the priors restored,
   * the log to be read from `fromSeq` on (`deriveInSlices`, `catchUp`).
   * Reaches the states a derivation of the whole log reaches, to the last
   * bit (the core's restore, horizon.ts). False, and untouched, when the
   * freeze does not fit: no horizon, another log epoch or other options.
   */
  restore(freeze: StoredFreeze): boolean {
    const horizon = this.system.horizon;
    if (horizon === undefined || this.lastSeq !== 0 || this.counted !== 0) return false;
    if (freeze.logEpoch !== this.logEpoch || JSON.stringify(freeze.options) !== JSON.stringify(this.resolvedOptions)) return false;
    horizon.restoreFrozen(freeze.past);
    // The frozen players are the system's first states: taken in as a derivation would have them.
    for (const [id, state] of this.system.takeMoved()) this.current.set(id, state);
    this.seenFreezes = horizon.freezes();
    this.lastFreeze = { fromSeq: freeze.fromSeq, triggerSeq: freeze.triggerSeq };
    this.restoredFrom = { day: freeze.past.day, triggerSeq: freeze.triggerSeq };
    this.lastSeq = freeze.fromSeq - 1;
    return true;
  }

  /** Adds stored matches in sequence order. */
  addStored(matches: Iterable<StoredMatch>): void {
    try {
      for (const stored of matches) this.take(stored.seq, stored.body, stored.voided === true);
    } finally {
      if (!this.broken) this.takeInMoved();
    }
  }

  /**
   * Makes the history's room for the matches up to `untilSeq` at once, and a
   * quarter more: the matches the writes after it add (with a horizon, a
   * window grows by at most a quarter of the horizon before a freeze sheds a
   * step). A large history grown match by match would copy its arrays at
   * each quarter's growth, and the allocator may keep the old copies as
   * resident memory; room not yet filled is never written, so it costs
   * address space only.
   */
  private reserveFor(untilSeq: number): void {
    if (Number.isFinite(untilSeq) && untilSeq > this.lastSeq) this.system.reserve?.(Math.ceil((untilSeq - this.lastSeq) * 1.25));
  }

  /**
   * Adds the log's matches after `lastSeq`, up to `untilSeq`, as `catchUp`
   * does, but in slices: after each slice of work (see DerivationOptions) it
   * waits for a turn of the event loop, so that deriving a long log after a
   * start never holds the process for more than about a slice. For use
   * outside a transaction (each page is its own query); the history must
   * not be shared meanwhile.
   */
  async deriveInSlices(db: Queryable, ladder: string, untilSeq: number, options: DerivationOptions = {}): Promise<void> {
    const pageSize = options.pageSize ?? 100;
    const sliceMs = options.sliceMs ?? 20;
    const sliceMatches = options.sliceMatches ?? 2000;
    const freezeTurns = new Turns(options.freezeSliceMs ?? FREEZE_SLICE_MS);
    this.reserveFor(untilSeq);
    let sliceStart = performance.now();
    let inSlice = 0;
    try {
      while (this.lastSeq < untilSeq) {
        const rows = await matchesAfter(db, ladder, this.lastSeq, pageSize);
        for (const row of rows) {
          if (row.seq > untilSeq) return;
          if (await this.freezeBefore(row.seq, row.body, row.voided_at !== null, freezeTurns)) sliceStart = performance.now();
          this.take(row.seq, row.body, row.voided_at !== null);
          if (++inSlice >= sliceMatches || performance.now() - sliceStart >= sliceMs) {
            await yieldTurn();
            inSlice = 0;
            sliceStart = performance.now();
          }
        }
        if (rows.length < pageSize) return;
      }
    } finally {
      if (!this.broken) this.takeInMoved();
    }
  }

  /**
   * Adds the log's matches after `lastSeq`, up to `untilSeq`, reading them
   * page by page; a freeze among them runs in slices (`freezeBefore`), the
   * rest in one piece (a catch-up under the ladder's lock adds what another
   * instance wrote since the history was brought up before the lock).
   */
  async catchUp(db: Queryable, ladder: string, untilSeq = Infinity): Promise<void> {
    const freezeTurns = new Turns(FREEZE_SLICE_MS);
    this.reserveFor(untilSeq);
    try {
      while (this.lastSeq < untilSeq) {
        const rows = await matchesAfter(db, ladder, this.lastSeq, PAGE);
        for (const row of rows) {
          if (row.seq > untilSeq) return;
          await this.freezeBefore(row.seq, row.body, row.voided_at !== null, freezeTurns);
          this.take(row.seq, row.body, row.voided_at !== null);
        }
        if (rows.length < PAGE) return;
      }
    } finally {
      // While a match is still awaited (`freezeBeforeLock`), nothing was taken in: what ran ahead of it moved its
      // players (a day's close re-smooths players outside the match), and `add` reports them with the match's own.
      if (!this.broken && this.aheadOf === undefined) this.takeInMoved();
    }
  }
}

/**
 * A new history of the ladder at `logEpoch`, started from its stored freeze
 * when one fits (same log epoch and options, not past `lastSeq`), else
 * empty: either way, bring it up to the log with `deriveInSlices` or
 * `catchUp`.
 */
export async function startHistory(
  db: Queryable,
  ladder: { id: string; system: string; options: Readonly<Record<string, unknown>> },
  logEpoch: number,
  lastSeq: number,
): Promise<LadderHistory> {
  const history = new LadderHistory(ladder.system, ladder.options, logEpoch);
  if (!history.freezes) return history;
  const stored = await readFreeze(db, ladder.id);
  if (stored === undefined || stored.triggerSeq > lastSeq) return history;
  try {
    history.restore(stored);
    return history;
  } catch {
    // Priors the core refuses (a row written by hand, a bug): the whole log still gives the states.
    return new LadderHistory(ladder.system, ladder.options, logEpoch);
  }
}

/** Seasons' soft resets act on stored states, which a whole history does not take; refused for such ladders. */
export function refuseSeasons(system: string, ladder: string): void {
  if (!keepsWholeHistory(system)) return;
  throw new InvalidInputError(
    `${describeSystem(system).label} derives every state from the whole match log, so a season's soft reset of stored ratings has nothing to act on; ${ladder} cannot open seasons (create a new ladder for a new season)`,
    { field: 'ladder' },
  );
}
