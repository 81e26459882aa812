/**
 * Test backends: embedded PGlite (a copy of one initialised template
 * directory, since initdb under WASM takes seconds) and the machine's real
 * PostgreSQL and Redis (a fresh schema and key prefix per test).
 */
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash, randomBytes } from 'node:crypto';
import { openPglite } from '../../src/store/database.js';
import { MIGRATIONS, migrate } from '../../src/store/migrations.js';
import { startService, type Service, type ServiceOptions } from '../../src/service/index.js';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';

export type Backend = 'pglite' | 'postgres+redis';
export const BACKENDS: Backend[] = ['pglite', 'postgres+redis'];

/** Shared by test files and runs; named after a digest of the migrations, so any change to them makes a new one. */
const template = join(tmpdir(), `ladder-pglite-template-${hash('sha256', JSON.stringify(MIGRATIONS)).slice(0, 16)}`);

/** A fresh PGlite data directory, migrated, copied from a template made once. */
export async function freshDataDir(): Promise<string> {
  if (!existsSync(join(template, 'ready'))) {
    const building = mkdtempSync(join(tmpdir(), 'ladder-template-build-'));
    const db = await openPglite(building);
    await migrate(db);
    await db.close();
    writeFileSync(join(building, 'ready'), '');
    try {
      renameSync(building, template);
    } catch {
      // Another test file won the race; its template is as good.
      rmSync(building, { recursive: true, force: true });
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'ladder-test-'));
  cpSync(template, dir, { recursive: true });
  return dir;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestServer extends Service {
  admin: string;
  dataDir?: string;
  schema?: string;
  prefix?: string;
  /** Closes and removes what the test created. */
  dispose(): Promise<void>;
}

export interface ServerSettings {
  backend: Backend;
  /** Share a database/prefix with another server (two instances). */
  dataDir?: string;
  schema?: string;
  prefix?: string;
  options?: ServiceOptions;
}

export async function startTestServer(settings: ServerSettings): Promise<TestServer> {
  const base: ServiceOptions = { port: 0, adminKey: ADMIN_KEY, matchmakingIntervalMs: 3_600_000, ...settings.options };
  let service: Service;
  let dataDir: string | undefined;
  let schema: string | undefined;
  let prefix: string | undefined;
  if (settings.backend === 'pglite') {
    dataDir = settings.dataDir ?? (await freshDataDir());
    service = await startService({ ...base, dataDir });
  } else {
    schema = settings.schema ?? uniqueName('ladder_test');
    prefix = settings.prefix ?? `${uniqueName('lt')}:`;
    service = await startService({ ...base, databaseUrl: DATABASE_URL, databaseSchema: schema, redisUrl: REDIS_URL, redisPrefix: prefix });
  }
  return {
    ...service,
    admin: ADMIN_KEY,
    dataDir,
    schema,
    prefix,
    dispose: async () => {
      await service.close();
      if (dataDir && !settings.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Drops a test schema and Redis keys of a prefix. */
export async function cleanupShared(schema: string | undefined, prefix: string | undefined): Promise<void> {
  if (schema) {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  if (prefix) {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}

export interface Reply<T = any> {
  status: number;
  body: T;
  text: string;
}

/** A small JSON client. */
export function client(base: string, key?: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (metrics, docs).
    }
    return { status: res.status, body: parsed, text };
  };
  return {
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    post: (path: string, body: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    del: (path: string) => call('DELETE', path),
  };
}
