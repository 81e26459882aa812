/**
 * The whole project, tests included, type-checks under `strict` (vitest
 * strips types without checking them, so a wrong option name in a test
 * would otherwise pass silently).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

it('tsc --noEmit reports no errors in src/ and test/', async () => {
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--noEmit'], { cwd: root }).then(
    () => '',
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
  expect(result).toBe('');
}, 120_000);
