/**
 * The matchmakers' host at the library level: a worker-thread matchmaker
 * runs its pass off the main thread (the main thread's event loop keeps
 * turning meanwhile), answers exactly as an in-process one, and a stopped
 * worker fails its matchmakers and is replaced by the next `create`.
 */
import { threadId } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { syntheticQueue } from 'ladder-core/matchmaking/synthetic-queue.js';
import { inProcessMatchmakers, type MatchmakerHost, type RemoteMatchmaker, workerMatchmakers } from './host.js';
import { MATCHES_PER_PART, type MatchmakerOp } from './protocol.js';
import { MatchmakingWorkerStoppedError } from './worker-stopped-error.js';
import { countLoopTurns } from '../../../test/support/loop-turns.js';

const hosts: MatchmakerHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});
function open(kind: 'worker' | 'in process'): MatchmakerHost {
  const host = kind === 'worker' ? workerMatchmakers() : inProcessMatchmakers();
  hosts.push(host);
  return host;
}

/** Turns of the main thread's event loop while `work` is pending. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  const counter = countLoopTurns();
  // The first turn may fall before the work starts; only turns after the call count.
  await new Promise((resolve) => setImmediate(resolve));
  const before = counter.turns();
  const value = await work();
  counter.stop();
  return { value, turns: counter.turns() - before };
}

async function filled(host: MatchmakerHost, tickets: number): Promise<RemoteMatchmaker> {
  const matchmaker = await host.create({ teamSize: 6 });
  await matchmaker.apply(syntheticQueue({ tickets, seed: 7, spanSeconds: 300, teamSize: 6 }).map((ticket): MatchmakerOp => ({ op: 'add', ticket })));
  return matchmaker;
}

describe('matchmakers in a worker thread', () => {
  it('run the pass over 100,000 tickets off the main thread: its event loop keeps turning meanwhile', async () => {
    const matchmaker = await filled(open('worker'), 100_000);
    expect(matchmaker.threadId).not.toBe(threadId);
    expect(matchmaker.size).toBe(100_000);
    const { value: result, turns } = await turnsDuring(() => matchmaker.pass(300));
    expect(result.matches.length).toBeGreaterThan(1000);
    expect(matchmaker.size).toBe(100_000 - result.matches.reduce((n, m) => n + m.teams.flat().length, 0));
    expect(turns).toBeGreaterThan(2);
  });

  it('in process, the same pass holds the event loop from start to end', async () => {
    const matchmaker = await filled(open('in process'), 20_000);
    expect(matchmaker.threadId).toBe(threadId);
    const { value: result, turns } = await turnsDuring(() => matchmaker.pass(300));
    expect(result.matches.length).toBeGreaterThan(100);
    expect(turns).toBe(0);
  });

  it('answer every op and pass exactly as a matchmaker in process does (matches sent back in parts included)', async () => {
    const [remote, local] = await Promise.all([filled(open('worker'), 30_000), filled(open('in process'), 30_000)]);
    const queue = syntheticQueue({ tickets: 30_000, seed: 7, spanSeconds: 300, teamSize: 6 });
    const ops: MatchmakerOp[] = [
      { op: 'add', ticket: queue[0]! },
      { op: 'cancel', id: queue[1]!.id },
      { op: 'cancel', id: queue[1]!.id },
      { op: 'add', ticket: { ...queue[2]!, id: 'other', players: [{ ...queue[2]!.players[0]!, percentile: 200 }] } },
      { op: 'addBackfill', backfill: { id: 'b', match: 'm', region: 'eu', at: 10, teams: [['x1'], []], players: { x1: { percentile: 50 } } } },
      { op: 'addBackfill', backfill: { id: 'b', match: 'm', region: 'eu', at: 10, teams: [['x1'], []], players: { x1: { percentile: 50 } } } },
      { op: 'removeBackfill', id: 'b' },
      { op: 'removeBackfill', id: 'b' },
    ];
    const answers = await remote.apply(ops);
    expect(answers).toEqual(await local.apply(ops));
    // Already held: told by has(), never by an error's text.
    expect(answers[0]).toBe('present');
    expect(answers.slice(1, 3)).toEqual([true, false]);
    expect(answers[3]).toMatchObject({ refused: { field: 'players[0].percentile' } });
    expect(answers.slice(4)).toEqual([null, 'present', true, false]);
    const [a, b] = await Promise.all([remote.pass(300), local.pass(300)]);
    // More matches than one part holds, so they crossed in several messages.
    expect(a.matches.length).toBeGreaterThan(MATCHES_PER_PART);
    expect(a.matches).toEqual(b.matches);
    expect([remote.size, remote.backfillCount]).toEqual([local.size, local.backfillCount]);
    const late = { id: 'late', at: 299, players: [{ id: 'late-p', percentile: 50, pings: { eu: 20 } }] };
    await remote.add(late);
    await expect(remote.add(late)).rejects.toThrow(InvalidInputError);
    await expect(remote.cancel('late')).resolves.toBe(true);
    await expect(remote.cancel('late')).resolves.toBe(false);
  });

  it("hand a pass's matches over a part at a time, with a turn of the event loop before each part after the first", async () => {
    const matchmaker = await filled(open('worker'), 30_000);
    const counter = countLoopTurns();
    const streamed = await matchmaker.passInParts(300);
    // Each part after the first comes after a turn of the loop (the turn the main thread gives before asking for it).
    const turnsAtPart: number[] = [];
    const sizes: number[] = [];
    for await (const part of streamed.parts()) {
      turnsAtPart.push(counter.turns());
      sizes.push(part.length);
    }
    counter.stop();
    expect(streamed.formed).toBeGreaterThan(2 * MATCHES_PER_PART);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(streamed.formed);
    expect(sizes.every((n) => n <= MATCHES_PER_PART)).toBe(true);
    expect(turnsAtPart.slice(1).every((n, i) => n > turnsAtPart[i]!)).toBe(true);
  });

  it('a stopped worker fails its matchmakers; the next create starts another', async () => {
    const host = open('worker');
    const first = await filled(host, 1000);
    const worker = host.worker!;
    expect(worker).toBeDefined();
    const inFlight = first.pass(300);
    await worker.terminate();
    await expect(inFlight).rejects.toThrow(MatchmakingWorkerStoppedError);
    expect(first.alive).toBe(false);
    await expect(first.apply([{ op: 'cancel', id: 'x' }])).rejects.toThrow(MatchmakingWorkerStoppedError);
    const second = await filled(host, 1000);
    expect(second.alive).toBe(true);
    expect(host.restarts).toBe(1);
    expect(host.worker).not.toBe(worker);
    expect((await second.pass(300)).matches.length).toBeGreaterThan(10);
  });
});
