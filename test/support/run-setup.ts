/**
 * Vitest global setup, before any test file runs (the workers inherit this
 * process's environment):
 *
 * - removes the service's variables (DATABASE_URL, REDIS_URL, LADDER_*, …)
 *   so no test reaches a database it did not choose; the tests' own
 *   PostgreSQL and Redis are LADDER_TEST_DATABASE_URL / LADDER_TEST_REDIS_URL;
 * - gives the run an id (LADDER_TEST_RUN) and a temporary folder of its own
 *   (TMPDIR), so test/leftovers.test.ts can list what this run left.
 *
 * The teardown removes the run's folder, schemas and keys, and what earlier
 * runs that crashed left: their folders (the vitest process named in the
 * folder is gone) and test schemas and keys older than a day.
 *
 * Vitest calls the setup once per project and once for the root, in one
 * process: the first call does the work, the others find it done.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeKeys, removeSchemas } from './litter.js';
import { newRunId, RUN_FOLDER_PREFIX, stripServiceVariables, testNameTime } from './test-env.js';

const DAY_MS = 24 * 3600 * 1000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unreachable(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code ?? '') || /ECONNREFUSED|timeout/i.test(message ?? '');
}

export default function setup(): (() => Promise<void>) | undefined {
  const removed = stripServiceVariables();
  if (process.env.LADDER_TEST_RUN_OWNER === String(process.pid)) return undefined;
  if (removed.length > 0) process.stderr.write(`tests: ignoring ${removed.join(', ')} from the environment (the tests use LADDER_TEST_DATABASE_URL and LADDER_TEST_REDIS_URL)\n`);

  const root = process.env.LADDER_TEST_TMP_ROOT || tmpdir();
  const run = newRunId();
  const runDir = join(root, `${RUN_FOLDER_PREFIX}${run}-${process.pid}`);
  mkdirSync(runDir, { recursive: true });
  Object.assign(process.env, { LADDER_TEST_RUN: run, LADDER_TEST_RUN_OWNER: String(process.pid), LADDER_TEST_TMP_ROOT: root, LADDER_TEST_RUN_DIR: runDir, TMPDIR: runDir });

  return async () => {
    rmSync(runDir, { recursive: true, force: true });
    const ended = new Set([run]);
    for (const entry of readdirSync(root)) {
      const match = new RegExp(`^${RUN_FOLDER_PREFIX}([0-9a-z]{12})-(\\d+)$`).exec(entry);
      if (!match || alive(Number(match[2]))) continue;
      ended.add(match[1]!);
      rmSync(join(root, entry), { recursive: true, force: true });
    }
    const cutoff = Date.now() - DAY_MS;
    const ours = (name: string) => [...ended].some((id) => name.includes(`_${id}_`)) || (testNameTime(name) ?? Infinity) < cutoff;
    for (const remove of [removeSchemas, removeKeys]) {
      try {
        await remove(ours);
      } catch (error) {
        // Without a reachable test database or Redis (a run of the pure units) there is nothing there to sweep.
        if (!unreachable(error)) throw error;
      }
    }
  };
}
