/**
 * The matchmaking loop (docs/SERVICE.md, "Matchmaking"). Every interval,
 * for each ladder with a queue, an instance claims the ladder's matchmaking
 * lock. The instance holding it keeps one long-lived `Matchmaker` for the
 * ladder: built once from the shared queue when it takes the lock, then
 * kept up to date from the queue's events (tickets added, cancelled), never
 * by reading the queue back. Each turn it applies the new events, checks
 * its matchmaker against the queue's counters, runs a pass, predicts each
 * formed match's win probability with the ladder's rating system and places
 * the matches (a match whose tickets are no longer all waiting is dropped
 * and its other tickets go back into the matchmaker). A failed turn is
 * counted and logged, never thrown out of the timer.
 *
 * Expiry rides along too: each turn, once the oldest ticket or backfill is
 * due, the holder asks the store to end what is past the ladder's
 * time-to-live (no timer per ticket); the store's cancel events take them
 * out of the matchmaker in the same turn.
 *
 * Backfills ride along: the queue's events open and cancel them in the
 * matchmaker, a rebuild reads the open ones (as they stand, newcomers
 * included) before the tickets, and the pass's fills are placed before its
 * matches. A fill the store refuses (a ticket or the backfill left
 * meanwhile) is undone in the matchmaker: the backfill is read back as
 * stored and opened again, and its tickets that still wait go back in.
 *
 * The matchmakers live where the `host` keeps them (by default a worker
 * thread, src/service/matchmaking-worker/host.ts): each change or batch of
 * changes is one awaited message, and a matchmaker whose thread stopped is
 * rebuilt like one whose lock was lost.
 */
import { randomUUID } from 'node:crypto';
import type { BackfillInput, Ticket } from 'ladder-core/matchmaking';
import { lastBackfillWideningSeconds, lastWideningSeconds } from 'ladder-core/matchmaking/horizon.js';
import type { Database } from '../store/database.js';
import { findPlayers } from '../store/players.js';
import { NotFoundError } from './errors/index.js';
import { type Ladder, type Ladders, matchmakerOptions } from './ladders.js';
import { type MatchmakerHost, type RemoteMatchmaker, workerMatchmakers } from './matchmaking-worker/host.js';
import type { MatchmakerOp, OpResult } from './matchmaking-worker/protocol.js';
import { type PassBackfill, type PassMatch, waitsOf } from './matchmaking-worker/rule-set-queue.js';
import type { WarmUpReport } from './matchmaking-warm-up.js';
import type { ServiceMetrics } from './metrics.js';
import type { BackfillAddition, BackfillPlacement, Placement, QueuedBackfillPlayer, RecentMatch, StoredTicket, TicketStore, WhyWaiting } from './tickets/store.js';
import { placementChunks } from './placement-chunks.js';
import { Turns } from './turns.js';

export interface MatchmakingContext {
  db: Database;
  tickets: TicketStore;
  metrics: ServiceMetrics;
  ladders: Ladders;
}

/** What one ladder's turn did (for tracing and benchmarks). */
export interface PassReport {
  ladder: string;
  /** Tickets in the matchmaker when the pass ran (or would have run). */
  tickets: number;
  /** Queue events applied. */
  events: number;
  /** Whether the matchmaker was rebuilt from the queue in this turn. */
  rebuilt: boolean;
  /** The pass was skipped: nothing could have changed since the last one. */
  skipped: boolean;
  formed: number;
  placed: number;
  /** Backfills that gained players in the pass, and the fills placed. */
  backfilled: number;
  filled: number;
  /** Milliseconds: claiming the lock and rebuilding, following events, the library's pass (wall and CPU), predicting and placing, the whole turn. */
  claimMs: number;
  followMs: number;
  passMs: number;
  passCpuMs: number;
  placeMs: number;
  /** Of placeMs: reading the players' ratings, and the assign scripts. */
  ratingsMs: number;
  assignMs: number;
  totalMs: number;
}

