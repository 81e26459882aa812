/**
 * Vitest global setup: builds dist/ when it is missing (a fresh clone, where
 * `npm install` no longer builds: the package is built by `prepack`), the
 * rating library's (packages/core/dist) first, as `npm run build` does. The
 * package tests list and install what `npm pack` ships from them. An existing
 * dist/ is left alone, so a run of a few tests costs nothing extra.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from './test-env.js';

const ROOT = join(import.meta.dirname, '../..');

export default function setup(): void {
  const { bin } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const core = join(ROOT, 'packages/core');
  const { main } = JSON.parse(readFileSync(join(core, 'package.json'), 'utf8')) as { main: string };
  const built = [...Object.values(bin).map((target) => join(ROOT, target)), join(core, main)];
  if (built.every((target) => existsSync(target))) return;
  for (const config of [join(core, 'tsconfig.build.json'), join(ROOT, 'tsconfig.build.json')]) {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], { cwd: ROOT, stdio: 'inherit', env: childEnv() });
  }
}
