/**
 * The embedded database as Ladder opens it: one process per data directory
 * (a live holder's lock is refused, a dead one's taken over), and PGlite
 * started without zero-filling new WAL segments (it never syncs its files,
 * so reserving a segment's space bought nothing and stalled the process),
 * and a new data directory's cluster created on a thread that is then
 * stopped, so the memory initdb grew is given back.
 * Run in its worker thread or in process, it behaves the same to callers:
 * errors keep their SQLSTATE, a transaction is one at a time and rolls back
 * when its work throws; only the thread leaves the event loop free.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, LadderError } from 'ladder-core/core/errors.js';
import { DataDirectoryLockedError, openPglite } from './database.js';
import { DatabaseRejectedError } from './database-errors.js';

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ladder-db-test-'));
  dirs.push(dir);
  return dir;
};

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("refuses a data directory a live process holds, naming it, and takes over a dead holder's lock", async () => {
  const dir = freshDir();
  // The parent of this test process is alive for as long as the test runs.
  writeFileSync(join(dir, 'ladder.lock'), String(process.ppid));
  const refused = await openPglite(dir).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(DataDirectoryLockedError);
  expect(String((refused as Error).message)).toContain(`in use by process ${process.ppid}`);

  // No process has this id (above the kernel's pid limit of 2^22).
  writeFileSync(join(dir, 'ladder.lock'), String(2 ** 22 + 7));
  const db = await openPglite(dir);
  try {
    expect(readFileSync(join(dir, 'ladder.lock'), 'utf8')).toBe(String(process.pid));
  } finally {
    await db.close();
  }
});

it("creates a new data directory's cluster on a thread it then stops, and opens the database on a fresh one (a WebAssembly memory never shrinks)", async () => {
  const { PgliteThread } = await import('./pglite-host.js');
  const opened = vi.spyOn(PgliteThread, 'open');
  const closed = vi.spyOn(PgliteThread.prototype, 'close');
  try {
    const dir = freshDir();
    const db = await openPglite(dir);
    // The creating thread was opened and closed before the one that serves.
    expect(opened).toHaveBeenCalledTimes(2);
    expect(closed).toHaveBeenCalledTimes(1);
    await db.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    await db.close();
    // An existing cluster opens on one thread, with what was written.
    opened.mockClear();
    const again = await openPglite(dir);
    try {
      expect(opened).toHaveBeenCalledTimes(1);
      expect(await again.query('SELECT n FROM kept')).toEqual([{ n: 7 }]);
    } finally {
      await again.close();
    }
  } finally {
    opened.mockRestore();
    closed.mockRestore();
  }
});

it("sizes PGlite's buffer cache as asked, and refuses a size out of range naming the option", async () => {
  const db = await openPglite(freshDir(), { sharedBuffersMb: 16 });
  try {
    expect(await db.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
  } finally {
    await db.close();
  }
  for (const bad of [0, 1.5, 2048]) {
    const refused = await openPglite(freshDir(), { sharedBuffersMb: bad }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).field).toBe('sharedBuffersMb');
  }
});

it('starts PGlite without zero-filling new WAL segments', async () => {
  const db = await openPglite(freshDir());
  try {
    expect(await db.query('SHOW wal_init_zero')).toEqual([{ wal_init_zero: 'off' }]);
  } finally {
    await db.close();
  }
});

describe.each([
  ['in a worker thread', true],
  ['in process', false],
] as const)('PGlite %s', (_, thread) => {
  it('carries a statement error with its SQLSTATE, and rolls a transaction back when its work throws, passing Ladder errors through', async () => {
    const db = await openPglite(freshDir(), { thread });
    try {
      await db.exec('CREATE TABLE t (id int PRIMARY KEY)');
      await db.query('INSERT INTO t VALUES ($1)', [1]);
      const duplicate = await db.query('INSERT INTO t VALUES ($1)', [1]).catch((error: unknown) => error);
      expect(duplicate).toBeInstanceOf(DatabaseRejectedError);
      expect((duplicate as DatabaseRejectedError).sqlState).toBe('23505');

      const refusal = new LadderError('refused by the caller');
      const thrown = await db
        .transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES ($1)', [2]);
          throw refusal;
        })
        .catch((error: unknown) => error);
      expect(thrown).toBe(refusal);
      expect(await db.query('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1 }]);

      const failed = await db.transaction((tx) => tx.query('INSERT INTO t VALUES ($1)', ['not a number'])).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(DatabaseRejectedError);
      expect(await db.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT count(*)::int8 AS n FROM t'))[0]!.n)).toBe(1);
    } finally {
      await db.close();
    }
  });

  it('runs one transaction at a time: a statement outside waits for the open one to commit', async () => {
    const db = await openPglite(freshDir(), { thread });
    try {
      await db.exec('CREATE TABLE t (id int)');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const didInsert = new Promise<void>((resolve) => (inserted = resolve));
      const first = db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (1)');
        inserted();
        await held;
      });
      await didInsert;
      const outside = db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM t');
      let answered = false;
      void outside.then(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered).toBe(false);
      release();
      await first;
      expect(await outside).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });
});

it("keeps the event loop turning while PGlite's thread runs a long statement (in process it cannot)", async () => {
  const ticksDuring = async (thread: boolean): Promise<{ ticks: number; ms: number }> => {
    const db = await openPglite(freshDir(), { thread });
    try {
      await db.query('SELECT 1');
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      const started = performance.now();
      await db.query('SELECT count(*) FROM generate_series(1, 3000000) AS s(i) WHERE i % 7 = 0');
      const ms = performance.now() - started;
      clearInterval(timer);
      return { ticks, ms };
    } finally {
      await db.close();
    }
  };
  const inProcess = await ticksDuring(false);
  const threaded = await ticksDuring(true);
  // In process the loop waits for the whole statement: at most the one tick already due when it began.
  expect(inProcess.ticks).toBeLessThanOrEqual(1);
  // On the thread the 5 ms timer fires all along (a statement of 100+ ms on any machine gives many).
  expect(threaded.ms).toBeGreaterThan(50);
  expect(threaded.ticks).toBeGreaterThanOrEqual(5);
});