export interface MatchmakingOptions {
  onError: (error: unknown) => void;
  /** Called after each ladder's turn. */
  onPass?: (report: PassReport) => void;
  /** Events read per round trip (the event loop serves requests between them). @default 250 */
  eventBatch?: number;
  /** The clock tickets and backfills expire by (epoch ms). @default Date.now */
  now?: () => number;
  /** Where the matchmakers live; the caller closes it. @default a worker thread of the engine's own, closed by `close()` */
  host?: MatchmakerHost;
  /**
   * Milliseconds of synchronous work after which a turn lets the event loop
   * turn (a rebuild's batches, the reading of ratings and the placing of a
   * burst's matches), so requests are served in between. @default 20
   */
  sliceMs?: number;
  /** Warm the host (`MatchmakerHost.warmUp`) when a turn first finds a queue, before its passes (`matchmakingWarmUp: 'first-queue'`); `onWarmUp` hears what it took. */
  warmUpOnFirstQueue?: boolean;
  onWarmUp?: (report: WarmUpReport) => void;
}

interface LadderState {
  ladder: Ladder;
  matchmaker: RemoteMatchmaker;
  /** Position in the queue's events up to which the matchmaker is current. */
  cursor: string;
  /** Waiting tickets the matchmaker refused (so the count check still holds); should stay empty. */
  refused: Set<string>;
  /** Open backfills the matchmaker refused (likewise). */
  refusedBackfills: Set<string>;
  /** Events applied or tickets put back since the last pass. */
  changed: boolean;
  lastFormed: number;
  /** Epoch ms of the last pass. */
  lastPassAt: number;
  /** Epoch ms after which no queued ticket's range widens any more. */
  widenUntil: number;
  /** No rebuild for a failed check before this (epoch ms), so a queue that disagrees again at once is not rebuilt every turn. */
  checkQuietUntil: number;
  /** Epoch ms the lock was last claimed or renewed. */
  claimedAt: number;
  /** Epoch ms (on the expiry clock) before which nothing can expire: the oldest ticket's or backfill's deadline at the last sweep. */
  nextExpiryAt: number;
  /** The matchmaker refused a ticket for its regions (it keeps every region it has seen): a rebuild learns only those the waiting tickets name. */
  regionsFull: boolean;
  labels: { queue: string };
  /** Rule-set queues: the last pass's why-waiting summary, whether the store has it yet, the tickets asked about whose reasons it has, and when the asked-about set was last read (epoch ms). */
  why: WhyWaiting | undefined;
  whyWritten: boolean;
  whyAnswered: Set<string>;
  whyReadAt: number;
}

class LockLostError extends Error {}
/** The ladder of a queue no longer exists. */
class LadderGoneError extends Error {}

/** Long work renews the lock when it was last renewed this long ago (well inside its 10 s). */
const RENEW_WITHIN_MS = 2000;
/** Between passes, the tickets asked about are read at most this often (a new ask is answered within it). */
const WHY_READ_EVERY_MS = 1000;

/** Median and longest of some waits (seconds). */
function waitFigures(waits: number[]): { p50: number; max: number } {
  const sorted = [...waits].sort((a, b) => a - b);
  return { p50: sorted[Math.floor((sorted.length - 1) / 2)] ?? 0, max: sorted[sorted.length - 1] ?? 0 };
}

export class MatchmakingEngine {
  private readonly states = new Map<string, LadderState>();
  private readonly eventBatch: number;
  private readonly now: () => number;
  readonly host: MatchmakerHost;
  private readonly ownHost: boolean;
  private readonly slices: Turns;
  /** `warmUpOnFirstQueue`, until a turn has found a queue. */
  private warmUpPending: boolean;

  constructor(
    private readonly ctx: MatchmakingContext,
    private readonly options: MatchmakingOptions,
  ) {
    this.eventBatch = options.eventBatch ?? 250;
    this.now = options.now ?? Date.now;
    this.ownHost = options.host === undefined;
    this.host = options.host ?? workerMatchmakers();
    this.slices = new Turns(options.sliceMs ?? 20);
    this.warmUpPending = options.warmUpOnFirstQueue === true;
    ctx.metrics.setLocksHeld(() => [...this.states.keys()]);
  }

  /** The long-lived matchmaker of a ladder whose lock this instance holds. */
  matchmakerOf(ladder: string): RemoteMatchmaker | undefined {
    return this.states.get(ladder)?.matchmaker;
  }

  /** Drops a ladder's state and frees its matchmaker. */
  private forget(ladder: string): void {
    this.states.get(ladder)?.matchmaker.dispose();
    this.states.delete(ladder);
  }

