/**
 * The main thread's side of the PGlite worker thread (src/store/pglite-thread.ts):
 * statements go out as messages and their rows come back, so the embedded
 * database's work never runs on the event loop that answers requests.
 *
 * The worker is held (ref'd) only while a request waits for its answer or a
 * transaction is open: an idle database keeps no process alive, as the
 * in-process PGlite did not. A worker that stops (crash, out of memory)
 * fails every request in flight and every later one with an error that has
 * no SQLSTATE, which Ladder reads as "database unavailable".
 */
import { Worker } from 'node:worker_threads';
import type { ThreadReply, ThreadRequest, ThreadStartData, WireError } from './pglite-wire.js';
import { siblingModule, workerStart } from './worker-start.js';

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

interface Pending {
  resolve(reply: ThreadReply): void;
  reject(error: Error): void;
}

/** A driver error rebuilt from its data: the same message and SQLSTATE fields as PGlite's own. */
function fromWire(wire: WireError): Error {
  const { message, name, ...fields } = wire;
  const error = new Error(message);
  error.name = name;
  return Object.assign(error, fields);
}

export class PgliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private openTransactions = 0;
  private stopped: Error | undefined;
  private readonly ready: Promise<void>;

  private constructor(data: ThreadStartData) {
    const start = workerStart(siblingModule('pglite-thread', import.meta.url));
    this.worker = new Worker(start.target, { eval: start.eval, workerData: { ...start.workerData, data } });
    this.ready = new Promise<void>((resolve, reject) => {
      this.pending.set(0, { resolve: (reply) => ('error' in reply ? reject(fromWire(reply.error)) : resolve()), reject });
    });
    this.worker.on('message', (reply: ThreadReply) => {
      const waiting = this.pending.get(reply.id);
      if (waiting === undefined) return;
      this.pending.delete(reply.id);
      this.hold();
      if ('error' in reply && reply.id !== 0) waiting.reject(fromWire(reply.error));
      else waiting.resolve(reply);
    });
    let reason: string | undefined;
    this.worker.on('error', (error) => {
      reason ??= error.message;
    });
    this.worker.on('exit', (code) => {
      this.stopped = new Error(`the embedded database's thread stopped (exit code ${code}${reason ? `: ${reason}` : ''})`);
      for (const waiting of this.pending.values()) waiting.reject(this.stopped);
      this.pending.clear();
    });
  }

  /** Starts the thread and opens PGlite in `data.pgDir`; rejects with PGlite's error if it cannot. */
  static async open(data: ThreadStartData): Promise<PgliteThread> {
    const thread = new PgliteThread(data);
    try {
      await thread.ready;
    } catch (error) {
      await thread.worker.terminate();
      throw error;
    }
    thread.hold();
    return thread;
  }

  /** Keeps the process alive only while something waits on the thread. */
  private hold(): void {
    if (this.pending.size > 0 || this.openTransactions > 0) this.worker.ref();
    else this.worker.unref();
  }

  private send(request: Request): Promise<ThreadReply> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<ThreadReply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.hold();
      this.worker.postMessage({ ...request, id } as ThreadRequest);
    });
  }

  async query(sql: string, params: readonly unknown[], tx?: number): Promise<unknown[]> {
    const reply = await this.send({ op: 'query', sql, params: [...params], ...(tx !== undefined ? { tx } : {}) });
    return (reply as { rows: unknown[] }).rows;
  }

  async exec(sql: string, tx?: number): Promise<void> {
    await this.send({ op: 'exec', sql, ...(tx !== undefined ? { tx } : {}) });
  }

  /** Opens a transaction (waiting, as in PGlite, for any other one to end) and returns its id. */
  async begin(): Promise<number> {
    this.openTransactions++;
    try {
      return ((await this.send({ op: 'begin' })) as { tx: number }).tx;
    } catch (error) {
      this.openTransactions--;
      this.hold();
      throw error;
    }
  }

  async end(tx: number, how: 'commit' | 'rollback'): Promise<void> {
    try {
      await this.send({ op: how, tx });
    } finally {
      this.openTransactions--;
      this.hold();
    }
  }

  /** Closes PGlite (a clean shutdown of its files) and stops the thread. */
  async close(): Promise<void> {
    if (!this.stopped) {
      try {
        await this.send({ op: 'close' });
      } finally {
        await this.worker.terminate();
      }
    }
  }
}
