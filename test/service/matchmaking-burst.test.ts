/**
 * A burst of matchable tickets waiting when an instance takes a ladder's
 * lock (docs/SERVICE.md, "Known limits"): the turn rebuilds the matchmaker,
 * runs the pass in the worker thread and places thousands of matches, and
 * through all of it the main thread's own work holds the event loop for at
 * most 100 ms at a stretch (the service's promise; the figure of
 * `ladder_event_loop_own_stall_seconds`, src/service/loop-stall.ts, which
 * counts the main thread's CPU time, not the wall time a loaded host takes
 * from it). The tickets live in the in-process store, so the turn waits on
 * no network: whatever it does on the main thread shows.
 *
 * The matches cross from the worker a part at a time (MATCHES_PER_PART),
 * each placed before the next is asked for, with a turn of the event loop
 * before each (before it, at 1,000,000 tickets, the 130 parts decoded back
 * to back held the loop for up to 650 ms of its own CPU, and the garbage
 * collection of a heap holding all of them for up to 120 ms; host.test.ts
 * checks the turns between parts). At this size the build before stayed
 * within the promise too: the test guards the figure, and its control shows
 * the watch can see a stretch over it: the same turn with the turn's
 * slicing off and the matchmaker on the main thread (the pass and the
 * rebuild's batches then hold the loop whole).
 */
import { syntheticQueue } from 'ladder-core/matchmaking/synthetic-queue.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchLoop } from '../../src/service/loop-stall.js';
import { MatchmakingEngine } from '../../src/service/matchmaking-pass.js';
import { inProcessMatchmakers, workerMatchmakers } from '../../src/service/matchmaking-worker/host.js';
import { MATCHES_PER_PART } from '../../src/service/matchmaking-worker/protocol.js';
import { serviceMetrics } from '../../src/service/metrics.js';
import { MemoryTicketStore } from '../../src/service/tickets/memory.js';
import type { Placement } from '../../src/service/tickets/store.js';
import { SIX_V_SIX_RULES } from '../../src/bench/ruleset.js';
import { client, startTestServer, type TestServer } from './helpers.js';

/** Tickets of the burst: several parts of matches (about 5,000 matches), a few seconds of test. */
const TICKETS = 40_000;
/** The service's promise: no stretch of the main thread's own work over this (ms). */
const PROMISE_MS = 100;

/** The in-process store, noting each ticket it placed. */
class WatchedStore extends MemoryTicketStore {
  readonly placedTickets: string[] = [];
  override async assign(ladder: string, placements: readonly Placement[]) {
    const outcomes = await super.assign(ladder, placements);
    outcomes.forEach((outcome, i) => {
      if (outcome === 'placed') for (const t of placements[i]!.tickets) this.placedTickets.push(t.id);
    });
    return outcomes;
  }
}

describe('a burst of matchable tickets at a rebuild', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ backend: 'pglite' });
    // The service's own loop stays out of it: the engines below drive their own stores.
    await server.matchmaking.stop();
    const admin = client(server.url, server.admin);
    expect((await admin.post('/v1/ladders', { id: 'burst', system: 'teamrank' })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'burst-rules', system: 'teamrank', matchmaking: { ruleSet: SIX_V_SIX_RULES } })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.dispose();
  });

  /** One turn over TICKETS synthetic 6v6 tickets (most can match), the matchmakers in a worker thread. */
  async function burst(ladder: 'burst' | 'burst-rules', control = false) {
    const store = new WatchedStore();
    const now = Date.now();
    const queue = syntheticQueue({ tickets: TICKETS, seed: 42, spanSeconds: 300 });
    for (const ticket of queue) {
      ticket.at = now / 1000 - 300 + ticket.at;
      // As intake stores a rule-set queue's ticket: the attributes its rules read.
      if (ladder === 'burst-rules') for (const p of ticket.players) Object.assign(p, { attributes: { percentile: p.percentile } });
      const outcome = await store.add({ id: ticket.id, ladder, status: 'waiting', createdAt: Math.round(ticket.at * 1000), ticket });
      expect(outcome.ok).toBe(true);
    }
    const host = control ? inProcessMatchmakers() : workerMatchmakers();
    // The worker warmed and started before the watch, as `ladder serve` does before it listens (the control's
    // matchmaker left cold: its pass on the main thread is the stretch it shows).
    if (!control) await host.warmUp();
    const engine = new MatchmakingEngine(
      { db: server.db, tickets: store, metrics: serviceMetrics(), ladders: server.ladders },
      {
        onError: (error) => {
          throw error;
        },
        host,
        ...(control ? { sliceMs: 3_600_000 } : {}),
      },
    );
    const watch = watchLoop();
    try {
      const placed = await engine.turn([ladder]);
      const stalls = watch.stop();
      return { placed, stalls, placedTickets: store.placedTickets, waiting: (await store.summary(ladder)).figures.waiting };
    } finally {
      watch.stop();
      await engine.close();
      await host.close();
    }
  }

  for (const ladder of ['burst', 'burst-rules'] as const)
    it(`${ladder === 'burst' ? 'team-rank' : 'rule-set'} queue: every ticket placed once or waiting, and no stretch of own work over ${PROMISE_MS} ms`, async () => {
      const run = await burst(ladder);
      // Several parts of matches, so the handing over in parts is exercised.
      expect(run.placed).toBeGreaterThan(3 * MATCHES_PER_PART);
      expect(new Set(run.placedTickets).size).toBe(run.placedTickets.length);
      expect(run.placedTickets.length + run.waiting).toBe(TICKETS);
      if (process.platform === 'linux') expect(run.stalls.ownMaxMs).toBeLessThanOrEqual(PROMISE_MS);
    });

  it('(control) with the slicing off and the matchmaker on the main thread, the same watch sees a stretch over the promise', async () => {
    const run = await burst('burst', true);
    expect(run.placed).toBeGreaterThan(3 * MATCHES_PER_PART);
    expect(run.placedTickets.length + run.waiting).toBe(TICKETS);
    if (process.platform === 'linux') expect(run.stalls.ownMaxMs).toBeGreaterThan(PROMISE_MS);
  });
});