  /** Gives up every lock and stops the host if the engine started it. */
  async close(): Promise<void> {
    await this.release();
    if (this.ownHost) await this.host.close();
  }

  /** Milliseconds the library's passes took in the last turn (all its ladders together). */
  passMsInLastTurn = 0;

  /** Whether this instance holds the ladder's lock (as of its last turn). */
  holds(ladder: string): boolean {
    return this.states.has(ladder);
  }

  /** One turn over every queue, or over the given ones only; resolves to the matches placed. */
  async turn(only?: Iterable<string>): Promise<number> {
    let queues: string[];
    if (only !== undefined) queues = [...only];
    else {
      try {
        queues = await this.ctx.tickets.queues();
      } catch (error) {
        this.ctx.metrics.passFailures.inc({ queue: '' });
        this.options.onError(error);
        return 0;
      }
    }
    if (this.warmUpPending && queues.length > 0) {
      this.warmUpPending = false;
      // A cold matchmaker is slower, not wrong: a failed warm-up is reported and the turn goes on.
      await this.host
        .warmUp()
        .then((report) => this.options.onWarmUp?.(report))
        .catch(this.options.onError);
    }
    let placed = 0;
    this.passMsInLastTurn = 0;
    if (only === undefined) {
      // A queue no longer listed was closed (its ladder deleted): let its matchmaker and lock go.
      const listed = new Set(queues);
      for (const ladder of [...this.states.keys()]) {
        if (listed.has(ladder)) continue;
        this.forget(ladder);
        await this.ctx.tickets.release(ladder).catch(() => {});
      }
    }
    for (const ladder of queues) {
      try {
        placed += await this.ladderTurn(ladder);
      } catch (thrown) {
        let error = thrown;
        // Whatever the matchmaker holds may now disagree with the queue: build it again next time.
        this.forget(ladder);
        if (error instanceof LockLostError) continue;
        if (error instanceof LadderGoneError) {
          // Tickets queued for a ladder deleted since (an instance that still had it cached took them):
          // they can never be matched, so they are cancelled and the queue is forgotten.
          try {
            await this.ctx.tickets.closeQueue(ladder);
            await this.ctx.tickets.release(ladder);
            continue;
          } catch (closing) {
            error = closing;
          }
        }
        this.ctx.metrics.passFailures.inc({ queue: ladder });
        this.options.onError(error);
      }
    }
    return placed;
  }

  /** Gives up every lock this instance holds. */
  async release(): Promise<void> {
    const ladders = [...this.states.keys()];
    for (const ladder of ladders) this.forget(ladder);
    for (const ladder of ladders) {
      try {
        await this.ctx.tickets.release(ladder);
      } catch {
        // It expires on its own.
      }
    }
  }

  /** Adds tickets to the matchmaker (one batch of messages). */
  private async admit(state: LadderState, tickets: readonly Ticket[]): Promise<void> {
    if (tickets.length === 0) return;
    const results = await state.matchmaker.apply(tickets.map((ticket) => ({ op: 'add', ticket })));
    tickets.forEach((ticket, i) => this.admitted(state, ticket, results[i]!));
  }

  /** Books the matchmaker's answer to adding a ticket. */
  private admitted(state: LadderState, ticket: Ticket, result: OpResult): void {
    // Already queued: a rebuild's snapshot and the events after its position overlap.
    if (result === 'present') return;
    if (typeof result === 'object' && result !== null) {
      if (result.refused.field === 'players[].pings') state.regionsFull = true;
      state.refused.add(ticket.id);
      return;
    }
    state.refused.delete(ticket.id);
    state.changed = true;
    const until = (ticket.at + (state.matchmaker.expansionSeconds ?? lastWideningSeconds(ticket, state.matchmaker.widening))) * 1000;
    if (until > state.widenUntil) state.widenUntil = until;
  }

  /** Books the matchmaker's answer to opening a backfill. */
  private admittedBackfill(state: LadderState, request: BackfillInput, result: OpResult): void {
    // Already open: a rebuild's snapshot and the events after its position overlap.
    if (result === 'present') return;
    if (typeof result === 'object' && result !== null) {
      state.refusedBackfills.add(request.id);
      return;
    }
    state.refusedBackfills.delete(request.id);
    state.changed = true;
    const until =
      (request.at + (state.matchmaker.expansionSeconds ?? lastBackfillWideningSeconds(request, state.matchmaker.widening, state.ladder.matchmaking.filterDefaults))) * 1000;
    if (until > state.widenUntil) state.widenUntil = until;
  }

