/**
 * Where the matchmaking loop's matchmakers live (docs/SERVICE.md,
 * "Matchmaking"). A pass over a million tickets takes most of a second of
 * CPU; on the main thread it would stall every request of the instance for
 * that long. So by default the matchmakers live in one worker thread (all
 * ladders' queues, each by its own handle), and the loop drives each through
 * a `RemoteMatchmaker`: the same operations as a `Matchmaker`, asynchronous,
 * with a batch of queue changes sent as one message and a pass's matches
 * coming back in parts.
 *
 * `inProcessMatchmakers()` keeps them on the calling thread behind the same
 * interface (the service's `matchmakingWorker: false`).
 *
 * A worker that stops (crash, out of memory, terminated) fails every request
 * in flight and every later one to its matchmakers (`alive` turns false);
 * the loop then builds them again from the shared queue, and the next
 * `create` starts a new worker.
 */
import { threadId as mainThreadId, Worker } from 'node:worker_threads';
import { siblingModule, workerStart } from '../../store/worker-start.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Backfill, BackfillInput, ResolvedWidening, TicketInput } from 'ladder-core/matchmaking';
import { warmUpMatchmaker, type WarmUpOptions, type WarmUpReport } from '../matchmaking-warm-up.js';
import {
  type Answer,
  applyOps,
  countsOf,
  failureError,
  type MatchmakerCounts,
  type MatchmakerOp,
  type MatchmakerSettings,
  type OpResult,
  type QueueMatchmaker,
  type RemotePassResult,
  type ReplyMessage,
  type Request,
  type RequestMessage,
  type StreamedPass,
  MATCHES_PER_PART,
  settingsOf,
} from './protocol.js';
import { newQueueMatchmaker, type PassMatch, type QueueMatchmakerOptions, whyOf } from './rule-set-queue.js';
import { MatchmakingWorkerStoppedError } from './worker-stopped-error.js';

/** Ops per message: a rebuild's batch of 10,000 tickets goes in parts, so neither thread copies it in one go. */
export const OPS_PER_MESSAGE = 2000;

/**
 * A turn of the event loop (timers and I/O first). Between the messages of a
 * long exchange with the worker: a reply that arrives while the main thread
 * is still handling its port's messages is handled in the same turn of the
 * loop, so a chain of quick round trips, each request sent from the handling
 * of the last reply (a burst's 130 parts of matches), held the loop for up to
 * hundreds of milliseconds before this turn was given.
 */
function loopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A matchmaker of the loop, wherever it lives. */
export interface RemoteMatchmaker {
  readonly teamSize: number;
  readonly widening: ResolvedWidening;
  readonly maxCandidates: number;
  /** Thread the matchmaker lives on (0: the main thread). */
  readonly threadId: number;
  /** Rule-set queues: seconds after a ticket's arrival at which its last expansion step applies. */
  readonly expansionSeconds?: number;
  /** Tickets waiting and backfills open, as of the last answer. */
  readonly size: number;
  readonly backfillCount: number;
  /** False once its thread has stopped: nothing it held is left, it must be built again. */
  readonly alive: boolean;
  /** Applies the ops in order (see applyOps); one message per OPS_PER_MESSAGE ops. */
  apply(ops: readonly MatchmakerOp[]): Promise<OpResult[]>;
  /** One op each, as the `Matchmaker` methods of the same names (a refusal is thrown as an InvalidInputError). */
  add(ticket: TicketInput): Promise<void>;
  cancel(id: string): Promise<boolean>;
  addBackfill(backfill: BackfillInput): Promise<void>;
  removeBackfill(id: string): Promise<boolean>;
  /** A pass, every match in the answer. */
  pass(now: number): Promise<RemotePassResult>;
  /** A pass, its matches a part at a time (for a burst: see StreamedPass). */
  passInParts(now: number): Promise<StreamedPass>;
  backfills(): Promise<Backfill[]>;
  /** Rule-set queues: the last pass's reason for each of these tickets it kept waiting (id → rule; none for a team-rank queue). */
  why(ids: readonly string[]): Promise<Record<string, string>>;
  /** Frees what it holds; it takes no more requests. */
  dispose(): void;
}

export interface MatchmakerHost {
  /** Whether the matchmakers live in a worker thread. */
  readonly inWorker: boolean;
  /** Workers started after the first (each replacing one that stopped). */
  readonly restarts: number;
  /** The worker thread while one runs (tests, diagnosis). */
  readonly worker: Worker | undefined;
  create(options: QueueMatchmakerOptions): Promise<RemoteMatchmaker>;
  /** Warms the matchmaker's compiled code where the matchmakers run (src/service/matchmaking-warm-up.ts). */
  warmUp(options?: WarmUpOptions): Promise<WarmUpReport>;
  /** Stops the worker; its matchmakers fail from then on. */
  close(): Promise<void>;
}

/** The matchmakers in a worker thread (started on first use). */
export function workerMatchmakers(): MatchmakerHost {
  return new WorkerHost();
}

