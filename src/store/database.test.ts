/**
 * The embedded database as Ladder opens it: one process per data directory
 * (a live holder's lock is refused, a dead one's taken over), and PGlite
 * started without zero-filling new WAL segments (it never syncs its files,
 * so reserving a segment's space bought nothing and stalled the process).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DataDirectoryLockedError, openPglite } from './database.js';

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

it('starts PGlite without zero-filling new WAL segments', async () => {
  const db = await openPglite(freshDir());
  try {
    expect(await db.query('SHOW wal_init_zero')).toEqual([{ wal_init_zero: 'off' }]);
  } finally {
    await db.close();
  }
});