  private async rebuild(id: string, reason: 'claim' | 'check'): Promise<LadderState> {
    let ladder: Ladder;
    try {
      ladder = await this.ctx.ladders.get(id);
    } catch (error) {
      if (error instanceof NotFoundError && error.field === 'ladder') throw new LadderGoneError();
      throw error;
    }
    const state: LadderState = {
      ladder,
      matchmaker: await this.host.create(matchmakerOptions(ladder.matchmaking)),
      cursor: '0',
      refused: new Set(),
      refusedBackfills: new Set(),
      changed: true,
      lastFormed: 0,
      lastPassAt: 0,
      widenUntil: 0,
      checkQuietUntil: 0,
      claimedAt: Date.now(),
      nextExpiryAt: -Infinity,
      regionsFull: false,
      labels: { queue: id },
      why: undefined,
      whyWritten: false,
      whyAnswered: new Set(),
      whyReadAt: 0,
    };
    this.forget(id);
    try {
      state.cursor = await this.ctx.tickets.snapshot(
        id,
        async (batch) => {
          await this.admit(state, batch);
          // A rebuild of a million tickets outlasts the lock.
          await this.keepLock(state, id);
          // A matchmaker in process answers without a turn of the event loop.
          await this.slices.pause();
        },
        async (backfills) => {
          const results = await state.matchmaker.apply(backfills.map((backfill) => ({ op: 'addBackfill', backfill })));
          backfills.forEach((request, i) => this.admittedBackfill(state, request, results[i]!));
        },
      );
    } catch (error) {
      state.matchmaker.dispose();
      throw error;
    }
    this.states.set(id, state);
    this.ctx.metrics.rebuilds.inc({ queue: id, reason });
    return state;
  }

  /** Whether the ladder's rule set is no longer the one its matchmaker was built with (the cached definition: seen within seconds). */
  private async ruleSetChanged(state: LadderState, id: string): Promise<boolean> {
    let ladder: Ladder;
    try {
      ladder = await this.ctx.ladders.get(id);
    } catch {
      // A ladder gone is found by the next rebuild; nothing to compare meanwhile.
      return false;
    }
    const [now, built] = [ladder.matchmaking.ruleSet, state.ladder.matchmaking.ruleSet];
    return now !== built && JSON.stringify(now) !== JSON.stringify(built);
  }

  /** The tickets of these ids that still wait, in the same order. */
  private async stillWaiting(ids: readonly string[]): Promise<Ticket[]> {
    const waiting: Ticket[] = [];
    for (const ticket of await this.ctx.tickets.getMany(ids)) if (ticket?.status === 'waiting') waiting.push(ticket.ticket);
    return waiting;
  }

  /** Renews the lock in the middle of long work (a rebuild, a burst of placements); throws LockLostError when it is gone. */
  private async keepLock(state: LadderState, id: string): Promise<void> {
    if (Date.now() - state.claimedAt < RENEW_WITHIN_MS) return;
    if ((await this.ctx.tickets.claim(id)) === 'busy') throw new LockLostError();
    state.claimedAt = Date.now();
  }

  /** Applies the events after the state's cursor; says whether the matchmaker then agrees with the queue. */
  private async follow(state: LadderState, id: string): Promise<{ events: number; consistent: boolean }> {
    let applied = 0;
    for (;;) {
      const batch = await this.ctx.tickets.readEvents(id, state.cursor, this.eventBatch);
      if (batch.gap) return { events: applied, consistent: false };
      const now = Date.now();
      const matchmaker = state.matchmaker;
      // The batch's events go to the matchmaker as one message, then its answers are booked in the same order.
      const results = await matchmaker.apply(
        batch.events.map(
          (event): MatchmakerOp =>
            event.kind === 'add'
              ? { op: 'add', ticket: event.ticket }
              : event.kind === 'cancel'
                ? { op: 'cancel', id: event.id }
                : event.kind === 'backfill'
                  ? { op: 'addBackfill', backfill: event.backfill }
                  : { op: 'removeBackfill', id: event.id },
        ),
      );
      batch.events.forEach((event, i) => {
        const result = results[i]!;
        this.ctx.metrics.eventLagSeconds.observe(state.labels, Math.max(0, now - event.at) / 1000);
        if (event.kind === 'add') this.admitted(state, event.ticket, result);
        else if (event.kind === 'cancel') {
          if (result === true) state.changed = true;
          else state.refused.delete(event.id);
        } else if (event.kind === 'backfill') this.admittedBackfill(state, event.backfill, result);
        else if (result !== true) state.refusedBackfills.delete(event.id);
      });
      applied += batch.events.length;
      state.cursor = batch.cursor;
      await this.keepLock(state, id);
      if (batch.complete) {
        if (state.regionsFull) return { events: applied, consistent: false };
        const consistent = matchmaker.size + state.refused.size === batch.waiting && matchmaker.backfillCount + state.refusedBackfills.size === batch.backfills;
        return { events: applied, consistent };
      }
    }
  }

