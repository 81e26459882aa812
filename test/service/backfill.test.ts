/**
 * Backfill in the service, on both backends (PGlite with the in-process
 * queue, PostgreSQL with Redis): a backfill request fills its open slots
 * from waiting tickets before new matches form, under the matchmaker's rules
 * (filters both ways, the match's region and ping limit, parties whole,
 * even teams); the added ticket shows the backfill's match and its team, on
 * `GET /v1/tickets/{id}` and on the assignment stream; cancellation;
 * validation naming the field; a ticket is added, matched or cancelled,
 * exactly one of these, also when a cancellation races the placement; and a
 * new lock holder rebuilds the open backfills (newcomers included) from the
 * shared state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatchmakingEngine } from '../../src/service/matchmaking-pass.js';
import { serviceMetrics } from '../../src/service/metrics.js';
import type { BackfillPlacement, TicketStore } from '../../src/service/tickets/store.js';
import { RedisTicketStore } from '../../src/service/tickets/redis.js';
import { followAssignments } from '../support/assignments.js';
import { BACKENDS, cleanupShared, client, REDIS_URL, startTestServer, type TestServer } from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ladder's assignment stream. */
const follow = (url: string, ladder: string) => followAssignments<{ matchId: string; backfill?: string; teams: string[][]; players: string[][] }>(url, ladder);

