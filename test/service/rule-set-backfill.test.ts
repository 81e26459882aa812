/**
 * Backfill on rule-set ladders, on both backends (PGlite with the in-process
 * queue, PostgreSQL with Redis): the request names the match's players per
 * team with their attributes, pings and roles; the worker's rule-set queue
 * fills the open slots so that the whole match obeys the rule set; the
 * answer, the ticket and the assignment stream say which ticket joined which
 * team (with the team names and roles); a partly filled request survives a
 * rebuild of the matchmaker from the shared state, newcomers' attributes
 * included; bad requests are 400 naming the field.
 */
import { describe, expect, it } from 'vitest';
import { followAssignments } from '../support/assignments.js';
import { closeSkill } from '../support/rule-sets.js';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two teams of a tank and a healer, skills within 10, every ping under 100 ms; backfills first. */
const squads = (backfillPriority: 'high' | 'low' = 'high') => ({
  name: 'squads',
  ruleLanguageVersion: '1.0',
  playerAttributes: [{ name: 'skill', type: 'number', default: 10 }],
  algorithm: { backfillPriority },
  teams: [
    { name: 'red', minPlayers: 2, maxPlayers: 2, roles: { tank: 1, healer: 1 } },
    { name: 'blue', minPlayers: 2, maxPlayers: 2, roles: { tank: 1, healer: 1 } },
  ],
  rules: [closeSkill, { name: 'FastConnection', type: 'latency', maxLatency: 100 }],
});

/** One team of up to four, skills within 10 (without roles or latency). */
const crowd = {
  name: 'crowd',
  ruleLanguageVersion: '1.0',
  playerAttributes: [{ name: 'skill', type: 'number', default: 10 }],
  algorithm: { backfillPriority: 'high' },
  teams: [{ name: 'all', minPlayers: 2, maxPlayers: 4 }],
  rules: [closeSkill],
};

