/**
 * The matchmaking pass: forms matches from a ladder's queue with the
 * matchmaking library, predicts each match's win probability from the
 * ladder's ratings and stores the assignments. The loop runs a pass over
 * every queue on a timer; a failed pass (Redis or the database away) is
 * counted and logged, never thrown out of the timer.
 */
import { randomUUID } from 'node:crypto';
import { matchmake } from '../matchmaking/index.js';
import type { Database } from '../store/database.js';
import { findPlayers } from '../store/players.js';
import type { Ladders } from './ladders.js';
import type { ServiceMetrics } from './metrics.js';
import type { RecentMatch, StoredTicket, TicketStore } from './tickets.js';

export interface MatchmakingContext {
  db: Database;
  tickets: TicketStore;
  metrics: ServiceMetrics;
  ladders: Ladders;
}

/** One pass over a ladder's queue; returns the number of matches formed. */
export async function matchmakingPass(ctx: MatchmakingContext, ladderId: string): Promise<number> {
  let formed = 0;
  await ctx.tickets.withPassLock(ladderId, async () => {
    const ladder = await ctx.ladders.get(ladderId);
    const waiting = await ctx.tickets.waiting(ladderId);
    if (waiting.length === 0) return;
    const now = Date.now();
    const result = matchmake(
      waiting.map((t) => t.ticket),
      now / 1000,
      { teamSize: ladder.matchmaking.teamSize },
    );
    if (result.matches.length === 0) return;
    const byId = new Map(waiting.map((t) => [t.id, t]));
    const playerIds = result.matches.flatMap((m) => m.players.flat());
    const states = new Map<string, { rating: number; rd?: number; matches: number }>();
    for (const row of await findPlayers(ctx.db, ladderId, playerIds)) {
      states.set(row.id, { rating: row.rating, ...(row.rd !== null ? { rd: row.rd } : {}), matches: row.matches });
    }
    const work = result.matches.map((m) => {
      const matchId = randomUUID();
      let winProbability: number | null = null;
      try {
        winProbability = ladder.rating.predict(m.players.map((team) => team.map((id) => states.get(id) ?? ladder.rating.initial())))[0]!;
      } catch {
        winProbability = null;
      }
      const waits = m.teams
        .flat()
        .map((id) => (now - byId.get(id)!.createdAt) / 1000)
        .sort((a, b) => a - b);
      const recent: RecentMatch = {
        matchId,
        region: m.region,
        teams: m.teams,
        players: m.players,
        winProbability,
        waitSeconds: { p50: waits[Math.floor((waits.length - 1) / 2)]!, max: waits[waits.length - 1]! },
        quality: m.quality,
        at: new Date(now).toISOString(),
      };
      const tickets = m.teams.flatMap((teamTickets, team) =>
        teamTickets.map((id): StoredTicket => ({ ...byId.get(id)!, status: 'matched', endedAt: now, match: { id: matchId, region: m.region, team, teams: m.teams, players: m.players, at: now } })),
      );
      return { recent, tickets, waits };
    });
    const applied = new Set(await ctx.tickets.assign(ladderId, work.map(({ recent, tickets }) => ({ recent, tickets }))));
    for (const w of work) {
      if (!applied.has(w.recent)) continue;
      formed++;
      ctx.metrics.matchesFormed.inc({ queue: ladderId });
      for (const wait of w.waits) ctx.metrics.ticketWaitSeconds.observe({ queue: ladderId }, wait);
    }
  });
  return formed;
}

export interface MatchmakingLoop {
  /** Runs one pass over every queue now; resolves to the matches formed. */
  runNow(): Promise<number>;
  stop(): void;
}

/**
 * Runs a pass over every queue every `intervalMs`, never two at once. A
 * failure of one ladder's pass does not stop the others; a failure to list
 * the queues skips the round. Both are counted (`ladder_matchmaking_pass_failures_total`)
 * and reported through `onError`.
 */
export function startMatchmakingLoop(ctx: MatchmakingContext, intervalMs: number, onError: (error: unknown) => void): MatchmakingLoop {
  const runNow = async () => {
    let formed = 0;
    let queues: string[];
    try {
      queues = await ctx.tickets.queues();
    } catch (error) {
      ctx.metrics.passFailures.inc({ queue: '' });
      onError(error);
      return 0;
    }
    for (const ladder of queues) {
      try {
        formed += await matchmakingPass(ctx, ladder);
      } catch (error) {
        ctx.metrics.passFailures.inc({ queue: ladder });
        onError(error);
      }
    }
    return formed;
  };
  let passing = false;
  const timer = setInterval(() => {
    if (passing) return;
    passing = true;
    runNow().finally(() => (passing = false));
  }, intervalMs);
  timer.unref();
  return { runNow, stop: () => clearInterval(timer) };
}
