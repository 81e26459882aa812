/**
 * The service's matchmaking on both backends: per-ladder settings reach the
 * long-lived matchmaker; the queue's counters equal a recount of the
 * waiting tickets after random sequences of intake, cancellation and
 * passes (property test); one waiting ticket per player; a match one of
 * whose tickets was cancelled between the pass and the assignment is
 * dropped and its other tickets go back into the matchmaker; an instance
 * that lost the lock places nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatchmakingEngine } from '../../src/service/matchmaking-pass.js';
import { serviceMetrics } from '../../src/service/metrics.js';
import { bandOf, type Placement, type TicketStore } from '../../src/service/tickets/store.js';
import { RedisTicketStore } from '../../src/service/tickets/redis.js';
import { BACKENDS, cleanupShared, client, REDIS_URL, startTestServer, type TestServer, useTestServer } from './helpers.js';

interface TicketBody {
  id: string;
  players: Array<{ id: string; percentile?: number; pings: Record<string, number>; filter?: { within?: number; strict?: boolean; maxPing?: number } }>;
}

/** What the queue's figures must be, counted from the tickets themselves. */
function recount(waiting: TicketBody[], percentileOf: (player: string) => number) {
  const byRegion = new Map<string, number>();
  const byBand = new Array<number>(10).fill(0);
  for (const ticket of waiting) {
    const pings = Object.entries(ticket.players[0]!.pings);
    let [region, best] = pings[0]!;
    for (const [name, ping] of pings) if (ping < best) [region, best] = [name, ping];
    byRegion.set(region, (byRegion.get(region) ?? 0) + 1);
    for (const p of ticket.players) byBand[bandOf(p.percentile ?? percentileOf(p.id))]!++;
  }
  return { waiting: waiting.length, byRegion: Object.fromEntries(byRegion), byBand };
}

