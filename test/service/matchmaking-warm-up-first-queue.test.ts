/**
 * `matchmakingWarmUp: 'first-queue'` (the default of `ladder serve`): the
 * matchmaker's code is warmed the first time a matchmaking turn finds a
 * queue, before that turn's passes, and never again; a turn that finds no
 * queue starts nothing, so an instance that serves no queue never starts
 * the matchmaking worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatchmakingEngine } from '../../src/service/matchmaking-pass.js';
import type { WarmUpReport } from '../../src/service/matchmaking-warm-up.js';
import { inProcessMatchmakers, type MatchmakerHost } from '../../src/service/matchmaking-worker/host.js';
import { serviceMetrics } from '../../src/service/metrics.js';
import { MemoryTicketStore } from '../../src/service/tickets/memory.js';
import { client, startTestServer, type TestServer } from './helpers.js';

/** Matchmakers on this thread, recording in order each warm-up and each matchmaker made. */
function recordingHost(calls: string[]): MatchmakerHost {
  const inner = inProcessMatchmakers();
  return {
    inWorker: false,
    restarts: 0,
    worker: undefined,
    warmUp: (options) => {
      calls.push('warmUp');
      return inner.warmUp({ ...options, passes: 2, tickets: 200, ruleSetPasses: 2 });
    },
    close: () => inner.close(),
    create: (options) => {
      calls.push('create');
      return inner.create(options);
    },
  };
}

describe('the matchmaker warmed at the first queue', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ backend: 'pglite' });
    // The service's own loop stays out of it: the engines below drive their own stores.
    await server.matchmaking.stop();
    expect((await client(server.url, server.admin).post('/v1/ladders', { id: 'first', system: 'elo' })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.dispose();
  });

  function engineWith(warmUpOnFirstQueue: boolean, failingWarmUp = false) {
    const calls: string[] = [];
    const reports: WarmUpReport[] = [];
    const errors: unknown[] = [];
    const store = new MemoryTicketStore();
    const host = recordingHost(calls);
    if (failingWarmUp) host.warmUp = () => Promise.reject(new Error('the worker stopped'));
    const engine = new MatchmakingEngine(
      { db: server.db, tickets: store, metrics: serviceMetrics(), ladders: server.ladders },
      {
        onError: (error) => {
          if (!failingWarmUp) throw error;
          errors.push(error);
        },
        host,
        warmUpOnFirstQueue,
        onWarmUp: (report) => reports.push(report),
      },
    );
    const queue = async (id: string) => {
      const createdAt = Date.now() - 1000;
      const outcome = await store.add({
        id,
        ladder: 'first',
        status: 'waiting',
        createdAt,
        ticket: { id, at: createdAt / 1000, players: [{ id: `p-${id}`, percentile: 50, pings: { eu: 20 }, filter: { within: 10, strict: false, maxPing: 150 } }] },
      });
      expect(outcome.ok).toBe(true);
    };
    return { engine, calls, reports, errors, queue };
  }

  it('warms once, when a turn first finds a queue, before its matchmaker is made', async () => {
    const { engine, calls, reports, queue } = engineWith(true);
    try {
      // No queue: nothing is warmed, no matchmaker made.
      expect(await engine.turn()).toBe(0);
      expect(calls).toEqual([]);
      await queue('a');
      await queue('b');
      expect(await engine.turn()).toBe(1);
      expect(calls).toEqual(['warmUp', 'create']);
      expect(reports).toHaveLength(1);
      expect(reports[0]!.passes).toBe(2);
      // Later turns warm nothing more.
      await queue('c');
      await queue('d');
      expect(await engine.turn()).toBe(1);
      expect(calls.filter((c) => c === 'warmUp')).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });

  it('a failed warm-up is reported and the turn goes on, cold', async () => {
    const { engine, calls, errors, queue } = engineWith(true, true);
    try {
      await queue('g');
      await queue('h');
      expect(await engine.turn()).toBe(1);
      expect(errors).toEqual([expect.objectContaining({ message: 'the worker stopped' })]);
      expect(calls).toEqual(['create']);
    } finally {
      await engine.close();
    }
  });

  it('(control) without the option no turn warms', async () => {
    const { engine, calls, queue } = engineWith(false);
    try {
      await queue('e');
      await queue('f');
      expect(await engine.turn()).toBe(1);
      expect(calls).toEqual(['create']);
    } finally {
      await engine.close();
    }
  });
});
