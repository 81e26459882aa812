/**
 * Whole-History Rating ladders in the service, on embedded PGlite and on
 * PostgreSQL + Redis: every stored state (rating and rd) is checked against
 * an independent computation through the core's `WhrHistory`, fed the same
 * log in sequence order; re-smoothing at a day's close moves players who are
 * not in the match, and those are stored too; `rebuild` finds no
 * difference; a restarted service, and a second instance on the same
 * database, continue where the log stands; voids and corrections derive the
 * history again; seasons and rounds are refused. A horizon ladder with
 * context deviations stores its freeze with the context priors and restarts
 * from it to the core's states.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Match } from 'ladder-core/core/match.js';
import { createWhrSystem, WHR_SCALE, WhrHistory, type WhrOptions } from 'ladder-core/core/whr/index.js';
import type { ServiceOptions } from '../../src/service/index.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import { Turns } from '../../src/service/turns.js';
import { LadderHistory, startHistory } from '../../src/service/whole-history.js';
import { readFreeze } from '../../src/store/frozen.js';
import { logHead } from '../../src/store/ladders.js';
import { BACKENDS, type Backend, cleanupShared, client, freshDataDir, startTestServer, type TestServer, uniqueName, WHR_LOG_START } from './helpers.js';

const DAY = 86_400_000;
const OPTIONS: WhrOptions = { dailyVariance: 0.02, window: 8, sweeps: 2 };
const PLAYERS = ['ann', 'bob', 'cat', 'dan', 'eve', 'fay'];

/** A match as posted, with its id and time. */
interface Posted {
  id: string;
  at: number;
  winner: string;
  loser: string;
  draw?: boolean;
  context?: string;
}

