/**
 * `npm test`'s preparation (the `pretest` script): what the suite needs
 * besides node_modules is on this machine and running.
 *
 * - PostgreSQL at LADDER_TEST_DATABASE_URL (default
 *   postgres://postgres@127.0.0.1:5432/test): started with pg_ctlcluster when
 *   installed but stopped; the database created when missing.
 * - Redis at LADDER_TEST_REDIS_URL (default redis://127.0.0.1:6379): started
 *   (in memory, no persistence) when installed but stopped.
 * - Chromium at CHROMIUM_PATH (default /usr/bin/chromium) for the dashboard
 *   tests.
 *
 * What is not installed is installed with apt-get when this runs as root
 * with apt-get at hand; otherwise the script stops with exit 1, naming what
 * is missing and the command that brings it. Nothing is ever skipped.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import pg from 'pg';
import { childEnv, testDatabaseUrl, testRedisUrl } from './test-env.js';

const log = (line: string) => process.stderr.write(`[pretest] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore', env: childEnv() }).status === 0;
}

const LOCAL = new Set(['127.0.0.1', 'localhost', '::1', '[::1]', '']);

/** apt-get install of `packages`, when this process may; true when it ran and succeeded. */
function aptInstall(packages: string[]): boolean {
  if (process.getuid?.() !== 0 || !onPath('apt-get')) return false;
  log(`installing ${packages.join(' ')} with apt-get`);
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env: childEnv({ DEBIAN_FRONTEND: 'noninteractive' }) });
  const install =
    update.status === 0 &&
    spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: ['ignore', 'ignore', 'inherit'], env: childEnv({ DEBIAN_FRONTEND: 'noninteractive' }) });
  return install !== false && install.status === 0;
}

async function until(check: () => Promise<boolean>, seconds: number): Promise<boolean> {
  for (let i = 0; i < seconds * 4; i++) {
    if (await check()) return true;
    await sleep(250);
  }
  return false;
}

/** The error of a connection to `database` on the test server, or undefined when it connects. */
async function pgError(database: string): Promise<(Error & { code?: string }) | undefined> {
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return error as Error & { code?: string };
  } finally {
    await client.end().catch(() => {});
  }
}

function refused(error: { code?: string } | undefined): boolean {
  return error?.code === 'ECONNREFUSED' || error?.code === 'ENOENT';
}

/** Ready PostgreSQL with the test database; a problem description when it cannot be had. */
async function preparePostgres(): Promise<string | undefined> {
  const url = new URL(testDatabaseUrl());
  const database = decodeURIComponent(url.pathname.slice(1)) || 'postgres';
  let error = await pgError('postgres');
  if (refused(error) && LOCAL.has(url.hostname)) {
    if (!onPath('pg_ctlcluster') && !aptInstall(['postgresql'])) return `PostgreSQL (nothing listens at ${url.host}): apt-get install -y postgresql`;
    const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql') : [];
    if (versions.length === 0) return `a PostgreSQL cluster (none in /etc/postgresql): pg_createcluster --start <version> main`;
    log(`starting PostgreSQL ${versions[0]}`);
    spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', versions[0]!, 'main', 'start'], { stdio: ['ignore', 'ignore', 'inherit'], env: childEnv() });
    await until(async () => !refused((error = await pgError('postgres'))), 30);
  }
  if (error) return `PostgreSQL at ${url.host} (${error.message}): pg_ctlcluster --skip-systemctl-redirect <version> main start`;
  const missing = await pgError(database);
  if (missing?.code === '3D000') {
    log(`creating the database ${database}`);
    const admin = new URL(testDatabaseUrl());
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
    } catch (created) {
      // Another run created it first.
      if ((created as { code?: string }).code !== '42P04')
        return `the database ${database} (${(created as Error).message}): createdb -h ${url.hostname} -U ${url.username || 'postgres'} ${database}`;
    } finally {
      await client.end();
    }
  } else if (missing) {
    return `the database ${database} at ${url.host} (${missing.message})`;
  }
  return undefined;
}

/** Whether Redis answers PING at host:port. */
function redisAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/** Running Redis; a problem description when it cannot be had. */
async function prepareRedis(): Promise<string | undefined> {
  const url = new URL(testRedisUrl());
  const host = url.hostname || '127.0.0.1';
  const port = Number(url.port || 6379);
  if (await redisAnswers(host, port)) return undefined;
  if (!LOCAL.has(url.hostname)) return `Redis at ${host}:${port} (no answer to PING)`;
  if (!onPath('redis-server') && !aptInstall(['redis-server'])) return `Redis (nothing answers at ${host}:${port}): apt-get install -y redis-server`;
  log(`starting Redis on port ${port}`);
  spawnSync('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: childEnv(),
  });
  if (await until(() => redisAnswers(host, port), 30)) return undefined;
  return `Redis at ${host}:${port} (started, but no answer to PING): redis-server --daemonize yes --bind 127.0.0.1 --port ${port}`;
}

/** Chromium for the dashboard tests; a problem description when it cannot be had. */
function prepareChromium(): string | undefined {
  const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (existsSync(path)) return undefined;
  if (path === '/usr/bin/chromium' && aptInstall(['chromium']) && existsSync(path)) return undefined;
  return `Chromium at ${path} (the dashboard tests drive it): apt-get install -y chromium`;
}

const problems = [await preparePostgres(), await prepareRedis(), prepareChromium()].filter((p): p is string => p !== undefined);
if (problems.length > 0) {
  process.stderr.write(`\nnpm test cannot run: missing\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
  const packages = problems.flatMap((p) => /apt-get install -y (.+)$/.exec(p)?.[1]?.split(' ') ?? []);
  if (packages.length > 1) process.stderr.write(`all at once: apt-get install -y ${packages.join(' ')}\n`);
  process.exit(1);
}