describe.each(BACKENDS)('matchmaking on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
  });

  it('per-ladder settings are stored, shown and reach the matchmaker', async () => {
    const matchmaking = { teamSize: 1, widening: { steps: [15, 60], everySeconds: 3600 }, filterDefaults: { within: 40, strict: true, maxPing: 90 }, maxCandidates: 7 };
    expect((await admin.post('/v1/ladders', { id: 'tuned', system: 'elo', matchmaking })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'plain', system: 'elo' })).status).toBe(201);
    const limits = { ticketTtlSeconds: 600, backfillTtlSeconds: 600, maxWaiting: 1_000_000, maxWaitingPerKey: 100_000 };
    expect((await admin.get('/v1/ladders/tuned')).body.matchmaking).toEqual({ teams: 2, ...limits, ...matchmaking });
    expect((await admin.get('/v1/ladders/plain')).body.matchmaking).toEqual({
      teamSize: 1,
      teams: 2,
      widening: { steps: [5, 10, 20, 50, 100], everySeconds: 30 },
      filterDefaults: { within: 10, strict: false, maxPing: 150 },
      maxCandidates: 256,
      ...limits,
    });
    const bad = await admin.post('/v1/ladders', { id: 'bad', system: 'elo', matchmaking: { widening: { steps: [20, 10] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('matchmaking.widening.steps[1]');
    expect((await admin.post('/v1/ladders', { id: 'bad', system: 'elo', matchmaking: { maxCandidates: 0 } })).body.error.field).toBe('matchmaking.maxCandidates');

    // 30 percentiles apart, no filter sent: the tuned ladder's default (within 40) matches them, the plain one's (10) does not.
    for (const ladder of ['tuned', 'plain']) {
      expect((await admin.post(`/v1/ladders/${ladder}/tickets`, { id: `${ladder}-a`, players: [{ id: 'a', percentile: 30, pings: { eu: 20 } }] })).status).toBe(201);
      expect((await admin.post(`/v1/ladders/${ladder}/tickets`, { id: `${ladder}-b`, players: [{ id: 'b', percentile: 60, pings: { eu: 80 } }] })).status).toBe(201);
    }
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/tuned-a')).body.status).toBe('matched');
    expect((await admin.get('/v1/tickets/plain-a')).body.status).toBe('waiting');
    const tuned = server.matchmaking.matchmakerOf('tuned')!;
    expect(tuned.widening).toEqual(matchmaking.widening);
    expect(tuned.maxCandidates).toBe(7);
    expect(tuned.teamSize).toBe(1);
    expect(server.matchmaking.matchmakerOf('plain')!.maxCandidates).toBe(256);
    // maxPing 90 by default on the tuned ladder: a ticket whose only region is at 100 ms can never match.
    await admin.post('/v1/ladders/tuned/tickets', { id: 'tuned-far-1', players: [{ id: 'c', percentile: 50, pings: { eu: 100 } }] });
    await admin.post('/v1/ladders/tuned/tickets', { id: 'tuned-far-2', players: [{ id: 'd', percentile: 50, pings: { eu: 100 } }] });
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/tuned-far-1')).body.status).toBe('waiting');
  });

  it('one waiting ticket per player and ladder; another after the first leaves', async () => {
    await admin.post('/v1/ladders', { id: 'once', system: 'elo', matchmaking: { teamSize: 2 } });
    expect((await admin.post('/v1/ladders/once/tickets', { id: 'o1', players: [{ id: 'pat', pings: { eu: 10 } }] })).status).toBe(201);
    const again = await admin.post('/v1/ladders/once/tickets', {
      id: 'o2',
      players: [
        { id: 'sam', pings: { eu: 10 } },
        { id: 'pat', pings: { eu: 10 } },
      ],
    });
    expect(again.status).toBe(409);
    expect(again.body.error.field).toBe('players[1].id');
    expect((await admin.get('/v1/tickets/o2')).status).toBe(404);
    expect((await admin.del('/v1/tickets/o1')).body.status).toBe('cancelled');
    expect((await admin.post('/v1/ladders/once/tickets', { id: 'o3', players: [{ id: 'pat', pings: { eu: 10 } }] })).status).toBe(201);
    expect((await admin.post('/v1/ladders/once/tickets', { id: 'o3', players: [{ id: 'kim', pings: { eu: 10 } }] })).status).toBe(409);
    const queue = (await admin.get('/v1/ladders/once/queue')).body;
    expect(queue.waiting).toBe(1);
    expect(queue.byRegion).toEqual({ eu: 1 });
  });

  it('at most 31 regions per queue', async () => {
    await admin.post('/v1/ladders', { id: 'regions', system: 'elo' });
    for (let i = 0; i < 31; i++) expect((await admin.post('/v1/ladders/regions/tickets', { players: [{ id: `r${i}`, pings: { [`zone${i}`]: 10 } }] })).status).toBe(201);
    const more = await admin.post('/v1/ladders/regions/tickets', { players: [{ id: 'r31', pings: { zone31: 10 } }] });
    expect(more.status).toBe(400);
    expect(more.body.error.field).toBe('players[].pings');
    expect((await admin.post('/v1/ladders/regions/tickets', { players: [{ id: 'r32', pings: { zone3: 10 } }] })).status).toBe(201);
    await server.matchmakeNow();
  });

  it('counters equal a recount after random intake, cancellation and passes', async () => {
    let run = 0;
    let placed = 0;
    let cancelled = 0;
    const regions = ['eu', 'na', 'toString', 'constructor'];
    const op = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant('add' as const),
          player: fc.nat(9),
          partner: fc.option(fc.nat(9), { nil: undefined }),
          percentile: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
          region: fc.nat(3),
          other: fc.nat(3),
          within: fc.integer({ min: 0, max: 60 }),
          strict: fc.boolean(),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('match' as const) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const ladder = `prop-${backend === 'pglite' ? 'p' : 'r'}${run++}`;
        expect((await admin.post('/v1/ladders', { id: ladder, system: 'elo', matchmaking: { teamSize: 2 } })).status).toBe(201);
        const created: TicketBody[] = [];
        const check = async () => {
          const statuses = await Promise.all(created.map(async (t) => (await admin.get(`/v1/tickets/${t.id}`)).body));
          const waiting = created.filter((_, i) => statuses[i].status === 'waiting');
          // One waiting ticket per player.
          const players = waiting.flatMap((t) => t.players.map((p) => p.id));
          expect(new Set(players).size).toBe(players.length);
          // Every match placed exactly once: its tickets agree on it and it holds two teams of two players.
          const byMatch = new Map<string, string[]>();
          statuses.filter((s) => s.status === 'matched').forEach((s) => byMatch.set(s.match.id, [...(byMatch.get(s.match.id) ?? []), s.id]));
          for (const [, tickets] of byMatch) {
            const match = statuses.find((s) => s.id === tickets[0])!.match;
            expect(match.teams.flat().sort()).toEqual([...tickets].sort());
            expect(match.players.map((team: string[]) => team.length)).toEqual([2, 2]);
          }
          const queue = (await admin.get(`/v1/ladders/${ladder}/queue`)).body;
          const expected = recount(waiting, () => 50);
          expect({ waiting: queue.waiting, byRegion: queue.byRegion, byBand: queue.byBand.map((b: { count: number }) => b.count) }).toEqual(expected);
          expect(Object.values(queue.byRegion).every((n) => typeof n === 'number')).toBe(true);
        };
        for (const step of ops) {
          if (step.kind === 'add') {
            const pings = (own: number) => ({ [regions[own]!]: 20, ...(step.other !== own ? { [regions[step.other]!]: 60 } : {}) });
            const body: TicketBody = {
              id: `${ladder}-t${created.length}`,
              players: [
                {
                  id: `p${step.player}`,
                  ...(step.percentile !== undefined ? { percentile: step.percentile } : {}),
                  pings: pings(step.region),
                  filter: { within: step.within, strict: step.strict },
                },
              ],
            };
            if (step.partner !== undefined && step.partner !== step.player) body.players.push({ id: `p${step.partner}`, percentile: 40, pings: pings(step.region) });
            const reply = await admin.post(`/v1/ladders/${ladder}/tickets`, body);
            expect([201, 409]).toContain(reply.status);
            if (reply.status === 201) created.push(body);
          } else if (step.kind === 'cancel') {
            if (created.length === 0) continue;
            const reply = await admin.del(`/v1/tickets/${created[step.pick % created.length]!.id}`);
            expect([200, 409]).toContain(reply.status);
            if (reply.status === 200) cancelled++;
          } else {
            placed += await server.matchmakeNow();
            // Right after a turn the matchmaker holds exactly the waiting tickets.
            const waiting = (await admin.get(`/v1/ladders/${ladder}/queue`)).body.waiting;
            expect(server.matchmaking.matchmakerOf(ladder)?.size ?? 0).toBe(waiting);
            await check();
          }
        }
        await check();
      }),
      // Besides the random sequences, one that surely places a match and cancels a ticket, so the
      // checks below never depend on what the random ones happened to draw.
      {
        numRuns: 20,
        examples: [
          [
            [
              ...[0, 1, 2, 3, 4].map((player) => ({ kind: 'add' as const, player, partner: undefined, percentile: 50, region: 0, other: 0, within: 60, strict: false })),
              { kind: 'cancel' as const, pick: 4 },
              { kind: 'match' as const },
            ],
          ],
        ],
      },
    );
    // The sequences did exercise both ways out of the queue.
    expect(placed).toBeGreaterThan(0);
    expect(cancelled).toBeGreaterThan(0);
  });

  it('a match whose ticket was cancelled before it was placed is dropped; the others go back and match later', async () => {
    await admin.post('/v1/ladders', { id: 'race', system: 'elo' });
    // Drain whatever other tests left, so only this ladder's turn is under test.
    await server.matchmakeNow();
    for (const id of ['ra', 'rb']) expect((await admin.post('/v1/ladders/race/tickets', { id, players: [{ id: `${id}-p`, percentile: 50, pings: { eu: 20 } }] })).status).toBe(201);
    // A second engine on the same store, whose assignment is preceded by a cancellation (the race made certain).
    const inner = server.tickets;
    let cancelled = false;
    const racing: TicketStore = Object.create(inner, {
      assign: {
        value: async (ladder: string, placements: readonly Placement[]) => {
          if (ladder === 'race' && !cancelled) {
            cancelled = true;
            expect((await admin.del('/v1/tickets/rb')).body.status).toBe('cancelled');
          }
          return inner.assign(ladder, placements);
        },
      },
    });
    // The service's own loop gives the lock up so the racing engine can take it.
    await server.matchmaking.stop();
    const engine = new MatchmakingEngine(
      { db: server.db, tickets: racing, metrics: serviceMetrics(), ladders: server.ladders },
      {
        onError: (error) => {
          throw error;
        },
      },
    );
    // This ladder's turn only: a ladder of an earlier test whose tickets widened into a match since the drain is not under test.
    expect(await engine.turn(['race'])).toBe(0);
    expect(cancelled).toBe(true);
    expect((await admin.get('/v1/tickets/ra')).body.status).toBe('waiting');
    expect(engine.matchmakerOf('race')!.size).toBe(1);
    expect((await admin.post('/v1/ladders/race/tickets', { id: 'rc', players: [{ id: 'rc-p', percentile: 52, pings: { eu: 20 } }] })).status).toBe(201);
    expect(await engine.turn()).toBeGreaterThanOrEqual(1);
    const ra = (await admin.get('/v1/tickets/ra')).body;
    expect(ra.status).toBe('matched');
    expect(ra.match.teams.flat().sort()).toEqual(['ra', 'rc']);
    expect((await admin.get('/v1/ladders/race/queue')).body.waiting).toBe(0);
    await engine.release();
  });
});