  /** Ends the ladder's tickets and backfills past their time-to-live, once the oldest is due. */
  private async expire(state: LadderState, id: string): Promise<void> {
    const now = this.now();
    if (now < state.nextExpiryAt) return;
    const ticketTtl = state.ladder.matchmaking.ticketTtlSeconds * 1000;
    const backfillTtl = state.ladder.matchmaking.backfillTtlSeconds * 1000;
    const swept = await this.ctx.tickets.expire(id, { tickets: now - ticketTtl, backfills: now - backfillTtl }, now);
    if (swept.tickets.length > 0) this.ctx.metrics.ticketsExpired.inc(state.labels, swept.tickets.length);
    if (swept.backfills.length > 0) this.ctx.metrics.backfillsExpired.inc(state.labels, swept.backfills.length);
    // Later arrivals expire later: nothing is due before the oldest one left is. (A rebuild starts over.)
    state.nextExpiryAt = Math.min(
      swept.oldestTicket === null ? Infinity : swept.oldestTicket + ticketTtl,
      swept.oldestBackfill === null ? Infinity : swept.oldestBackfill + backfillTtl,
    );
    // Nothing left to expire: what arrives from now on is due a time-to-live from now at the earliest.
    if (state.nextExpiryAt === Infinity) state.nextExpiryAt = now + Math.min(ticketTtl, backfillTtl);
  }

  private async ladderTurn(id: string): Promise<number> {
    const started = performance.now();
    const claim = await this.ctx.tickets.claim(id);
    if (claim === 'busy') {
      this.forget(id);
      return 0;
    }
    let state = this.states.get(id);
    let rebuilt = false;
    // A matchmaker whose thread stopped holds nothing any more: it is built again, as on a new claim.
    if (claim === 'acquired' || state === undefined || !state.matchmaker.alive) {
      state = await this.rebuild(id, 'claim');
      rebuilt = true;
    } else if (await this.ruleSetChanged(state, id)) {
      // Set or removed while the queue was empty (the definition allows no other time): a matchmaker of the other kind.
      state = await this.rebuild(id, 'check');
      rebuilt = true;
    }
    state.claimedAt = Date.now();
    await this.expire(state, id);
    const claimed = performance.now();
    let followed = await this.follow(state, id);
    if (!followed.consistent && Date.now() >= state.checkQuietUntil) {
      state = await this.rebuild(id, 'check');
      state.checkQuietUntil = Date.now() + 60_000;
      rebuilt = true;
      const again = await this.follow(state, id);
      followed = { events: followed.events + again.events, consistent: again.consistent };
    }
    await this.ctx.tickets.trimEvents(id, state.cursor);
    const report: PassReport = {
      ladder: id,
      tickets: state.matchmaker.size,
      events: followed.events,
      rebuilt,
      skipped: false,
      formed: 0,
      placed: 0,
      backfilled: 0,
      filled: 0,
      claimMs: claimed - started,
      followMs: performance.now() - claimed,
      passMs: 0,
      passCpuMs: 0,
      placeMs: 0,
      ratingsMs: 0,
      assignMs: 0,
      totalMs: 0,
    };
    try {
      const placed = await this.pass(state, id, report);
      try {
        await this.reportWhy(state, id);
      } catch (error) {
        // Advisory: a failed write is logged and tried again next turn; the matchmaker is kept (a lost lock is not).
        if (error instanceof LockLostError) throw error;
        state.whyWritten = false;
        this.options.onError(error);
      }
      return placed;
    } finally {
      report.totalMs = performance.now() - started;
      if (!report.skipped) this.ctx.metrics.passSeconds.observe(state.labels, report.totalMs / 1000);
      this.options.onPass?.(report);
    }
  }

