/**
 * No lost update: concurrent submissions that share players give the same
 * ratings as applying them one after another in the order the server
 * sequenced them, on one instance and on two instances sharing one
 * PostgreSQL database and one Redis.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createSystem } from 'ladder-core/core/systems.js';
import { Replay } from 'ladder-core/core/replay.js';
import { parseMatch } from 'ladder-core/core/match.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import { BACKENDS, cleanupShared, client, startTestServer, type TestServer } from './helpers.js';

function generateMatches(count: number, seed: number) {
  const random = mulberry32(seed);
  // Recent times, so every player is inside the leaderboard window.
  const start = Date.now() - count * 60_000;
  return Array.from({ length: count }, (_, i) => {
    // Eight players only, so nearly every pair of concurrent matches shares someone.
    const a = Math.floor(random() * 8);
    const b = (a + 1 + Math.floor(random() * 7)) % 8;
    return {
      id: `c${i}`,
      at: start + i * 60_000,
      teams: [
        { players: [`p${a}`], rank: random() < 0.5 ? 1 : 2 },
        { players: [`p${b}`], rank: random() < 0.5 ? 1 : 2 },
      ],
    };
  });
}

async function submitAll(targets: Array<ReturnType<typeof client>>, matches: ReturnType<typeof generateMatches>, concurrency: number) {
  const seqOf = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (next < matches.length) {
        const match = matches[next++]!;
        const target = targets[worker % targets.length]!;
        const reply = await target.post('/v1/ladders/race/matches', match, { 'idempotency-key': match.id });
        expect(reply.status).toBe(201);
        seqOf.set(match.id, reply.body.match.seq);
      }
    }),
  );
  return seqOf;
}

/** The core's own replay of the matches in the server's sequence order. */
function expectedStates(matches: ReturnType<typeof generateMatches>, seqOf: Map<string, number>) {
  const ordered = [...matches].sort((x, y) => seqOf.get(x.id)! - seqOf.get(y.id)!);
  const replay = new Replay(createSystem('glicko2'));
  for (const match of ordered) replay.push(parseMatch(match));
  return replay.players;
}

async function expectStored(api: ReturnType<typeof client>, expected: Map<string, { rating: number; rd?: number; matches: number }>) {
  for (const [id, state] of expected) {
    const stored = (await api.get(`/v1/ladders/race/players/${id}`)).body;
    expect(stored.matches).toBe(state.matches);
    expect(stored.rating).toBeCloseTo(state.rating, 9);
    expect(stored.rd).toBeCloseTo(state.rd!, 9);
  }
}

