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
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError } from '../core/errors.js';
import { type FormedMatch, Matchmaker, type ResolvedWidening, type Ticket } from '../matchmaking/index.js';
import type { Database } from '../store/database.js';
import { findPlayers } from '../store/players.js';
import { type Ladder, type Ladders, matchmakerOptions } from './ladders.js';
import type { ServiceMetrics } from './metrics.js';
import type { Placement, RecentMatch, TicketStore } from './tickets.js';

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
}

interface LadderState {
  ladder: Ladder;
  matchmaker: Matchmaker;
  /** Position in the queue's events up to which the matchmaker is current. */
  cursor: string;
  /** Waiting tickets the matchmaker refused (so the count check still holds); should stay empty. */
  refused: Set<string>;
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
  labels: { queue: string };
}

class LockLostError extends Error {}

/** Long work renews the lock when it was last renewed this long ago (well inside its 10 s). */
const RENEW_WITHIN_MS = 2000;
/** Matches placed per round trip. */
const PLACE_CHUNK = 250;

/** Seconds after its arrival at which a ticket's range last changes (its loosest player's last widening step). */
function lastWidening(ticket: Ticket, widening: ResolvedWidening): number {
  let steps = 0;
  for (const player of ticket.players) {
    if (player.filter?.strict) continue;
    const own = player.filter?.within ?? 0;
    let wider = 0;
    for (const step of widening.steps) if (step > own) wider++;
    if (wider > steps) steps = wider;
  }
  return steps * widening.everySeconds;
}

export class MatchmakingEngine {
  private readonly states = new Map<string, LadderState>();
  private readonly eventBatch: number;

  constructor(
    private readonly ctx: MatchmakingContext,
    private readonly options: MatchmakingOptions,
  ) {
    this.eventBatch = options.eventBatch ?? 250;
    ctx.metrics.setLocksHeld(() => [...this.states.keys()]);
  }

  /** The long-lived matchmaker of a ladder whose lock this instance holds. */
  matchmakerOf(ladder: string): Matchmaker | undefined {
    return this.states.get(ladder)?.matchmaker;
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
    let placed = 0;
    this.passMsInLastTurn = 0;
    for (const ladder of queues) {
      try {
        placed += await this.ladderTurn(ladder);
      } catch (error) {
        // Whatever the matchmaker holds may now disagree with the queue: build it again next time.
        this.states.delete(ladder);
        if (error instanceof LockLostError) continue;
        this.ctx.metrics.passFailures.inc({ queue: ladder });
        this.options.onError(error);
      }
    }
    return placed;
  }

  /** Gives up every lock this instance holds. */
  async release(): Promise<void> {
    const ladders = [...this.states.keys()];
    this.states.clear();
    for (const ladder of ladders) {
      try {
        await this.ctx.tickets.release(ladder);
      } catch {
        // It expires on its own.
      }
    }
  }

  private admit(state: LadderState, ticket: Ticket): void {
    try {
      state.matchmaker.add(ticket);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      // Already queued: a rebuild's snapshot and the events after its position overlap.
      if (error.field === 'id' && error.detail.includes('already queued')) return;
      state.refused.add(ticket.id);
      return;
    }
    state.refused.delete(ticket.id);
    state.changed = true;
    const until = (ticket.at + lastWidening(ticket, state.matchmaker.widening)) * 1000;
    if (until > state.widenUntil) state.widenUntil = until;
  }

