import { threadId } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { TEST_KINDS } from '../../../test/support/pool-kinds.js';
import { JobCancelledError, JobTimeoutError, UnavailableError } from '../errors/index.js';
import { WorkerPool } from './pool.js';

const script = new URL('../../../test/support/pool-worker.ts', import.meta.url);
const pools: Array<WorkerPool<typeof TEST_KINDS>> = [];

function pool(size: number, timeoutMs = 20_000) {
  const created = new WorkerPool({ size, script, kinds: TEST_KINDS, timeoutMs });
  pools.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('WorkerPool (real worker threads, loading the TypeScript source through tsx)', () => {
  it('runs jobs in worker threads, never more at once than its size', async () => {
    const p = pool(2);
    const runs = await Promise.all([1, 2, 3, 4, 5].map((value) => p.run('echo', { value })));
    expect(runs.map((run) => run.output.value)).toEqual([1, 2, 3, 4, 5]);
    const threads = new Set(runs.map((run) => run.threadId));
    expect(threads.has(threadId)).toBe(false);
    expect(threads.size).toBeGreaterThanOrEqual(1);
    expect(threads.size).toBeLessThanOrEqual(2);
    for (const run of runs) expect(run.output.threadId).toBe(run.threadId);
    expect(p.threadIds.length).toBeLessThanOrEqual(2);
  });

  it('gives a job’s domain error back as its own class, field included, and goes on', async () => {
    const p = pool(1);
    const error = await p.run('invalid', { field: 'parties[0]' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).field).toBe('parties[0]');
    const bug = await p.run('bug', undefined as never).catch((e: unknown) => e);
    expect(bug).toBeInstanceOf(Error);
    expect((bug as Error).name).toBe('TypeError');
    const before = p.threadIds;
    expect((await p.run('echo', { value: 'next' })).output.value).toBe('next');
    expect(p.threadIds).toEqual(before); // a thrown job does not cost the worker
  });

  it('survives a worker that exits under a job: that job fails, the next runs on a new worker', async () => {
    const p = pool(1);
    const first = await p.run('echo', { value: 1 });
    const error = await p.run('exit', undefined as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/exit code 3/);
    const next = await p.run('echo', { value: 2 });
    expect(next.output.value).toBe(2);
    expect(next.threadId).not.toBe(first.threadId);
  });

  it('survives a worker that dies of an uncaught error between jobs', async () => {
    const p = pool(1);
    const first = await p.run('crashLater', undefined as never);
    // Its answer went out before the timer's error killed it; the pool notices and the next job gets a new worker.
    await vi.waitFor(() => expect(p.threadIds).not.toContain(first.threadId), { timeout: 10_000 });
    const next = await p.run('echo', { value: 'after' });
    expect(next.output.value).toBe('after');
    expect(next.threadId).not.toBe(first.threadId);
  });

  it('stops a job past its time limit, replaces the worker, and serves the jobs queued behind it', async () => {
    const p = pool(1, 300);
    const first = await p.run('echo', { value: 0 });
    const [slow, queued] = await Promise.allSettled([p.run('spin', { ms: 60_000 }), p.run('echo', { value: 'queued' })]);
    expect(slow.status).toBe('rejected');
    expect((slow as PromiseRejectedResult).reason).toBeInstanceOf(JobTimeoutError);
    expect((slow as PromiseRejectedResult).reason).toMatchObject({ kind: 'spin', limitMs: 300 });
    expect(queued.status).toBe('fulfilled');
    expect((queued as PromiseFulfilledResult<{ threadId: number }>).value.threadId).not.toBe(first.threadId);
  });

  it('drops a queued job whose signal aborts: it never runs, it fails with JobCancelledError, and the job behind it takes its place', async () => {
    const p = pool(1);
    // The worker is busy with a long job, so the next ones wait in the queue.
    const busy = p.run('spin', { ms: 2000 });
    await vi.waitFor(() => expect(p.running).toBe(1), { timeout: 15_000 });
    const leaving = new AbortController();
    const dropped = p.run('count', undefined as never, { signal: leaving.signal }).catch((e: unknown) => e);
    const behind = p.run('count', undefined as never);
    expect(p.waiting).toBe(2);
    leaving.abort();
    expect(p.waiting).toBe(1);
    const error = await dropped;
    expect(error).toBeInstanceOf(JobCancelledError);
    expect((error as Error).message).toBe('the count job was cancelled before it ran: its client went away');
    const spun = await busy;
    const next = await behind;
    // One worker ran both `count` jobs it was given: the dropped one would have made this 2.
    expect(next.threadId).toBe(spun.threadId);
    expect(next.output.counted).toBe(1);
    expect(p.waiting).toBe(0);
  });

  it('refuses a job whose signal has already aborted, and lets a running job finish when its signal aborts', async () => {
    const p = pool(1);
    const gone = new AbortController();
    gone.abort();
    await expect(p.run('count', undefined as never, { signal: gone.signal })).rejects.toBeInstanceOf(JobCancelledError);
    expect(p.waiting).toBe(0);
    const leaving = new AbortController();
    const running = p.run('spin', { ms: 1000 }, { signal: leaving.signal });
    await vi.waitFor(() => expect(p.running).toBe(1), { timeout: 15_000 });
    leaving.abort();
    const ran = await running;
    expect(ran.output).toBe(ran.threadId);
    expect(ran.runMs).toBeGreaterThanOrEqual(1000);
  });

  it('runs its workers at a lower priority than the event loop (Linux)', async () => {
    const p = pool(1);
    const { output } = await p.run('priority', undefined as never);
    if (process.platform === 'linux') expect(output).toBe(10);
    else expect(output === null || output === 10).toBe(true);
  });

  it('runs inline on the calling thread with size 0', async () => {
    const p = pool(0);
    const run = await p.run('echo', { value: 'here' });
    expect(run.threadId).toBe(0);
    expect(run.output.threadId).toBe(threadId);
    expect(p.liveThreads).toBe(0);
    await expect(p.run('invalid', { field: 'x' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('terminates its workers on close and fails what was running or waiting', async () => {
    const p = pool(2);
    await Promise.all([p.run('echo', { value: 1 }), p.run('echo', { value: 2 })]);
    const running = [p.run('spin', { ms: 60_000 }), p.run('spin', { ms: 60_000 }), p.run('echo', { value: 'waiting' })].map((job) => job.catch((e: unknown) => e));
    expect(p.liveThreads).toBe(2);
    await p.close();
    for (const outcome of await Promise.all(running)) expect(outcome).toBeInstanceOf(UnavailableError);
    expect(p.threadIds).toEqual([]);
    expect(p.liveThreads).toBe(0);
    await expect(p.run('echo', { value: 'late' })).rejects.toBeInstanceOf(UnavailableError);
  });
});
