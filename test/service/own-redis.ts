/**
 * A redis-server of a test's own: a child process on a free port that
 * persists nothing by itself (no automatic RDB, no AOF), so stopping and
 * starting it again gives an empty Redis on the same address; with `dir`,
 * a snapshot written there by SAVE is loaded on the next start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { childEnv } from '../support/test-env.js';

/** Starts `redis-server` on `port` in the foreground and resolves once it accepts connections. */
export function startRedis(port: number, options: { dir?: string } = {}): Promise<ChildProcess> {
  const snapshot = options.dir !== undefined ? ['--dir', options.dir, '--dbfilename', 'dump.rdb'] : [];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...snapshot, '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv(),
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output}`));
    });
  });
}

/** SIGKILLs a redis-server started by startRedis and resolves once it is gone. */
export function stopRedis(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Calls `attempt` every 200 ms until it returns a value, failing after `seconds`. */
export async function poll<T>(what: string, seconds: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + seconds * 1000;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) throw new Error(`${what}: not within ${seconds} s${last ? ` (last: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
