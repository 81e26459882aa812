/**
 * What tests leave behind: PostgreSQL schemas, Redis keys and temporary
 * folders. A test file registers what it creates (`ownName`, `ownDir`,
 * `tempDir`; the helpers do it for their servers), and the setup file
 * removes all of it after the file's own hooks ran, so a test that fails
 * half-way, or a `dispose` that throws, leaves nothing either. The last test
 * of a run (test/leftovers.test.ts) lists what is still there, and the
 * global teardown sweeps what crashed runs left.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabaseUrl, testRedisUrl } from './test-env.js';

const ownedNames = new Set<string>();
const ownedDirs = new Set<string>();

/** A schema name or Redis key prefix (without its ':') this test file made; removed after the file. */
export function ownName(name: string): string {
  ownedNames.add(name);
  return name;
}

/** A folder this test file made; removed after the file. */
export function ownDir(dir: string): string {
  ownedDirs.add(dir);
  return dir;
}

/** A new temporary folder, removed after the test file (the test may remove it sooner). */
export function tempDir(prefix: string): string {
  return ownDir(mkdtempSync(join(tmpdir(), prefix)));
}

/** Names never reach SQL or a Redis pattern unless they are plain identifiers. */
function checkedName(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a test name: ${JSON.stringify(name)}`);
  return name;
}

/** Runs `work` with a client of the test database. */
export async function withTestDatabase<T>(work: (query: (sql: string, values?: unknown[]) => Promise<Record<string, unknown>[]>) => Promise<T>): Promise<T> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: testDatabaseUrl(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(async (sql, values) => (await client.query(sql, values)).rows);
  } finally {
    await client.end();
  }
}

/** Runs `work` with a client of the test Redis (no reconnecting: a Redis that is away is an error here). */
export async function withTestRedis<T>(work: (redis: import('ioredis').Redis) => Promise<T>): Promise<T> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 5000 });
  await redis.connect();
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

/** Every key matching the glob `pattern` (SCAN, so a large Redis is not blocked). */
export async function scanKeys(redis: import('ioredis').Redis, pattern: string, limit = Infinity): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0' && keys.length < limit);
  return keys.slice(0, limit);
}

/** Drops the schemas of the test database whose names `select` picks; returns them. */
export async function removeSchemas(select: (name: string) => boolean): Promise<string[]> {
  return withTestDatabase(async (query) => {
    const names = (await query('SELECT nspname FROM pg_namespace')).map((row) => String(row.nspname)).filter((name) => /^[a-z0-9_]+$/.test(name) && select(name));
    for (const name of names) await query(`DROP SCHEMA IF EXISTS ${checkedName(name)} CASCADE`);
    return names;
  });
}

/** Deletes the test Redis's keys whose prefix (the part before the first ':') `select` picks; returns the prefixes. */
export async function removeKeys(select: (prefix: string) => boolean): Promise<string[]> {
  return withTestRedis(async (redis) => {
    const keys = (await scanKeys(redis, '*_*_*')).filter((key) => select(key.split(':')[0]!));
    for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
    return [...new Set(keys.map((key) => key.split(':')[0]!))];
  });
}

/** Removes what this test file registered. Called by the setup file after each file. */
export async function sweepOwned(): Promise<void> {
  const problems: string[] = [];
  for (const dir of ownedDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
      ownedDirs.delete(dir);
    } catch (error) {
      problems.push(`folder ${dir}: ${(error as Error).message}`);
    }
  }
  if (ownedNames.size > 0) {
    const names = [...ownedNames].map(checkedName);
    try {
      await withTestDatabase(async (query) => {
        for (const name of names) await query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      });
    } catch (error) {
      problems.push(`schemas ${names.join(', ')}: ${(error as Error).message}`);
    }
    try {
      await withTestRedis(async (redis) => {
        for (const name of names) {
          const keys = await scanKeys(redis, `${name}*`);
          for (let i = 0; i < keys.length; i += 500) await redis.unlink(...keys.slice(i, i + 500));
        }
      });
    } catch (error) {
      problems.push(`Redis keys of ${names.join(', ')}: ${(error as Error).message}`);
    }
    ownedNames.clear();
  }
  if (problems.length > 0) throw new Error(`could not remove what the tests of this file made:\n${problems.join('\n')}`);
}

export interface Leftovers {
  /** Tables of the public schema that hold rows, as `table: N rows`. */
  publicRows: string[];
  /** Keys under the service's default prefix `ladder:` (at most 20). */
  defaultPrefixKeys: string[];
  /** Schemas of this run. */
  schemas: string[];
  /** Keys of this run (at most 20). */
  keys: string[];
  /** Entries in this run's temporary folder. */
  files: string[];
}

/** What is left, in the test database, the test Redis and the run's temporary folder, after the tests of run `run`. */
export async function findLeftovers(run: string, runDir: string): Promise<Leftovers> {
  const { publicRows, schemas } = await withTestDatabase(async (query) => {
    const tables = (await query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")).map((row) => String(row.tablename));
    const publicRows: string[] = [];
    for (const table of tables) {
      const [row] = await query(`SELECT count(*)::int AS n FROM public."${table.replaceAll('"', '""')}"`);
      if (Number(row!.n) > 0) publicRows.push(`${table}: ${row!.n} rows`);
    }
    const schemas = (await query('SELECT nspname FROM pg_namespace WHERE strpos(nspname, $1) > 0 ORDER BY nspname', [`_${run}_`])).map((row) => String(row.nspname));
    return { publicRows, schemas };
  });
  const { defaultPrefixKeys, keys } = await withTestRedis(async (redis) => ({
    defaultPrefixKeys: await scanKeys(redis, 'ladder:*', 20),
    keys: await scanKeys(redis, `*_${checkedName(run)}_*`, 20),
  }));
  let files: string[] = [];
  try {
    // tsx-<uid>: tsx's compile cache, written by worker threads of the test processes that load TypeScript
    // (the job pool's and the matchmaker's workers run from source); a cache, not litter, and the teardown removes it.
    files = readdirSync(runDir).filter((name) => !/^tsx-\d+$/.test(name));
  } catch {
    // No folder: nothing in it.
  }
  return { publicRows, defaultPrefixKeys, schemas, keys, files };
}
