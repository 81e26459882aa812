/**
 * Live-ladder features on both backends: voiding and correcting matches
 * (the stored states then equal a replay of the corrected log, and `rebuild`
 * agrees), seasons with soft resets and frozen standings, predictions, and
 * changing or deleting a ladder.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMatch, type Match } from 'ladder-core/core/match.js';
import { createSystem, type PlayerState, type SystemName } from 'ladder-core/core/systems.js';
import { defaultCorrectionMode } from '../../src/service/corrections.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import { replayStored } from '../../src/service/replay.js';
import { applyReset } from '../../src/service/seasons.js';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';
import { type Body, log } from './match-log.js';

/** The states a replay of `bodies` (in order) gives. */
function replay(system: SystemName, bodies: Body[]): Map<string, PlayerState> {
  return replayStored(
    createSystem(system),
    bodies.map((body, i) => ({ seq: i + 1, id: body.id, at: body.at, round: null, body: parseMatch(body) as Match })),
  );
}

function expectStates(server: TestServer, ladder: string, expected: Map<string, PlayerState>) {
  return (async () => {
    const rows = await server.db.query<{ id: string; rating: number; rd: number | null; matches: number; last_at: number | null }>(
      'SELECT id, rating, rd, matches, last_at FROM players WHERE ladder = $1',
      [ladder],
    );
    expect(rows.length).toBe(expected.size);
    for (const row of rows) {
      const want = expected.get(row.id)!;
      expect(row.rating, row.id).toBeCloseTo(want.rating, 9);
      if (want.rd !== undefined) expect(row.rd!, row.id).toBeCloseTo(want.rd, 9);
      expect(row.matches, row.id).toBe(want.matches);
      expect(row.last_at ?? undefined, row.id).toBe(want.lastAt);
    }
  })();
}

/** Every backend with both ways of writing a correction; the tests that make no correction run with the backend's default only. */
const CASES = BACKENDS.flatMap((backend) => (['phased', 'transaction'] as const).map((mode) => [backend, mode] as const));

