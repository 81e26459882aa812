/**
 * Rule-set queues in the service, on both backends: why a ticket waits (the
 * rule that held it in the last pass, on the ticket and as the queue's
 * summary, also read through another instance than the lock holder), and
 * attributes the ladder fills in from its standings (checked on create and
 * PATCH, refused on a ticket or a backfill, filled in at intake).
 */
import { describe, expect, it } from 'vitest';
import { BACKENDS, client, startTestServer, type TestServer, useTestServer } from './helpers.js';
import { closeSkill, duel } from '../support/rule-sets.js';

/** 1 against 1, skills within 10; skill has no default (the ladder gives it), tier is a percentile. */
const rated = {
  name: 'rated',
  ruleLanguageVersion: '1.0',
  playerAttributes: [
    { name: 'skill', type: 'number' },
    { name: 'tier', type: 'number', default: 0 },
    { name: 'mode', type: 'string', default: 'any' },
  ],
  teams: [
    { name: 'red', minPlayers: 1, maxPlayers: 1 },
    { name: 'blue', minPlayers: 1, maxPlayers: 1 },
  ],
  rules: [closeSkill],
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)('rule-set queues on %s: why waiting, attributes from the ladder', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
  });

  it('why waiting: the rule that held each ticket asked about, and the pass summary on the queue, from any instance', async () => {
    expect((await admin.post('/v1/ladders', { id: 'why', system: 'elo', matchmaking: { ruleSet: duel } })).status).toBe(201);
    const ticket = (id: string, mode: string, skill: number) =>
      admin.post('/v1/ladders/why/tickets', { id, players: [{ id: `p-${id}`, pings: { eu: 20 }, attributes: { mode, skill } }] });
    // a and d: the same mode, skills 70 apart (CloseSkill holds both); c: alone in its mode (too few players: minPlayers).
    for (const reply of await Promise.all([ticket('why-a', 'ctf', 20), ticket('why-d', 'ctf', 90), ticket('why-c', 'dm', 20)])) expect(reply.status).toBe(201);
    // Before any pass: nothing known, and the queue says so.
    expect((await admin.get('/v1/ladders/why/queue')).body.whyWaiting).toBeNull();
    expect((await admin.get('/v1/tickets/why-a')).body.why).toBeNull();
    expect(await server.matchmakeNow()).toBe(0);
    const queue = (await admin.get('/v1/ladders/why/queue')).body;
    expect(queue.whyWaiting.heldBy).toEqual({ CloseSkill: 2, minPlayers: 1 });
    expect(Object.keys(queue.whyWaiting.heldBy)).toEqual(['CloseSkill', 'minPlayers']);
    expect(Date.parse(queue.whyWaiting.passAt)).toBeGreaterThan(0);
    // why-a was asked about before the pass: its reason was written with it. why-c is asked about now:
    // not known yet, then written by a later turn (between passes, at most a second later).
    const a = (await admin.get('/v1/tickets/why-a')).body;
    expect(a.why).toEqual({ rule: 'CloseSkill', passAt: queue.whyWaiting.passAt });
    expect((await admin.get('/v1/tickets/why-c')).body.why).toBeNull();
    await sleep(1100);
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/why-c')).body.why).toEqual({ rule: 'minPlayers', passAt: queue.whyWaiting.passAt });

    if (backend === 'postgres+redis') {
      // Another instance over the same shared state: it does not hold the lock, yet reads what the holder wrote,
      // and its readers' asks reach the holder.
      const other = await startTestServer({ backend, schema: server.schema, prefix: server.prefix, options: { rateLimit: { perSecond: 1e6 } } });
      try {
        const api = client(other.url, other.admin);
        expect((await api.get('/v1/ladders/why/queue')).body.whyWaiting.heldBy).toEqual({ CloseSkill: 2, minPlayers: 1 });
        expect((await api.get('/v1/tickets/why-a')).body.why.rule).toBe('CloseSkill');
        expect((await api.get('/v1/tickets/why-d')).body.why).toBeNull();
        await sleep(1100);
        await server.matchmakeNow();
        expect(other.matchmaking.matchmakerOf('why')).toBeUndefined();
        expect((await api.get('/v1/tickets/why-d')).body.why.rule).toBe('CloseSkill');
      } finally {
        await other.dispose();
      }
    }

    // A match formed: its tickets show the match, not a reason; the queue's summary is the new pass's.
    expect((await ticket('why-e', 'dm', 25)).status).toBe(201);
    // (A new ticket may start a turn of its own: the match is looked for, not counted.)
    await server.matchmakeNow();
    const c = (await admin.get('/v1/tickets/why-c')).body;
    expect(c.status).toBe('matched');
    expect(c.why).toBeUndefined();
    expect((await admin.get('/v1/ladders/why/queue')).body.whyWaiting.heldBy).toEqual({ CloseSkill: 2 });
    // A team-rank queue has no such field.
    expect((await admin.post('/v1/ladders', { id: 'why-plain', system: 'elo' })).status).toBe(201);
    expect('whyWaiting' in (await admin.get('/v1/ladders/why-plain/queue')).body).toBe(false);
  });

  it('attributes from the ladder: checked on create and PATCH (400 naming the path), 409 while tickets wait', async () => {
    const cases: Array<[unknown, string]> = [
      [{ attributesFromLadder: { skill: 'rating' } }, 'matchmaking.attributesFromLadder'],
      [{ ruleSet: rated, attributesFromLadder: { rank: 'rating' } }, 'matchmaking.attributesFromLadder.rank'],
      [{ ruleSet: rated, attributesFromLadder: { mode: 'percentile' } }, 'matchmaking.attributesFromLadder.mode'],
      [{ ruleSet: rated, attributesFromLadder: { skill: 'elo' } }, 'matchmaking.attributesFromLadder.skill'],
    ];
    for (const [matchmaking, field] of cases) {
      const reply = await admin.post('/v1/ladders', { id: 'afl-bad', system: 'elo', matchmaking });
      expect({ field: reply.body.error?.field, status: reply.status }).toEqual({ field, status: 400 });
    }
    expect((await admin.post('/v1/ladders', { id: 'afl', system: 'elo', matchmaking: { ruleSet: rated } })).status).toBe(201);
    const set = await admin.patch('/v1/ladders/afl', { matchmaking: { attributesFromLadder: { skill: 'rating' } } });
    expect(set.status).toBe(200);
    expect(set.body.matchmaking.attributesFromLadder).toEqual({ skill: 'rating' });
    // The rule set cannot go while an attribute still comes from the ladder.
    const orphan = await admin.patch('/v1/ladders/afl', { matchmaking: { ruleSet: null } });
    expect(orphan.status).toBe(400);
    expect(orphan.body.error.field).toBe('matchmaking.attributesFromLadder');
    const wrong = await admin.patch('/v1/ladders/afl', { matchmaking: { attributesFromLadder: { mode: 'rating' } } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.field).toBe('matchmaking.attributesFromLadder.mode');
    expect((await admin.post('/v1/ladders/afl/tickets', { id: 'afl-1', players: [{ id: 'a', pings: { eu: 20 } }] })).status).toBe(201);
    const busy = await admin.patch('/v1/ladders/afl', { matchmaking: { attributesFromLadder: null } });
    expect(busy.status).toBe(409);
    expect(busy.body.error.field).toBe('matchmaking.attributesFromLadder');
    expect((await admin.del('/v1/tickets/afl-1')).status).toBe(200);
    const removed = await admin.patch('/v1/ladders/afl', { matchmaking: { attributesFromLadder: null } });
    expect(removed.status).toBe(200);
    expect(removed.body.matchmaking.attributesFromLadder).toBeUndefined();
  });

  it("attributes from the ladder: a ticket may not send them; they are the player's stored rating and percentile, the initial rating for a new player", async () => {
    const created = await admin.post('/v1/ladders', {
      id: 'afl-rated',
      system: 'elo',
      standings: { placementMatches: 0 },
      matchmaking: { ruleSet: rated, attributesFromLadder: { skill: 'rating', tier: 'percentile' } },
    });
    expect(created.status).toBe(201);
    expect(created.body.matchmaking.attributesFromLadder).toEqual({ skill: 'rating', tier: 'percentile' });
    // ann beats bob: ann above 1500, bob below (Elo's starting rating is 1500).
    expect(
      (
        await admin.post('/v1/ladders/afl-rated/matches', {
          teams: [
            { players: ['ann'], rank: 1 },
            { players: ['bob'], rank: 2 },
          ],
        })
      ).status,
    ).toBe(201);
    const refused: Array<[unknown, string]> = [
      [{ players: [{ id: 'ann', pings: { eu: 20 }, attributes: { skill: 3000 } }] }, 'players[0].attributes.skill'],
      [{ players: [{ id: 'ann', pings: { eu: 20 }, attributes: { tier: 99 } }] }, 'players[0].attributes.tier'],
      [{ players: [{ id: 'ann', pings: { eu: 20 }, rating: 3000 }] }, 'players[0].rating'],
      [{ players: [{ id: 'ann', pings: { eu: 20 }, percentile: 99 }] }, 'players[0].percentile'],
    ];
    for (const [body, field] of refused) {
      const reply = await admin.post('/v1/ladders/afl-rated/tickets', body);
      expect({ field: reply.body.error?.field, status: reply.status }).toEqual({ field, status: 400 });
    }
    for (const player of ['ann', 'bob', 'cy'])
      expect((await admin.post('/v1/ladders/afl-rated/tickets', { id: `afl-${player}`, players: [{ id: player, pings: { eu: 20 } }] })).status).toBe(201);
    const standing = async (player: string) => (await admin.get(`/v1/ladders/afl-rated/players/${player}`)).body;
    const [ann, bob] = [await standing('ann'), await standing('bob')];
    expect(ann.rating).toBeGreaterThan(1510);
    expect(bob.rating).toBeLessThan(1490);
    const attributes = async (id: string) => (await server.tickets.get(id))!.ticket.players[0]!.attributes;
    expect(await attributes('afl-ann')).toEqual({ skill: ann.rating, tier: ann.percentile, mode: 'any' });
    expect(await attributes('afl-bob')).toEqual({ skill: bob.rating, tier: bob.percentile, mode: 'any' });
    // cy has never played: the starting rating, and the middle percentile.
    expect(await attributes('afl-cy')).toEqual({ skill: 1500, tier: 50, mode: 'any' });
    // Every pair is more than 10 apart (ann − cy and cy − bob are each over 10): nobody is matched, all held by CloseSkill.
    expect(await server.matchmakeNow()).toBe(0);
    expect((await admin.get('/v1/ladders/afl-rated/queue')).body.whyWaiting.heldBy).toEqual({ CloseSkill: 3 });
    // Another newcomer starts at 1500 too: cy's match.
    expect((await admin.post('/v1/ladders/afl-rated/tickets', { id: 'afl-dee', players: [{ id: 'dee', pings: { eu: 20 } }] })).status).toBe(201);
    await server.matchmakeNow();
    const cy = (await admin.get('/v1/tickets/afl-cy')).body;
    expect(cy.status).toBe('matched');
    expect(cy.match.players.flat().sort()).toEqual(['cy', 'dee']);
  });

  it("attributes from the ladder in a backfill: the match's players may not send them; they are their stored ratings, and newcomers are judged against those", async () => {
    expect(
      (
        await admin.post('/v1/ladders', {
          id: 'afl-fill',
          system: 'elo',
          standings: { placementMatches: 0 },
          matchmaking: { ruleSet: rated, attributesFromLadder: { skill: 'rating' } },
        })
      ).status,
    ).toBe(201);
    // ann and eve each beat a 1500 newcomer once: both 1516 (Elo, K = 32); cy has never played (1500, 16 away from ann).
    for (const [winner, loser] of [
      ['ann', 'bob'],
      ['eve', 'fay'],
    ])
      expect(
        (
          await admin.post('/v1/ladders/afl-fill/matches', {
            teams: [
              { players: [winner], rank: 1 },
              { players: [loser], rank: 2 },
            ],
          })
        ).status,
      ).toBe(201);
    const base = { declared: true, match: 'live-afl', region: 'eu', teams: [['ann'], []] };
    const refused: Array<[unknown, string]> = [
      [{ ...base, players: { ann: { pings: { eu: 20 }, attributes: { skill: 3000 } } } }, 'players.ann.attributes.skill'],
      [{ ...base, players: { ann: { pings: { eu: 20 }, rating: 3000 } } }, 'players.ann.rating'],
    ];
    for (const [body, field] of refused) {
      const reply = await admin.post('/v1/ladders/afl-fill/backfills', body);
      expect({ field: reply.body.error?.field, status: reply.status }).toEqual({ field, status: 400 });
    }
    // The rule set gives skill no default: without the ladder's value the request could not be judged at all.
    const created = await admin.post('/v1/ladders/afl-fill/backfills', { ...base, players: { ann: { pings: { eu: 20 } } } });
    expect(created.status).toBe(201);
    for (const player of ['cy', 'eve'])
      expect((await admin.post('/v1/ladders/afl-fill/tickets', { id: `fill-${player}`, players: [{ id: player, pings: { eu: 20 } }] })).status).toBe(201);
    await server.matchmakeNow();
    const filled = (await admin.get(`/v1/backfills/${created.body.id}`)).body;
    expect(filled).toMatchObject({ status: 'filled', teams: [['ann'], ['eve']] });
    expect((await admin.get('/v1/tickets/fill-cy')).body.status).toBe('waiting');
  });
});
