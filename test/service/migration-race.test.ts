/**
 * Instances started together on an empty PostgreSQL schema: every one of
 * them starts. The schema, the migrations table and each migration are
 * created under one advisory lock, so none of them races another instance's
 * `CREATE … IF NOT EXISTS` (which PostgreSQL does not make safe against
 * concurrent creators: 23505 on its catalogue or 42P07).
 */
import { expect, it } from 'vitest';
import { startService, ServiceStartError, type Service } from '../../src/service/index.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { ADMIN_KEY, DATABASE_URL, cleanupShared, uniqueName } from './helpers.js';

it('starts 3 instances at once on a fresh schema, 10 times over', { timeout: 120_000 }, async () => {
  for (let round = 0; round < 10; round++) {
    const schema = uniqueName('ladder_race');
    const started = await Promise.allSettled(
      [0, 1, 2].map(() => startService({ port: 0, adminKey: ADMIN_KEY, databaseUrl: DATABASE_URL, databaseSchema: schema, matchmakingIntervalMs: 3_600_000, poolSize: 2 })),
    );
    const services = started.filter((s): s is PromiseFulfilledResult<Service> => s.status === 'fulfilled').map((s) => s.value);
    const failures = started.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => String((s.reason as Error).message));
    try {
      expect({ round, failures }).toEqual({ round, failures: [] });
      const applied = await services[0]!.db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await Promise.all(services.map((s) => s.close()));
      await cleanupShared(schema, undefined);
    }
  }
});

it('says a migration was refused, not that PostgreSQL is unreachable, when a statement fails for another reason', async () => {
  const schema = uniqueName('ladder_refused');
  const { openPostgres } = await import('../../src/store/database.js');
  const db = await openPostgres({ url: DATABASE_URL, schema });
  try {
    // A table named like the one migration 1 creates, left by something else: CREATE TABLE fails with 42P07.
    await db.exec('CREATE TABLE ladders (x int)');
    const error = await startService({ port: 0, adminKey: ADMIN_KEY, databaseUrl: DATABASE_URL, databaseSchema: schema, matchmakingIntervalMs: 3_600_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceStartError);
    expect((error as ServiceStartError).reason).toBe('database-migration');
    expect((error as Error).message).toContain('42P07');
    expect((error as Error).message).toContain('migration 1');
    expect((error as Error).message).not.toContain('unreachable');
  } finally {
    await db.close();
    await cleanupShared(schema, undefined);
  }
});