describe.each(CASES)('live-ladder features on %s, corrections %s', (backend, mode) => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let anon: ReturnType<typeof client>;
  const usual = mode === defaultCorrectionMode({ kind: backend === 'pglite' ? 'pglite' : 'postgres' }) ? it : it.skip;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 }, corrections: mode } }, async (started) => {
    server = started;
    api = client(server.url, server.admin);
    anon = client(server.url);
  });

  const post = async (ladder: string, bodies: Body[]) => {
    for (const body of bodies) expect((await api.post(`/v1/ladders/${ladder}/matches`, body)).status).toBe(201);
  };

  it('voids a match: it stays listed, marked void, never counts, later matches are re-rated; a second void changes nothing', async () => {
    await api.post('/v1/ladders', { id: 'v-g2', system: 'glicko2', public: true, standings: { placementMatches: 0 } });
    const bodies = log(40, 1);
    await post('v-g2', bodies);
    const voided = await api.post('/v1/ladders/v-g2/matches/m10/void', { reason: 'wrong winner reported' });
    expect(voided.status).toBe(200);
    expect(voided.body.changed).toBe(true);
    expect(voided.body.rerated).toBeGreaterThan(0);
    const ids = new Set(voided.body.players.map((p: { id: string }) => p.id));
    for (const id of bodies[10]!.teams.flatMap((t) => t.players)) expect(ids.has(id)).toBe(true);
    await expectStates(
      server,
      'v-g2',
      replay(
        'glicko2',
        bodies.filter((b) => b.id !== 'm10'),
      ),
    );
    const report = await rebuildLadder(server.db, await server.ladders.get('v-g2'));
    expect(report.differences).toEqual([]);
    expect(report.matches).toBe(39);
    expect((await anon.get('/v1/ladders/v-g2')).body.matches).toBe(39);
    const listed = (await anon.get('/v1/ladders/v-g2/matches?limit=100')).body.matches.find((m: { id: string }) => m.id === 'm10');
    expect(listed.void.reason).toBe('wrong winner reported');
    const player = bodies[10]!.teams[0]!.players[0]!;
    const history = (await anon.get(`/v1/ladders/v-g2/players/${player}/history?limit=100`)).body.history;
    expect(history.find((h: { matchId: string }) => h.matchId === 'm10').void).toBe(true);
    const again = await api.post('/v1/ladders/v-g2/matches/m10/void', { reason: 'again' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ changed: false, players: [] });
    expect((await api.post('/v1/ladders/v-g2/matches/nope/void', { reason: 'x' })).status).toBe(404);
    expect((await anon.post('/v1/ladders/v-g2/matches/m11/void', { reason: 'x' })).status).toBe(401);
    // A match after the correction is rated on the corrected states.
    const next: Body = {
      id: 'after',
      at: Date.now(),
      teams: [
        { players: ['p0'], rank: 1 },
        { players: ['p1'], rank: 2 },
      ],
    };
    await post('v-g2', [next]);
    await expectStates(server, 'v-g2', replay('glicko2', [...bodies.filter((b) => b.id !== 'm10'), next]));
  });

  it('corrects a match (PUT): the stored states equal a replay of the corrected log', async () => {
    await api.post('/v1/ladders', { id: 'c-tr', system: 'teamrank', public: true, standings: { placementMatches: 0 } });
    const bodies = log(30, 2);
    await post('c-tr', bodies);
    const swapped: Body = {
      ...bodies[5]!,
      teams: [
        { ...bodies[5]!.teams[0]!, rank: bodies[5]!.teams[1]!.rank },
        { ...bodies[5]!.teams[1]!, rank: bodies[5]!.teams[0]!.rank },
      ],
    };
    const { id: _id, ...withoutId } = swapped;
    const reply = await api.put('/v1/ladders/c-tr/matches/m5', withoutId);
    expect(reply.status).toBe(200);
    expect(reply.body.match).toMatchObject({ id: 'm5', void: false });
    const corrected = bodies.map((b) => (b.id === 'm5' ? swapped : b));
    await expectStates(server, 'c-tr', replay('teamrank', corrected));
    expect((await rebuildLadder(server.db, await server.ladders.get('c-tr'))).differences).toEqual([]);
    // The match list shows the corrected result.
    const listed = (await anon.get('/v1/ladders/c-tr/matches?limit=100')).body.matches.find((m: { id: string }) => m.id === 'm5');
    expect(listed.teams.map((t: { rank: number }) => t.rank)).toEqual(swapped.teams.map((t) => t.rank));
  });

  it('property: voiding a match then equals replaying the log without it (Elo)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 3, max: 14 }), fc.nat(), async (seed, count, pick) => {
        const ladder = `prop-${backend === 'pglite' ? 'a' : 'b'}-${n++}`;
        await api.post('/v1/ladders', { id: ladder, system: 'elo' });
        const bodies = log(count, seed, 4);
        await post(ladder, bodies);
        const target = bodies[pick % count]!.id;
        expect((await api.post(`/v1/ladders/${ladder}/matches/${target}/void`, { reason: 'test' })).status).toBe(200);
        await expectStates(
          server,
          ladder,
          replay(
            'elo',
            bodies.filter((b) => b.id !== target),
          ),
        );
      }),
      { numRuns: 12, seed: 5 },
    );
  });

  it("property: after voids and corrections that change who played, each player's history lists exactly the stored matches with them, newest first", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 3, max: 12 }),
        fc.array(fc.record({ pick: fc.nat(), kind: fc.constantFrom('void', 'swap', 'newcomer'), who: fc.nat() }), { minLength: 1, maxLength: 4 }),
        fc.constantFrom('elo', 'whr'),
        async (seed, count, corrections, system) => {
          const ladder = `chain-${backend === 'pglite' ? 'a' : 'b'}-${n++}`;
          await api.post('/v1/ladders', { id: ladder, system });
          const bodies = log(count, seed, 5);
          await post(ladder, bodies);
          const current = new Map(bodies.map((b) => [b.id, b]));
          // A player whose every match is void leaves the ladder, and their history with them.
          const left = new Set<string>();
          const note = (players: Array<{ id: string; after: unknown }>) => {
            for (const p of players) if (p.after === null) left.add(p.id);
          };
          for (const c of corrections) {
            const target = bodies[c.pick % count]!;
            if (c.kind === 'void') {
              note((await api.post(`/v1/ladders/${ladder}/matches/${target.id}/void`, { reason: 'test' })).body.players);
              continue;
            }
            const stored = current.get(target.id)!;
            const others = stored.teams[1]!.players[0]!;
            // Someone else in the first seat: another player of the ladder, or one never seen before.
            const replacement = c.kind === 'newcomer' ? `new${c.who % 3}` : `p${c.who % 5}`;
            if (replacement === others) continue;
            const teams = [{ players: [replacement], rank: stored.teams[0]!.rank }, stored.teams[1]!];
            const reply = await api.put(`/v1/ladders/${ladder}/matches/${target.id}`, { at: stored.at, teams });
            if (reply.status === 200) {
              current.set(target.id, { ...stored, teams });
              note(reply.body.players);
            }
          }
          const listed = (await api.get(`/v1/ladders/${ladder}/matches?limit=50`)).body.matches as Array<{ id: string; seq: number; teams: Array<{ players: string[] }> }>;
          const everyone = new Set(listed.flatMap((m) => m.teams.flatMap((t) => t.players)));
          for (const player of everyone) {
            if (left.has(player)) {
              if ((await api.get(`/v1/ladders/${ladder}/players/${player}`)).status === 404) continue;
              // Back in the ladder through a correction: the history starts again there, and holds the match that brought them back.
              const history = (await api.get(`/v1/ladders/${ladder}/players/${player}/history?limit=50`)).body.history as Array<{ matchId: string }>;
              expect(history.length).toBeGreaterThan(0);
              continue;
            }
            const expected = listed.filter((m) => m.teams.some((t) => t.players.includes(player))).map((m) => m.id);
            const history = (await api.get(`/v1/ladders/${ladder}/players/${player}/history?limit=50`)).body.history as Array<{ matchId: string }>;
            expect(
              history.map((h) => h.matchId),
              `${ladder} ${player}`,
            ).toEqual(expected);
            // Paging walks the same chain: by offset, and by the `before` cursor (the seq of a page's last entry).
            const second = (await api.get(`/v1/ladders/${ladder}/players/${player}/history?limit=2&offset=1`)).body.history as Array<{ matchId: string }>;
            expect(second.map((h) => h.matchId)).toEqual(expected.slice(1, 3));
            const paged: string[] = [];
            let cursor = '';
            for (let page = 0; page <= expected.length; page++) {
              const entries = (await api.get(`/v1/ladders/${ladder}/players/${player}/history?limit=2${cursor}`)).body.history as Array<{ matchId: string; seq: number }>;
              if (entries.length === 0) break;
              paged.push(...entries.map((h) => h.matchId));
              cursor = `&before=${entries[entries.length - 1]!.seq}`;
            }
            expect(paged).toEqual(expected);
            // A cursor that is no entry of the player's: the entries of the matches before it.
            const middle = listed[Math.floor(listed.length / 2)]!;
            const older = (await api.get(`/v1/ladders/${ladder}/players/${player}/history?limit=50&before=${middle.seq}`)).body.history as Array<{ matchId: string }>;
            expect(older.map((h) => h.matchId)).toEqual(listed.filter((m) => m.seq < middle.seq && m.teams.some((t) => t.players.includes(player))).map((m) => m.id));
          }
          expect((await rebuildLadder(server.db, await server.ladders.get(ladder))).differences).toEqual([]);
        },
      ),
      { numRuns: 10, seed: 11 },
    );
  });

  it('submissions arriving during corrections are rated on the corrected states', async () => {
    await api.post('/v1/ladders', { id: 'race-v', system: 'glicko2' });
    const bodies = log(30, 3);
    await post('race-v', bodies);
    const more = log(40, 4, 6, Date.now() - 3_600_000).map((b, i) => ({ ...b, id: `n${i}`, at: Date.now() - 1000 }));
    // A phased correction answers 503 (Retry-After) to writes of its ladder, and to a second correction, while it runs: the client retries.
    const retried = async (send: () => ReturnType<typeof api.post>, want: number) => {
      for (;;) {
        const reply = await send();
        if (reply.status !== 503) return expect(reply.status).toBe(want);
        expect(mode).toBe('phased');
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await Promise.all([
      ...more.map((b) => retried(() => api.post('/v1/ladders/race-v/matches', b), 201)),
      retried(() => api.post('/v1/ladders/race-v/matches/m3/void', { reason: 'x' }), 200),
      retried(() => api.post('/v1/ladders/race-v/matches/m20/void', { reason: 'y' }), 200),
    ]);
    const report = await rebuildLadder(server.db, await server.ladders.get('race-v'));
    expect(report.differences).toEqual([]);
    expect(report.matches).toBe(68);
  });

  it('seasons: soft reset, frozen final standings, current-season standings, and rebuild across the boundary', async () => {
    await api.post('/v1/ladders', { id: 'sz', system: 'glicko2', public: true, season: 'opening', standings: { placementMatches: 0 } });
    const bodies = log(20, 6);
    await post('sz', bodies);
    expect((await anon.get('/v1/ladders/sz/seasons')).body.seasons.map((s: { name: string }) => s.name)).toEqual(['opening']);
    const before = (await anon.get('/v1/ladders/sz/leaderboard?limit=50')).body;
    const opened = await api.post('/v1/ladders/sz/seasons', { name: 's2', reset: { toward: 1500, keep: 0.5, rd: 200 } });
    expect(opened.status).toBe(201);
    expect(opened.body.opened.name).toBe('s2');
    expect((await api.post('/v1/ladders/sz/seasons', { name: 's2', reset: { keep: 1 } })).status).toBe(409);
    const frozen = await anon.get('/v1/ladders/sz/seasons/opening/leaderboard?limit=50');
    expect(frozen.body.total).toBe(before.total);
    expect(frozen.body.entries.map((e: { id: string }) => e.id)).toEqual(before.entries.map((e: { id: string }) => e.id));
    const top = before.entries[0];
    expect((await anon.get(`/v1/ladders/sz/seasons/opening/players/${top.id}`)).body).toMatchObject({ id: top.id, rank: 1, rating: top.rating });
    // The reset: rating → 1500 + 0.5 (rating − 1500), RD → max(RD, 200).
    const replayed = replay('glicko2', bodies);
    const player = (await anon.get(`/v1/ladders/sz/players/${top.id}`)).body;
    const want = applyReset(createSystem('glicko2'), { toward: 1500, keep: 0.5, rd: 200 }, replayed.get(top.id)!);
    expect(player.rating).toBeCloseTo(1500 + 0.5 * (replayed.get(top.id)!.rating - 1500), 9);
    expect(player.rd).toBeCloseTo(Math.max(replayed.get(top.id)!.rd!, 200), 9);
    expect(player.rating).toBeCloseTo(want.rating, 9);
    // Nobody has played in the new season yet.
    expect((await anon.get('/v1/ladders/sz/leaderboard')).body.total).toBe(0);
    const later: Body = {
      id: 'x1',
      at: Date.now(),
      teams: [
        { players: ['p1'], rank: 1 },
        { players: ['p2'], rank: 2 },
      ],
    };
    await post('sz', [later]);
    expect((await anon.get('/v1/ladders/sz/leaderboard')).body.entries.map((e: { id: string }) => e.id).sort()).toEqual(['p1', 'p2']);
    expect((await rebuildLadder(server.db, await server.ladders.get('sz'))).differences).toEqual([]);
    // A void in the closed season re-rates through the boundary and its reset.
    expect((await api.post('/v1/ladders/sz/matches/m3/void', { reason: 'x' })).status).toBe(200);
    expect((await rebuildLadder(server.db, await server.ladders.get('sz'))).differences).toEqual([]);
    expect((await anon.get('/v1/ladders/sz/seasons/nope/leaderboard')).status).toBe(404);
  });

  usual('predicts win probabilities from current ratings (unknown players at the default)', async () => {
    const reply = await anon.post('/v1/ladders/v-g2/predict', { teams: [{ players: ['p0'] }, { players: ['nobody'] }] });
    expect(reply.status).toBe(200);
    const [a, b] = reply.body.probabilities;
    expect(a + b).toBeCloseTo(1, 12);
    const p0 = (await anon.get('/v1/ladders/v-g2/players/p0')).body;
    const system = createSystem('glicko2');
    expect(a).toBeCloseTo(system.predict([[{ rating: p0.rating, rd: p0.rd, volatility: p0.volatility, matches: p0.matches }], [system.initial()]])[0]!, 12);
  });

  usual('balances a lobby: equal teams, parties whole, the split closest to even', async () => {
    await api.post('/v1/ladders', { id: 'lobby', system: 'elo', public: true });
    // Known ratings: a beats b twice, c beats d twice.
    await post('lobby', [
      {
        id: 'l1',
        at: Date.now() - 4000,
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      },
      {
        id: 'l2',
        at: Date.now() - 3000,
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['c'], rank: 2 },
        ],
      },
      {
        id: 'l3',
        at: Date.now() - 2000,
        teams: [
          { players: ['c'], rank: 1 },
          { players: ['d'], rank: 2 },
        ],
      },
    ]);
    const reply = await anon.post('/v1/ladders/lobby/balance', { players: ['a', 'b', 'c', 'd'], parties: [['a', 'd']], teams: 2 });
    expect(reply.status).toBe(200);
    expect(reply.body.exact).toBe(true);
    const teams: string[][] = reply.body.teams;
    expect(teams.map((t) => t.length)).toEqual([2, 2]);
    expect(teams.some((t) => t.includes('a') && t.includes('d'))).toBe(true);
    // Parties whole leaves two splits, {a,d}{b,c} only; the answer is that one, with its prediction.
    const ratings = Object.fromEntries(await Promise.all(['a', 'b', 'c', 'd'].map(async (id) => [id, (await anon.get(`/v1/ladders/lobby/players/${id}`)).body])));
    const system = createSystem('elo');
    const predicted = system.predict(teams.map((t) => t.map((id) => ratings[id])));
    expect(reply.body.probabilities[0]).toBeCloseTo(predicted[0]!, 12);
    const unbalanced = await anon.post('/v1/ladders/lobby/balance', { players: ['a', 'b', 'c'], teams: 2 });
    expect(unbalanced.status).toBe(400);
  });

  usual('integrity report (admin): a pair of win-traders among honest players comes first, with its evidence', async () => {
    await api.post('/v1/ladders', { id: 'trade', system: 'elo', public: true });
    const honest = log(300, 9, 30).map((b, i) => ({ ...b, id: `h${i}` }));
    const traders: Body[] = Array.from({ length: 30 }, (_, i) => ({
      id: `t${i}`,
      at: Date.now() - 1000,
      teams: [
        { players: ['x1'], rank: i % 2 === 0 ? 1 : 2 },
        { players: ['x2'], rank: i % 2 === 0 ? 2 : 1 },
      ],
    }));
    const mixed: Body[] = [];
    for (let i = 0; i < honest.length; i++) {
      mixed.push(honest[i]!);
      if (i % 10 === 0 && traders.length > 0) mixed.push(traders.shift()!);
    }
    await post('trade', [...mixed, ...traders]);
    expect((await anon.get('/v1/ladders/trade/reports/integrity')).status).toBe(401);
    const report = await api.get('/v1/ladders/trade/reports/integrity');
    expect(report.status).toBe(200);
    const first = report.body.entries[0];
    expect(JSON.stringify(first)).toContain('x1');
    expect(JSON.stringify(first)).toContain('x2');
    expect(report.body.matches).toBe(330);
  });

  usual('changes and deletes a ladder; rating options only while it has no matches', async () => {
    const conflict = await api.patch('/v1/ladders/v-g2', { options: { tau: 0.3 } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.field).toBe('options');
    const hidden = await api.patch('/v1/ladders/v-g2', { public: false, standings: { placementMatches: 3 } });
    expect(hidden.status).toBe(200);
    expect(hidden.body.public).toBe(false);
    expect((await anon.get('/v1/ladders/v-g2/leaderboard')).status).toBe(404);
    await api.post('/v1/ladders', { id: 'fresh', system: 'elo' });
    expect((await api.patch('/v1/ladders/fresh', { options: { k: 16 } })).body.options).toEqual({ k: 16 });
    expect((await api.patch('/v1/ladders/fresh', { options: { kk: 16 } })).status).toBe(400);
    expect((await api.del('/v1/ladders/c-tr')).status).toBe(200);
    expect((await api.get('/v1/ladders/c-tr')).status).toBe(404);
    expect((await api.get('/v1/ladders/c-tr/players/p0')).status).toBe(404);
    expect((await api.post('/v1/ladders', { id: 'c-tr', system: 'elo' })).status).toBe(201);
  });
});