const START = WHR_LOG_START;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` one-against-one matches on `day` (days from START), among `players`, some draws. */
function dayOf(day: number, count: number, seed: number, players = PLAYERS, prefix = `d${day}`): Posted[] {
  const random = rng(seed);
  return Array.from({ length: count }, (_, i) => {
    const a = players[Math.floor(random() * players.length)]!;
    let b = players[Math.floor(random() * players.length)]!;
    while (b === a) b = players[Math.floor(random() * players.length)]!;
    return { id: `${prefix}-${i}`, at: START + day * DAY + 3_600_000 + i * 60_000, winner: a, loser: b, ...(random() < 0.15 ? { draw: true } : {}) };
  });
}

function body(match: Posted) {
  return {
    id: match.id,
    at: match.at,
    ...(match.context !== undefined ? { context: match.context } : {}),
    teams: [
      { players: [match.winner], rank: 1 },
      { players: [match.loser], rank: match.draw ? 1 : 2 },
    ],
  };
}

function coreMatch(match: Posted): Match {
  return {
    id: match.id,
    at: match.at,
    ...(match.context !== undefined ? { context: match.context } : {}),
    teams: [
      { players: [{ id: match.winner }], rank: 1 },
      { players: [{ id: match.loser }], rank: match.draw ? 1 : 2 },
    ],
  };
}

/** The independent computation: the core's WhrHistory fed the log in sequence order, and each player's state as the service shows it. */
function expected(log: readonly Posted[], options: WhrOptions = OPTIONS): Map<string, { rating: number; rd: number; matches: number }> {
  const history = new WhrHistory(options);
  for (const match of log) history.addMatch(coreMatch(match));
  const out = new Map<string, { rating: number; rd: number; matches: number }>();
  for (const id of history.playerIds()) {
    const e = history.estimate(id)!;
    out.set(id, { rating: 1500 + e.mean * WHR_SCALE, rd: Math.sqrt(e.variance) * WHR_SCALE, matches: e.matches });
  }
  return out;
}

type Api = ReturnType<typeof client>;

/** `matches` in contexts clay, grass and hard, and about one in five in none. */
function inContexts(matches: readonly Posted[], seed: number): Posted[] {
  const random = rng(seed);
  return matches.map((match) => {
    const k = Math.floor(random() * 3.75);
    return k < 3 ? { ...match, context: ['clay', 'grass', 'hard'][k]! } : match;
  });
}

/** The ladder's history derived as a start derives it, from the whole log and from the stored freeze. */
async function deriveBothWays(
  server: TestServer,
  id: string,
): Promise<{ ladder: Awaited<ReturnType<TestServer['ladders']['get']>>; whole: LadderHistory; restored: LadderHistory }> {
  const ladder = await server.ladders.get(id);
  const head = (await logHead(server.db, id))!;
  const whole = new LadderHistory(ladder.system, ladder.options, head.logEpoch);
  await whole.deriveInSlices(server.db, id, head.lastSeq);
  const restored = await startHistory(server.db, ladder, head.logEpoch, head.lastSeq);
  await restored.deriveInSlices(server.db, id, head.lastSeq);
  return { ladder, whole, restored };
}

async function expectStored(api: Api, ladder: string, want: Map<string, { rating: number; rd: number; matches: number }>): Promise<void> {
  for (const [id, state] of want) {
    const reply = await api.get(`/v1/ladders/${ladder}/players/${id}`);
    expect(reply.status, id).toBe(200);
    expect(reply.body.matches, id).toBe(state.matches);
    // The same operations on the same doubles: equal but for nothing (a margin far below any real difference).
    expect(reply.body.rating, id).toBeCloseTo(state.rating, 9);
    expect(reply.body.rd, id).toBeCloseTo(state.rd, 9);
  }
}

/** Posts matches one after another; returns them in sequence order (as the answers number them). */
async function postInOrder(api: Api, ladder: string, matches: readonly Posted[]): Promise<Posted[]> {
  const bySeq: Array<[number, Posted]> = [];
  for (const match of matches) {
    const reply = await api.post(`/v1/ladders/${ladder}/matches`, body(match), { 'idempotency-key': match.id });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    bySeq.push([reply.body.match.seq, match]);
  }
  return bySeq.sort((a, b) => a[0] - b[0]).map(([, m]) => m);
}

/** Posts matches all at once (they share batches); returns them in the sequence order the writer gave them. */
async function postTogether(apis: readonly Api[], ladder: string, matches: readonly Posted[]): Promise<Posted[]> {
  const replies = await Promise.all(matches.map((match, i) => apis[i % apis.length]!.post(`/v1/ladders/${ladder}/matches`, body(match), { 'idempotency-key': match.id })));
  for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return replies
    .map((reply, i) => [reply.body.match.seq as number, matches[i]!] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, m]) => m);
}

describe.each(BACKENDS)('whr ladders on %s', (backend: Backend) => {
  const servers: TestServer[] = [];
  const shared: Array<{ schema?: string; prefix?: string }> = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.dispose();
  });
  afterAll(async () => {
    for (const s of shared) await cleanupShared(s.schema, s.prefix);
  });

  /** A server, and the settings that start another on the same database. */
  async function serverOn(same?: { dataDir?: string; schema?: string; prefix?: string }, options?: ServiceOptions) {
    const settings = same ?? (backend === 'pglite' ? { dataDir: await freshDataDir() } : { schema: uniqueName('ladder_whr'), prefix: `${uniqueName('lw')}:` });
    if (!same) shared.push(settings);
    const server = await startTestServer({ backend, ...settings, ...(options ? { options } : {}) });
    servers.push(server);
    return { server, api: client(server.url, server.admin), settings };
  }

  /** Stops `server` and starts another on the same database (a restart). */
  async function restart(server: TestServer, settings: { dataDir?: string; schema?: string; prefix?: string }) {
    await server.dispose();
    servers.splice(servers.indexOf(server), 1);
    return serverOn(settings);
  }

  it('accepts whr ladders, refuses bad options naming the field, and lists whr as a ladder system', async () => {
    const { api } = await serverOn();
    const created = await api.post('/v1/ladders', { id: 'w', system: 'whr', options: OPTIONS });
    expect(created.status).toBe(201);
    // The options not given are the defaults: expectation propagation with the cycle and the fitted prior.
    expect(created.body.resolvedOptions).toMatchObject({ dailyVariance: 0.02, window: 8, priorVariance: 0.7989, inference: 'ep', cycle: 8 });
    for (const [options, field] of [
      [{ priorVariance: -1 }, 'options.priorVariance'],
      [{ window: 0.5 }, 'options.window'],
      [{ link: 'cauchy' }, 'options.link'],
      [{ smoothing: 3 }, 'options'],
    ] as const) {
      const reply = await api.post('/v1/ladders', { id: 'bad', system: 'whr', options });
      expect(reply.status, JSON.stringify(options)).toBe(400);
      expect(reply.body.error.field, JSON.stringify(options)).toContain(field);
    }
    const systems = (await api.get('/v1/systems')).body.systems as Array<{ name: string; ladders: boolean }>;
    expect(systems.find((s) => s.name === 'whr')!.ladders).toBe(true);
  });

  it('rates each match through the whole history: stored states equal the core’s, players outside a match move when its day closes, rebuild agrees', async () => {
    const { server, api } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options: OPTIONS, standings: { placementMatches: 1 } })).status).toBe(201);
    // Day 0: every player; fay plays only then.
    let log = await postInOrder(api, 'w', [...dayOf(0, 10, 1, ['ann', 'bob', 'cat', 'dan', 'eve']), { id: 'fay-1', at: START + 5 * 3_600_000, winner: 'fay', loser: 'ann' }]);
    await expectStored(api, 'w', expected(log));
    const fayBefore = (await api.get('/v1/ladders/w/players/fay')).body;
    // The first match of day 1 closes day 0: its players are re-smoothed, fay among them, though she is not in the match.
    const first = dayOf(1, 1, 2, ['bob', 'cat'])[0]!;
    const reply = await api.post('/v1/ladders/w/matches', body(first));
    expect(reply.status).toBe(201);
    expect(reply.body.players.map((p: { id: string }) => p.id).sort()).toEqual([first.winner, first.loser].sort());
    log = [...log, first];
    const want = expected(log);
    const fayAfter = (await api.get('/v1/ladders/w/players/fay')).body;
    expect(fayAfter.matches).toBe(1);
    expect(fayAfter.rating).not.toBe(fayBefore.rating);
    expect(fayAfter.rating).toBeCloseTo(want.get('fay')!.rating, 9);
    expect(Math.abs(want.get('fay')!.rating - fayBefore.rating)).toBeGreaterThan(1e-6);
    await expectStored(api, 'w', want);
    // More days, some matches posted together so they share write batches.
    log = [...log, ...(await postTogether([api], 'w', dayOf(1, 12, 3).slice(1)))];
    log = [...log, ...(await postInOrder(api, 'w', dayOf(3, 6, 4)))];
    log = [...log, ...(await postTogether([api], 'w', dayOf(4, 16, 5)))];
    const final = expected(log);
    await expectStored(api, 'w', final);
    // The leaderboard is the current estimates' order.
    const board = (await api.get('/v1/ladders/w/leaderboard?limit=20')).body;
    expect(board.entries.map((e: { id: string }) => e.id)).toEqual([...final].sort((x, y) => y[1].rating - x[1].rating).map(([id]) => id));
    for (const entry of board.entries) expect(entry.rd).toBeCloseTo(final.get(entry.id)!.rd, 9);
    // Each match's history row: its players before and after it.
    const history = (await api.get('/v1/ladders/w/players/ann/history?limit=100')).body.history as Array<{ seq: number; after: { rating: number; matches: number } }>;
    expect(history.length).toBe(final.get('ann')!.matches);
    expect(history[0]!.after.matches).toBe(final.get('ann')!.matches);
    const report = await rebuildLadder(server.db, await server.ladders.get('w'));
    expect(report.matches).toBe(log.length);
    expect(report.differences).toEqual([]);
  });

  it('a restarted service derives the history from the log and continues it', async () => {
    const { server, api, settings } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options: OPTIONS })).status).toBe(201);
    let log = await postInOrder(api, 'w', [...dayOf(0, 8, 11), ...dayOf(2, 8, 12)]);
    const { server: again, api: api2 } = await restart(server, settings);
    log = [...log, ...(await postInOrder(api2, 'w', [...dayOf(3, 6, 13), ...dayOf(5, 4, 14)]))];
    await expectStored(api2, 'w', expected(log));
    expect((await rebuildLadder(again.db, await again.ladders.get('w'))).differences).toEqual([]);
  });

  it('a horizon ladder freezes its past at the same points as the core, across a restart; rebuild agrees', async () => {
    // horizon 2: a freeze point every day, the past more than two days old frozen into priors.
    const options: WhrOptions = { ...OPTIONS, horizon: 2, freezeLag: 0 };
    const { server, api, settings } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    let log = await postInOrder(api, 'w', [...dayOf(0, 6, 31), ...dayOf(1, 6, 32), ...dayOf(3, 6, 33)]);
    await expectStored(api, 'w', expected(log, options));
    const { server: again, api: api2 } = await restart(server, settings);
    log = [...log, ...(await postInOrder(api2, 'w', [...dayOf(4, 6, 34), ...dayOf(6, 6, 35)]))];
    // The stored freeze is the core's last one, to the last bit: day 6 froze day 4 (days from START's day).
    const coreSoFar = new WhrHistory(options);
    for (const match of log) coreSoFar.addMatch(coreMatch(match));
    const stored = (await readFreeze(again.db, 'w'))!;
    expect(stored.past.day).toBe(Math.floor(START / DAY) + 4);
    expect(stored.past).toEqual(coreSoFar.frozen());
    // A late match of day 5 (after the freeze) is rated; one of day 4 (frozen) is refused, naming `at`.
    log = [...log, ...(await postInOrder(api2, 'w', dayOf(5, 2, 37, PLAYERS, 'late')))];
    const frozenDay = dayOf(4, 1, 38, PLAYERS, 'too-late')[0]!;
    const refused = await api2.post('/v1/ladders/w/matches', body(frozenDay));
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.field).toBe('at');
    expect(refused.body.error.message).toContain(new Date(START + 5 * DAY).toISOString());
    // A second restart: the history starts from the stored freeze and the matches after it, late ones among them.
    const { server: third, api: api3 } = await restart(again, settings);
    log = [...log, ...(await postInOrder(api3, 'w', dayOf(7, 4, 36)))];
    const want = expected(log, options);
    await expectStored(api3, 'w', want);
    // The core froze (days 0 … 5 by day 7), and its estimates differ from the whole history's.
    const core = new WhrHistory(options);
    for (const match of log) core.addMatch(coreMatch(match));
    expect(core.freezes).toBeGreaterThan(2);
    const whole = expected(log);
    expect([...want].some(([id, state]) => Math.abs(state.rating - whole.get(id)!.rating) > 1e-6)).toBe(true);
    const last = (await readFreeze(third.db, 'w'))!;
    expect(last.past).toEqual(core.frozen());
    expect((await rebuildLadder(third.db, await third.ladders.get('w'))).differences).toEqual([]);
    // Day 7 froze day 5: the live matches start with day 6's; the late ones of day 5 that came after them are in the priors.
    const seqOf = (match: Posted) => log.indexOf(match) + 1;
    expect(last.fromSeq).toBe(seqOf(log.find((m) => m.id.startsWith('d6-'))!));
    expect(last.triggerSeq).toBe(seqOf(log.find((m) => m.id.startsWith('d7-'))!));
    const late = log.filter((m) => m.id.startsWith('late-')).map(seqOf);
    expect(late.every((seq) => seq > last.fromSeq && seq < last.triggerSeq)).toBe(true);
    // A third restart starts from that freeze, skipping the late matches it holds.
    const { server: fourth, api: api4 } = await restart(third, settings);
    log = [...log, ...(await postInOrder(api4, 'w', dayOf(8, 4, 39)))];
    await expectStored(api4, 'w', expected(log, options));
    const report = await rebuildLadder(fourth.db, await fourth.ladders.get('w'));
    expect(report.differences).toEqual([]);
    expect(report.frozenPriors).toBe('same');
  });

  it('with a horizon at the default freezeLag, a freeze is rebuilt beside the history for a day: restarts inside that day, refusals and rebuild agree with the core', async () => {
    // horizon 5: points every 2 days. Day 5 reaches point 0 (the first day is 0) and starts its rebuild; the first
    // match of day 6 puts it in effect. Day 7 reaches point 2; day 8 puts it in effect; day 9 reaches point 4.
    const options: WhrOptions = { ...OPTIONS, horizon: 5 };
    const { server, api, settings } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    let log: Posted[] = [];
    for (let day = 0; day <= 5; day++) log = [...log, ...(await postInOrder(api, 'w', dayOf(day, 4, 70 + day)))];
    // Day 5 reached point 0: nothing stored yet, and a match of day 0 is refused already (the rebuild leaves it out).
    expect(await readFreeze(server.db, 'w')).toBeUndefined();
    const early = await api.post('/v1/ladders/w/matches', body(dayOf(0, 1, 90, PLAYERS, 'early')[0]!));
    expect(early.status, JSON.stringify(early.body)).toBe(400);
    expect(early.body.error.field).toBe('at');
    // A restart inside the day: the new instance derives the same pending freeze from the log.
    const { server: again, api: api2 } = await restart(server, settings);
    log = [...log, ...(await postInOrder(api2, 'w', dayOf(6, 4, 76)))];
    const afterDay6 = new WhrHistory(options);
    for (const match of log) afterDay6.addMatch(coreMatch(match));
    const first = (await readFreeze(again.db, 'w'))!;
    expect(first.past.day).toBe(Math.floor(START / DAY));
    expect(first.past).toEqual(afterDay6.frozen());
    // The freeze took effect with day 6's first match: that is its trigger; its live matches start with day 1's.
    const seqOf = (match: Posted) => log.indexOf(match) + 1;
    expect(first.triggerSeq).toBe(seqOf(log.find((m) => m.id.startsWith('d6-'))!));
    expect(first.fromSeq).toBe(seqOf(log.find((m) => m.id.startsWith('d1-'))!));
    // Day 7 reaches point 2; a restart inside day 7 starts from the stored freeze of day 0.
    log = [...log, ...(await postInOrder(api2, 'w', dayOf(7, 4, 77)))];
    const { server: third, api: api3 } = await restart(again, settings);
    const refused = await api3.post('/v1/ladders/w/matches', body(dayOf(2, 1, 91, PLAYERS, 'late')[0]!));
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.message).toContain(new Date(START + 3 * DAY).toISOString());
    for (const day of [8, 9]) log = [...log, ...(await postInOrder(api3, 'w', dayOf(day, 4, 70 + day)))];
    const core = new WhrHistory(options);
    for (const match of log) core.addMatch(coreMatch(match));
    expect(core.freezes).toBe(2);
    expect(core.freezePending).toBe(true);
    const want = expected(log, options);
    await expectStored(api3, 'w', want);
    const last = (await readFreeze(third.db, 'w'))!;
    expect(last.past.day).toBe(Math.floor(START / DAY) + 2);
    expect(last.past).toEqual(core.frozen());
    const report = await rebuildLadder(third.db, await third.ladders.get('w'));
    expect(report.matches).toBe(log.length);
    expect(report.differences).toEqual([]);
    expect(report.frozenPriors).toBe('same');
  });

  it('at the default freezeLag, writes queued without a pause give the pending rebuild a share each; the ratings stay the core’s', async () => {
    // horizon 5: day 5's first match reaches point 0; day 6's first puts the freeze in effect.
    const options: WhrOptions = { ...OPTIONS, horizon: 5 };
    // One match a batch: matches posted together queue behind each other, so the ladder's queue never empties meanwhile;
    // a share whenever the rebuild has not run since the write before (at the defaults, after 50 ms).
    const { server, api } = await serverOn(undefined, { writer: { maxBatch: 1, derivation: { freezeShareMs: 0 } } });
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    let log: Posted[] = [];
    for (let day = 0; day <= 4; day++) log = [...log, ...(await postInOrder(api, 'w', dayOf(day, 4, 80 + day)))];
    const day5 = dayOf(5, 13, 85);
    log = [...log, ...(await postInOrder(api, 'w', day5.slice(0, 1)))];
    const shares = vi.spyOn(LadderHistory.prototype, 'shareFreeze');
    try {
      log = [...log, ...(await postTogether([api], 'w', day5.slice(1)))];
      expect(shares.mock.results.filter((result) => result.value === true).length).toBeGreaterThan(0);
    } finally {
      shares.mockRestore();
    }
    log = [...log, ...(await postInOrder(api, 'w', dayOf(6, 4, 86)))];
    const core = new WhrHistory(options);
    for (const match of log) core.addMatch(coreMatch(match));
    expect(core.freezes).toBe(1);
    await expectStored(api, 'w', expected(log, options));
    expect((await readFreeze(server.db, 'w'))!.past).toEqual(core.frozen());
    const report = await rebuildLadder(server.db, await server.ladders.get('w'));
    expect(report.differences).toEqual([]);
  });

  it('with a horizon, a freeze runs before the write’s transaction; a trigger match refused sends the batch again on a history derived afresh', async () => {
    // horizon 4: a freeze point every day; 30 matches a day make the live games of a freeze (3 days) more than one step of 64.
    const options: WhrOptions = { ...OPTIONS, horizon: 4, freezeLag: 0 };
    // Slices of 0 ms: a turn of the loop after every step of a freeze.
    const { server, api } = await serverOn(undefined, { writer: { derivation: { sliceMs: 0, freezeSliceMs: 0 } } });
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    let open = 0;
    const transaction = server.db.transaction.bind(server.db);
    server.db.transaction = async (work) => {
      open++;
      try {
        return await transaction(work);
      } finally {
        open--;
      }
    };
    // Each step of a freeze: how many transactions were open when it paused.
    const openAtSteps: number[] = [];
    const pause = Turns.prototype.pause;
    const spy = vi.spyOn(Turns.prototype, 'pause').mockImplementation(function (this: Turns) {
      openAtSteps.push(open);
      return pause.call(this);
    });
    try {
      let log: Posted[] = [];
      for (let day = 0; day < 6; day++) log = [...log, ...(await postInOrder(api, 'w', dayOf(day, 30, 61 + day)))];
      // Days 4 and 5 each froze (points on days 0 and 1), each in steps, none inside a transaction.
      expect((await readFreeze(server.db, 'w'))?.past.day).toBe(Math.floor(START / DAY) + 1);
      expect(openAtSteps.length).toBeGreaterThanOrEqual(2);
      expect(openAtSteps.every((n) => n === 0)).toBe(true);
      // Day 6's first match reuses an id: the freeze ran before the lock, then the match was refused (409), so that freeze is
      // no state of the log. Posted together with a second match of day 4, both in one batch: the batch is rolled back and
      // written again on a history derived afresh, which freezes for the second match inside the transaction.
      const [reused, fresh] = dayOf(6, 2, 65);
      const steps = openAtSteps.length;
      const [refused, written] = await Promise.all([
        api.post('/v1/ladders/w/matches', body({ ...reused!, id: log[0]!.id })),
        api.post('/v1/ladders/w/matches', body(fresh!), { 'idempotency-key': fresh!.id }),
      ]);
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(written.status, JSON.stringify(written.body)).toBe(201);
      expect(openAtSteps.slice(steps).some((n) => n === 0)).toBe(true);
      log = [...log, fresh!];
      // Alone in its batch, a refused trigger breaks nothing either.
      const [again] = dayOf(7, 1, 66);
      expect((await api.post('/v1/ladders/w/matches', body({ ...again!, id: log[1]!.id }))).status).toBe(409);
      log = [...log, ...(await postInOrder(api, 'w', dayOf(7, 10, 67)))];
      const core = new WhrHistory(options);
      for (const match of log) core.addMatch(coreMatch(match));
      expect((await readFreeze(server.db, 'w'))!.past).toEqual(core.frozen());
      await expectStored(api, 'w', expected(log, options));
      const report = await rebuildLadder(server.db, await server.ladders.get('w'));
      expect(report.differences).toEqual([]);
      expect(report.frozenPriors).toBe('same');
    } finally {
      spy.mockRestore();
    }
  });

  it('with a horizon, a void and a correction store the corrected log’s priors under its new epoch; a restart continues from them', async () => {
    const options: WhrOptions = { ...OPTIONS, horizon: 2, freezeLag: 0 };
    const { server, api, settings } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    let log = await postInOrder(api, 'w', [...dayOf(0, 6, 41), ...dayOf(1, 6, 42), ...dayOf(3, 6, 43), ...dayOf(4, 6, 44)]);
    const before = (await readFreeze(server.db, 'w'))!;
    // Each correction derives the whole history again: every freeze of that derivation runs ahead of its match, in steps
    // with turns of the loop between them (`freezeBefore`), none in one piece inside the match (`freezeAt`).
    const history = WhrHistory.prototype as unknown as { freezeAt(day: number): void; freezeAhead(day: number): Iterable<void> | undefined };
    const inOnePiece = vi.spyOn(history, 'freezeAt');
    const ahead = vi.spyOn(history, 'freezeAhead');
    // Void a match of day 3 (live at the last freeze, of day 2) and correct one of day 0 (frozen in the priors).
    const voided = log.find((m) => m.id === 'd3-2')!;
    expect((await api.post(`/v1/ladders/w/matches/${voided.id}/void`, { reason: 'test' })).status).toBe(200);
    log = log.filter((m) => m !== voided);
    const target = log.find((m) => m.id === 'd0-1')!;
    const swapped: Posted = { ...target, winner: target.loser, loser: target.winner };
    expect((await api.put(`/v1/ladders/w/matches/${target.id}`, body(swapped))).status).toBe(200);
    log = log.map((m) => (m === target ? swapped : m));
    // Freezes at days 1 and 2 (made by the first matches of days 3 and 4), in each of the two derivations.
    expect(ahead.mock.results.filter((result) => result.value !== undefined).length).toBe(4);
    expect(inOnePiece).not.toHaveBeenCalled();
    inOnePiece.mockRestore();
    ahead.mockRestore();
    const core = new WhrHistory(options);
    for (const match of log) core.addMatch(coreMatch(match));
    const after = (await readFreeze(server.db, 'w'))!;
    expect(after.logEpoch).not.toBe(before.logEpoch);
    expect(after.logEpoch).toBe((await logHead(server.db, 'w'))!.logEpoch);
    expect(after.past).toEqual(core.frozen());
    expect(after.past).not.toEqual(before.past);
    await expectStored(api, 'w', expected(log, options));
    const { server: again, api: api2 } = await restart(server, settings);
    log = [...log, ...(await postInOrder(api2, 'w', dayOf(5, 6, 45)))];
    await expectStored(api2, 'w', expected(log, options));
    const report = await rebuildLadder(again.db, await again.ladders.get('w'));
    expect(report.differences).toEqual([]);
    expect(report.frozenPriors).toBe('same');
  });

  it('a horizon ladder with context deviations stores its freeze with the context priors; restarts restore it to the core’s states, bit for bit; rebuild agrees', async () => {
    const options: WhrOptions = { ...OPTIONS, horizon: 2, freezeLag: 0, contextPriorVariance: 0.2, contextDailyVariance: 0.002 };
    const { server, api, settings } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    let log = await postInOrder(api, 'w', inContexts([...dayOf(0, 6, 61), ...dayOf(1, 6, 62), ...dayOf(3, 6, 63)], 1));
    await expectStored(api, 'w', expected(log, options));
    // A restart, days 4 and 6, and late matches of day 5 (after the freeze at day 4) in contexts.
    const { server: again, api: api2 } = await restart(server, settings);
    log = [...log, ...(await postInOrder(api2, 'w', inContexts([...dayOf(4, 6, 64), ...dayOf(6, 6, 65), ...dayOf(5, 3, 66, PLAYERS, 'late')], 2)))];
    // A second restart starts from the stored freeze (day 6 froze day 4), the late matches among the live ones.
    const { server: third, api: api3 } = await restart(again, settings);
    log = [...log, ...(await postInOrder(api3, 'w', inContexts(dayOf(7, 6, 67), 3)))];
    // The core fed the whole log: its last freeze (day 7 froze day 5) is the stored one, context priors included, to the last bit.
    const core = new WhrHistory(options);
    for (const match of log) core.addMatch(coreMatch(match));
    const stored = (await readFreeze(third.db, 'w'))!;
    expect(stored.past.day).toBe(Math.floor(START / DAY) + 5);
    expect(stored.past).toEqual(core.frozen());
    expect(stored.past.players.filter((p) => (p.contexts?.length ?? 0) === 3).length).toBeGreaterThan(2);
    // Every state, its context offsets included, is the core's.
    for (const id of core.playerIds()) {
      const reply = await api3.get(`/v1/ladders/w/players/${id}`);
      expect(reply.status, id).toBe(200);
      const e = core.estimate(id)!;
      expect(reply.body.matches, id).toBe(e.matches);
      expect(reply.body.rating, id).toBeCloseTo(1500 + e.mean * WHR_SCALE, 9);
      expect(reply.body.rd, id).toBeCloseTo(Math.sqrt(e.variance) * WHR_SCALE, 9);
      const deviations = [...core.contextEstimates(id)];
      expect(Object.keys(reply.body.contexts ?? {}), id).toEqual(deviations.map(([context]) => context));
      for (const [context, d] of deviations) {
        expect(reply.body.contexts[context].offset, `${id} ${context}`).toBeCloseTo(d.mean * WHR_SCALE, 9);
        expect(reply.body.contexts[context].rd, `${id} ${context}`).toBeCloseTo(Math.sqrt(d.variance) * WHR_SCALE, 9);
        expect(reply.body.contexts[context].matches, `${id} ${context}`).toBe(d.matches);
      }
    }
    // A history started from the stored freeze reads only the live matches and reaches the states of the whole log to the last bit,
    // which are the core rating system's.
    const { ladder, whole, restored } = await deriveBothWays(third, 'w');
    expect(whole.counted).toBe(log.length);
    expect(restored.counted).toBeLessThan(log.length / 2);
    expect(restored.states).toEqual(whole.states);
    expect(restored.freeze()).toEqual(whole.freeze());
    const system = createWhrSystem(options);
    for (const match of log) system.rateMatch(coreMatch(match), new Map());
    expect(new Map(whole.states)).toEqual(system.states());
    const report = await rebuildLadder(third.db, ladder);
    expect(report.matches).toBe(log.length);
    expect(report.differences).toEqual([]);
    expect(report.frozenPriors).toBe('same');
  });

  it('a horizon ladder with the newcomer options stores each first day and the frozen entrants; restarts restore it to the core’s states, bit for bit; rebuild agrees', async () => {
    const options: WhrOptions = { ...OPTIONS, horizon: 2, freezeLag: 0, newcomerTrend: 0.01, newcomerTrendPeriods: 30, newcomerMean: 'context' };
    const { server, api, settings } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'n', system: 'whr', options })).status).toBe(201);
    // Players keep arriving: four at first, two more on day 4, two more on day 7; the entry groups are the contexts of first matches.
    const later = [...PLAYERS, 'gus', 'hal'];
    let log = await postInOrder(
      api,
      'n',
      inContexts([...dayOf(0, 6, 71, PLAYERS.slice(0, 4)), ...dayOf(1, 6, 72, PLAYERS.slice(0, 4)), ...dayOf(3, 6, 73, PLAYERS.slice(0, 4))], 4),
    );
    const { server: again, api: api2 } = await restart(server, settings);
    log = [...log, ...(await postInOrder(api2, 'n', inContexts([...dayOf(4, 6, 74), ...dayOf(6, 6, 75), ...dayOf(5, 3, 76, PLAYERS, 'late')], 5)))];
    const { server: third, api: api3 } = await restart(again, settings);
    log = [...log, ...(await postInOrder(api3, 'n', inContexts(dayOf(7, 8, 77, later), 6)))];
    const core = new WhrHistory(options);
    for (const match of log) core.addMatch(coreMatch(match));
    const stored = (await readFreeze(third.db, 'n'))!;
    expect(stored.past.day).toBe(Math.floor(START / DAY) + 5);
    expect(stored.past).toEqual(core.frozen());
    expect(stored.past.players.every((p) => Number.isInteger(p.firstDay))).toBe(true);
    expect(stored.past.entrants!.reduce((n, group) => n + group.count, 0)).toBeGreaterThanOrEqual(4);
    for (const id of core.playerIds()) {
      const reply = await api3.get(`/v1/ladders/n/players/${id}`);
      expect(reply.status, id).toBe(200);
      const e = core.estimate(id)!;
      expect(reply.body.rating, id).toBeCloseTo(1500 + e.mean * WHR_SCALE, 9);
      expect(reply.body.rd, id).toBeCloseTo(Math.sqrt(e.variance) * WHR_SCALE, 9);
    }
    const { ladder, whole, restored } = await deriveBothWays(third, 'n');
    expect(restored.counted).toBeLessThan(log.length / 2);
    expect(restored.states).toEqual(whole.states);
    expect(restored.freeze()).toEqual(whole.freeze());
    const report = await rebuildLadder(third.db, ladder);
    expect(report.differences).toEqual([]);
    expect(report.frozenPriors).toBe('same');
  });

  it('voids and corrections derive the history again; the writer continues from the corrected log', async () => {
    const { server, api } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr', options: OPTIONS })).status).toBe(201);
    let log = await postInOrder(api, 'w', [...dayOf(0, 8, 21), ...dayOf(1, 8, 22), ...dayOf(2, 8, 23)]);
    // Void a day-0 match: every later estimate changes.
    const voided = log[3]!;
    const reply = await api.post(`/v1/ladders/w/matches/${voided.id}/void`, { reason: 'test' });
    expect(reply.status).toBe(200);
    expect(reply.body.changed).toBe(true);
    expect(reply.body.rerated).toBe(log.length - 4);
    log = log.filter((m) => m !== voided);
    await expectStored(api, 'w', expected(log));
    // Correct another: the loser won.
    const target = log[5]!;
    const swapped: Posted = { ...target, winner: target.loser, loser: target.winner };
    const put = await api.put(`/v1/ladders/w/matches/${target.id}`, body(swapped));
    expect(put.status).toBe(200);
    log = log.map((m) => (m === target ? swapped : m));
    await expectStored(api, 'w', expected(log));
    // The writer's history was derived before the corrections: it must notice and derive it again.
    log = [...log, ...(await postInOrder(api, 'w', dayOf(3, 6, 24)))];
    await expectStored(api, 'w', expected(log));
    expect((await rebuildLadder(server.db, await server.ladders.get('w'))).differences).toEqual([]);
  });

  it('refuses seasons and World-vs-World rounds for whr ladders, saying why', async () => {
    const { api } = await serverOn();
    expect((await api.post('/v1/ladders', { id: 'w', system: 'whr' })).status).toBe(201);
    const season = await api.post('/v1/ladders/w/seasons', { name: 'two', reset: { keep: 0.5 } });
    expect(season.status).toBe(400);
    expect(season.body.error.field).toBe('ladder');
    expect(season.body.error.message).toContain('whole match log');
    const round = await api.post('/v1/ladders/w/rounds', { matches: [{ worlds: { a: 1, b: 2 } }] });
    expect(round.status).toBe(400);
    expect(round.body.error.field).toBe('ladder');
  });

  if (backend === 'postgres+redis') {
    it('two instances writing one whr ladder end with the states rebuild gives and the core computes', async () => {
      const { server: first, api: one, settings } = await serverOn();
      const { server: second, api: two } = await serverOn(settings);
      expect((await one.post('/v1/ladders', { id: 'w', system: 'whr', options: OPTIONS, standings: { placementMatches: 1 } })).status).toBe(201);
      // Taking turns: each instance finds the other's matches in the log and adds them before its own.
      let log: Posted[] = [];
      for (const [i, match] of dayOf(0, 10, 31).entries()) log = [...log, ...(await postInOrder(i % 2 === 0 ? one : two, 'w', [match]))];
      // Both at once, across two days.
      log = [...log, ...(await postTogether([one, two], 'w', [...dayOf(1, 14, 32), ...dayOf(2, 14, 33).map((m) => ({ ...m, at: m.at }))]))];
      const want = expected(log);
      await expectStored(one, 'w', want);
      await expectStored(two, 'w', want);
      // A void through one instance; the other continues from the corrected log.
      const voided = log[2]!;
      expect((await one.post(`/v1/ladders/w/matches/${voided.id}/void`, { reason: 'test' })).status).toBe(200);
      log = log.filter((m) => m !== voided);
      log = [...log, ...(await postInOrder(two, 'w', dayOf(3, 5, 34)))];
      const final = expected(log);
      await expectStored(one, 'w', final);
      const boardOne = (await one.get('/v1/ladders/w/leaderboard?limit=20')).body;
      const boardTwo = (await two.get('/v1/ladders/w/leaderboard?limit=20')).body;
      expect(boardTwo).toEqual(boardOne);
      expect(boardOne.entries.map((e: { id: string }) => e.id)).toEqual([...final].sort((x, y) => y[1].rating - x[1].rating).map(([id]) => id));
      expect((await rebuildLadder(first.db, await first.ladders.get('w'))).differences).toEqual([]);
      expect((await rebuildLadder(second.db, await second.ladders.get('w'))).differences).toEqual([]);
    });

    it('with a horizon, the instance whose match made a freeze stores it; the other meets it in the log and does not store it again', async () => {
      const options: WhrOptions = { ...OPTIONS, horizon: 2, freezeLag: 0 };
      const { server: first, api: one, settings } = await serverOn();
      const { server: second, api: two } = await serverOn(settings);
      expect((await one.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
      let log = await postInOrder(one, 'w', [...dayOf(0, 6, 51), ...dayOf(1, 3, 52)]);
      // The second instance derives its history before any freeze.
      log = [...log, ...(await postInOrder(two, 'w', dayOf(1, 3, 53, PLAYERS, 'd1b')))];
      expect(await readFreeze(first.db, 'w')).toBeUndefined();
      // Day 3 through the first instance freezes day 1: stored in that match's transaction.
      log = [...log, ...(await postInOrder(one, 'w', dayOf(3, 2, 54)))];
      const stored = (await readFreeze(first.db, 'w'))!;
      expect(stored.triggerSeq).toBe(log.findIndex((m) => m.id.startsWith('d3-')) + 1);
      // The second instance adds those matches under the lock, its history freezes at the same point, and the row stays as written.
      log = [...log, ...(await postInOrder(two, 'w', dayOf(3, 2, 55, PLAYERS, 'd3b')))];
      expect(await readFreeze(second.db, 'w')).toEqual(stored);
      const core = new WhrHistory(options);
      for (const match of log) core.addMatch(coreMatch(match));
      expect(stored.past).toEqual(core.frozen());
      await expectStored(two, 'w', expected(log, options));
      expect((await rebuildLadder(second.db, await second.ladders.get('w'))).differences).toEqual([]);
    });
  }
});
