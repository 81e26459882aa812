/**
 * A matchmaking turn over a big queue lets the event loop turn between its
 * slices of work: between the batches of a rebuild and between the chunks
 * of matches it places (a part of matches at a time, each part's ratings
 * read before it is placed). The tickets live in the in-process store and the
 * matchmaker on the calling thread, so nothing there waits for I/O: without
 * the slicing, the whole rebuild and the whole placing would run in one
 * turn of the event loop (the control below shows the harness sees that).
 * No timing is asserted: the turns of the loop are counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatchmakingEngine } from '../../src/service/matchmaking-pass.js';
import { inProcessMatchmakers, type MatchmakerHost } from '../../src/service/matchmaking-worker/host.js';
import { MATCHES_PER_PART } from '../../src/service/matchmaking-worker/protocol.js';
import { serviceMetrics } from '../../src/service/metrics.js';
import { PLACE_CHUNK_TICKETS } from '../../src/service/placement-chunks.js';
import { MemoryTicketStore } from '../../src/service/tickets/memory.js';
import type { Placement } from '../../src/service/tickets/store.js';
import { client, startTestServer, type TestServer } from './helpers.js';
import { countLoopTurns } from '../support/loop-turns.js';

/** Tickets queued: over two of the in-process store's snapshot batches (10,000) and many chunks of placed matches (PLACE_CHUNK_TICKETS tickets each). */
const TICKETS = 24_000;

/** The in-process store, noting the loop's turn count at each placing of a chunk of matches. */
class WatchedStore extends MemoryTicketStore {
  readonly assignedAt: number[] = [];
  constructor(private readonly turns: () => number) {
    super();
  }
  override assign(ladder: string, placements: readonly Placement[]) {
    this.assignedAt.push(this.turns());
    return super.assign(ladder, placements);
  }
}

/** Matchmakers on this thread, noting the loop's turn count at each batch of changes sent to them. */
function watchedHost(turns: () => number, appliedAt: number[]): MatchmakerHost {
  const inner = inProcessMatchmakers();
  return {
    inWorker: false,
    restarts: 0,
    worker: undefined,
    warmUp: (options) => inner.warmUp(options),
    close: () => inner.close(),
    async create(options) {
      const matchmaker = await inner.create(options);
      const apply = matchmaker.apply.bind(matchmaker);
      matchmaker.apply = (ops) => {
        // (Following an empty event stream sends an empty batch.)
        if (ops.length > 0) appliedAt.push(turns());
        return apply(ops);
      };
      return matchmaker;
    },
  };
}

describe('a matchmaking turn over a big queue', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ backend: 'pglite' });
    // The service's own loop stays out of it: the engines below drive their own stores.
    await server.matchmaking.stop();
    expect((await client(server.url, server.admin).post('/v1/ladders', { id: 'slices', system: 'elo' })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.dispose();
  });

  /** One turn over TICKETS 1v1 tickets that all pair up; the loop's turn counts at each rebuild batch and each chunk placed. */
  async function turnOver(sliceMs: number) {
    const turns = countLoopTurns();
    const store = new WatchedStore(turns.turns);
    const createdAt = Date.now() - 1000;
    for (let i = 0; i < TICKETS; i++) {
      const id = `t${i}`;
      const outcome = await store.add({
        id,
        ladder: 'slices',
        status: 'waiting',
        createdAt,
        ticket: { id, at: createdAt / 1000, players: [{ id: `p${i}`, percentile: 50, pings: { eu: 20 }, filter: { within: 10, strict: false, maxPing: 150 } }] },
      });
      expect(outcome.ok).toBe(true);
    }
    const appliedAt: number[] = [];
    const engine = new MatchmakingEngine(
      { db: server.db, tickets: store, metrics: serviceMetrics(), ladders: server.ladders },
      {
        onError: (error) => {
          throw error;
        },
        host: watchedHost(turns.turns, appliedAt),
        sliceMs,
      },
    );
    try {
      const placed = await engine.turn(['slices']);
      return { placed, appliedAt, assignedAt: store.assignedAt, waiting: (await store.summary('slices')).figures.waiting };
    } finally {
      turns.stop();
      await engine.close();
    }
  }

  /** How many of the consecutive entries follow at least one turn of the event loop. */
  const turnsBetween = (at: number[]) => at.slice(1).filter((n, i) => n > at[i]!).length;

  it('lets the event loop turn between rebuild batches and between chunks of placed matches', async () => {
    const run = await turnOver(0);
    expect(run.placed).toBe(TICKETS / 2);
    expect(run.waiting).toBe(0);
    // Three rebuild batches (10,000, 10,000 and 4,000 tickets) and 120 chunks of 200 tickets (100 one-on-one matches).
    expect(run.appliedAt.length).toBe(3);
    expect(run.assignedAt.length).toBe(TICKETS / PLACE_CHUNK_TICKETS);
    expect(turnsBetween(run.appliedAt)).toBe(run.appliedAt.length - 1);
    expect(turnsBetween(run.assignedAt)).toBe(run.assignedAt.length - 1);
  });

  it('(control) with a slice longer than the turn, the rebuild runs in one turn of the loop, and the placing turns at most between parts of matches', async () => {
    const run = await turnOver(3_600_000);
    expect(run.placed).toBe(TICKETS / 2);
    expect(turnsBetween(run.appliedAt)).toBe(0);
    // Each part of matches (MATCHES_PER_PART) reads its players' ratings from the database before it is placed:
    // the loop may turn there (as the database answers), and nowhere else.
    expect(run.assignedAt.length).toBe(TICKETS / PLACE_CHUNK_TICKETS);
    expect(turnsBetween(run.assignedAt)).toBeLessThanOrEqual(TICKETS / 2 / MATCHES_PER_PART - 1);
  });
});
