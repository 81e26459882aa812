/**
 * A small pool of worker threads for CPU-heavy requests, so the event loop
 * that answers every other request never waits behind them.
 *
 * - Workers start on first use (most instances never balance a lobby), up to
 *   `size`, and stay until `close()`. An idle worker is unref'd: it never
 *   keeps a process alive on its own.
 * - Jobs wait in one FIFO queue and go to the first idle worker. A job is
 *   plain data (structured clone) in and out; errors come back as their own
 *   class (wire.ts).
 * - A job past its time limit has its worker terminated (the only way to
 *   stop synchronous code) and replaced on the next job; it fails with
 *   JobTimeoutError. A worker that dies under a job (an uncaught error, an
 *   exit) fails that job with UnavailableError and is replaced the same way.
 * - A job given an AbortSignal (its HTTP client's) that aborts while the
 *   job still waits in the queue is taken out of it and fails with
 *   JobCancelledError: it never runs, and the place it held goes to the
 *   next job. Once a worker has it, it runs on: a job is bounded by its time
 *   limit, and stopping it would cost a worker and a restart.
 * - `size: 0` runs every job inline, on the calling thread, with no time
 *   limit: for tools and tests that want no threads.
 *
 * Workers load compiled JavaScript (`worker.js` next to this file in
 * dist/). Run from the TypeScript source (tests, `tsx`), the pool starts
 * each worker through a two-line bootstrap that registers tsx's loader
 * first, since Node 20 ignores `--import` in a worker's execArgv.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerStart } from '../../store/worker-start.js';
import { JobCancelledError, JobTimeoutError, UnavailableError } from '../errors/index.js';
import type { JobKinds } from './serve.js';
import { fromWire, type JobMessage, type JobReply } from './wire.js';

export interface PoolOptions<K extends JobKinds> {
  /** Worker threads; 0 runs every job inline. @default max(1, availableParallelism() − 1) */
  size?: number;
  /** The worker's entry module (a module that calls `serveJobs` with the same kinds). */
  script: URL;
  /** The job kinds, run here when `size` is 0. */
  kinds: K;
  /** Milliseconds a job may run in a worker before the worker is stopped. @default 30000 */
  timeoutMs?: number;
}

/** What running a job took, and where it ran (`threadId` 0 is the main thread: inline). */
export interface JobRun<T> {
  output: T;
  threadId: number;
  /** Milliseconds in the worker (or inline). */
  runMs: number;
  /** Milliseconds waiting for a worker. */
  waitMs: number;
}

interface Pending {
  id: number;
  kind: string;
  input: unknown;
  timeoutMs: number;
  queuedAt: number;
  startedAt: number;
  resolve(run: JobRun<unknown>): void;
  reject(error: unknown): void;
  /** Stops listening to the job's signal: called when the job leaves the queue, for a worker or for good. */
  unlisten(): void;
}

interface Slot {
  worker: Worker;
  /** Its modules are loaded (its first message): jobs go only to ready workers. */
  ready: boolean;
  job: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Set once the slot is given up (crash, timeout, close): its later events are ignored. */
  gone: boolean;
}

export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism() - 1);
}

export class WorkerPool<K extends JobKinds> {
  readonly size: number;
  private readonly script: URL;
  private readonly kinds: K;
  private readonly timeoutMs: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  /** Workers started and not yet exited (counted by their 'exit' events, replaced or not). */
  private alive = 0;
  private closed = false;
  /** Terminations under way (timeouts, crashes), awaited by close(). */
  private readonly stopping = new Set<Promise<unknown>>();