  private async pass(state: LadderState, id: string, report: PassReport): Promise<number> {
    const matchmaker = state.matchmaker;
    const now = Date.now();
    // The pass is a function of the tickets and their ranges: with neither changed since a pass that
    // formed nothing, it would form nothing again.
    if (matchmaker.size === 0 || (!state.changed && state.lastFormed === 0 && state.lastPassAt >= state.widenUntil)) {
      // Nothing waits any more: nothing is held either.
      if (matchmaker.size === 0 && state.why !== undefined && Object.keys(state.why.heldBy).length > 0) this.newWhy(state, { at: now, heldBy: {} });
      report.skipped = true;
      this.ctx.metrics.passesSkipped.inc(state.labels);
      return 0;
    }
    this.ctx.metrics.passTickets.observe(state.labels, matchmaker.size);
    // The matches come a part at a time, each placed before the next is asked for: a burst's hundred
    // thousand matches and their million players never sit on this thread at once (its heap, and so its
    // garbage collection, stays small).
    const result = await matchmaker.passInParts(now / 1000);
    report.passMs = result.ms;
    this.passMsInLastTurn += report.passMs;
    report.passCpuMs = result.cpuMs;
    if (result.why !== undefined) this.newWhy(state, { at: now, heldBy: result.why });
    state.changed = false;
    state.lastFormed = result.formed + result.backfills.length;
    state.lastPassAt = now;
    report.formed = result.formed;
    report.backfilled = result.backfills.length;
    if (result.formed === 0 && result.backfills.length === 0) return 0;

    const placeStart = performance.now();
    const ladder = state.ladder;
    /** Ratings of the players of the fills, then of the part of matches being placed. */
    const states = new Map<string, { rating: number; rd?: number; matches: number }>();
    const readRatings = async (formed: ReadonlyArray<{ players: string[][] }>) => {
      const started = performance.now();
      states.clear();
      const ids = formed.flatMap((m) => m.players.flat());
      for (let i = 0; i < ids.length; i += 50_000) {
        for (const row of await findPlayers(this.ctx.db, id, ids.slice(i, i + 50_000))) {
          states.set(row.id, { rating: row.rating, ...(row.rd !== null ? { rd: row.rd } : {}), matches: row.matches });
        }
      }
      report.ratingsMs += performance.now() - started;
    };
    const predict = (teams: string[][]): number | null => {
      try {
        return ladder.rating.predict(teams.map((team) => team.map((player) => states.get(player) ?? ladder.rating.initial())))[0]!;
      } catch {
        return null;
      }
    };
    // Fills first: the pass served the backfills before it formed matches.
    if (result.backfills.length > 0) {
      await readRatings(result.backfills);
      const assignStart = performance.now();
      report.filled = await this.placeFills(state, id, result.backfills, now, predict);
      report.assignMs += performance.now() - assignStart;
    }
    const at = new Date(now).toISOString();
    const placement = (m: PassMatch): Placement => {
      const matchId = randomUUID();
      const winProbability = predict(m.players);
      const waits = waitsOf(m)
        .flat()
        .sort((a, b) => a - b);
      // A rule-set match names its teams (and roles) instead of the team-rank quality figures.
      const shape = 'quality' in m ? { quality: m.quality } : { teamNames: m.teamNames, ...(m.roles !== undefined ? { roles: m.roles } : {}) };
      const recent: RecentMatch = {
        matchId,
        region: m.region,
        teams: m.teams,
        players: m.players,
        winProbability,
        waitSeconds: { p50: waits[Math.floor((waits.length - 1) / 2)]!, max: waits[waits.length - 1]! },
        ...shape,
        at,
      };
      return {
        recent,
        match: {
          id: matchId,
          region: m.region,
          teams: m.teams,
          players: m.players,
          ...('teamNames' in m ? { teamNames: m.teamNames, ...(m.roles !== undefined ? { roles: m.roles } : {}) } : {}),
          at: now,
        },
        tickets: m.teams.flatMap((tickets, team) => tickets.map((ticket) => ({ id: ticket, team }))),
      };
    };
    // Each part in chunks, so requests are served between them however many matches a pass formed;
    // each chunk's outcomes are booked as they come back.
    let placed = 0;
    let lost = false;
    const putBack: string[] = [];
    let chunks = 0;
    for await (const part of result.parts()) {
      await this.keepLock(state, id);
      await readRatings(part);
      for (const chunk of placementChunks(part)) {
        // The first chunk too: the pass and the ratings read of a burst can outlast the lock's renewal.
        await this.keepLock(state, id);
        if (chunks++ > 0) await this.slices.pause();
        const assignStart = performance.now();
        const outcomes = await this.ctx.tickets.assign(id, chunk.map(placement));
        report.assignMs += performance.now() - assignStart;
        let placedHere = 0;
        outcomes.forEach((outcome, j) => {
          const match = chunk[j]!;
          if (outcome === 'placed') {
            placedHere++;
            for (const wait of waitsOf(match).flat()) this.ctx.metrics.ticketWaitSeconds.observe(state.labels, wait);
          } else if (outcome === 'gone') putBack.push(...match.teams.flat());
          else lost = true;
        });
        if (placedHere > 0) this.ctx.metrics.matchesFormed.inc(state.labels, placedHere);
        placed += placedHere;
      }
    }
    states.clear();
    report.placed = placed;
    report.placeMs = performance.now() - placeStart;
    if (lost) throw new LockLostError();
    // A match one of whose tickets was cancelled meanwhile: the others are still waiting and go back in.
    if (putBack.length > 0) {
      await this.admit(state, await this.stillWaiting(putBack));
      state.changed = true;
    }
    report.placeMs = performance.now() - placeStart;
    return placed + report.filled;
  }

