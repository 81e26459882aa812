/**
 * A whr ladder's history after a restart is derived from the log outside
 * the write transaction, page by page, in slices with a turn of the event
 * loop between them: the first write after the start lets the event loop
 * turn at least once per slice (counted, not timed), and the slices reach
 * the states the writer stored before the restart (`rebuild` agrees).
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { WhrHistory } from 'ladder-core/core/whr/index.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import { LadderHistory, startHistory } from '../../src/service/whole-history.js';
import { readFreeze, writeFreeze } from '../../src/store/frozen.js';
import { logHead } from '../../src/store/ladders.js';
import { BACKENDS, type Backend, cleanupShared, client, freshDataDir, startTestServer, type TestServer, uniqueName, WHR_LOG_START } from './helpers.js';
import { countLoopTurns } from '../support/loop-turns.js';

const DAY = 86_400_000;
const START = WHR_LOG_START;
const MATCHES = 480;
const SLICE = 6;

/** Match i of the log: mostly one against one, every tenth a free-for-all of four. */
function matchBody(i: number) {
  const at = START + Math.floor(i / 60) * DAY + (i % 60) * 60_000;
  const player = (k: number) => `p${(i * 7 + k * 13) % 40}`;
  if (i % 10 === 9) return { id: `m${i}`, at, teams: [0, 1, 2, 3].map((k) => ({ players: [player(k)], rank: k + 1 })) };
  return {
    id: `m${i}`,
    at,
    teams: [
      { players: [player(0)], rank: 1 },
      { players: [player(1)], rank: i % 7 === 0 ? 1 : 2 },
    ],
  };
}