describe('concurrent submissions sharing players', () => {
  const servers: TestServer[] = [];
  /** Two instances sharing one PostgreSQL schema and one Redis prefix, with an admin client each. */
  async function twoInstances() {
    const first = await startTestServer({ backend: 'postgres+redis' });
    servers.push(first);
    const second = await startTestServer({ backend: 'postgres+redis', schema: first.schema, prefix: first.prefix });
    servers.push(second);
    return { first, second, one: client(first.url, first.admin), two: client(second.url, second.admin) };
  }
  afterAll(async () => {
    for (const s of servers) await s.dispose();
    await cleanupShared(servers[0]?.schema, servers[0]?.prefix);
  });

  it('one instance on PGlite: equal to a sequential replay', async () => {
    const server = await startTestServer({ backend: 'pglite' });
    servers.push(server);
    const api = client(server.url, server.admin);
    await api.post('/v1/ladders', { id: 'race', system: 'glicko2' });
    const matches = generateMatches(240, 7);
    const seqOf = await submitAll([api], matches, 24);
    expect(new Set(seqOf.values()).size).toBe(matches.length);
    await expectStored(api, expectedStates(matches, seqOf));
    const report = await rebuildLadder(server.db, await server.ladders.get('race'));
    expect(report.differences).toEqual([]);
    expect(report.matches).toBe(240);
  });

  it('two instances on one PostgreSQL and Redis: equal to a sequential replay, one leaderboard', async () => {
    const { first, one, two } = await twoInstances();
    await one.post('/v1/ladders', { id: 'race', system: 'glicko2', standings: { placementMatches: 1 } });
    const matches = generateMatches(300, 11);
    const seqOf = await submitAll([one, two], matches, 32);
    expect([...seqOf.values()].sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    const expected = expectedStates(matches, seqOf);
    await expectStored(one, expected);
    await expectStored(two, expected);
    const boardOne = (await one.get('/v1/ladders/race/leaderboard?limit=20')).body;
    const boardTwo = (await two.get('/v1/ladders/race/leaderboard?limit=20')).body;
    expect(boardTwo).toEqual(boardOne);
    const order = [...expected].sort((x, y) => y[1].rating - x[1].rating).map(([id]) => id);
    expect(boardOne.entries.map((e: { id: string }) => e.id)).toEqual(order);
    const report = await rebuildLadder(first.db, await first.ladders.get('race'));
    expect(report.differences).toEqual([]);
  });

  it('two instances taking turns: each notices the other moved the ladder and rates from the stored states', async () => {
    const { first, second, one, two } = await twoInstances();
    await one.post('/v1/ladders', { id: 'race', system: 'glicko2' });
    const matches = generateMatches(40, 13);
    const seqOf = new Map<string, number>();
    // Strictly alternating and sequential: every submission but the first finds its instance's cache one version behind,
    // noticed either when reading players it has not cached or by the guarded write (then the locked transaction).
    for (const [i, match] of matches.entries()) {
      const reply = await (i % 2 === 0 ? one : two).post('/v1/ladders/race/matches', match, { 'idempotency-key': match.id });
      expect(reply.status).toBe(201);
      seqOf.set(match.id, reply.body.match.seq);
    }
    expect(matches.map((m) => seqOf.get(m.id))).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    await expectStored(one, expectedStates(matches, seqOf));
    // With this seed some submissions find all their players cached, so the guarded write itself must refuse the stale state.
    expect(first.writer.writes.locked + second.writer.writes.locked).toBeGreaterThan(0);
    // Once only one instance writes, its batches take the one-statement path again.
    const fastBefore = first.writer.writes.fast;
    const more = generateMatches(5, 17).map((m) => ({ ...m, id: `more-${m.id}` }));
    for (const match of more) expect((await one.post('/v1/ladders/race/matches', match, { 'idempotency-key': match.id })).status).toBe(201);
    expect(first.writer.writes.fast).toBeGreaterThan(fastBefore);
    expect((await rebuildLadder(first.db, await first.ladders.get('race'))).differences).toEqual([]);
  });

  for (const backend of BACKENDS) {
    it(`${backend}: a write that bumps ladders.version behind the writer's back is seen by the next match`, async () => {
      const server = await startTestServer({ backend });
      servers.push(server);
      const api = client(server.url, server.admin);
      await api.post('/v1/ladders', { id: 'race', system: 'glicko2' });
      const duel = (i: number) => ({
        teams: [
          { players: ['p0'], rank: 1 },
          { players: ['p1'], rank: 2 },
        ],
        at: Date.now() - 1000 + i,
      });
      for (let i = 0; i < 3; i++) expect((await api.post('/v1/ladders/race/matches', duel(i))).status).toBe(201);
      // What rebuild --fix or an operator does: change a player and add one to the version in one transaction.
      await server.db.transaction(async (tx) => {
        await tx.query("UPDATE players SET rating = 1234.5 WHERE ladder = 'race' AND id = 'p0'");
        await tx.query("UPDATE ladders SET version = version + 1 WHERE id = 'race'");
      });
      const reply = await api.post('/v1/ladders/race/matches', duel(3));
      expect(reply.status).toBe(201);
      expect(reply.body.players.find((p: { id: string }) => p.id === 'p0').before.rating).toBe(1234.5);
    });
  }

  it('a key sent again while its first batch is still in flight is rated once and answered with the same bytes', async () => {
    const server = await startTestServer({ backend: 'postgres+redis' });
    servers.push(server);
    const api = client(server.url, server.admin);
    await api.post('/v1/ladders', { id: 'race', system: 'glicko2' });
    const matches = generateMatches(120, 19);
    // Each match twice, the copy a few submissions later, 32 requests in flight: copies land in a later,
    // pipelined batch while the first one's statement has not committed.
    const sends = matches
      .flatMap((match, i) => [
        { match, order: i },
        { match, order: i + 24.5 },
      ])
      .sort((a, b) => a.order - b.order);
    const replies = new Map<string, string[]>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < sends.length) {
          const { match } = sends[next++]!;
          const reply = await api.post('/v1/ladders/race/matches', match, { 'idempotency-key': match.id });
          expect(reply.status).toBe(201);
          replies.set(match.id, [...(replies.get(match.id) ?? []), reply.text]);
        }
      }),
    );
    for (const texts of replies.values()) expect(texts[1]).toBe(texts[0]);
    const seqOf = new Map([...replies].map(([id, texts]) => [id, JSON.parse(texts[0]!).match.seq as number]));
    expect([...seqOf.values()].sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    await expectStored(api, expectedStates(matches, seqOf));
    expect((await rebuildLadder(server.db, await server.ladders.get('race'))).differences).toEqual([]);
  });
});
