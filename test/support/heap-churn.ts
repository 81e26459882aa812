/**
 * The heap tests' workload, run in a child process of its own (a collector
 * setting holds for the whole process): about 40 MB held live, and objects
 * that live a while churned through (as a busy instance's requests), while
 * the largest old generation V8 reserves is read. `runInChild` starts such a
 * child from the project's sources.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { childEnv } from './test-env.js';

export const projectRoot = join(import.meta.dirname, '../..');

/** The old generation's reserved size (the heap's total also holds the young generation, whose size moves with the machine's load). */
function oldSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_size;
}

/**
 * Holds 300,000 small objects live and churns 400 rounds of 20,000 more (the last 40,000 to 100,000 kept),
 * giving the event loop a turn every `yieldEvery` rounds (0: never); returns the largest old generation
 * reserved meanwhile, in MB.
 */
export async function churnHeap(yieldEvery = 0): Promise<number> {
  const live: Array<{ a: number; b: string; c: number[] }> = [];
  for (let i = 0; i < 300_000; i++) live.push({ a: i, b: `p${i}`, c: [i] });
  const recent: Array<{ x: number; y: number[]; z: string }> = [];
  let largest = 0;
  for (let round = 0; round < 400; round++) {
    for (let i = 0; i < 20_000; i++) recent.push({ x: i, y: [i, i], z: `s${i}` });
    if (recent.length > 100_000) recent.splice(0, 60_000);
    largest = Math.max(largest, oldSpaceBytes());
    if (yieldEvery > 0 && round % yieldEvery === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  // Read after the churn, so that the live objects are live throughout (a local no longer read may be dead already).
  if (live.length !== 300_000) throw new Error('the live objects were lost');
  return largest / 1048576;
}

/** Runs an ES module's `script` (top-level await allowed) in a child Node from the project's sources; its last line on stdout, as JSON. */
export function runInChild<T>(script: string): T {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: projectRoot, env: childEnv(), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as T;
}

/** The path of a project file, quoted for a child's script. */
export function projectModule(path: string): string {
  return JSON.stringify(join(projectRoot, path));
}
