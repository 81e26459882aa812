/**
 * `Database.ordered` on PostgreSQL: statements issued together run one
 * after another in the order issued, a failed one fails alone, and pg's
 * deprecated path (a query handed to a client while it runs one, removed in
 * pg 9) is never taken: pg warns once per process, so this file holds one
 * test. (The writer's use of it: ordered-writes.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/store/database.js';
import { DatabaseRejectedError } from '../../src/store/database-errors.js';
import { DATABASE_URL, uniqueName } from './helpers.js';

const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
beforeAll(() => {
  process.on('warning', onWarning);
});
afterAll(() => {
  process.off('warning', onWarning);
});

it('runs statements issued together in order, one failure alone failing, with no deprecation warning', async () => {
  const schema = uniqueName('ladder_ordered');
  const db: Database = await openPostgres({ url: DATABASE_URL, schema, max: 2 });
  try {
    const finished: number[] = [];
    const statements = Array.from({ length: 24 }, (_, i) =>
      db.ordered
        .query<{ i: number; t: string }>(i === 7 ? 'SELECT 1 / ($1::int - $1::int) AS i' : 'SELECT $1::int AS i, clock_timestamp()::text AS t FROM pg_sleep(0.002)', [i])
        .then(
          (rows) => {
            finished.push(i);
            return rows;
          },
          (error: unknown) => {
            finished.push(i);
            return error;
          },
        ),
    );
    const results = await Promise.all(statements);
    expect(finished).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(results[7]).toBeInstanceOf(DatabaseRejectedError);
    const rows = results.filter((_, i) => i !== 7) as Array<Array<{ i: number; t: string }>>;
    expect(rows.map((r) => r[0]!.i)).toEqual(Array.from({ length: 24 }, (_, i) => i).filter((i) => i !== 7));
    // One after another on the server too: each statement started after the one before it.
    const times = rows.map((r) => r[0]!.t);
    expect(times).toEqual([...times].sort());
  } finally {
    await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  }
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.filter((w) => w.startsWith('DeprecationWarning'))).toEqual([]);
});
