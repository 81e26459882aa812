/**
 * Phased corrections on both backends: a correction computed from the
 * untouched log with its writes staged, then copied into place, each step a
 * short transaction. A run stopped in either phase (a hook that throws
 * between two steps, as a crash would stop it) leaves the ladder marked as
 * under correction, never half-corrected as final, and resuming it gives
 * what a replay of the corrected log gives, counted once. While it runs,
 * writes to its ladder get 503 with Retry-After, reads of it serve the
 * stored (uncorrected) rows until the copy starts, and other ladders' writes
 * go through.
 */
import { describe, expect, it } from 'vitest';
import { type CorrectionPoint, correctMatch, resumeCorrections } from '../../src/service/corrections.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';
import { type Body, log } from './match-log.js';

class Stop extends Error {}

describe.each(BACKENDS)('phased corrections on %s', (backend) => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 }, corrections: 'phased' } }, async (started) => {
    server = started;
    api = client(server.url, server.admin);
  });

  const post = async (ladder: string, bodies: Body[]) => {
    for (const body of bodies) expect((await api.post(`/v1/ladders/${ladder}/matches`, body)).status).toBe(201);
  };
  const players = (ladder: string) =>
    server.db.query<{ id: string; rating: number; rd: number | null; volatility: number | null; matches: number; last_at: number | null }>(
      'SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 ORDER BY id',
      [ladder],
    );
  const history = (ladder: string) =>
    server.db.query('SELECT seq, id, voided_at IS NOT NULL AS void, win_probability, changes FROM matches WHERE ladder = $1 ORDER BY seq', [ladder]);
  const counters = async (ladder: string) =>
    (
      await server.db.query<{ match_count: number; player_count: number; corrections: number; correcting: boolean }>(
        'SELECT match_count, player_count, corrections, correcting FROM ladders WHERE id = $1',
        [ladder],
      )
    )[0]!;

  /** The same log in a second ladder, corrected in one transaction: what the phased run must end with. */
  async function reference(ladder: string, system: string, bodies: Body[], target: string): Promise<{ players: unknown; history: unknown }> {
    const twin = `${ladder}-ref`;
    await api.post('/v1/ladders', { id: twin, system });
    await post(twin, bodies);
    await correctMatch(server.db, await server.ladders.get(twin), target, { kind: 'void', reason: 'test' }, 1, { mode: 'transaction' });
    return { players: await players(twin), history: await history(twin) };
  }

  for (const [phase, at] of [
    ['compute', 3],
    ['apply', 4],
  ] as const) {
    it(`a run stopped in phase ${phase} leaves the ladder marked and uncorrected as final; resumed, it equals the correction in one transaction, counted once`, async () => {
      for (const system of ['elo', 'whr'] as const) {
        const ladder = `stop-${phase}-${system}`;
        await api.post('/v1/ladders', { id: ladder, system });
        const bodies = log(40, 7, 5, Date.now() - 41 * 3_600_000);
        await post(ladder, bodies);
        const want = await reference(ladder, system, bodies, 'm2');
        const before = { players: await players(ladder), history: await history(ladder) };
        let stops = 0;
        const onStep = (_ladder: string, point: CorrectionPoint) => {
          // Steps are staged and applied a few at a time: the first point at or past `at`.
          if (stops === 0 && point.phase === phase && (point.phase === 'compute' ? point.staged : point.applied) >= at) {
            stops++;
            throw new Stop('stopped');
          }
        };
        await expect(
          correctMatch(server.db, await server.ladders.get(ladder), 'm2', { kind: 'void', reason: 'test' }, 1, { chunk: 4, onStep, mode: 'phased', stepBudgetMs: 0 }),
        ).rejects.toThrow(Stop);
        expect(stops).toBe(1);
        expect(await counters(ladder)).toMatchObject({ correcting: true, corrections: 0, match_count: 40 });
        if (phase === 'compute') {
          // Nothing of it is in place yet.
          expect({ players: await players(ladder), history: await history(ladder) }).toEqual(before);
        } else {
          // Part of it is in place: reads of the ladder say it is being corrected.
          const read = await api.get(`/v1/ladders/${ladder}/players/p0`);
          expect(read.status).toBe(503);
          expect(Number(read.headers.get('retry-after'))).toBeGreaterThan(0);
        }
        const done = await resumeCorrections(server.db, (id) => server.ladders.get(id), { chunk: 4 });
        expect(done.map((d) => d.ladder)).toEqual([ladder]);
        expect(await counters(ladder)).toMatchObject({ correcting: false, corrections: 1, match_count: 39 });
        expect(await players(ladder)).toEqual(want.players);
        expect(await history(ladder)).toEqual(want.history);
        expect((await rebuildLadder(server.db, await server.ladders.get(ladder))).differences).toEqual([]);
        expect(await server.db.query('SELECT n FROM correction_steps WHERE ladder = $1', [ladder])).toEqual([]);
        expect((await api.get(`/v1/ladders/${ladder}/players/p0`)).status).toBe(200);
      }
    });
  }

  it("while a correction is paused half-way, its ladder's writes get 503 with Retry-After and its reads the stored rows; another ladder's writes go through", async () => {
    await api.post('/v1/ladders', { id: 'held', system: 'glicko2' });
    await api.post('/v1/ladders', { id: 'free', system: 'glicko2' });
    const bodies = log(30, 9, 4, Date.now() - 31 * 3_600_000);
    await post('held', bodies);
    await post('free', bodies.slice(0, 3));
    const stored = (await api.get('/v1/ladders/held/players/p0')).body;
    let reached!: () => void;
    const paused = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = false;
    const onStep = async (_ladder: string, point: CorrectionPoint) => {
      if (point.phase === 'compute' && point.staged >= 2 && !held) {
        held = true;
        reached();
        await gate;
      }
    };
    const running = correctMatch(server.db, await server.ladders.get('held'), 'm0', { kind: 'void', reason: 'test' }, Date.now(), { chunk: 5, onStep, mode: 'phased' });
    await paused;
    const match = {
      teams: [
        { players: ['p0'], rank: 1 },
        { players: ['p1'], rank: 2 },
      ],
    };
    const refused = await api.post('/v1/ladders/held/matches', match);
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toContain('being corrected');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A second correction of the ladder waits its turn too.
    expect((await api.post('/v1/ladders/held/matches/m5/void', { reason: 'x' })).status).toBe(503);
    expect((await api.get('/v1/ladders/held/players/p0')).body).toEqual(stored);
    expect((await api.post('/v1/ladders/free/matches', match)).status).toBe(201);
    release();
    const result = await running;
    expect(result.changed).toBe(true);
    expect((await api.post('/v1/ladders/held/matches', match)).status).toBe(201);
    expect(await counters('held')).toMatchObject({ correcting: false, corrections: 1, match_count: 30 });
    expect((await rebuildLadder(server.db, await server.ladders.get('held'))).differences).toEqual([]);
  });
});