  private async rebuild(id: string, reason: 'claim' | 'check'): Promise<LadderState> {
    const ladder = await this.ctx.ladders.get(id);
    const state: LadderState = {
      ladder,
      matchmaker: new Matchmaker(matchmakerOptions(ladder.matchmaking)),
      cursor: '0',
      refused: new Set(),
      changed: true,
      lastFormed: 0,
      lastPassAt: 0,
      widenUntil: 0,
      checkQuietUntil: 0,
      claimedAt: Date.now(),
      labels: { queue: id },
    };
    this.states.delete(id);
    state.cursor = await this.ctx.tickets.snapshot(id, async (batch) => {
      for (const ticket of batch) this.admit(state, ticket);
      // A rebuild of a million tickets outlasts the lock.
      await this.keepLock(state, id);
    });
    this.states.set(id, state);
    this.ctx.metrics.rebuilds.inc({ queue: id, reason });
    return state;
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
      for (const event of batch.events) {
        this.ctx.metrics.eventLagSeconds.observe(state.labels, Math.max(0, now - event.at) / 1000);
        if (event.kind === 'add') this.admit(state, event.ticket);
        else if (matchmaker.cancel(event.id)) state.changed = true;
        else state.refused.delete(event.id);
      }
      applied += batch.events.length;
      state.cursor = batch.cursor;
      await this.keepLock(state, id);
      if (batch.complete) return { events: applied, consistent: matchmaker.size + state.refused.size === batch.waiting };
    }
  }

  private async ladderTurn(id: string): Promise<number> {
    const started = performance.now();
    const claim = await this.ctx.tickets.claim(id);
    if (claim === 'busy') {
      this.states.delete(id);
      return 0;
    }
    let state = this.states.get(id);
    let rebuilt = false;
    if (claim === 'acquired' || state === undefined) {
      state = await this.rebuild(id, 'claim');
      rebuilt = true;
    }
    state.claimedAt = Date.now();
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
    const report: PassReport = { ladder: id, tickets: state.matchmaker.size, events: followed.events, rebuilt, skipped: false, formed: 0, placed: 0, claimMs: claimed - started, followMs: performance.now() - claimed, passMs: 0, passCpuMs: 0, placeMs: 0, ratingsMs: 0, assignMs: 0, totalMs: 0 };
    try {
      return await this.pass(state, id, report);
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
      report.skipped = true;
      this.ctx.metrics.passesSkipped.inc(state.labels);
      return 0;
    }
    this.ctx.metrics.passTickets.observe(state.labels, matchmaker.size);
    const passStart = performance.now();
    const passCpu = process.cpuUsage();
    const result = matchmaker.pass(now / 1000);
    const cpu = process.cpuUsage(passCpu);
    report.passMs = performance.now() - passStart;
    this.passMsInLastTurn += report.passMs;
    report.passCpuMs = (cpu.user + cpu.system) / 1000;
    state.changed = false;
    state.lastFormed = result.matches.length;
    state.lastPassAt = now;
    report.formed = result.matches.length;
    if (result.matches.length === 0) return 0;

    const placeStart = performance.now();
    const ladder = state.ladder;
    const states = new Map<string, { rating: number; rd?: number; matches: number }>();
    const playerIds = result.matches.flatMap((m) => m.players.flat());
    for (let i = 0; i < playerIds.length; i += 50_000) {
      for (const row of await findPlayers(this.ctx.db, id, playerIds.slice(i, i + 50_000))) {
        states.set(row.id, { rating: row.rating, ...(row.rd !== null ? { rd: row.rd } : {}), matches: row.matches });
      }
    }
    report.ratingsMs = performance.now() - placeStart;
    const at = new Date(now).toISOString();
    const placement = (m: FormedMatch): Placement => {
      const matchId = randomUUID();
      let winProbability: number | null = null;
      try {
        winProbability = ladder.rating.predict(m.players.map((team) => team.map((player) => states.get(player) ?? ladder.rating.initial())))[0]!;
      } catch {
        winProbability = null;
      }
      const waits = m.quality.waits.flat().sort((a, b) => a - b);
      const recent: RecentMatch = {
        matchId,
        region: m.region,
        teams: m.teams,
        players: m.players,
        winProbability,
        waitSeconds: { p50: waits[Math.floor((waits.length - 1) / 2)]!, max: waits[waits.length - 1]! },
        quality: m.quality,
        at,
      };
      return { recent, match: { id: matchId, region: m.region, teams: m.teams, players: m.players, at: now }, tickets: m.teams.flatMap((tickets, team) => tickets.map((ticket) => ({ id: ticket, team }))) };
    };
    // In chunks, so requests are served between them however many matches a pass formed.
    const outcomes: string[] = [];
    const assignStart = performance.now();
    for (let i = 0; i < result.matches.length; i += PLACE_CHUNK) {
      if (i > 0) await this.keepLock(state, id);
      outcomes.push(...(await this.ctx.tickets.assign(id, result.matches.slice(i, i + PLACE_CHUNK).map(placement))));
    }
    report.assignMs = performance.now() - assignStart;
    let placed = 0;
    const putBack: string[] = [];
    outcomes.forEach((outcome, i) => {
      const match = result.matches[i]!;
      if (outcome === 'placed') {
        placed++;
        this.ctx.metrics.matchesFormed.inc(state.labels);
        for (const wait of match.quality.waits.flat()) this.ctx.metrics.ticketWaitSeconds.observe(state.labels, wait);
      } else if (outcome === 'gone') {
        putBack.push(...match.teams.flat());
      }
    });
    report.placed = placed;
    if (outcomes.includes('lost')) throw new LockLostError();
    // A match one of whose tickets was cancelled meanwhile: the others are still waiting and go back in.
    if (putBack.length > 0) {
      for (const ticket of await this.ctx.tickets.getMany(putBack)) if (ticket?.status === 'waiting') this.admit(state, ticket.ticket);
      state.changed = true;
    }
    report.placeMs = performance.now() - placeStart;
    return placed;
  }
}

