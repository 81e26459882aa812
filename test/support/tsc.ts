import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cli.js';
import { childEnv } from './test-env.js';

/** Type-checks a TypeScript project (its tsconfig.json) with the project's own compiler; returns tsc's report, '' when clean. */
export async function typeErrors(tsconfig: string): Promise<string> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  return promisify(execFile)(process.execPath, [tsc, '-p', tsconfig, '--noEmit'], { cwd: ROOT, env: childEnv() }).then(
    () => '',
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
}
