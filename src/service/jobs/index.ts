/**
 * Heavy requests (lobby balance, large predictions, the integrity report)
 * as jobs on the worker pool, with admission caps: a caller (its API key,
 * or its address without one), a ladder and the whole instance may each
 * have only so many jobs queued or running. Past a cap the request is
 * refused at once (JobsBusyError: 429 for a caller or a ladder, 503 for the
 * instance, with a Retry-After estimated from the jobs ahead), so a flood
 * from one client queues nothing behind which another's request would wait.
 * docs/SERVICE.md, "Heavy work: the worker pool".
 */
import { JobCancelledError, JobsBusyError } from '../errors/index.js';
import { type JobKind, JOB_KINDS, type ServiceJobKinds } from './kinds.js';
import { defaultPoolSize, type JobRun, WorkerPool } from './pool.js';

export interface JobOptions {
  /** Worker threads; 0 runs heavy requests inline on the event loop. @default max(1, availableParallelism() − 1) */
  threads?: number;
  /** Jobs one caller (API key, or client address without a key) may have queued or running. @default 2 */
  perCaller?: number;
  /** Jobs one ladder may have queued or running. @default 8 */
  perLadder?: number;
  /** Jobs the instance may have queued or running. @default 64 */
  maxJobs?: number;
  /**
   * Milliseconds a job may run in a worker before the worker is stopped and
   * the request answered 503, by kind. @default {balance: 5000, predict: 5000, integrity: 120000}
   */
  timeoutMs?: Partial<Record<JobKind, number>>;
  /** Milliseconds balance's search may take before it answers its best split so far (`exact: false`). @default 200 */
  balanceDeadlineMs?: number;
  /** A prediction with more players than this runs in the pool; smaller ones inline, where they cost less than the hop. @default 1024 */
  predictPoolPlayers?: number;
  /** Called after each job that ran (tests, diagnosis). */
  onJob?: (report: JobReport) => void;
}

export interface JobReport {
  kind: JobKind;
  ladder: string;
  /** 0: ran inline on the main thread. */
  threadId: number;
  runMs: number;
  waitMs: number;
}

/** Who asks and for which ladder: what the caps count. */
export interface JobOwner {
  caller: string;
  ladder: string;
}

type Outcome = 'done' | 'failed' | 'refused' | 'cancelled';

/** Hard limits by kind: balance stops itself at its deadline and a prediction is microseconds, so theirs only catch a bug; the report grows with the matches asked for. */
const JOB_TIMEOUTS: Readonly<Record<JobKind, number>> = Object.freeze({ balance: 5000, predict: 5000, integrity: 120_000 });

export class Jobs {
  readonly pool: WorkerPool<ServiceJobKinds>;
  readonly balanceDeadlineMs: number;
  readonly predictPoolPlayers: number;
  private readonly perCaller: number;
  private readonly perLadder: number;
  private readonly maxJobs: number;
  private readonly timeouts: Record<JobKind, number>;
  private readonly byCaller = new Map<string, number>();
  private readonly byLadder = new Map<string, number>();
  private active = 0;
  /** Moving average of a job's milliseconds in its worker, for Retry-After. */
  private averageMs = 200;

  constructor(
    private readonly options: JobOptions = {},
    private readonly observe: (kind: JobKind, outcome: Outcome, runMs?: number) => void = () => {},
  ) {
    const checked: Array<[string, number | undefined]> = [
      ['perCaller', options.perCaller],
      ['perLadder', options.perLadder],
      ['maxJobs', options.maxJobs],
      ['balanceDeadlineMs', options.balanceDeadlineMs],
      ['predictPoolPlayers', options.predictPoolPlayers],
      ...Object.entries(options.timeoutMs ?? {}).map(([kind, ms]): [string, number | undefined] => [`timeoutMs.${kind}`, ms]),
    ];
    for (const [field, value] of checked) {
      if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new RangeError(`jobs.${field} must be a positive integer, got ${value}`);
    }
    this.timeouts = { ...JOB_TIMEOUTS, ...options.timeoutMs };
    this.pool = new WorkerPool({ size: options.threads ?? defaultPoolSize(), script: workerScript(), kinds: JOB_KINDS });
    this.perCaller = options.perCaller ?? 2;
    this.perLadder = options.perLadder ?? 8;
    this.maxJobs = options.maxJobs ?? 64;
    this.balanceDeadlineMs = options.balanceDeadlineMs ?? 200;
    this.predictPoolPlayers = options.predictPoolPlayers ?? 1024;
  }

  /**
   * Runs a job for `owner`, or refuses it at once when a cap is full. The
   * input is made only once the job is admitted, so a refused request costs
   * no database read either. When `signal` (the client's) aborts before a
   * worker takes the job, the job is dropped (JobCancelledError) and its
   * places under the caps are given back.
   */
  async run<Kind extends JobKind>(
    kind: Kind,
    owner: JobOwner,
    input: () => Promise<Parameters<ServiceJobKinds[Kind]>[0]> | Parameters<ServiceJobKinds[Kind]>[0],
    signal?: AbortSignal,
  ): Promise<ReturnType<ServiceJobKinds[Kind]>> {
    const callerJobs = this.byCaller.get(owner.caller) ?? 0;
    const ladderJobs = this.byLadder.get(owner.ladder) ?? 0;
    const refused =
      callerJobs >= this.perCaller ? ('caller' as const) : ladderJobs >= this.perLadder ? ('ladder' as const) : this.active >= this.maxJobs ? ('instance' as const) : undefined;
    if (refused !== undefined) {
      this.observe(kind, 'refused');
      throw new JobsBusyError(refused, refused === 'caller' ? this.perCaller : refused === 'ladder' ? this.perLadder : this.maxJobs, this.retryAfterSeconds());
    }
    this.byCaller.set(owner.caller, callerJobs + 1);
    this.byLadder.set(owner.ladder, ladderJobs + 1);
    this.active++;
    try {
      const run: JobRun<ReturnType<ServiceJobKinds[Kind]>> = await this.pool.run(kind, (await input()) as never, {
        timeoutMs: this.timeouts[kind],
        ...(signal !== undefined ? { signal } : {}),
      });
      this.averageMs = 0.8 * this.averageMs + 0.2 * run.runMs;
      this.observe(kind, 'done', run.runMs);
      this.options.onJob?.({ kind, ladder: owner.ladder, threadId: run.threadId, runMs: run.runMs, waitMs: run.waitMs });
      return run.output;
    } catch (error) {
      this.observe(kind, error instanceof JobCancelledError ? 'cancelled' : 'failed');
      throw error;
    } finally {
      this.release(this.byCaller, owner.caller);
      this.release(this.byLadder, owner.ladder);
      this.active--;
    }
  }

  private release(counts: Map<string, number>, key: string): void {
    const left = (counts.get(key) ?? 1) - 1;
    if (left <= 0) counts.delete(key);
    else counts.set(key, left);
  }

  /** When a place is likely to free up: the jobs ahead, shared by the workers, at the recent average. */
  private retryAfterSeconds(): number {
    const threads = Math.max(1, this.pool.size);
    return Math.min(60, Math.max(1, Math.ceil(((this.active / threads) * this.averageMs) / 1000)));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The worker's entry module: compiled JavaScript next to this file, or the TypeScript source when run from it. */
function workerScript(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);
}