  private newWhy(state: LadderState, why: WhyWaiting): void {
    state.why = why;
    state.whyWritten = false;
    state.whyAnswered.clear();
  }

  /**
   * Writes a rule-set queue's why-waiting to the store (docs/SERVICE.md,
   * "Why waiting"): after a pass, its summary and the reasons of the tickets
   * asked about (at most MAX_WHY_ASKED), and between passes, at most every
   * WHY_READ_EVERY_MS, the reasons of tickets asked about since. A bounded
   * cost per pass however many tickets wait: two store round trips and one
   * to the matchmaker.
   */
  private async reportWhy(state: LadderState, id: string): Promise<void> {
    const why = state.why;
    if (why === undefined) return;
    const now = Date.now();
    if (state.whyWritten && now - state.whyReadAt < WHY_READ_EVERY_MS) return;
    state.whyReadAt = now;
    const asked = await this.ctx.tickets.whyAsked(id);
    if (state.whyWritten && asked.every((ticket) => state.whyAnswered.has(ticket))) return;
    const reasons = await state.matchmaker.why(asked);
    if (!(await this.ctx.tickets.setWhy(id, why, reasons))) throw new LockLostError();
    state.whyWritten = true;
    state.whyAnswered = new Set(asked);
  }

  /**
   * Places the pass's fills: each backfill's record and added tickets are
   * read (either may have left meanwhile), and a fill is placed only if the
   * record is still as read and every added ticket still waits. A refused
   * fill is undone in the matchmaker. Resolves to the fills placed.
   */
  private async placeFills(state: LadderState, id: string, results: readonly PassBackfill[], now: number, predict: (teams: string[][]) => number | null): Promise<number> {
    const matchmaker = state.matchmaker;
    const records = await this.ctx.tickets.getBackfills(results.map((r) => r.id));
    const added = new Map<string, StoredTicket>();
    for (const ticket of await this.ctx.tickets.getMany(results.flatMap((r) => r.added.flat()))) if (ticket) added.set(ticket.id, ticket);
    const placements: BackfillPlacement[] = [];
    const placing: PassBackfill[] = [];
    // Backfills to read back and open again as stored, and tickets to put back while they still wait.
    const undo = new Set<string>();
    const putBack: string[] = [];
    const at = new Date(now).toISOString();
    results.forEach((r, i) => {
      const record = records[i];
      if (record === undefined || record.status !== 'waiting' || r.added.flat().some((t) => added.get(t)?.status !== 'waiting')) {
        undo.add(r.id);
        putBack.push(...r.added.flat());
        return;
      }
      const additions: BackfillAddition[] = [];
      // Built from entries, not by assignment: a player may be named `__proto__`.
      const players = new Map(Object.entries(record.request.players ?? {}));
      const newcomers: string[] = [];
      const waits: number[] = [];
      r.added.forEach((team, t) => {
        for (const ticketId of team) {
          const ticket = added.get(ticketId)!;
          additions.push({ ticket: ticketId, team: t, players: ticket.ticket.players.map((p) => p.id), at: now });
          waits.push(Math.max(0, (now - ticket.createdAt) / 1000));
          for (const p of ticket.ticket.players) {
            newcomers.push(p.id);
            // As the library's `remaining` carries them: a party's players as solo players.
            const player: QueuedBackfillPlayer = {
              percentile: p.percentile,
              ...(p.rating !== undefined ? { rating: p.rating } : {}),
              filter: { within: p.filter.within, strict: p.filter.strict },
            };
            // A rule-set queue's newcomers keep what its rules read.
            if (r.teamNames !== undefined) Object.assign(player, { pings: p.pings, ...(p.attributes !== undefined ? { attributes: p.attributes } : {}) });
            players.set(p.id, player);
          }
        }
      });
      const allAdded = [...record.added, ...additions];
      const teams = r.players.map((team) => [...team]);
      // Role slots: every player keeps the role seated now at later fills.
      if (r.roles !== undefined) for (const [player, role] of Object.entries(r.roles)) if (players.has(player)) players.set(player, { ...players.get(player)!, roles: [role] });
      const named = r.teamNames !== undefined ? { teamNames: r.teamNames, ...(r.roles !== undefined ? { roles: r.roles } : {}) } : {};
      placing.push(r);
      placements.push({
        backfill: r.id,
        fills: record.fills,
        after: {
          id: record.id,
          ladder: record.ladder,
          createdAt: record.createdAt,
          match: record.match,
          region: record.region,
          request: { ...record.request, teams, players: Object.fromEntries(players), ...named },
          added: allAdded,
          open: [...r.open],
          filled: r.filled,
        },
        newcomers,
        recent: {
          matchId: record.match,
          backfill: r.id,
          region: record.region,
          teams: r.added,
          players: teams,
          winProbability: predict(teams),
          waitSeconds: waitFigures(waits),
          ...named,
          at,
        },
        match: {
          id: record.match,
          region: record.region,
          teams: teams.map((_, t) => allAdded.filter((a) => a.team === t).map((a) => a.ticket)),
          players: teams,
          ...named,
          at: now,
          backfill: r.id,
        },
        tickets: r.added.flatMap((team, t) => team.map((ticket) => ({ id: ticket, team: t }))),
      });
    });
    const outcomes = await this.ctx.tickets.fill(id, placements);
    let placed = 0;
    outcomes.forEach((outcome, i) => {
      const r = placing[i]!;
      if (outcome === 'placed') {
        placed++;
        this.ctx.metrics.backfillsFilled.inc(state.labels);
        for (const ticket of r.added.flat()) this.ctx.metrics.ticketWaitSeconds.observe(state.labels, Math.max(0, (now - added.get(ticket)!.createdAt) / 1000));
      } else if (outcome === 'gone') {
        undo.add(r.id);
        putBack.push(...r.added.flat());
      }
    });
    if (outcomes.includes('lost')) throw new LockLostError();
    if (undo.size > 0) {
      const ids = [...undo];
      const fresh = await this.ctx.tickets.getBackfills(ids);
      const ops: MatchmakerOp[] = [];
      const reopened: BackfillInput[] = [];
      ids.forEach((backfill, i) => {
        ops.push({ op: 'removeBackfill', id: backfill });
        const record = fresh[i];
        if (record?.status === 'waiting') {
          ops.push({ op: 'addBackfill', backfill: record.request });
          reopened.push(record.request);
        }
      });
      const results = (await matchmaker.apply(ops)).filter((_, i) => ops[i]!.op === 'addBackfill');
      reopened.forEach((request, i) => this.admittedBackfill(state, request, results[i]!));
    }
    if (putBack.length > 0) await this.admit(state, await this.stillWaiting(putBack));
    if (undo.size > 0 || putBack.length > 0) state.changed = true;
    return placed;
  }
}
