/**
 * The matchmaking loop: when each ladder's turn (src/service/matchmaking-pass.ts,
 * `MatchmakingEngine`) runs, never two at once, and how arrivals bring a
 * turn forward.
 */
import type { MatchmakingContext, MatchmakingOptions } from './matchmaking-pass.js';
import { MatchmakingEngine } from './matchmaking-pass.js';
import type { MatchmakerHost, RemoteMatchmaker } from './matchmaking-worker/host.js';

export interface MatchmakingLoop {
  /** Runs one turn over every queue now (after any turn in progress); resolves to the matches placed. */
  runNow(): Promise<number>;
  /** Stops the timer, waits for the turn in progress and gives up the locks. */
  stop(): Promise<void>;
  /** The long-lived matchmaker of a ladder whose lock this instance holds. */
  matchmakerOf(ladder: string): RemoteMatchmaker | undefined;
  /** Where the matchmakers live. */
  readonly host: MatchmakerHost;
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
    host: engine.host,
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      ctx.tickets.events.off('queued', onQueued);
      await last;
      await engine.close();
    },
  };
}
