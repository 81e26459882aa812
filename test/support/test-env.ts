/**
 * The test run's environment. The README tells production users to export
 * DATABASE_URL and REDIS_URL; a test that inherited them (or a child process
 * given the whole parent environment) would write into that database. So the
 * tests never read the service's variables: the machine's test PostgreSQL
 * and Redis come from LADDER_TEST_DATABASE_URL / LADDER_TEST_REDIS_URL (the
 * local `test` database and Redis by default), the global setup removes the
 * service's variables before any test runs, and every child process is given
 * `childEnv()`, which removes them again and adds only what the test names.
 *
 * Each run also has an id (LADDER_TEST_RUN) that every schema and Redis
 * prefix the tests create carries, and a temporary folder of its own
 * (TMPDIR), so what a run left behind can be found and told apart from a
 * another test run on the same machine.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** The PostgreSQL database the tests may write into (in schemas of their own). */
export function testDatabaseUrl(): string {
  return process.env.LADDER_TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

/** The Redis the tests may write into (under prefixes of their own). */
export function testRedisUrl(): string {
  return process.env.LADDER_TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL;
}

/** Variables `ladder serve`, the CLI and the service read, that are not LADDER_*. */
const SERVICE_VARIABLES = new Set(['DATABASE_URL', 'DATABASE_SCHEMA', 'REDIS_URL', 'REDIS_PREFIX']);

/** Whether the service or CLI would read `name`: the store variables and every LADDER_* except the tests' own LADDER_TEST_*. */
export function isServiceVariable(name: string): boolean {
  return SERVICE_VARIABLES.has(name) || (name.startsWith('LADDER_') && !name.startsWith('LADDER_TEST_'));
}

/** `env` without the service's variables. */
export function withoutServiceVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isServiceVariable(name)));
}

/** Removes the service's variables from this process's environment; returns the names it removed. */
export function stripServiceVariables(): string[] {
  const removed = Object.keys(process.env).filter(isServiceVariable);
  for (const name of removed) delete process.env[name];
  return removed;
}

/**
 * The environment for a child process a test starts: this one's, without
 * the service's variables, plus `extra` (which may set them, since the test
 * then chose them). TMPDIR goes back to the machine's temporary folder, so
 * tsx keeps its compile cache between runs; the children write no temporary
 * files of their own.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env = withoutServiceVariables(process.env);
  if (process.env.LADDER_TEST_TMP_ROOT) env.TMPDIR = process.env.LADDER_TEST_TMP_ROOT;
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** This run's id: a base-36 start time (8 characters) and 4 hex digits. Set by the global setup; a process outside a run makes its own. */
export function runId(): string {
  process.env.LADDER_TEST_RUN ||= newRunId();
  return process.env.LADDER_TEST_RUN;
}

export function newRunId(now = Date.now()): string {
  return `${now.toString(36).padStart(8, '0')}${randomBytes(2).toString('hex')}`;
}

/** The machine's temporary folder (the run's own TMPDIR lives inside it). */
export function tmpRoot(): string {
  return process.env.LADDER_TEST_TMP_ROOT || tmpdir();
}

/** Prefix of a run's temporary folder in tmpRoot(): `ladder-run-<run id>-<pid of the vitest process>`. */
export const RUN_FOLDER_PREFIX = 'ladder-run-';

/**
 * A test name (schema, key prefix) carries `_<run id>_<8 hex>` at its end;
 * names made before runs had ids carry `_<base-36 time>_<8 hex>`. The
 * first group is the time the run (or name) was made, in base 36.
 */
export const TEST_NAME = /_([0-9a-z]{8})([0-9a-f]{4})?_[0-9a-f]{8}$/;

/** When the name was made (ms since the epoch), or undefined for a name that is not a test name. */
export function testNameTime(name: string): number | undefined {
  const match = TEST_NAME.exec(name);
  return match ? parseInt(match[1]!, 36) : undefined;
}