/** The matchmakers on the calling thread, behind the same interface. */
export function inProcessMatchmakers(): MatchmakerHost {
  return new InProcessHost();
}

/** Calls of one op, turned back into the `Matchmaker` method's result or throw. */
async function single(matchmaker: RemoteMatchmaker, op: MatchmakerOp): Promise<boolean> {
  const [result] = await matchmaker.apply([op]);
  if (typeof result === 'boolean') return result;
  // Already held: refused as the library's own add and addBackfill refuse it.
  if (result === 'present') {
    const id = op.op === 'add' ? op.ticket.id : op.op === 'addBackfill' ? op.backfill.id : '';
    throw new InvalidInputError(`${op.op === 'add' ? 'ticket' : 'backfill'} ${JSON.stringify(String(id))} is already ${op.op === 'add' ? 'queued' : 'open'}`, { field: 'id' });
  }
  if (result !== null && result !== undefined) throw new InvalidInputError(result.refused.detail, { field: result.refused.field });
  return true;
}

abstract class MatchmakerBase implements RemoteMatchmaker {
  readonly teamSize: number;
  readonly widening: ResolvedWidening;
  readonly maxCandidates: number;
  readonly threadId: number;
  readonly expansionSeconds?: number;
  size = 0;
  backfillCount = 0;
  abstract readonly alive: boolean;

  constructor(settings: MatchmakerSettings) {
    this.teamSize = settings.teamSize;
    this.widening = settings.widening;
    this.maxCandidates = settings.maxCandidates;
    this.threadId = settings.threadId;
    if (settings.expansionSeconds !== undefined) this.expansionSeconds = settings.expansionSeconds;
  }

  protected count(counts: MatchmakerCounts): void {
    this.size = counts.size;
    this.backfillCount = counts.backfillCount;
  }

  abstract apply(ops: readonly MatchmakerOp[]): Promise<OpResult[]>;
  abstract passInParts(now: number): Promise<StreamedPass>;
  abstract backfills(): Promise<Backfill[]>;

  async pass(now: number): Promise<RemotePassResult> {
    const { parts, formed: _formed, ...rest } = await this.passInParts(now);
    const matches: PassMatch[] = [];
    for await (const part of parts()) for (const match of part) matches.push(match);
    return { ...rest, matches };
  }
  abstract why(ids: readonly string[]): Promise<Record<string, string>>;
  abstract dispose(): void;

  async add(ticket: TicketInput): Promise<void> {
    await single(this, { op: 'add', ticket });
  }
  cancel(id: string): Promise<boolean> {
    return single(this, { op: 'cancel', id });
  }
  async addBackfill(backfill: BackfillInput): Promise<void> {
    await single(this, { op: 'addBackfill', backfill });
  }
  removeBackfill(id: string): Promise<boolean> {
    return single(this, { op: 'removeBackfill', id });
  }
}

class LocalMatchmaker extends MatchmakerBase {
  readonly alive = true;
  constructor(private readonly matchmaker: QueueMatchmaker) {
    super(settingsOf(matchmaker, mainThreadId));
  }

  async apply(ops: readonly MatchmakerOp[]): Promise<OpResult[]> {
    try {
      return applyOps(this.matchmaker, ops);
    } finally {
      this.count(countsOf(this.matchmaker));
    }
  }

  async passInParts(now: number): Promise<StreamedPass> {
    const started = performance.now();
    const cpu = process.cpuUsage();
    try {
      const result = this.matchmaker.pass(now);
      const used = process.cpuUsage(cpu);
      const matches = result.matches;
      return {
        formed: matches.length,
        // Already on this thread: no messages to wait for between parts.
        async *parts() {
          for (let from = 0; from < matches.length; from += MATCHES_PER_PART) yield matches.slice(from, from + MATCHES_PER_PART);
        },
        backfills: result.backfills,
        ms: performance.now() - started,
        cpuMs: (used.user + used.system) / 1000,
        ...('why' in result ? { why: result.why } : {}),
      };
    } finally {
      this.count(countsOf(this.matchmaker));
    }
  }

  async backfills(): Promise<Backfill[]> {
    return this.matchmaker.backfills();
  }

  async why(ids: readonly string[]): Promise<Record<string, string>> {
    return whyOf(this.matchmaker, ids);
  }

  dispose(): void {}
}

class InProcessHost implements MatchmakerHost {
  readonly inWorker = false;
  readonly restarts = 0;
  readonly worker = undefined;
  async create(options: QueueMatchmakerOptions): Promise<RemoteMatchmaker> {
    return new LocalMatchmaker(newQueueMatchmaker(options));
  }
  async warmUp(options?: WarmUpOptions): Promise<WarmUpReport> {
    return warmUpMatchmaker(options);
  }
  async close(): Promise<void> {}
}

interface Pending {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
}

/** One worker and its requests in flight. */
class WorkerThread {
  readonly worker: Worker;
  alive = true;
  private stopped: MatchmakingWorkerStoppedError | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private reason: string | undefined;

