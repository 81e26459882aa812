/**
 * `ladder serve` as a child process, for the tests that need a real server:
 * started on a free port, given `childEnv()` (never the shell's store
 * variables), and resolved with the URL it prints once it listens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { childEnv } from './test-env.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServeOptions {
  /** Arguments after `serve --port 0`. */
  args?: readonly string[];
  /** Variables added to `childEnv()`. */
  env?: Record<string, string>;
  /** The command before `serve`. @default the source CLI through tsx, from the repository root */
  entry?: readonly string[];
  /** @default the repository root */
  cwd?: string;
  /** How long it may take to listen. @default 90 s */
  timeoutMs?: number;
}

export interface Served {
  child: ChildProcess;
  url: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
}

/** Starts `ladder serve --port 0 …args`; rejects with its stderr if it exits or does not listen in time. */
export function startServe(options: ServeOptions = {}): Promise<Served> {
  const entry = options.entry ?? ['--import', 'tsx', 'src/cli/main.ts'];
  const child = spawn(process.execPath, [...entry, 'serve', '--port', '0', ...(options.args ?? [])], {
    cwd: options.cwd ?? ROOT,
    env: childEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ladder serve did not listen: ${stderr}`)), options.timeoutMs ?? 90_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{"listening"')) return;
      clearTimeout(timer);
      resolve({ child, url: (JSON.parse(line) as { listening: string }).listening, stderr: () => stderr });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ladder serve exited with ${code}: ${stderr}`));
    });
  });
}

/** Stops a served child with SIGTERM and waits for it to exit. */
export function stopServe(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