describe.each(BACKENDS)('whr derivation after a start on %s', (backend: Backend) => {
  const servers: TestServer[] = [];
  const shared: Array<{ schema?: string; prefix?: string }> = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.dispose();
  });
  afterAll(async () => {
    for (const s of shared) await cleanupShared(s.schema, s.prefix);
    for (const s of shared as Array<{ dataDir?: string }>) if (s.dataDir) (await import('node:fs')).rmSync(s.dataDir, { recursive: true, force: true });
  });

  async function serverOn(settings: { dataDir?: string; schema?: string; prefix?: string }) {
    const server = await startTestServer({ backend, ...settings, options: { writer: { derivation: { sliceMatches: SLICE, pageSize: 100 } } } });
    servers.push(server);
    return { server, api: client(server.url, server.admin) };
  }

  it('the first write after a restart derives the history in slices, the event loop turning between them, to the same states', async () => {
    const settings = backend === 'pglite' ? { dataDir: await freshDataDir() } : { schema: uniqueName('ladder_whrd'), prefix: `${uniqueName('lwd')}:` };
    shared.push(settings);
    const first = await serverOn(settings);
    expect((await first.api.post('/v1/ladders', { id: 'w', system: 'whr', options: { window: 8 } })).status).toBe(201);
    for (let i = 0; i < MATCHES; i += 60) {
      const replies = await Promise.all(Array.from({ length: 60 }, (_, k) => first.api.post('/v1/ladders/w/matches', matchBody(i + k))));
      for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    }
    await first.server.dispose();
    servers.splice(0);

    const { server, api } = await serverOn(settings);
    const counter = countLoopTurns();
    const reply = await api.post('/v1/ladders/w/matches', matchBody(MATCHES));
    const turns = counter.stop();
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.match.seq).toBe(MATCHES + 1);
    // One turn at least per slice of SLICE matches (one write without slices takes a few dozen at most).
    expect(turns).toBeGreaterThanOrEqual(MATCHES / SLICE);
    const report = await rebuildLadder(server.db, await server.ladders.get('w'));
    expect(report.matches).toBe(MATCHES + 1);
    expect(report.differences).toEqual([]);
  });

  it('with a horizon, a start restores the stored freeze and reads only the matches after it, to the states of the whole log, bit for bit', async () => {
    const settings = backend === 'pglite' ? { dataDir: await freshDataDir() } : { schema: uniqueName('ladder_whrf'), prefix: `${uniqueName('lwf')}:` };
    shared.push(settings);
    const first = await serverOn(settings);
    // 60 matches a day over 8 days; horizon 2: a freeze point every day, the first freeze on day 2.
    const options = { window: 8, horizon: 2, freezeLag: 0 };
    expect((await first.api.post('/v1/ladders', { id: 'w', system: 'whr', options })).status).toBe(201);
    for (let i = 0; i < MATCHES; i += 60) {
      const replies = await Promise.all(Array.from({ length: 60 }, (_, k) => first.api.post('/v1/ladders/w/matches', matchBody(i + k))));
      for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    }
    const before = await first.server.ladders.get('w');
    const head = (await logHead(first.server.db, 'w'))!;
    const stored = (await readFreeze(first.server.db, 'w'))!;
    // Day 7's first match (seq 421) made the last freeze, at day 7 − 2 = 5 (days from START's day): the live matches are days 6 and 7's, from seq 361.
    expect(stored.logEpoch).toBe(head.logEpoch);
    expect(stored.past.day).toBe(Math.floor(START / DAY) + 5);
    expect(stored.triggerSeq).toBe(421);
    expect(stored.fromSeq).toBe(361);
    expect(stored.past.players.length).toBe(40);
    const whole = new LadderHistory(before.system, before.options, head.logEpoch);
    // Each freeze of the derivation (days 2 to 7 make one each) runs ahead of its match in steps with turns of the
    // loop between them (`freezeBefore`), none in one piece inside the match (`freezeAt`).
    const core = WhrHistory.prototype as unknown as { freezeAt(day: number): void; freezeAhead(day: number): Iterable<void> | undefined };
    const inOnePiece = vi.spyOn(core, 'freezeAt');
    const ahead = vi.spyOn(core, 'freezeAhead');
    try {
      await whole.deriveInSlices(first.server.db, 'w', head.lastSeq);
      expect(ahead.mock.results.filter((result) => result.value !== undefined).length).toBe(6);
      expect(inOnePiece).not.toHaveBeenCalled();
    } finally {
      inOnePiece.mockRestore();
      ahead.mockRestore();
    }
    expect(whole.counted).toBe(MATCHES);
    const restored = await startHistory(first.server.db, before, head.logEpoch, head.lastSeq);
    // The derivation makes the history's room once: the matches it reads, and a quarter more for the writes after it.
    const system = (restored as unknown as { system: { reserve(matches: number): void } }).system;
    const reserve = system.reserve.bind(system);
    const reserved: number[] = [];
    system.reserve = (matches) => {
      reserved.push(matches);
      reserve(matches);
    };
    await restored.deriveInSlices(first.server.db, 'w', head.lastSeq);
    expect(reserved).toEqual([Math.ceil((MATCHES - 360) * 1.25)]);
    // Only the live window taken in, and every state equal to the last bit.
    expect(restored.counted).toBe(MATCHES - 360);
    expect(restored.states).toEqual(whole.states);
    expect(restored.freeze()).toEqual(whole.freeze());
    // A freeze of another log epoch is not used: the whole log is read.
    const stale = await startHistory(first.server.db, before, head.logEpoch + 1, head.lastSeq);
    await stale.deriveInSlices(first.server.db, 'w', head.lastSeq);
    expect(stale.counted).toBe(MATCHES);
    expect(stale.states).toEqual(whole.states);
    // Nor one whose priors the core refuses (a variance of 0): the whole log again, then the good freeze put back.
    const broken = structuredClone(stored);
    broken.past.players[0]!.variance = 0;
    await writeFreeze(first.server.db, 'w', broken, Date.now());
    const refused = await startHistory(first.server.db, before, head.logEpoch, head.lastSeq);
    await refused.deriveInSlices(first.server.db, 'w', head.lastSeq);
    expect(refused.counted).toBe(MATCHES);
    expect(refused.states).toEqual(whole.states);
    // Rebuild tells the stored freeze from the log's, and --fix puts the log's back.
    const ladder = await first.server.ladders.get('w');
    expect((await rebuildLadder(first.server.db, ladder)).frozenPriors).toBe('differ');
    expect((await rebuildLadder(first.server.db, ladder, { fix: true })).fixed).toBe(true);
    const fixed = (await readFreeze(first.server.db, 'w'))!;
    expect({ ...fixed, writtenAt: 0 }).toEqual({ ...stored, writtenAt: 0 });
    expect((await rebuildLadder(first.server.db, ladder)).frozenPriors).toBe('same');
    // The first write after a restart continues from the stored freeze; rebuild (the whole log) agrees.
    const shown = async (a: typeof api, id: string) => {
      const reply = await a.get(`/v1/ladders/w/players/${id}`);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return { rating: reply.body.rating, rd: reply.body.rd, matches: reply.body.matches };
    };
    const api = first.api;
    const states = new Map<string, unknown>();
    for (const id of whole.states.keys()) states.set(id, await shown(api, id));
    await first.server.dispose();
    servers.splice(0);
    const { server, api: again } = await serverOn(settings);
    for (const [id, state] of states) expect(await shown(again, id), id).toEqual(state);
    const reply = await again.post('/v1/ladders/w/matches', matchBody(MATCHES));
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const report = await rebuildLadder(server.db, await server.ladders.get('w'));
    expect(report.matches).toBe(MATCHES + 1);
    expect(report.differences).toEqual([]);
    expect(report.frozenPriors).toBe('same');
  });
});
