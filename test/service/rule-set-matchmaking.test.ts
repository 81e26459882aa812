/**
 * Rule-set queues in the service, on both backends: a ladder's
 * `matchmaking.ruleSet` is checked (400 naming the JSON path), shown, and
 * changed only while the queue is empty; tickets carry attributes and roles
 * checked against the rule set; the pass forms matches by the rule set and
 * the assignment names the teams and the roles (backfill:
 * test/service/rule-set-backfill.test.ts).
 */
import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';
import { closeSkill, duel } from '../support/rule-sets.js';

/** Two squads of a tank and a healer each. */
const squads = {
  name: 'squads',
  ruleLanguageVersion: '1.0',
  playerAttributes: [{ name: 'skill', type: 'number', default: 10 }],
  teams: [{ name: 'squad', minPlayers: 2, maxPlayers: 2, quantity: 2, roles: { tank: 1, healer: 1 } }],
  rules: [],
};

describe.each(BACKENDS)('rule-set matchmaking on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
  });

  it('a rule set is checked on create (400 naming the JSON path), stored and shown', async () => {
    const created = await admin.post('/v1/ladders', { id: 'duel', system: 'elo', matchmaking: { ruleSet: duel } });
    expect(created.status).toBe(201);
    expect(created.body.matchmaking.ruleSet).toEqual(duel);
    expect((await admin.get('/v1/ladders/duel')).body.matchmaking.ruleSet).toEqual(duel);

    const badFunction = { ...duel, rules: [duel.rules[0], { ...closeSkill, measurements: ['mean(flatten(teams[*].players.attributes[skill]))'] }] };
    const refused = await admin.post('/v1/ladders', { id: 'bad-rules', system: 'elo', matchmaking: { ruleSet: badFunction } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.field).toBe('matchmaking.ruleSet.rules[1].measurements[0]');
    expect(refused.body.error.message).toContain("'mean'");

    const badVersion = await admin.post('/v1/ladders', { id: 'bad-rules', system: 'elo', matchmaking: { ruleSet: { ...duel, ruleLanguageVersion: '2.0' } } });
    expect(badVersion.status).toBe(400);
    expect(badVersion.body.error.field).toBe('matchmaking.ruleSet.ruleLanguageVersion');
    expect((await admin.get('/v1/ladders/bad-rules')).status).toBe(404);
  });

  it('PATCH sets, checks and removes the rule set while the queue is empty; 409 while a ticket waits', async () => {
    expect((await admin.post('/v1/ladders', { id: 'later', system: 'elo' })).status).toBe(201);
    const bad = await admin.patch('/v1/ladders/later', { matchmaking: { ruleSet: { ...duel, teams: [] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toMatch(/^matchmaking\.ruleSet\.teams/);
    const set = await admin.patch('/v1/ladders/later', { matchmaking: { ruleSet: squads } });
    expect(set.status).toBe(200);
    expect(set.body.matchmaking.ruleSet).toEqual(squads);
    const removed = await admin.patch('/v1/ladders/later', { matchmaking: { ruleSet: null } });
    expect(removed.status).toBe(200);
    expect(removed.body.matchmaking.ruleSet).toBeUndefined();

    expect((await admin.post('/v1/ladders/later/tickets', { id: 'later-1', players: [{ id: 'a', pings: { eu: 20 } }] })).status).toBe(201);
    const busy = await admin.patch('/v1/ladders/later', { matchmaking: { ruleSet: squads } });
    expect(busy.status).toBe(409);
    expect(busy.body.error.field).toBe('matchmaking.ruleSet');
    expect((await admin.get('/v1/ladders/later')).body.matchmaking.ruleSet).toBeUndefined();
    expect((await admin.del('/v1/tickets/later-1')).status).toBe(200);
    expect((await admin.patch('/v1/ladders/later', { matchmaking: { ruleSet: squads } })).status).toBe(200);
  });

  it('tickets: attributes and roles are checked against the rule set, 400 naming the field', async () => {
    expect((await admin.post('/v1/ladders', { id: 'checked', system: 'elo', matchmaking: { ruleSet: duel } })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'role-checked', system: 'elo', matchmaking: { ruleSet: squads } })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'no-rules', system: 'elo' })).status).toBe(201);
    const cases: Array<[string, unknown, string]> = [
      ['checked', { players: [{ id: 'a', pings: { eu: 20 }, attributes: { skill: 5 } }] }, 'players[0].attributes.mode'],
      ['checked', { players: [{ id: 'a', pings: { eu: 20 }, attributes: { mode: 'ctf', skill: 'high' } }] }, 'players[0].attributes.skill'],
      ['checked', { players: [{ id: 'a', pings: { eu: 20 }, attributes: { mode: 'ctf', rank: 3 } }] }, 'players[0].attributes.rank'],
      [
        'checked',
        {
          players: [
            { id: 'a', pings: { eu: 20 }, attributes: { mode: 'ctf' } },
            { id: 'b', pings: { eu: 20 }, attributes: { mode: 'ctf' } },
          ],
        },
        'players',
      ],
      ['checked', { players: [{ id: 'a', pings: { eu: 20 }, attributes: { mode: 'ctf' }, filter: { within: 5 } }] }, 'players[0].filter'],
      ['checked', { mode: '1v1', players: [{ id: 'a', pings: { eu: 20 }, attributes: { mode: 'ctf' } }] }, 'mode'],
      ['role-checked', { players: [{ id: 'a', pings: { eu: 20 }, roles: ['tank', 'mage'] }] }, 'players[0].roles[1]'],
      ['no-rules', { players: [{ id: 'a', pings: { eu: 20 }, attributes: { skill: 3 } }] }, 'players[0].attributes'],
      ['no-rules', { players: [{ id: 'a', pings: { eu: 20 }, roles: ['tank'] }] }, 'players[0].roles'],
    ];
    for (const [ladder, body, field] of cases) {
      const reply = await admin.post(`/v1/ladders/${ladder}/tickets`, body);
      expect({ ladder, field: reply.body.error?.field, status: reply.status }).toEqual({ ladder, field, status: 400 });
    }
    expect((await admin.get('/v1/ladders/checked/queue')).body.waiting).toBe(0);
  });

  it('the pass runs the rule set in the worker; the assignment names the teams (ticket read, queue, server-sent event)', async () => {
    expect((await admin.post('/v1/ladders', { id: 'arena', system: 'elo', matchmaking: { ruleSet: duel } })).status).toBe(201);
    const events: string[] = [];
    const controller = new AbortController();
    const stream = await fetch(`${server.url}/v1/ladders/arena/assignments`, { signal: controller.signal, headers: { authorization: `Bearer ${server.admin}` } });
    const reader = stream.body!.getReader();
    const reading = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          events.push(new TextDecoder().decode(value));
        }
      } catch {
        // Aborted.
      }
    })();
    const ticket = (id: string, player: string, mode: string, skill?: number) =>
      admin.post('/v1/ladders/arena/tickets', { id, players: [{ id: player, pings: { eu: 20, na: 90 }, attributes: { mode, ...(skill !== undefined ? { skill } : {}) } }] });
    // a and b: same mode, skills 5 apart; c: another mode; d: 65 or more from a and b.
    for (const reply of await Promise.all([
      ticket('arena-a', 'a', 'ctf', 20),
      ticket('arena-b', 'b', 'ctf', 25),
      ticket('arena-c', 'c', 'dm', 20),
      ticket('arena-d', 'd', 'ctf', 90),
    ]))
      expect(reply.status).toBe(201);
    await server.matchmakeNow();
    const matchmaker = server.matchmaking.matchmakerOf('arena')!;
    expect(matchmaker.threadId).not.toBe(threadId);
    const a = (await admin.get('/v1/tickets/arena-a')).body;
    const b = (await admin.get('/v1/tickets/arena-b')).body;
    expect([a.status, b.status]).toEqual(['matched', 'matched']);
    expect(a.match.id).toBe(b.match.id);
    expect(a.match.teamNames).toEqual(['red', 'blue']);
    expect(a.match.teams.flat().sort()).toEqual(['arena-a', 'arena-b']);
    expect(a.match.teams[a.match.team]).toEqual(['arena-a']);
    expect(a.match.region).toBe('eu');
    expect(a.match.roles).toBeUndefined();
    for (const id of ['arena-c', 'arena-d']) expect((await admin.get(`/v1/tickets/${id}`)).body.status).toBe('waiting');
    const queue = (await admin.get('/v1/ladders/arena/queue')).body;
    expect(queue.waiting).toBe(2);
    expect(queue.recent[0]).toMatchObject({ teamNames: ['red', 'blue'], teams: a.match.teams });
    expect(queue.recent[0].quality).toBeUndefined();
    for (let i = 0; i < 100 && !events.join('').includes('event: assignment'); i++) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await reading;
    const data = events
      .join('')
      .split('\n')
      .find((line) => line.startsWith('data:') && line.includes('arena-a'));
    expect(JSON.parse(data!.slice('data:'.length))).toMatchObject({ teamNames: ['red', 'blue'] });
  });

  it('role slots: each squad gets a tank and a healer, the assignment says who plays what, and roles survive a rebuild from the store', async () => {
    expect((await admin.post('/v1/ladders', { id: 'roles', system: 'elo', matchmaking: { ruleSet: squads } })).status).toBe(201);
    const accepts: Record<string, string[]> = { p1: ['tank'], p2: ['tank'], p3: ['healer'], p4: ['tank', 'healer'] };
    const queue = async (player: string) =>
      expect((await admin.post('/v1/ladders/roles/tickets', { id: `roles-${player}`, players: [{ id: player, pings: { eu: 20 }, roles: accepts[player] }] })).status).toBe(201);
    // Two tickets wait through a turn (two squads need four players); then the worker stops, and the next
    // turn builds the matchmaker again from the ticket store: their roles must come back from the stored tickets.
    await queue('p1');
    await queue('p2');
    expect(await server.matchmakeNow()).toBe(0);
    const before = server.matchmaking.matchmakerOf('roles')!;
    expect(before.size).toBe(2);
    await server.matchmaking.host.worker!.terminate();
    expect(before.alive).toBe(false);
    await queue('p3');
    await queue('p4');
    await server.matchmakeNow();
    const read = (await admin.get('/v1/tickets/roles-p1')).body;
    expect(read.status).toBe('matched');
    expect(read.match.teamNames).toEqual(['squad_1', 'squad_2']);
    expect(read.match.players.flat().sort()).toEqual(['p1', 'p2', 'p3', 'p4']);
    const roles = read.match.roles as Record<string, string>;
    for (const [player, role] of Object.entries(roles)) expect(accepts[player]).toContain(role);
    for (const team of read.match.players as string[][]) expect(team.map((p) => roles[p]).sort()).toEqual(['healer', 'tank']);
  });

  it('a rule set set on an idle queue takes over from the team-rank matchmaker at the next turn', async () => {
    expect((await admin.post('/v1/ladders', { id: 'switch', system: 'elo', matchmaking: { teamSize: 1 } })).status).toBe(201);
    for (const p of ['x', 'y'])
      expect((await admin.post('/v1/ladders/switch/tickets', { id: `switch-${p}`, players: [{ id: p, percentile: 50, pings: { eu: 20 } }] })).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/switch-x')).body.match.teamNames).toBeUndefined();
    expect((await admin.patch('/v1/ladders/switch', { matchmaking: { ruleSet: duel } })).status).toBe(200);
    for (const p of ['x', 'y'])
      expect((await admin.post('/v1/ladders/switch/tickets', { id: `switch-2${p}`, players: [{ id: p, pings: { eu: 20 }, attributes: { mode: 'ctf' } }] })).status).toBe(201);
    await server.matchmakeNow();
    const read = (await admin.get('/v1/tickets/switch-2x')).body;
    expect(read.status).toBe('matched');
    expect(read.match.teamNames).toEqual(['red', 'blue']);
  });
});
