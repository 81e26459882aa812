/**
 * The loop of a worker thread: one job at a time from the pool, answered
 * with its output or its error (wire.ts). A worker's entry module is one
 * call, `serveJobs(kinds)`, so the service's worker (worker.ts) and the
 * pool's own tests share it.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { type JobMessage, type JobReply, toWire } from './wire.js';

/** A job kind: plain (structured-clone) data in, plain data out, no I/O. */
// biome-ignore lint/suspicious/noExplicitAny: a kind's input is whatever its own module declares; the table only carries them.
export type JobFunction = (input: any) => unknown;
export type JobKinds = Readonly<Record<string, JobFunction>>;

/** This thread's kernel id (Linux), or undefined where there is none to read. */
export function kernelThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) && id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers this thread's scheduling priority (Linux: a thread's nice value is
 * its own). A job may use a whole core; at a lower priority the event loop's
 * thread and a PostgreSQL on the same machine get the CPU first. Returns
 * whether it could.
 */
export function lowerThreadPriority(nice: number): boolean {
  const id = kernelThreadId();
  if (id === undefined) return false;
  try {
    setPriority(id, nice);
    return true;
  } catch {
    return false;
  }
}

export function serveJobs(kinds: JobKinds): void {
  const port = parentPort;
  if (port === null) throw new Error('serveJobs runs in a worker thread');
  port.on('message', (message: JobMessage) => {
    let reply: JobReply;
    try {
      const run = Object.hasOwn(kinds, message.kind) ? kinds[message.kind] : undefined;
      if (run === undefined) throw new Error(`no job kind ${JSON.stringify(message.kind)}`);
      reply = { id: message.id, ok: true, output: run(message.input) };
    } catch (error) {
      reply = { id: message.id, ok: false, error: toWire(error) };
    }
    try {
      port.postMessage(reply);
    } catch (error) {
      // An output that cannot be cloned (a function, a class instance with private state) is the job's bug, answered as its error.
      port.postMessage({ id: message.id, ok: false, error: toWire(error) } satisfies JobReply);
    }
  });
  // Loaded: job time limits start counting only now, not through a cold start (seconds when tsx compiles the source).
  port.postMessage({ ready: true } satisfies JobReply);
}
