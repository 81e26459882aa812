/**
 * The tree is formatted and linted as biome.jsonc says: `npx biome check .`
 * (fix with `npx biome check --write .`). Part of `npm test`, so CI holds
 * every change to it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { childEnv } from './support/test-env.js';

it('passes biome check (format and lint)', () => {
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/@biomejs/biome/bin/biome'), 'check', '--max-diagnostics=20', '.'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: childEnv(),
  });
  expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
}, 120_000);