describe.each(BACKENDS)('rule-set backfill on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  let anon: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
    anon = client(server.url);
  });

  const ticket = (ladder: string, id: string, skill: number, roles: string[], eu = 30) =>
    admin.post(`/v1/ladders/${ladder}/tickets`, { id, players: [{ id: `${id}-p`, pings: { eu, na: 200 }, attributes: { skill }, roles }] });

  it('fills the open slot so the whole match obeys the rule set; answer, ticket and stream name the team and the roles', async () => {
    expect((await admin.post('/v1/ladders', { id: 'rsb', system: 'elo', public: true, matchmaking: { ruleSet: squads() } })).status).toBe(201);
    const stream = followAssignments<Record<string, unknown>>(server.url, 'rsb');
    await stream.ready;
    const created = await admin.post('/v1/ladders/rsb/backfills', {
      declared: true,
      match: 'live-rs',
      region: 'eu',
      teams: [['r1', 'r2'], ['b1']],
      players: {
        r1: { attributes: { skill: 20 }, pings: { eu: 40 }, roles: ['tank'] },
        r2: { attributes: { skill: 25 }, pings: { eu: 40 }, roles: ['healer'] },
        b1: { attributes: { skill: 18 }, pings: { eu: 60 }, roles: ['tank'] },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'waiting', match: 'live-rs', teamNames: ['red', 'blue'], teams: [['r1', 'r2'], ['b1']], open: [0, 1], added: [] });
    const id = created.body.id as string;
    // Too far in skill; too slow in the match's region (fast elsewhere); a second tank; and one that fits.
    expect((await ticket('rsb', 'far', 40, ['healer'])).status).toBe(201);
    expect(
      (await admin.post('/v1/ladders/rsb/tickets', { id: 'slow', players: [{ id: 'slow-p', pings: { eu: 150, na: 10 }, attributes: { skill: 22 }, roles: ['healer'] }] })).status,
    ).toBe(201);
    expect((await ticket('rsb', 'tank', 22, ['tank'])).status).toBe(201);
    expect((await ticket('rsb', 'heal', 22, ['healer', 'tank'])).status).toBe(201);
    expect(await server.matchmakeNow()).toBe(1);

    const filled = (await anon.get(`/v1/backfills/${id}`)).body;
    expect(filled).toMatchObject({
      status: 'filled',
      teamNames: ['red', 'blue'],
      teams: [
        ['r1', 'r2'],
        ['b1', 'heal-p'],
      ],
      open: [0, 0],
      roles: { r1: 'tank', r2: 'healer', b1: 'tank', 'heal-p': 'healer' },
    });
    expect(filled.added).toEqual([{ ticket: 'heal', team: 1, players: ['heal-p'], at: expect.any(String) }]);
    const read = (await anon.get('/v1/tickets/heal')).body;
    expect(read.match).toMatchObject({
      id: 'live-rs',
      team: 1,
      region: 'eu',
      backfill: id,
      teamNames: ['red', 'blue'],
      roles: { 'heal-p': 'healer' },
      teams: [[], ['heal']],
    });
    for (const other of ['far', 'slow', 'tank']) expect((await anon.get(`/v1/tickets/${other}`)).body.status).toBe('waiting');
    for (let i = 0; i < 100 && stream.events.length === 0; i++) await sleep(20);
    await stream.stop();
    expect(stream.events[0]).toMatchObject({ matchId: 'live-rs', backfill: id, teamNames: ['red', 'blue'], teams: [[], ['heal']], roles: { 'heal-p': 'healer' } });
  });

  it('backfillPriority low: the new match forms first, the request takes what is left', async () => {
    expect((await admin.post('/v1/ladders', { id: 'rsb-low', system: 'elo', matchmaking: { ruleSet: squads('low') } })).status).toBe(201);
    const created = await admin.post('/v1/ladders/rsb-low/backfills', {
      declared: true,
      match: 'live-low',
      region: 'eu',
      teams: [['r1', 'r2'], ['b1']],
      players: { r1: { pings: { eu: 40 }, roles: ['tank'] }, r2: { pings: { eu: 40 }, roles: ['healer'] }, b1: { pings: { eu: 40 }, roles: ['tank'] } },
    });
    expect(created.status).toBe(201);
    for (const [id, roles] of [
      ['l1', ['tank']],
      ['l2', ['healer']],
      ['l3', ['tank']],
      ['l4', ['healer']],
      ['l5', ['healer']],
    ] as const)
      expect((await ticket('rsb-low', id, 10, [...roles])).status).toBe(201);
    await server.matchmakeNow();
    const statuses = await Promise.all(['l1', 'l2', 'l3', 'l4', 'l5'].map(async (t) => (await admin.get(`/v1/tickets/${t}`)).body.match?.backfill ?? 'match'));
    // The four oldest form the new match; the fifth fills the backfill.
    expect(statuses).toEqual(['match', 'match', 'match', 'match', created.body.id]);
  });

  it('a partly filled request survives a rebuild of the matchmaker: its newcomers’ attributes still bind later ones', async () => {
    expect((await admin.post('/v1/ladders', { id: 'rsb-crowd', system: 'elo', matchmaking: { ruleSet: crowd } })).status).toBe(201);
    const skill = (ladder: string, id: string, value: number) =>
      admin.post(`/v1/ladders/${ladder}/tickets`, { id, players: [{ id: `${id}-p`, pings: { eu: 20 }, attributes: { skill: value } }] });
    const created = await admin.post('/v1/ladders/rsb-crowd/backfills', {
      declared: true,
      match: 'live-crowd',
      region: 'eu',
      teams: [['c1']],
      players: { c1: { attributes: { skill: 20 } } },
    });
    expect(created.status).toBe(201);
    expect(created.body.open).toEqual([3]);
    // 28 fits (8 from 20); it then binds: 12 would be within 10 of 20 but 16 from 28.
    expect((await skill('rsb-crowd', 'n1', 28)).status).toBe(201);
    expect(await server.matchmakeNow()).toBe(1);
    expect((await admin.get(`/v1/backfills/${created.body.id}`)).body).toMatchObject({ status: 'waiting', teams: [['c1', 'n1-p']], open: [2] });
    // The worker goes; the next turn rebuilds the queue and the open request from the store.
    await server.matchmaking.host.worker!.terminate();
    expect((await skill('rsb-crowd', 'low', 12)).status).toBe(201);
    expect((await skill('rsb-crowd', 'mid', 24)).status).toBe(201);
    await server.matchmakeNow();
    const after = (await admin.get(`/v1/backfills/${created.body.id}`)).body;
    expect(after).toMatchObject({ status: 'waiting', teams: [['c1', 'n1-p', 'mid-p']], open: [1] });
    expect((await admin.get('/v1/tickets/low')).body.status).toBe('waiting');
  });

  it('a match the matchmaker formed can ask for players under the same rule set', async () => {
    expect((await admin.post('/v1/ladders', { id: 'rsb-formed', system: 'elo', matchmaking: { ruleSet: crowd } })).status).toBe(201);
    for (const id of ['f1', 'f2'])
      expect((await admin.post('/v1/ladders/rsb-formed/tickets', { id, players: [{ id: `${id}-p`, pings: { eu: 20 }, attributes: { skill: 30 } }] })).status).toBe(201);
    await server.matchmakeNow();
    const formed = (await admin.get('/v1/tickets/f1')).body.match;
    expect(formed.players[0]).toHaveLength(2);
    const created = await admin.post('/v1/ladders/rsb-formed/backfills', {
      match: formed.id,
      region: 'eu',
      teams: [['f1-p']],
      players: { 'f1-p': { attributes: { skill: 30 } } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ declared: false, teamNames: ['all'], open: [3] });
    const wrong = await admin.post('/v1/ladders/rsb-formed/backfills', { match: 'nobody-formed-this', region: 'eu', teams: [['x']] });
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.field).toBe('match');
  });

  it('bad requests are 400 naming the field', async () => {
    expect((await admin.post('/v1/ladders', { id: 'rsb-bad', system: 'elo', matchmaking: { ruleSet: squads() } })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'rsb-plain', system: 'elo', matchmaking: { teamSize: 1 } })).status).toBe(201);
    const base = { declared: true, match: 'live-bad', region: 'eu', teams: [['a'], []], players: { a: { pings: { eu: 20 } } } };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['rsb-bad', { ...base, teamSize: 2 }, 'teamSize'],
      ['rsb-bad', { ...base, filter: { within: 5 } }, 'filter'],
      ['rsb-bad', { ...base, players: { a: { pings: { eu: 20 }, filter: { within: 5 } } } }, 'players.a.filter'],
      ['rsb-bad', { ...base, teamNames: ['red', 'green'] }, 'teamNames[1]'],
      ['rsb-bad', { ...base, teams: [['a'], [], []] }, 'teams'],
      ['rsb-bad', { ...base, teams: [['a', 'b', 'c'], []], players: { a: { pings: { eu: 20 } }, b: { pings: { eu: 20 } }, c: { pings: { eu: 20 } } } }, 'teams[0]'],
      ['rsb-bad', { ...base, players: { a: { pings: { eu: 20 }, attributes: { skill: 'high' } } } }, 'players.a.attributes.skill'],
      ['rsb-bad', { ...base, players: { a: { pings: { eu: 20 }, roles: ['mage'] } } }, 'players.a.roles[0]'],
      ['rsb-bad', { ...base, players: {} }, 'players.a.pings'],
      ['rsb-plain', { ...base, players: { a: { attributes: { skill: 1 } } } }, 'players.a.attributes'],
      ['rsb-plain', { ...base, players: {}, teamNames: ['red', 'blue'] }, 'teamNames'],
    ];
    for (const [ladder, body, field] of cases) {
      const reply = await admin.post(`/v1/ladders/${ladder}/backfills`, body);
      expect({ ladder, field: reply.body.error?.field, status: reply.status }).toEqual({ ladder, field, status: 400 });
    }
  });
});
