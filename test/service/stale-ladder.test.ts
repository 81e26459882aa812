/**
 * A ladder deleted and created again by another instance is another ladder:
 * an instance that still has the old definition cached (for up to 5 s) must
 * not rate the new ladder's matches with the old system. Two instances on
 * one PostgreSQL schema and Redis prefix; the stored states must equal the
 * core's replay of the new ladder's matches under its own system, and
 * `rebuild` must find no difference.
 */
import { afterAll, expect, it } from 'vitest';
import { parseMatch } from 'ladder-core/core/match.js';
import { Replay } from 'ladder-core/core/replay.js';
import { createSystem } from 'ladder-core/core/systems.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import { cleanupShared, client, startTestServer, type TestServer } from './helpers.js';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.dispose();
  await cleanupShared(servers[0]?.schema, servers[0]?.prefix);
});

const duel = (i: number, a: string, b: string) => ({
  id: `m${i}`,
  at: Date.now() - 60_000 + i,
  teams: [
    { players: [a], rank: 1 },
    { players: [b], rank: 2 },
  ],
});

it.each([
  ['had written to it (its player cache at a version of the old row)', true],
  ['had only read its definition', false],
])('rates the re-created ladder under its new system on an instance that %s', { timeout: 60_000 }, async (_what, wrote) => {
  if (servers.length === 0) {
    const first = await startTestServer({ backend: 'postgres+redis' });
    servers.push(first, await startTestServer({ backend: 'postgres+redis', schema: first.schema, prefix: first.prefix }));
  }
  const [a, b] = [client(servers[0]!.url, servers[0]!.admin), client(servers[1]!.url, servers[1]!.admin)];
  const id = wrote ? 'stale-w' : 'stale-r';
  expect((await a.post('/v1/ladders', { id, system: 'elo', public: true })).status).toBe(201);
  if (wrote) expect((await a.post(`/v1/ladders/${id}/matches`, duel(0, 'x', 'y'))).status).toBe(201);
  else expect((await a.get(`/v1/ladders/${id}`)).status).toBe(200);

  // The other instance deletes it and creates it again with another system.
  expect((await b.del(`/v1/ladders/${id}`)).status).toBe(200);
  expect((await b.post('/v1/ladders', { id, system: 'glicko2', public: true })).status).toBe(201);

  // The first instance, whose cached definition still says elo, takes the next matches.
  const matches = [duel(1, 'ann', 'bob'), duel(2, 'bob', 'cid'), duel(3, 'cid', 'ann')];
  for (const match of matches) {
    const reply = await a.post(`/v1/ladders/${id}/matches`, match);
    expect(reply.status, reply.text).toBe(201);
  }
  const replay = new Replay(createSystem('glicko2'));
  for (const match of matches) replay.push(parseMatch(match));
  for (const [player, state] of replay.players) {
    const stored = (await b.get(`/v1/ladders/${id}/players/${player}`)).body;
    expect(stored.matches, player).toBe(state.matches);
    expect(stored.rating, player).toBeCloseTo(state.rating, 9);
    expect(stored.rd, player).toBeCloseTo(state.rd!, 9);
  }
  expect((await rebuildLadder(servers[1]!.db, await servers[1]!.ladders.get(id))).differences).toEqual([]);
  // And the first instance now serves the new definition.
  expect((await a.get(`/v1/ladders/${id}`)).body.system).toBe('glicko2');
});