describe('matchmaking lock on Redis', () => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  const others: Array<{ disconnect(): void }> = [];

  beforeAll(async () => {
    server = await startTestServer({ backend: 'postgres+redis', options: { rateLimit: { perSecond: 1e6 } } });
    admin = client(server.url, server.admin);
  });
  afterAll(async () => {
    for (const redis of others) redis.disconnect();
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  /** A second instance's ticket store on its own connection. */
  async function secondStore() {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    others.push(redis);
    await redis.connect();
    const store = new RedisTicketStore(redis, server.prefix!);
    await store.start();
    others.push({ disconnect: () => void store.close() });
    return { redis, store };
  }

  it('a rebuild reads every waiting ticket once, oldest first, across chunks of equal arrival times', async () => {
    await admin.post('/v1/ladders', { id: 'snap', system: 'elo' });
    const { store } = await secondStore();
    const now = Date.now();
    const count = 12_345;
    for (let i = 0; i < count; i += 1000) {
      const outcomes = await Promise.all(
        Array.from({ length: Math.min(1000, count - i) }, (_, k) => {
          const n = i + k;
          // Seven arrival times only, so chunks end inside runs of equal times.
          const createdAt = now - 7000 + (n % 7) * 1000;
          return store.add({
            id: `snap-${n}`,
            ladder: 'snap',
            status: 'waiting',
            createdAt,
            ticket: {
              id: `snap-${n}`,
              at: createdAt / 1000,
              players: [{ id: `snap-p${n}`, percentile: 1 + (n % 100), pings: { eu: 20 }, filter: { within: 1, strict: true, maxPing: 10 } }],
            },
          });
        }),
      );
      expect(outcomes.every((o) => o.ok)).toBe(true);
    }
    const read: Array<{ id: string; at: number }> = [];
    const cursor = await store.snapshot('snap', (batch) => void read.push(...batch.map((t) => ({ id: t.id, at: t.at }))));
    expect(cursor).toMatch(/^\d+-\d+@\d+$/);
    expect(read).toHaveLength(count);
    expect(new Set(read.map((t) => t.id)).size).toBe(count);
    for (let i = 1; i < read.length; i++) expect(read[i]!.at).toBeGreaterThanOrEqual(read[i - 1]!.at);
    expect((await store.figures('snap')).waiting).toBe(count);
  });

  it('one holder at a time; a holder that lost the lock places nothing; the next one places every ticket once', async () => {
    await admin.post('/v1/ladders', { id: 'lock', system: 'elo' });
    for (const id of ['la', 'lb']) expect((await admin.post('/v1/ladders/lock/tickets', { id, players: [{ id: `${id}-p`, percentile: 50, pings: { eu: 20 } }] })).status).toBe(201);
    await server.matchmaking.stop();
    const first = await secondStore();
    const second = await secondStore();
    const metrics = serviceMetrics();
    const engineA = new MatchmakingEngine(
      { db: server.db, tickets: first.store, metrics, ladders: server.ladders },
      {
        onError: (error) => {
          throw error;
        },
      },
    );
    const engineB = new MatchmakingEngine(
      { db: server.db, tickets: second.store, metrics, ladders: server.ladders },
      {
        onError: (error) => {
          throw error;
        },
      },
    );
    expect(await first.store.claim('lock')).toBe('acquired');
    expect(await second.store.claim('lock')).toBe('busy');
    // A holder whose lock was taken over (expired, say) may still run its pass, but its placements are refused.
    await first.redis.del(`${server.prefix}mmlock:lock`);
    expect(await second.store.claim('lock')).toBe('acquired');
    const stale = await first.store.assign('lock', [
      {
        recent: {
          matchId: 'x',
          region: 'eu',
          teams: [['la'], ['lb']],
          players: [['la-p'], ['lb-p']],
          winProbability: null,
          waitSeconds: { p50: 0, max: 0 },
          quality: { averages: [50, 50], balance: 1, percentileSpread: 0, worstPing: 20, wideningStep: 0, waits: [[0], [0]] },
          at: new Date().toISOString(),
        },
        match: { id: 'x', region: 'eu', teams: [['la'], ['lb']], players: [['la-p'], ['lb-p']], at: Date.now() },
        tickets: [
          { id: 'la', team: 0 },
          { id: 'lb', team: 1 },
        ],
      },
    ]);
    expect(stale).toEqual(['lost']);
    expect((await admin.get('/v1/tickets/la')).body.status).toBe('waiting');
    expect(await engineA.turn()).toBe(0);
    expect(await engineB.turn()).toBe(1);
    const la = (await admin.get('/v1/tickets/la')).body;
    expect(la.status).toBe('matched');
    expect((await admin.get('/v1/tickets/lb')).body.match.id).toBe(la.match.id);
    expect((await admin.get('/v1/ladders/lock/queue')).body.recent).toHaveLength(1);
    // A holder whose connection is gone (its process died) is replaced at once, not when the lock expires.
    first.redis.disconnect();
    second.redis.disconnect();
    const third = await secondStore();
    let claim = await third.store.claim('lock');
    for (let i = 0; i < 50 && claim !== 'acquired'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      claim = await third.store.claim('lock');
    }
    expect(claim).toBe('acquired');
    await engineA.release();
  });
});
