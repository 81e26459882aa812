/**
 * The worker thread that holds an embedded PGlite database (docs/SERVICE.md,
 * "Persistence"). PGlite runs PostgreSQL compiled to WebAssembly on the
 * thread that calls it, and a statement runs to its end without a turn of
 * that thread's event loop: on the main thread a long statement stalled every
 * request of the instance (a deep page, a commit writing a checkpoint). Here
 * it stalls only this thread; the main thread sends statements and awaits
 * their rows (src/store/pglite-host.ts).
 *
 * Messages are plain data. A transaction is opened by `begin` and stays open,
 * holding PGlite's transaction (so every other statement waits for it, as
 * in process), until `commit` or `rollback` for its id arrives.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { ThreadReply, ThreadRequest, ThreadStartData, WireError } from './pglite-wire.js';

if (parentPort === null) throw new Error('pglite-thread.ts runs as a worker thread');
const port = parentPort;
const data = (workerData as { data: ThreadStartData }).data;

/** int8 as a JS number: every value Ladder stores is far below 2^53. */
const INT8_OID = 20;

function toWire(error: unknown): WireError {
  const source = (error ?? {}) as Record<string, unknown>;
  const wire: WireError = { message: error instanceof Error ? error.message : String(error), name: error instanceof Error ? error.name : 'Error' };
  // The fields of a PostgreSQL error report that callers classify by (SQLSTATE) or log.
  for (const key of ['code', 'severity', 'detail', 'hint', 'position', 'schema', 'table', 'column', 'constraint', 'routine'] as const) {
    const value = source[key];
    if (typeof value === 'string') wire[key] = value;
  }
  return wire;
}

interface OpenTransaction {
  tx: Transaction;
  /** Ends the transaction: resolve commits, reject rolls back. */
  finish: { commit(): void; rollback(): void };
  /** Settles once PGlite has committed or rolled back. */
  done: Promise<unknown>;
}

async function main(): Promise<void> {
  const { PGlite: Database } = await import('@electric-sql/pglite');
  let pg: PGlite;
  try {
    pg = await Database.create(data.pgDir, { parsers: { [INT8_OID]: (value: string) => Number(value) }, startParams: [...Database.defaultStartParams, ...data.startParams] });
  } catch (error) {
    port.postMessage({ id: 0, error: toWire(error) } satisfies ThreadReply);
    return;
  }
  const open = new Map<number, OpenTransaction>();
  let nextTx = 1;

  const target = (tx: number | undefined): Pick<Transaction, 'query' | 'exec'> => {
    if (tx === undefined) return pg;
    const entry = open.get(tx);
    if (entry === undefined) throw new Error(`transaction ${tx} is not open`);
    return entry.tx;
  };

  const handle = async (request: ThreadRequest): Promise<ThreadReply> => {
    switch (request.op) {
      case 'query': {
        const result = await target(request.tx).query(request.sql, request.params);
        return { id: request.id, rows: result.rows };
      }
      case 'exec':
        await target(request.tx).exec(request.sql);
        return { id: request.id, rows: [] };
      case 'begin': {
        const tx = nextTx++;
        const ready = new Promise<void>((resolveReady, rejectReady) => {
          const done = pg
            .transaction(
              (handleTx) =>
                new Promise<void>((commit, rollback) => {
                  open.set(tx, { tx: handleTx, finish: { commit: () => commit(), rollback: () => rollback(new RolledBack()) }, done });
                  resolveReady();
                }),
            )
            .catch((error: unknown) => {
              rejectReady(error);
              if (!(error instanceof RolledBack)) throw error;
            });
          done.catch(() => {});
        });
        await ready;
        return { id: request.id, tx };
      }
      case 'commit':
      case 'rollback': {
        const entry = open.get(request.tx);
        if (entry === undefined) throw new Error(`transaction ${request.tx} is not open`);
        open.delete(request.tx);
        if (request.op === 'commit') entry.finish.commit();
        else entry.finish.rollback();
        await entry.done;
        return { id: request.id, rows: [] };
      }
      case 'close':
        await pg.close();
        return { id: request.id, rows: [] };
    }
  };

  port.on('message', (request: ThreadRequest) => {
    handle(request).then(
      (reply) => port.postMessage(reply),
      (error: unknown) => port.postMessage({ id: request.id, error: toWire(error) } satisfies ThreadReply),
    );
  });
  port.postMessage({ id: 0, rows: [] } satisfies ThreadReply);
}

/** The reason given to PGlite's transaction when the caller asked for a rollback. */
class RolledBack extends Error {}

void main();
