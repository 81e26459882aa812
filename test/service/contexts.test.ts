/**
 * Match contexts in the service, on both backends: a posted match carries a
 * `context` (stored with it), the players' per-context offsets are stored
 * with their states (read back from the database by predict), and predict
 * and balance take a `context`. A ladder whose system has the option off
 * accepts a context and rates as without it. A bad context is a 400 naming
 * the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, cleanupShared, client, type Client, startTestServer, type TestServer } from './helpers.js';

const duel = (id: string, winner: string, loser: string, context?: string) => ({
  id,
  ...(context !== undefined ? { context } : {}),
  teams: [
    { players: [winner], rank: 1 },
    { players: [loser], rank: 2 },
  ],
});

describe.each(BACKENDS)('match contexts on %s', (backend) => {
  let server: TestServer;
  let api: Client;

  beforeAll(async () => {
    server = await startTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } });
    api = client(server.url, server.admin);
    expect((await api.post('/v1/ladders', { id: 'ctx', system: 'elo', public: true, options: { contextK: 16 } })).status).toBe(201);
    expect((await api.post('/v1/ladders', { id: 'plain', system: 'elo', public: true })).status).toBe(201);
    expect((await api.post('/v1/ladders', { id: 'g2', system: 'glicko2', public: true, options: { contextRd: 100 } })).status).toBe(201);
    expect((await api.post('/v1/ladders', { id: 'whr', system: 'whr', public: true, options: { priorVariance: 0.6, contextPriorVariance: 0.2 } })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });

  it('rates a posted context into offsets that predict reads back, worked by hand', async () => {
    const posted = await api.post('/v1/ladders/ctx/matches', duel('m1', 'ann', 'bob', 'clay'));
    expect(posted.status, posted.text).toBe(201);
    const listed = await api.get('/v1/ladders/ctx/matches');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.matches.find((m: { id: string }) => m.id === 'm1').context).toBe('clay');
    // Elo K 32, contextK 16 from 1500 each: ann 1516 with clay offset +8, bob 1484 with −8.
    // On clay they play at 1524 and 1476: 1 / (1 + 10^(−48/400)) = 0.568641; elsewhere at 1516 and 1484: 1 / (1 + 10^(−32/400)) = 0.545922.
    const teams = [{ players: ['ann'] }, { players: ['bob'] }];
    const onClay = await api.post('/v1/ladders/ctx/predict', { teams, context: 'clay' });
    expect(onClay.status, onClay.text).toBe(200);
    expect(onClay.body.probabilities[0]).toBeCloseTo(0.568641, 6);
    const onGrass = await api.post('/v1/ladders/ctx/predict', { teams, context: 'grass' });
    expect(onGrass.body.probabilities[0]).toBeCloseTo(0.545922, 6);
    const anywhere = await api.post('/v1/ladders/ctx/predict', { teams });
    expect(anywhere.body.probabilities[0]).toBeCloseTo(0.545922, 6);
    // The player's page shows the general rating.
    const ann = await api.get('/v1/ladders/ctx/players/ann');
    expect(ann.status, ann.text).toBe(200);
    expect(ann.body.rating).toBeCloseTo(1516, 9);
    expect(ann.body.contexts).toEqual({ clay: { offset: 8, matches: 1 } });
    const plainPlayer = await api.get('/v1/ladders/plain/players/ann');
    expect(plainPlayer.status === 404 || plainPlayer.body.contexts === undefined).toBe(true);
  });

  it('balances a lobby by skill in the context', async () => {
    // dan wins twice on ice against cat, loses twice elsewhere to eve: on ice he is the strongest.
    for (const [id, w, l, c] of [
      ['b1', 'dan', 'cat', 'ice'],
      ['b2', 'dan', 'cat', 'ice'],
      ['b3', 'eve', 'dan', undefined],
      ['b4', 'eve', 'dan', undefined],
    ] as const)
      expect((await api.post('/v1/ladders/ctx/matches', duel(id, w, l, c))).status).toBe(201);
    const players = ['cat', 'dan', 'eve', 'fay'];
    const onIce = await api.post('/v1/ladders/ctx/balance', { players, context: 'ice' });
    expect(onIce.status, onIce.text).toBe(200);
    const predicted = await api.post('/v1/ladders/ctx/predict', { teams: onIce.body.teams.map((t: string[]) => ({ players: t })), context: 'ice' });
    expect(onIce.body.probabilities[0]).toBeCloseTo(predicted.body.probabilities[0], 12);
    const plain = await api.post('/v1/ladders/ctx/balance', { players });
    const predictedPlain = await api.post('/v1/ladders/ctx/predict', { teams: plain.body.teams.map((t: string[]) => ({ players: t })) });
    expect(plain.body.probabilities[0]).toBeCloseTo(predictedPlain.body.probabilities[0], 12);
    expect(onIce.body.probabilities[0]).not.toBeCloseTo(plain.body.probabilities[0], 6);
  });

  it('keeps a Glicko-2 offset with its own deviation', async () => {
    expect((await api.post('/v1/ladders/g2/matches', duel('g1', 'ann', 'bob', 'clay'))).status).toBe(201);
    const teams = [{ players: ['ann'] }, { players: ['bob'] }];
    const onClay = (await api.post('/v1/ladders/g2/predict', { teams, context: 'clay' })).body.probabilities[0];
    const anywhere = (await api.post('/v1/ladders/g2/predict', { teams })).body.probabilities[0];
    expect(onClay).toBeGreaterThan(anywhere);
    expect(anywhere).toBeGreaterThan(0.5);
  });

  it('keeps a Whole-History Rating deviation per context, worked by hand', async () => {
    expect((await api.post('/v1/ladders/whr/matches', duel('w1', 'ann', 'bob', 'clay'))).status).toBe(201);
    // σ0² 0.6, σc² 0.2 (packages/core/src/core/whr/whr.test.ts, one context, one game): ann's general skill
    // 0.23509943 (variance 0.54472826), her clay deviation 0.07836648 (variance 0.19385870), bob mirrored.
    // Jointly smoothed (the default), her general skill and clay deviation have covariance −abβ = −0.01842391, so her skill on
    // clay has variance 0.54472826 + 0.19385870 − 2 × 0.01842391 = 0.70173913 (the summed model's, σ0² + σc² = 0.8):
    // on clay σ(0.62693181/√(1 + π·1.40347826/8)) = 0.62325283; no context σ(0.47019886/√(1 + π·1.08945652/8)) = 0.59712471;
    // on grass, new to both, the deviations' prior variance is added: σ(0.47019886/√(1 + π·1.48945652/8)) = 0.59230213.
    const teams = [{ players: ['ann'] }, { players: ['bob'] }];
    const predict = async (context?: string) => (await api.post('/v1/ladders/whr/predict', { teams, ...(context !== undefined ? { context } : {}) })).body.probabilities[0];
    expect(await predict('clay')).toBeCloseTo(0.62325283, 6);
    expect(await predict()).toBeCloseTo(0.59712471, 6);
    expect(await predict('grass')).toBeCloseTo(0.59230213, 6);
    // The offset on the rating's scale: 0.07836648 × 400/ln 10 = 13.6137, its deviation √0.19385870 × 400/ln 10 = 76.487.
    const ann = await api.get('/v1/ladders/whr/players/ann');
    expect(ann.body.rating).toBeCloseTo(1540.841, 3);
    expect(ann.body.contexts.clay.offset).toBeCloseTo(13.6137, 3);
    expect(ann.body.contexts.clay.rd).toBeCloseTo(76.487, 2);
    // The covariance on the rating's scale: −0.01842391 × (400/ln 10)² = −555.994.
    expect(ann.body.contexts.clay.covariance).toBeCloseTo(-555.994, 2);
    expect(ann.body.contexts.clay.matches).toBe(1);
  });

  it('rates the offsets again when a match is voided', async () => {
    expect((await api.post('/v1/ladders', { id: 'ctxv', system: 'elo', public: true, options: { contextK: 16 } })).status).toBe(201);
    expect((await api.post('/v1/ladders/ctxv/matches', duel('v1', 'ann', 'bob', 'clay'))).status).toBe(201);
    expect((await api.post('/v1/ladders/ctxv/matches', duel('v2', 'bob', 'ann', 'clay'))).status).toBe(201);
    const voided = await api.post('/v1/ladders/ctxv/matches/v1/void', { reason: 'wrong winner reported' });
    expect(voided.status, voided.text).toBe(200);
    // Only v2 counts: bob beat ann on clay from 1500 each, ann 1484 with clay offset −8.
    const ann = await api.get('/v1/ladders/ctxv/players/ann');
    expect(ann.body.rating).toBeCloseTo(1484, 9);
    expect(ann.body.contexts).toEqual({ clay: { offset: -8, matches: 1 } });
  });

  it('ignores a context where the option is off', async () => {
    expect((await api.post('/v1/ladders/plain/matches', duel('p1', 'ann', 'bob', 'clay'))).status).toBe(201);
    const teams = [{ players: ['ann'] }, { players: ['bob'] }];
    const onClay = await api.post('/v1/ladders/plain/predict', { teams, context: 'clay' });
    // Plain Elo: 1516 against 1484 on any surface.
    expect(onClay.body.probabilities[0]).toBeCloseTo(0.545922, 6);
  });

  it('refuses a bad context, naming the field', async () => {
    const teams = [{ players: ['ann'] }, { players: ['bob'] }];
    for (const context of [' clay', 'x'.repeat(65), '', 7]) {
      const match = await api.post('/v1/ladders/ctx/matches', { ...duel('bad', 'ann', 'bob'), context });
      expect(match.status, match.text).toBe(400);
      expect(match.body.error.field).toBe('context');
      const predict = await api.post('/v1/ladders/ctx/predict', { teams, context });
      expect(predict.status, predict.text).toBe(400);
      expect(predict.body.error.field).toBe('context');
    }
  });
});
