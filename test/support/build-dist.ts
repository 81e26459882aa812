/**
 * Vitest global setup: builds dist/ when it is missing (a fresh clone, where
 * `npm install` no longer builds: the package is built by `prepack`). The
 * package test lists what `npm pack` ships from it. An existing dist/ is
 * left alone, so a run of a few tests costs nothing extra.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from './test-env.js';

const ROOT = join(import.meta.dirname, '../..');

export default function setup(): void {
  const { bin } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  if (Object.values(bin).every((target) => existsSync(join(ROOT, target)))) return;
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit', env: childEnv() });
}
