/**
 * The whole project, tests included, type-checks under `strict` (vitest
 * strips types without checking them, so a wrong option name in a test
 * would otherwise pass silently).
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { typeErrors } from './support/tsc.js';

it('tsc --noEmit reports no errors in src/ and test/', async () => {
  expect(await typeErrors(join(ROOT, 'tsconfig.json'))).toBe('');
}, 120_000);
