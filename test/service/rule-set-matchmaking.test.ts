/**
 * Rule-set queues in the service, on both backends: a ladder's
 * `matchmaking.ruleSet` is checked (400 naming the JSON path), shown, and
 * changed only while the queue is empty; tickets carry attributes and roles
 * checked against the rule set; the pass forms matches by the rule set and
 * the assignment names the teams and the roles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, cleanupShared, client, startTestServer, type TestServer } from './helpers.js';

/** 1 against 1 of the same mode, skills within 10. */
const duel = {
  name: 'duel',
  ruleLanguageVersion: '1.0',
  playerAttributes: [
    { name: 'skill', type: 'number', default: 10 },
    { name: 'mode', type: 'string' },
  ],
  teams: [
    { name: 'red', minPlayers: 1, maxPlayers: 1 },
    { name: 'blue', minPlayers: 1, maxPlayers: 1 },
  ],
  rules: [
    { name: 'SameMode', type: 'batchDistance', batchAttribute: 'mode' },
    { name: 'CloseSkill', type: 'distance', measurements: ['max(flatten(teams[*].players.attributes[skill]))'], referenceValue: 'min(flatten(teams[*].players.attributes[skill]))', maxDistance: 10 },
  ],
};

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

  beforeAll(async () => {
    server = await startTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } });
    admin = client(server.url, server.admin);
  });
  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  it('a rule set is checked on create (400 naming the JSON path), stored and shown', async () => {
    const created = await admin.post('/v1/ladders', { id: 'duel', system: 'elo', matchmaking: { ruleSet: duel } });
    expect(created.status).toBe(201);
    expect(created.body.matchmaking.ruleSet).toEqual(duel);
    expect((await admin.get('/v1/ladders/duel')).body.matchmaking.ruleSet).toEqual(duel);

    const badFunction = structuredClone(duel);
    badFunction.rules[1]!.measurements = ['mean(flatten(teams[*].players.attributes[skill]))'];
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
});