export interface MatchmakingLoop {
  /** Runs one turn over every queue now (after any turn in progress); resolves to the matches placed. */
  runNow(): Promise<number>;
  /** Stops the timer, waits for the turn in progress and gives up the locks. */
  stop(): Promise<void>;
  /** The long-lived matchmaker of a ladder whose lock this instance holds. */
  matchmakerOf(ladder: string): Matchmaker | undefined;
}

/**
 * Runs a turn over every queue every `intervalMs`, never two at once. A
 * failure of one ladder's turn does not stop the others; a failure to list
 * the queues skips the round. Both are counted (`ladder_matchmaking_pass_failures_total`)
 * and reported through `onError`.
 *
 * Tickets queued through this instance for a ladder whose lock it holds
 * bring that ladder's next turn forward: it starts once the turn in
 * progress (if any) has ended and a pause has passed, rather than at the
 * next interval. That pause is nine times what the library's passes took in
 * the last turn (the part of a turn that grows with the queue rather than
 * with the arrivals; so such passes take at most a tenth of the time however
 * fast tickets arrive), at least a twentieth of the interval and at most the
 * interval. A turn every interval still runs over every queue (claiming
 * locks, following other instances' tickets, widening ranges), at least half
 * the last turn's duration after it.
 */
export function startMatchmakingLoop(ctx: MatchmakingContext, intervalMs: number, options: MatchmakingOptions): MatchmakingLoop {
  const engine = new MatchmakingEngine(ctx, options);
  let last: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const runNow = (only?: Iterable<string>) => {
    const run = last.then(() => (stopped ? 0 : engine.turn(only)));
    last = run.catch(() => 0);
    return run;
  };
  const minPauseMs = intervalMs / 20;
  /** Ladders with tickets queued here since their last turn began. */
  const pending = new Set<string>();
  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Infinity;
  let fullAt = performance.now() + intervalMs;
  /** Earliest start of the next turn over every queue, and of the next one brought forward. */
  let nextFull = -Infinity;
  let nextEarly = -Infinity;

  const schedule = () => {
    if (stopped || running) return;
    const full = Math.max(fullAt, nextFull);
    const at = pending.size > 0 ? Math.min(full, Math.max(nextEarly, performance.now())) : full;
    if (timer !== undefined) {
      if (timerAt <= at) return;
      clearTimeout(timer);
    }
    timerAt = at;
    timer = setTimeout(tick, Math.max(0, at - performance.now()));
    timer.unref();
  };
  const tick = () => {
    timer = undefined;
    timerAt = Infinity;
    if (stopped) return;
    const started = performance.now();
    // (A timer may fire a little before its time.)
    const full = started >= Math.max(fullAt, nextFull) - 2;
    if (!full && pending.size === 0) return schedule();
    running = true;
    if (full) fullAt = started + intervalMs;
    const only = full ? undefined : [...pending];
    pending.clear();
    void runNow(only).finally(() => {
      running = false;
      const ended = performance.now();
      const took = ended - started;
      nextFull = ended + Math.max(minPauseMs, took / 2);
      nextEarly = ended + Math.min(intervalMs, Math.max(minPauseMs, 9 * engine.passMsInLastTurn));
      schedule();
    });
  };
  const onQueued = (ladder: string) => {
    if (pending.has(ladder) || !engine.holds(ladder)) return;
    pending.add(ladder);
    schedule();
  };
  ctx.tickets.events.on('queued', onQueued);
  schedule();
  return {
    runNow: () => runNow(),
    matchmakerOf: (ladder) => engine.matchmakerOf(ladder),
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      ctx.tickets.events.off('queued', onQueued);
      await last;
      await engine.release();
    },
  };
}
