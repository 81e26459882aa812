/**
 * Test backends: embedded PGlite (a copy of one initialised template
 * directory, since initdb under WASM takes seconds) and the machine's real
 * PostgreSQL and Redis (a fresh schema and key prefix per test).
 */
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { openPglite } from '../../src/store/database.js';
import { MIGRATIONS, migrate } from '../../src/store/migrations.js';
import { startService, type Service, type ServiceOptions } from '../../src/service/index.js';
import { ownDir, ownName } from '../support/litter.js';
import { runId, testDatabaseUrl, testRedisUrl, tmpRoot } from '../support/test-env.js';

/** The machine's test PostgreSQL and Redis (LADDER_TEST_*; never the service's DATABASE_URL / REDIS_URL). */
export const DATABASE_URL = testDatabaseUrl();
export const REDIS_URL = testRedisUrl();
export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';

/**
 * The first day (epoch ms) of the whole-history ladders' test logs: ten or more days ago, so their matches are inside
 * the leaderboard window and never in the future, on a day number that is a multiple of 12. Freeze points are multiples
 * of ⌈horizon/4⌉ day numbers, so the tests' days (counted from it) meet them the same way whatever today's date is.
 */
export const WHR_LOG_START = Math.floor((Math.floor(Date.now() / 86_400_000) - 10) / 12) * 12 * 86_400_000;

export type Backend = 'pglite' | 'postgres+redis';
export const BACKENDS: Backend[] = ['pglite', 'postgres+redis'];

/**
 * Shared by test files and runs (so it lives in the machine's temporary
 * folder, not the run's); named after a digest of the migrations, so any
 * change to them makes a new one.
 */
const template = join(tmpRoot(), `ladder-pglite-template-${hash('sha256', JSON.stringify(MIGRATIONS)).slice(0, 16)}`);

/** A fresh PGlite data directory, migrated, copied from a template made once. */
export async function freshDataDir(): Promise<string> {
  if (!existsSync(join(template, 'ready'))) {
    const building = mkdtempSync(join(tmpdir(), 'ladder-template-build-'));
    try {
      const db = await openPglite(building);
      await migrate(db);
      await db.close();
      writeFileSync(join(building, 'ready'), '');
      renameSync(building, template);
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      // Another test file won the race; its template is as good.
      if (!existsSync(join(template, 'ready'))) throw error;
    }
  }
  const dir = ownDir(mkdtempSync(join(tmpdir(), 'ladder-test-')));
  cpSync(template, dir, { recursive: true });
  return dir;
}

/**
 * A schema name or Redis key prefix (add the ':') of this run's: it carries
 * the run's id, and the test file's cleanup drops the schema and deletes the
 * keys even when the test does not get to.
 */
export function uniqueName(prefix: string): string {
  return ownName(`${prefix}_${runId()}_${randomBytes(4).toString('hex')}`);
}

export interface TestServer extends Service {
  admin: string;
  dataDir?: string;
  schema?: string;
  prefix?: string;
  /** Closes and removes what the test created. */
  dispose(): Promise<void>;
}

/** Service options as the tests pass them. */
export type ContractOptions = ServiceOptions;

export interface ServerSettings {
  backend: Backend;
  /** Share a database/prefix with another server (two instances). */
  dataDir?: string;
  schema?: string;
  prefix?: string;
  /** Redis of the postgres+redis backend. @default REDIS_URL */
  redisUrl?: string;
  options?: ContractOptions;
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
    service = await startService({ ...base, databaseUrl: DATABASE_URL, databaseSchema: schema, redisUrl: settings.redisUrl ?? REDIS_URL, redisPrefix: prefix });
  }
  return {
    ...service,
    admin: ADMIN_KEY,
    dataDir,
    schema,
    prefix,
    dispose: async () => {
      try {
        await service.close();
      } finally {
        if (dataDir && !settings.dataDir) rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * One test server for a suite: started before its tests (`onStart` receives
 * it, to keep clients or seed data), disposed of after them with its
 * PostgreSQL schema and Redis keys.
 */
export function useTestServer(settings: ServerSettings, onStart: (server: TestServer) => void | Promise<void>): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer(settings);
    await onStart(server);
  });
  afterAll(async () => {
    await server?.dispose();
    await cleanupShared(server?.schema, server?.prefix);
  });
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
  headers: Headers;
}

