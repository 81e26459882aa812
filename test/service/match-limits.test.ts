/**
 * Per-system bounds on one match, at the HTTP edge: GET /v1/systems states
 * them, and a whr ladder refuses a match beyond them with a 400 naming the
 * field, before anything is rated; within them it rates.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { client, startTestServer, type TestServer } from './helpers.js';

const teams = (count: number, size: number) => Array.from({ length: count }, (_, t) => ({ players: Array.from({ length: size }, (_, i) => `t${t}p${i}`), rank: t + 1 }));

describe('match limits per system', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.dispose();
  });

  it("GET /v1/systems states each system's bounds; a whr match beyond them is a 400 naming the field, and nothing is rated", async () => {
    const server = await startTestServer({ backend: 'pglite' });
    servers.push(server);
    const api = client(server.url, server.admin);
    const systems = (await api.get('/v1/systems')).body.systems as Array<{ name: string; limits: { teams: number; playersPerTeam: number; players: number } }>;
    expect(systems.find((s) => s.name === 'whr')!.limits).toEqual({ teams: 64, playersPerTeam: 64, players: 256 });
    expect(systems.find((s) => s.name === 'glicko2')!.limits).toEqual({ teams: 64, playersPerTeam: 64, players: 4096 });
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr' })).status).toBe(201);
    const big = await api.post('/v1/ladders/w/matches', { teams: teams(64, 64) });
    expect(big.status).toBe(400);
    expect(big.body.error.field).toBe('teams');
    expect(big.body.error.message).toContain('256');
    const ffa = await api.post('/v1/ladders/w/matches', { teams: teams(64, 1) });
    expect(ffa.status, JSON.stringify(ffa.body)).toBe(201);
    expect(ffa.body.match.seq).toBe(1);
  });
});