  constructor() {
    // The compiled worker.js beside this module (dist/), or this source's worker.ts through tsx (tests).
    const start = workerStart(siblingModule('worker', import.meta.url));
    this.worker = new Worker(start.target, { eval: start.eval, workerData: start.workerData });
    // Held only while a request waits for its answer: an idle worker keeps no process alive.
    this.worker.unref();
    this.worker.on('message', (message: ReplyMessage) => this.receive(message));
    this.worker.on('error', (error) => {
      this.reason ??= error.message;
    });
    this.worker.on('exit', (code) => this.stop(new MatchmakingWorkerStoppedError(code, this.reason)));
  }

  request(request: Request): Promise<Answer> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, request } satisfies RequestMessage);
    });
  }

  /** A request that expects no answer. */
  tell(request: Request): void {
    if (this.stopped === undefined) this.worker.postMessage({ id: 0, request } satisfies RequestMessage);
  }

  private receive(message: ReplyMessage): void {
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.worker.unref();
    if ('failure' in message) pending.reject(failureError(message.failure));
    else pending.resolve(message.answer);
  }

  private stop(error: MatchmakingWorkerStoppedError): void {
    if (this.stopped !== undefined) return;
    this.alive = false;
    this.stopped = error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  async terminate(): Promise<void> {
    this.stop(new MatchmakingWorkerStoppedError(undefined, 'closed'));
    await this.worker.terminate();
  }
}

class WorkerMatchmaker extends MatchmakerBase {
  private disposed = false;
  constructor(
    private readonly thread: WorkerThread,
    private readonly handle: number,
    settings: MatchmakerSettings,
  ) {
    super(settings);
  }

  get alive(): boolean {
    return this.thread.alive && !this.disposed;
  }

  private async ask<K extends Answer['kind']>(request: Request & { kind: K }): Promise<Extract<Answer, { kind: K }>> {
    if (this.disposed) throw new Error(`matchmaker ${this.handle} was disposed`);
    const answer = await this.thread.request(request);
    if (answer.kind !== request.kind) throw new Error(`the matchmaking worker answered ${answer.kind} to ${request.kind}`);
    return answer as Extract<Answer, { kind: K }>;
  }

  async apply(ops: readonly MatchmakerOp[]): Promise<OpResult[]> {
    const results: OpResult[] = [];
    for (let i = 0; i < ops.length; i += OPS_PER_MESSAGE) {
      if (i > 0) await loopTurn();
      const answer = await this.ask({ kind: 'apply', handle: this.handle, ops: ops.slice(i, i + OPS_PER_MESSAGE) });
      this.count(answer.counts);
      results.push(...answer.results);
    }
    return results;
  }

  async passInParts(now: number): Promise<StreamedPass> {
    const answer = await this.ask({ kind: 'pass', handle: this.handle, now });
    this.count(answer.counts);
    const { matches: first, ...rest } = answer.result;
    const ask = () => this.ask({ kind: 'part', handle: this.handle });
    return {
      ...rest,
      formed: answer.formed,
      async *parts() {
        if (first.length > 0) yield first;
        for (let i = 0; i < answer.parts; i++) {
          await loopTurn();
          yield JSON.parse((await ask()).matches) as PassMatch[];
        }
      },
    };
  }

  async backfills(): Promise<Backfill[]> {
    return (await this.ask({ kind: 'backfills', handle: this.handle })).backfills;
  }

  async why(ids: readonly string[]): Promise<Record<string, string>> {
    if (ids.length === 0) return {};
    return (await this.ask({ kind: 'why', handle: this.handle, ids: [...ids] })).reasons;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.thread.tell({ kind: 'dispose', handle: this.handle });
  }
}

class WorkerHost implements MatchmakerHost {
  readonly inWorker = true;
  restarts = 0;
  private thread: WorkerThread | undefined;
  private nextHandle = 1;
  private closed = false;

  get worker(): Worker | undefined {
    return this.thread?.alive ? this.thread.worker : undefined;
  }

  private current(): WorkerThread {
    if (this.closed) throw new MatchmakingWorkerStoppedError(undefined, 'closed');
    if (this.thread === undefined || !this.thread.alive) {
      if (this.thread !== undefined) this.restarts++;
      this.thread = new WorkerThread();
    }
    return this.thread;
  }

  async create(options: QueueMatchmakerOptions): Promise<RemoteMatchmaker> {
    const thread = this.current();
    const handle = this.nextHandle++;
    const answer = await thread.request({ kind: 'create', handle, options });
    if (answer.kind !== 'create') throw new Error(`the matchmaking worker answered ${answer.kind} to create`);
    return new WorkerMatchmaker(thread, handle, answer.settings);
  }

  async warmUp(options: WarmUpOptions = {}): Promise<WarmUpReport> {
    const answer = await this.current().request({ kind: 'warmUp', options });
    if (answer.kind !== 'warmUp') throw new Error(`the matchmaking worker answered ${answer.kind} to warmUp`);
    return answer.report;
  }

  async close(): Promise<void> {
    this.closed = true;
    const thread = this.thread;
    this.thread = undefined;
    if (thread !== undefined) await thread.terminate();
  }
}