/** A small JSON client. Bodies: a value (sent as JSON), JSON text, or raw bytes (sent as they are). */
export function client(base: string, key?: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Reply> => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : body instanceof Uint8Array ? new Uint8Array(body) : JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (metrics, docs).
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  };
  return {
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    post: (path: string, body: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    put: (path: string, body: unknown, headers?: Record<string, string>) => call('PUT', path, body, headers),
    patch: (path: string, body: unknown, headers?: Record<string, string>) => call('PATCH', path, body, headers),
    del: (path: string, headers?: Record<string, string>) => call('DELETE', path, undefined, headers),
    /** Any method, body and headers; `signal` to give up on a request that does not answer. */
    call,
  };
}

export type Client = ReturnType<typeof client>;

/**
 * The same calls as `client().call` over node:http with a keep-alive agent
 * of `sockets` connections: about a third less CPU per request than fetch,
 * for tests that send thousands. Bodies: JSON text or raw bytes. A request
 * with no answer in `timeoutMs` fails.
 */
export function httpClient(base: string, options: { key?: string; sockets?: number; timeoutMs?: number } = {}) {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: options.sockets ?? 32 });
  const call = (method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}, key = options.key): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
            ...(key ? { authorization: `Bearer ${key}` } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // Not JSON.
            }
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, text, headers: responseHeaders });
          });
        },
      );
      req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer within ${options.timeoutMs ?? 30_000} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

/**
 * Text of a database or Redis driver that must never reach a client in a 5xx
 * body (case-sensitive, as the drivers spell it).
 */
export const DRIVER_TEXT = [
  'duplicate key',
  'violates',
  'constraint',
  'invalid byte sequence',
  'syntax',
  'relation "',
  'SQLSTATE',
  'pg',
  'PGlite',
  'postgres',
  'Connection terminated',
  'terminating connection',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ioredis',
  'Connection is closed',
  'max retries',
  'MaxRetriesPerRequest',
  "Stream isn't writeable",
  'enableOfflineQueue',
  'NOSCRIPT',
  'WRONGTYPE',
  'LOADING',
  'READONLY',
  '    at ',
];

/** The driver texts `text` contains. */
export function driverText(text: string): string[] {
  return DRIVER_TEXT.filter((needle) => text.includes(needle));
}

/**
 * What is wrong with an error answer, or undefined when it is the
 * contract's `{"error":{"code","message","field"?}}` (and, for a 5xx, holds
 * no driver text).
 */
export function errorShapeProblem(reply: Reply): string | undefined {
  const error = (reply.body as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown; field?: unknown } | undefined;
  if (reply.body === null || typeof reply.body !== 'object' || error === null || typeof error !== 'object') return `not an error body: ${reply.text.slice(0, 160)}`;
  if (typeof error.code !== 'string' || typeof error.message !== 'string') return `error without code or message: ${reply.text.slice(0, 160)}`;
  if (error.field !== undefined && typeof error.field !== 'string') return `error.field is not a string: ${reply.text.slice(0, 160)}`;
  if (reply.status >= 500) {
    const leaked = driverText(reply.text);
    if (leaked.length > 0) return `a ${reply.status} body carries driver text ${JSON.stringify(leaked)}: ${reply.text.slice(0, 160)}`;
  }
  return undefined;
}

/**
 * Percent-encodes a path segment or query value like encodeURIComponent,
 * except that a lone surrogate (which encodeURIComponent refuses) becomes
 * its three generalized-UTF-8 bytes (U+D800 → %ED%A0%80): the nearest a URL
 * can come to carrying one.
 */
export function encodeLoose(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}

/** A free TCP port on 127.0.0.1 (free when asked; nothing holds it afterwards). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
