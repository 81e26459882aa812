import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownDir } from './litter.js';
import { childEnv } from './test-env.js';

export const ROOT = join(import.meta.dirname, '../..');

/**
 * Loaded before the command when `terminal` is asked for: standard error then
 * claims to be an 80-column terminal, so the progress bars are drawn into the
 * captured output (a pipe, where they would otherwise stay hidden).
 */
const TERMINAL_STDERR = `data:text/javascript,${encodeURIComponent(
  "Object.defineProperty(process.stderr, 'isTTY', { value: true }); Object.defineProperty(process.stderr, 'columns', { value: 80 });",
)}`;

export interface LadderRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `ladder` command from source (tsx), the way `npx ladder` runs the build. */
export function runLadder(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; terminal?: boolean } = {}): LadderRun {
  const node = ['--import', 'tsx', ...(options.terminal ? ['--import', TERMINAL_STDERR] : [])];
  const run = spawnSync(process.execPath, [...node, join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    // A replay of a large log prints tens of thousands of rows.
    maxBuffer: 256 * 1024 * 1024,
    env: childEnv(options.env),
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A new temporary folder, removed after the test file, and a function that writes a file into it and returns the file's path. */
export function scratchFiles(prefix: string): (name: string, text: string) => string {
  const dir = ownDir(mkdtempSync(join(tmpdir(), prefix)));
  return (name, text) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
}