describe.each(BACKENDS)('backfill on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  let anon: ReturnType<typeof client>;
  const others: Array<{ disconnect(): void }> = [];

  beforeAll(async () => {
    server = await startTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } });
    admin = client(server.url, server.admin);
    anon = client(server.url);
  });
  afterAll(async () => {
    for (const other of others) other.disconnect();
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  /** A matchmaking engine on a store, and the fills and matches it placed per ladder at its last turn. */
  function engineOn(tickets: TicketStore) {
    const placed = new Map<string, number>();
    const engine = new MatchmakingEngine(
      { db: server.db, tickets, metrics: serviceMetrics(), ladders: server.ladders },
      {
        onError: (error) => {
          throw error;
        },
        onPass: (report) => placed.set(report.ladder, report.placed + report.filled),
      },
    );
    /** One turn; resolves to what it placed in `ladder`. */
    const turn = async (ladder: string) => {
      placed.clear();
      await engine.turn();
      return placed.get(ladder) ?? 0;
    };
    return { engine, turn };
  }

  /** A solo ticket of one player at a percentile, with pings. */
  const solo = (ladder: string, id: string, percentile: number, pings: Record<string, number> = { eu: 20 }, filter?: Record<string, unknown>) =>
    admin.post(`/v1/ladders/${ladder}/tickets`, { id, players: [{ id: `${id}-p`, percentile, pings, ...(filter ? { filter } : {}) }] });

  it('fills a backfill from a waiting ticket: the ticket shows the match id and its team, on GET and on the assignment stream', async () => {
    expect((await admin.post('/v1/ladders', { id: 'bf', system: 'elo', public: true, matchmaking: { teamSize: 2 } })).status).toBe(201);
    const stream = follow(server.url, 'bf');
    await stream.ready;
    const created = await admin.post('/v1/ladders/bf/backfills', { declared: true, match: 'live-1', region: 'eu', teams: [['a', 'b'], ['c']] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'waiting', match: 'live-1', region: 'eu', teams: [['a', 'b'], ['c']], open: [0, 1], added: [] });
    expect(typeof created.body.id).toBe('string');
    const id = created.body.id as string;
    expect((await anon.get(`/v1/backfills/${id}`)).body.status).toBe('waiting');
    expect((await solo('bf', 't1', 50)).status).toBe(201);
    expect(await server.matchmakeNow()).toBe(1);

    const filled = await anon.get(`/v1/backfills/${id}`);
    expect(filled.status).toBe(200);
    expect(filled.body).toMatchObject({
      id,
      status: 'filled',
      match: 'live-1',
      teams: [
        ['a', 'b'],
        ['c', 't1-p'],
      ],
      open: [0, 0],
    });
    expect(filled.body.added).toEqual([{ ticket: 't1', team: 1, players: ['t1-p'], at: expect.any(String) }]);
    expect(typeof filled.body.endedAt).toBe('string');
    const ticket = (await anon.get('/v1/tickets/t1')).body;
    expect(ticket.status).toBe('matched');
    expect(ticket.match).toMatchObject({
      id: 'live-1',
      team: 1,
      region: 'eu',
      backfill: id,
      teams: [[], ['t1']],
      players: [
        ['a', 'b'],
        ['c', 't1-p'],
      ],
    });
    expect((await admin.get('/v1/ladders/bf/queue')).body.waiting).toBe(0);
    for (let i = 0; i < 100 && stream.events.length === 0; i++) await sleep(20);
    await stream.stop();
    expect(stream.events).toHaveLength(1);
    expect(stream.events[0]).toMatchObject({
      matchId: 'live-1',
      backfill: id,
      teams: [[], ['t1']],
      players: [
        ['a', 'b'],
        ['c', 't1-p'],
      ],
    });
    expect((await admin.get('/v1/ladders/bf/queue')).body.recent[0]).toMatchObject({ matchId: 'live-1', backfill: id });
    // Counted as a fill, not as a new match.
    const metrics = (await admin.get('/metrics')).text;
    expect(metrics).toMatch(/^ladder_matchmaking_backfill_fills_total\{queue="bf"\} 1$/m);
    expect(metrics).not.toMatch(/^ladder_matchmaking_matches_total\{queue="bf"\}/m);
    // A filled backfill cannot be cancelled, and its players may queue again.
    const late = await admin.del(`/v1/backfills/${id}`);
    expect(late.status).toBe(409);
    expect(late.body.error.field).toBe('backfill');
    expect((await admin.post('/v1/ladders/bf/tickets', { players: [{ id: 'a', pings: { eu: 20 } }] })).status).toBe(201);
  });

  it('serves backfills before new matches, oldest ticket first', async () => {
    await admin.post('/v1/ladders', { id: 'first', system: 'elo', matchmaking: { teamSize: 1 } });
    const backfill = await admin.post('/v1/ladders/first/backfills', {
      id: 'first-bf',
      declared: true,
      match: 'm-first',
      region: 'eu',
      teams: [['x'], []],
      players: { x: { percentile: 50 } },
    });
    expect(backfill.status).toBe(201);
    for (const [id, percentile] of [
      ['f1', 50],
      ['f2', 51],
      ['f3', 49],
    ] as const)
      expect((await solo('first', id, percentile)).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/backfills/first-bf')).body.added.map((a: { ticket: string }) => a.ticket)).toEqual(['f1']);
    const [f2, f3] = [(await admin.get('/v1/tickets/f2')).body, (await admin.get('/v1/tickets/f3')).body];
    expect([f2.status, f3.status]).toEqual(['matched', 'matched']);
    expect(f2.match.id).toBe(f3.match.id);
    expect(f2.match.backfill).toBeUndefined();
  });

  it('filters hold both ways against the match players', async () => {
    await admin.post('/v1/ladders', { id: 'filters', system: 'elo', matchmaking: { teamSize: 2 } });
    // The match players are at 90 with strict filters 5 wide.
    const body = {
      id: 'fb',
      declared: true,
      match: 'm-f',
      region: 'eu',
      teams: [['h1', 'h2'], ['h3']],
      players: { h1: { percentile: 90 }, h2: { percentile: 91 }, h3: { percentile: 89 } },
      filter: { within: 5, strict: true },
    };
    expect((await admin.post('/v1/ladders/filters/backfills', body)).status).toBe(201);
    // A ticket at 70 accepting everyone: the match players' filters refuse it.
    expect((await solo('filters', 'wide', 70, { eu: 20 }, { within: 100, strict: true })).status).toBe(201);
    // A ticket at 92 whose own strict filter (1 wide) refuses players at 89 and 90.
    expect((await solo('filters', 'narrow', 92, { eu: 20 }, { within: 1, strict: true })).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/backfills/fb')).body).toMatchObject({ status: 'waiting', added: [] });
    expect((await admin.get('/v1/tickets/wide')).body.status).toBe('waiting');
    expect((await admin.get('/v1/tickets/narrow')).body.status).toBe('waiting');
    // Within both: added.
    expect((await solo('filters', 'fits', 88, { eu: 20 }, { within: 5, strict: true })).status).toBe(201);
    await server.matchmakeNow();
    const after = (await admin.get('/v1/backfills/fb')).body;
    expect(after.status).toBe('filled');
    expect(after.added).toEqual([{ ticket: 'fits', team: 1, players: ['fits-p'], at: expect.any(String) }]);
    expect((await admin.get('/v1/tickets/wide')).body.status).toBe('waiting');
  });

  it("the match's region and ping limit apply: a ticket that cannot play there leaves the backfill waiting", async () => {
    await admin.post('/v1/ladders', { id: 'regions', system: 'elo', matchmaking: { teamSize: 1 } });
    expect(
      (
        await admin.post('/v1/ladders/regions/backfills', {
          id: 'rb',
          declared: true,
          match: 'm-r',
          region: 'na',
          teams: [['n1'], []],
          players: { n1: { percentile: 50 } },
          filter: { maxPing: 60 },
        })
      ).status,
    ).toBe(201);
    expect((await solo('regions', 'eu-only', 50, { eu: 10 })).status).toBe(201);
    expect((await solo('regions', 'na-far', 50, { na: 90 })).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/backfills/rb')).body).toMatchObject({ status: 'waiting', added: [], open: [0, 1] });
    // The two tickets form no match either: they share no region where both may play.
    expect((await admin.get('/v1/tickets/eu-only')).body.status).toBe('waiting');
    expect((await admin.get('/v1/tickets/na-far')).body.status).toBe('waiting');
    expect((await solo('regions', 'na-near', 50, { na: 40, eu: 10 })).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/backfills/rb')).body.added.map((a: { ticket: string }) => a.ticket)).toEqual(['na-near']);
    expect((await admin.get('/v1/tickets/eu-only')).body.status).toBe('waiting');
  });

  it('parties stay whole on one team; teams come out even', async () => {
    await admin.post('/v1/ladders', { id: 'parties', system: 'elo', matchmaking: { teamSize: 3 } });
    // Open slots: one on team 0, two on team 1.
    expect(
      (
        await admin.post('/v1/ladders/parties/backfills', {
          id: 'pb',
          declared: true,
          match: 'm-p',
          region: 'eu',
          teams: [['a1', 'a2'], ['b1']],
          players: { a1: { percentile: 50 }, a2: { percentile: 50 }, b1: { percentile: 50 } },
        })
      ).status,
    ).toBe(201);
    const party = (id: string, size: number) =>
      admin.post('/v1/ladders/parties/tickets', { id, players: Array.from({ length: size }, (_, k) => ({ id: `${id}-${k}`, percentile: 50, pings: { eu: 20 } })) });
    expect((await party('trio', 3)).status).toBe(201);
    expect((await party('duo', 2)).status).toBe(201);
    expect((await party('one', 1)).status).toBe(201);
    await server.matchmakeNow();
    const pb = (await admin.get('/v1/backfills/pb')).body;
    expect(pb.status).toBe('filled');
    expect(pb.teams).toEqual([
      ['a1', 'a2', 'one-0'],
      ['b1', 'duo-0', 'duo-1'],
    ]);
    expect(pb.added.map((a: { ticket: string; team: number; players: string[] }) => [a.ticket, a.team, a.players])).toEqual([
      ['one', 0, ['one-0']],
      ['duo', 1, ['duo-0', 'duo-1']],
    ]);
    expect((await admin.get('/v1/tickets/duo')).body.match).toMatchObject({ id: 'm-p', team: 1 });
    expect((await admin.get('/v1/tickets/one')).body.match).toMatchObject({ id: 'm-p', team: 0 });
    // The trio fits no team of the backfill and stays whole, waiting.
    expect((await admin.get('/v1/tickets/trio')).body.status).toBe('waiting');
  });

  it('a partly filled backfill keeps its newcomers and fills the rest at a later pass', async () => {
    await admin.post('/v1/ladders', { id: 'partial', system: 'elo', matchmaking: { teamSize: 2 } });
    expect((await admin.post('/v1/ladders/partial/backfills', { id: 'part', declared: true, match: 'm-part', region: 'eu', teams: [['q1'], []] })).status).toBe(201);
    expect((await solo('partial', 'pa', 50)).status).toBe(201);
    await server.matchmakeNow();
    const half = (await admin.get('/v1/backfills/part')).body;
    expect(half.status).toBe('waiting');
    expect(half.added).toHaveLength(1);
    expect(half.open.reduce((a: number, b: number) => a + b, 0)).toBe(2);
    // A newcomer plays in the match now: they may not queue while the backfill is open.
    const busy = await admin.post('/v1/ladders/partial/tickets', { players: [{ id: 'pa-p', pings: { eu: 20 } }] });
    expect(busy.status).toBe(409);
    expect(busy.body.error.field).toBe('players[0].id');
    for (const id of ['pb', 'pc']) expect((await solo('partial', id, 50)).status).toBe(201);
    await server.matchmakeNow();
    const full = (await admin.get('/v1/backfills/part')).body;
    expect(full.status).toBe('filled');
    expect(full.added.map((a: { ticket: string }) => a.ticket)).toEqual(['pa', 'pb', 'pc']);
    expect(full.teams.map((team: string[]) => team.length)).toEqual([2, 2]);
    expect((await admin.get('/v1/tickets/pc')).body.match.teams.flat().sort()).toEqual(['pa', 'pb', 'pc']);
  });

  it('cancel: a cancelled backfill takes nobody; cancelling again answers the same', async () => {
    await admin.post('/v1/ladders', { id: 'cancel', system: 'elo', matchmaking: { teamSize: 1 } });
    expect((await admin.post('/v1/ladders/cancel/backfills', { id: 'cb', declared: true, match: 'm-c', region: 'eu', teams: [['c1'], []] })).status).toBe(201);
    // Its match players may not queue while it is open.
    expect((await admin.post('/v1/ladders/cancel/tickets', { players: [{ id: 'c1', pings: { eu: 20 } }] })).status).toBe(409);
    expect((await admin.del('/v1/backfills/cb')).body).toEqual({ id: 'cb', status: 'cancelled' });
    expect((await admin.del('/v1/backfills/cb')).body).toEqual({ id: 'cb', status: 'cancelled' });
    expect((await solo('cancel', 'after', 50)).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/after')).body.status).toBe('waiting');
    const cb = (await admin.get('/v1/backfills/cb')).body;
    expect(cb).toMatchObject({ status: 'cancelled', added: [] });
    expect(typeof cb.endedAt).toBe('string');
    expect(server.matchmaking.matchmakerOf('cancel')!.backfillCount).toBe(0);
    expect((await admin.post('/v1/ladders/cancel/tickets', { players: [{ id: 'c1', pings: { eu: 20 } }] })).status).toBe(201);
    // The id stays taken.
    expect((await admin.post('/v1/ladders/cancel/backfills', { id: 'cb', declared: true, match: 'm-c', region: 'eu', teams: [['z1'], []] })).status).toBe(409);
  });

  it('unknown ids are 404; keys need the scopes of tickets', async () => {
    for (const reply of [await admin.get('/v1/backfills/nope'), await admin.del('/v1/backfills/nope')]) {
      expect(reply.status).toBe(404);
      expect(reply.body.error.field).toBe('backfill');
    }
    const ladder = await admin.post('/v1/ladders/no-such-ladder/backfills', { declared: true, match: 'm', region: 'eu', teams: [['a'], []] });
    expect(ladder.status).toBe(404);
    expect(ladder.body.error.field).toBe('ladder');
    await admin.post('/v1/ladders', { id: 'private', system: 'elo' });
    const reader = (await admin.post('/v1/keys', { name: 'bf-reader', scopes: ['read'] })).body.key as string;
    const body = { id: 'priv', declared: true, match: 'm', region: 'eu', teams: [['a'], []] };
    expect((await anon.post('/v1/ladders/private/backfills', body)).status).toBe(401);
    expect((await client(server.url, reader).post('/v1/ladders/private/backfills', body)).status).toBe(403);
    expect((await admin.post('/v1/ladders/private/backfills', body)).status).toBe(201);
    // A private ladder's backfill is not found without a read key, and cancelling needs write.
    expect((await anon.get('/v1/backfills/priv')).status).toBe(404);
    expect((await client(server.url, reader).get('/v1/backfills/priv')).body.status).toBe('waiting');
    expect((await client(server.url, reader).del('/v1/backfills/priv')).status).toBe(403);
  });

  it('invalid bodies are 400 naming the field; busy players are 409 naming where they are listed', async () => {
    await admin.post('/v1/ladders', { id: 'invalid', system: 'elo', matchmaking: { teamSize: 2 } });
    const cases: Array<[unknown, string]> = [
      [{ region: 'eu', teams: [['a'], []] }, 'match'],
      [{ match: 'm', teams: [['a'], []] }, 'region'],
      [{ match: 'm', region: 'eu', teams: [['a']] }, 'teams'],
      [{ match: 'm', region: 'eu', teams: 'a' }, 'teams'],
      [{ match: 'm', region: 'eu', teams: [['a'], [7]] }, 'teams[1][0]'],
      [{ match: 'm', region: 'eu', teams: [['a', 'b', 'c'], []] }, 'teams[0]'],
      [
        {
          match: 'm',
          region: 'eu',
          teams: [
            ['a', 'b'],
            ['c', 'd'],
          ],
        },
        'teams',
      ],
      [{ match: 'm', region: 'eu', teams: [['a'], ['a']] }, 'teams[1][0]'],
      [{ match: 'm', region: 'eu', teams: [['a'], []], filter: { maxPing: -1 } }, 'filter.maxPing'],
      [{ match: 'm', region: 'eu', teams: [['a'], []], players: { a: { percentile: 101 } } }, 'players.a.percentile'],
      [{ match: 'm', region: 'eu', teams: [['a'], []], players: { zed: { percentile: 40 } } }, 'players.zed'],
      [{ match: 'm', region: 'eu', teams: [['a'], []], extra: 1 }, 'extra'],
      [{ match: 'm', region: 'eu', teams: [['a'], []], teamSize: 0 }, 'teamSize'],
    ];
    for (const [body, field] of cases) {
      const reply = await admin.post('/v1/ladders/invalid/backfills', body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.field, JSON.stringify(body)).toBe(field);
    }
    expect((await admin.post('/v1/ladders/invalid/tickets', { players: [{ id: 'waits', pings: { eu: 20 } }] })).status).toBe(201);
    const waiting = await admin.post('/v1/ladders/invalid/backfills', { declared: true, match: 'm', region: 'eu', teams: [['a'], ['waits']] });
    expect(waiting.status).toBe(409);
    expect(waiting.body.error.field).toBe('teams[1][0]');
    expect((await admin.post('/v1/ladders/invalid/backfills', { id: 'one', declared: true, match: 'm1', region: 'eu', teams: [['p1'], []] })).status).toBe(201);
    const twice = await admin.post('/v1/ladders/invalid/backfills', { declared: true, match: 'm2', region: 'eu', teams: [['p2'], ['p1']] });
    expect(twice.status).toBe(409);
    expect(twice.body.error.field).toBe('teams[1][0]');
    const taken = await admin.post('/v1/ladders/invalid/backfills', { id: 'one', declared: true, match: 'm3', region: 'eu', teams: [['p3'], []] });
    expect(taken.status).toBe(409);
    expect(taken.body.error.field).toBe('id');
  });

  it('exactly once: cancellations racing the passes never leave a ticket both added and cancelled, or added twice', async () => {
    await admin.post('/v1/ladders', { id: 'many', system: 'elo', matchmaking: { teamSize: 2 } });
    let added = 0;
    let cancelledBackfills = 0;
    for (let round = 0; round < 25; round++) {
      const backfill = `many-${round}`;
      expect(
        (await admin.post('/v1/ladders/many/backfills', { id: backfill, declared: true, match: `m-${round}`, region: 'eu', teams: [[`${backfill}-x`], [`${backfill}-y`]] })).status,
      ).toBe(201);
      const tickets = [0, 1, 2].map((k) => `${backfill}-t${k}`);
      for (const id of tickets) expect((await solo('many', id, 50)).status).toBe(201);
      // Every order: the pass done before the cancellations, the cancellations done before the pass, and a race at random moments.
      const cancels = (delay: () => Promise<unknown>) => [
        delay().then(() => admin.del(`/v1/backfills/${backfill}`)),
        delay().then(() => admin.del(`/v1/tickets/${tickets[round % 3]}`)),
        delay().then(() => admin.del(`/v1/tickets/${tickets[(round + 1) % 3]}`)),
      ];
      let replies: Array<{ status: number }>;
      if (round % 3 === 0) {
        await server.matchmakeNow();
        replies = await Promise.all(cancels(async () => {}));
      } else if (round % 3 === 1) {
        replies = await Promise.all(cancels(async () => {}));
        await server.matchmakeNow();
      } else {
        const [, ...answers] = await Promise.all([sleep(Math.random() * 10).then(() => server.matchmakeNow()), ...cancels(() => sleep(Math.random() * 10))]);
        replies = answers;
      }
      for (const reply of replies) expect([200, 409]).toContain(reply.status);
      await server.matchmakeNow();
      const b = (await admin.get(`/v1/backfills/${backfill}`)).body;
      const states = await Promise.all(tickets.map(async (id) => (await admin.get(`/v1/tickets/${id}`)).body));
      const addedIds = b.added.map((a: { ticket: string }) => a.ticket);
      expect(new Set(addedIds).size).toBe(addedIds.length);
      for (const ticket of states) {
        const entry = b.added.find((a: { ticket: string }) => a.ticket === ticket.id);
        if (ticket.status === 'matched') {
          expect(ticket.match.backfill).toBe(backfill);
          expect(entry?.team).toBe(ticket.match.team);
        } else expect(entry).toBeUndefined();
      }
      if (b.status === 'filled') expect(addedIds).toHaveLength(2);
      if (b.status === 'cancelled') cancelledBackfills++;
      else expect(b.status).toBe('filled');
      added += addedIds.length;
      // The matchmaker agrees with the store.
      expect(server.matchmaking.matchmakerOf('many')!.size).toBe((await admin.get('/v1/ladders/many/queue')).body.waiting);
      expect(server.matchmaking.matchmakerOf('many')!.backfillCount).toBe(0);
      for (const ticket of states) if (ticket.status === 'waiting') expect((await admin.del(`/v1/tickets/${ticket.id}`)).status).toBe(200);
    }
    expect(added).toBeGreaterThan(0);
    expect(cancelledBackfills).toBeGreaterThan(0);
  });

  it('exactly once when the backfill or a ticket is cancelled between the pass and the placement', async () => {
    await admin.post('/v1/ladders', { id: 'race', system: 'elo', matchmaking: { teamSize: 2 } });
    await server.matchmakeNow();
    expect((await admin.post('/v1/ladders/race/backfills', { id: 'rb1', declared: true, match: 'm-race', region: 'eu', teams: [['r1'], []] })).status).toBe(201);
    for (const id of ['ra', 'rb', 'rc']) expect((await solo('race', id, 50)).status).toBe(201);
    // A second engine on the same store whose placement is preceded by a cancellation (the race made certain).
    const inner = server.tickets;
    let before: (() => Promise<void>) | undefined = async () => {
      expect((await admin.del('/v1/backfills/rb1')).body.status).toBe('cancelled');
    };
    const racing: TicketStore = Object.create(inner, {
      fill: {
        value: async (ladder: string, placements: readonly BackfillPlacement[]) => {
          const run = ladder === 'race' ? before : undefined;
          if (run) {
            before = undefined;
            await run();
          }
          return inner.fill(ladder, placements);
        },
      },
    });
    await server.matchmaking.stop();
    const { engine, turn } = engineOn(racing);
    expect(await turn('race')).toBe(0);
    // The backfill was cancelled first: nobody was added, every ticket still waits, in the store and in the matchmaker.
    expect((await admin.get('/v1/backfills/rb1')).body).toMatchObject({ status: 'cancelled', added: [] });
    for (const id of ['ra', 'rb', 'rc']) expect((await admin.get(`/v1/tickets/${id}`)).body.status).toBe('waiting');
    expect(engine.matchmakerOf('race')!.size).toBe(3);
    expect(engine.matchmakerOf('race')!.backfillCount).toBe(0);

    // Now a ticket cancelled between the pass and the placement: the backfill stays open as it was, the others go back.
    for (const id of ['rb', 'rc']) expect((await admin.del(`/v1/tickets/${id}`)).status).toBe(200);
    expect((await admin.post('/v1/ladders/race/backfills', { id: 'rb2', declared: true, match: 'm-race-2', region: 'eu', teams: [['r2'], []] })).status).toBe(201);
    expect((await solo('race', 'rd', 50)).status).toBe(201);
    before = async () => {
      expect((await admin.del('/v1/tickets/rd')).body.status).toBe('cancelled');
    };
    expect(await turn('race')).toBe(0);
    expect((await admin.get('/v1/backfills/rb2')).body).toMatchObject({ status: 'waiting', added: [], open: [1, 2] });
    expect((await admin.get('/v1/tickets/ra')).body.status).toBe('waiting');
    expect(engine.matchmakerOf('race')!.backfillCount).toBe(1);
    expect((await engine.matchmakerOf('race')!.backfills())[0]!.teams).toEqual([['r2'], []]);
    // The next turn places the tickets still waiting.
    for (const id of ['re', 'rf']) expect((await solo('race', id, 50)).status).toBe(201);
    expect(await turn('race')).toBe(1);
    const rb2 = (await admin.get('/v1/backfills/rb2')).body;
    expect(rb2.status).toBe('filled');
    expect(rb2.added.map((a: { ticket: string }) => a.ticket).sort()).toEqual(['ra', 're', 'rf']);
    expect((await admin.get('/v1/tickets/rd')).body.status).toBe('cancelled');
    await engine.release();
  });

  it('deleting a ladder cancels its waiting tickets and open backfills; tickets a stale instance queues afterwards are cancelled by the next pass', async () => {
    await admin.post('/v1/ladders', { id: 'gone', system: 'elo', matchmaking: { teamSize: 2 } });
    // The service's own loop was stopped by an earlier test: an engine of this test's own does the passes.
    const { engine, turn } = engineOn(server.tickets);
    const strict = { within: 5, strict: true };
    expect((await solo('gone', 'g1', 10, { eu: 20 }, strict)).status).toBe(201);
    expect((await solo('gone', 'g2', 90, { eu: 20 }, strict)).status).toBe(201);
    expect(
      (
        await admin.post('/v1/ladders/gone/backfills', {
          id: 'gb',
          declared: true,
          match: 'm-gone',
          region: 'eu',
          teams: [['q0'], ['qx']],
          players: { q0: { percentile: 50, filter: strict }, qx: { percentile: 50, filter: strict } },
        })
      ).status,
    ).toBe(201);
    expect(await turn('gone')).toBe(0);
    expect(engine.matchmakerOf('gone')?.size).toBe(2);
    expect((await admin.get('/v1/ladders/gone/queue')).body.waiting).toBe(2);

    expect((await admin.del('/v1/ladders/gone')).status).toBe(200);
    // Cancelled in the shared state; over HTTP they are gone with their ladder.
    for (const id of ['g1', 'g2']) {
      expect((await server.tickets.get(id))?.status).toBe('cancelled');
      expect((await admin.get(`/v1/tickets/${id}`)).status).toBe(404);
    }
    expect((await server.tickets.getBackfill('gb'))?.status).toBe('cancelled');
    expect((await admin.get('/v1/backfills/gb')).status).toBe(404);
    expect(await server.tickets.queues()).not.toContain('gone');
    expect(await turn('gone')).toBe(0);
    expect(engine.matchmakerOf('gone')).toBeUndefined();

    // An instance that still had the ladder cached queues a ticket after the delete.
    const now = Date.now();
    const late = { id: 'late', at: now / 1000, players: [{ id: 'late-p', percentile: 50, pings: { eu: 20 }, filter: { within: 10, strict: false, maxPing: 150 } }] };
    expect(await server.tickets.add({ id: 'late', ladder: 'gone', status: 'waiting', createdAt: now, ticket: late })).toEqual({ ok: true });
    expect(await turn('gone')).toBe(0);
    expect((await server.tickets.get('late'))?.status).toBe('cancelled');
    expect(await server.tickets.queues()).not.toContain('gone');

    // The id can be used again, with an empty queue; the players may queue there.
    expect((await admin.post('/v1/ladders', { id: 'gone', system: 'elo', matchmaking: { teamSize: 2 } })).status).toBe(201);
    expect((await admin.get('/v1/ladders/gone/queue')).body).toMatchObject({ waiting: 0, byRegion: {}, recent: [] });
    expect((await solo('gone', 'g3', 10)).status).toBe(201);
    expect((await admin.post('/v1/ladders/gone/backfills', { declared: true, match: 'm-again', region: 'eu', teams: [['q0'], ['g1-p']] })).status).toBe(201);
    await engine.release();
  });

  it('a new lock holder rebuilds the open backfills, newcomers included, from the shared state', async () => {
    await admin.post('/v1/ladders', { id: 'handover', system: 'elo', matchmaking: { teamSize: 2 } });
    /** Another instance's store: its own Redis connection, or the one in-process store. */
    const store = async (): Promise<TicketStore> => {
      if (backend === 'pglite') return server.tickets;
      const { Redis } = await import('ioredis');
      const redis = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      others.push(redis);
      await redis.connect();
      const tickets = new RedisTicketStore(redis, server.prefix!);
      await tickets.start();
      others.push({ disconnect: () => void tickets.close() });
      return tickets;
    };
    const first = engineOn(await store());
    const strict = { within: 10, strict: true };
    expect(
      (
        await admin.post('/v1/ladders/handover/backfills', {
          id: 'hb',
          declared: true,
          match: 'm-hand',
          region: 'eu',
          teams: [['h0'], ['hx']],
          players: { h0: { percentile: 50, filter: strict }, hx: { percentile: 50, filter: strict } },
        })
      ).status,
    ).toBe(201);
    expect((await solo('handover', 'h1', 55, { eu: 20 }, strict)).status).toBe(201);
    expect(await first.turn('handover')).toBe(1);
    expect((await admin.get('/v1/backfills/hb')).body).toMatchObject({ status: 'waiting', open: [0, 1] });
    await first.engine.release();
    const second = engineOn(await store());
    // The newcomer's filter counts after the handover: at 55 (within 10) they refuse a ticket at 42, which h0 and hx alone would take.
    expect((await solo('handover', 'h2', 42, { eu: 20 }, { within: 20, strict: true })).status).toBe(201);
    expect(await second.turn('handover')).toBe(0);
    const rebuilt = second.engine.matchmakerOf('handover')!;
    expect(await rebuilt.backfills()).toHaveLength(1);
    expect((await rebuilt.backfills())[0]!.teams).toEqual([['h0', 'h1-p'], ['hx']]);
    expect((await admin.get('/v1/tickets/h2')).body.status).toBe('waiting');
    expect((await solo('handover', 'h3', 52, { eu: 20 }, strict)).status).toBe(201);
    expect(await second.turn('handover')).toBe(1);
    const hb = (await admin.get('/v1/backfills/hb')).body;
    expect(hb.status).toBe('filled');
    expect(hb.teams).toEqual([
      ['h0', 'h1-p'],
      ['hx', 'h3-p'],
    ]);
    expect(hb.added.map((a: { ticket: string; team: number }) => [a.ticket, a.team])).toEqual([
      ['h1', 0],
      ['h3', 1],
    ]);
    expect(rebuilt.backfillCount).toBe(0);
    await second.engine.release();
  });
});