  constructor(options: PoolOptions<K>) {
    const size = options.size ?? defaultPoolSize();
    if (!Number.isInteger(size) || size < 0) throw new RangeError(`pool size must be a non-negative integer, got ${size}`);
    this.size = size;
    this.script = options.script;
    this.kinds = options.kinds;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Jobs waiting for a worker. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Jobs running in workers now. */
  get running(): number {
    return this.slots.filter((slot) => slot.job !== undefined).length;
  }

  /** Worker threads that have not exited yet, including any being stopped. */
  get liveThreads(): number {
    return this.alive;
  }

  /** Thread ids of the workers in service. */
  get threadIds(): number[] {
    return this.slots.filter((slot) => !slot.gone).map((slot) => slot.worker.threadId);
  }

  /**
   * Runs a job: queued for the first idle worker, or inline with size 0.
   * `signal`: the job is dropped (JobCancelledError) if it aborts before a
   * worker takes the job; a job already running is not stopped.
   */
  run<Kind extends keyof K & string>(kind: Kind, input: Parameters<K[Kind]>[0], options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<JobRun<ReturnType<K[Kind]>>> {
    if (this.closed) return Promise.reject(new UnavailableError('server', 'the server is shutting down'));
    if (!Object.hasOwn(this.kinds, kind)) return Promise.reject(new Error(`no job kind ${JSON.stringify(kind)}`));
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(new JobCancelledError(kind));
    if (this.size === 0) return this.runInline(kind, input);
    return new Promise((resolve, reject) => {
      const job: Pending = {
        id: this.nextId++,
        kind,
        input,
        timeoutMs: options.timeoutMs ?? this.timeoutMs,
        queuedAt: performance.now(),
        startedAt: 0,
        resolve: resolve as Pending['resolve'],
        reject,
        unlisten: () => signal?.removeEventListener('abort', onAbort),
      };
      const onAbort = () => {
        const at = this.queue.indexOf(job);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(new JobCancelledError(kind));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  private async runInline<Kind extends keyof K & string>(kind: Kind, input: unknown): Promise<JobRun<ReturnType<K[Kind]>>> {
    const started = performance.now();
    const output = this.kinds[kind]!(input) as ReturnType<K[Kind]>;
    return { output, threadId: 0, runMs: performance.now() - started, waitMs: 0 };
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.ready && s.job === undefined && !s.gone);
      if (slot === undefined) {
        // One worker starting at a time is enough to take the next job; it dispatches when ready.
        if (this.slots.length < this.size && !this.slots.some((s) => !s.ready)) this.spawn();
        return;
      }
      const job = this.queue.shift()!;
      job.unlisten();
      this.start(slot, job);
    }
  }

  private spawn(): Slot {
    const start = workerStart(this.script);
    const worker = new Worker(start.target, { eval: start.eval, workerData: start.workerData });
    const slot: Slot = { worker, ready: false, job: undefined, timer: undefined, gone: false };
    worker.unref();
    worker.on('message', (reply: JobReply) => this.settle(slot, reply));
    // An uncaught error ends the worker; 'exit' follows. Both fail the job once.
    worker.on('error', (error) => this.lose(slot, new UnavailableError('server', 'the worker thread running this request failed; retry', 1, { cause: error })));
    this.alive++;
    worker.once('exit', () => this.alive--);
    worker.on('exit', (code) => this.lose(slot, new UnavailableError('server', `the worker thread running this request stopped (exit code ${code}); retry`, 1)));
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, job: Pending): void {
    slot.job = job;
    job.startedAt = performance.now();
    slot.worker.ref();
    slot.timer = setTimeout(() => this.timeOut(slot), job.timeoutMs);
    slot.worker.postMessage({ id: job.id, kind: job.kind, input: job.input } satisfies JobMessage);
  }

  private settle(slot: Slot, reply: JobReply): void {
    if ('ready' in reply) {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (slot.gone || job === undefined || job.id !== reply.id) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.worker.unref();
    if (reply.ok) job.resolve({ output: reply.output, threadId: slot.worker.threadId, runMs: performance.now() - job.startedAt, waitMs: job.startedAt - job.queuedAt });
    else job.reject(fromWire(reply.error));
    this.dispatch();
  }

  /** The slot is gone: fail its job, forget it, and let the next job start a replacement. */
  private lose(slot: Slot, error: Error): void {
    if (slot.gone) return;
    slot.gone = true;
    clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = undefined;
    this.slots.splice(this.slots.indexOf(slot), 1);
    job?.reject(error);
    // A worker that cannot even load (a broken build) would fail every replacement too: the waiting jobs fail now instead of looping.
    if (!slot.ready)
      for (const waiting of this.queue.splice(0)) {
        waiting.unlisten();
        waiting.reject(new UnavailableError('server', 'a worker thread failed to start; retry later', 5, { cause: error }));
      }
    if (!this.closed) this.dispatch();
  }

  private timeOut(slot: Slot): void {
    const job = slot.job;
    if (slot.gone || job === undefined) return;
    this.lose(slot, new JobTimeoutError(job.kind, job.timeoutMs));
    const stopped = slot.worker.terminate();
    this.stopping.add(stopped);
    void stopped.finally(() => this.stopping.delete(stopped));
  }

  /** Fails waiting jobs and the running ones, and stops every worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const shutting = new UnavailableError('server', 'the server is shutting down');
    for (const job of this.queue.splice(0)) {
      job.unlisten();
      job.reject(shutting);
    }
    const slots = [...this.slots];
    for (const slot of slots) this.lose(slot, shutting);
    await Promise.allSettled([...slots.map((slot) => slot.worker.terminate()), ...this.stopping]);
  }
}
