/**
 * What `npm pack` ships: the built library and command (dist), the
 * dashboard's files (dist/web finds them in src/web/public), the README and
 * the licence; never tests, CI scripts, docs, screenshots, TypeScript sources
 * or configuration. Installing the package compiles nothing: it is built by
 * `prepack` before packing, and there is no install-time script.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { childEnv } from './support/test-env.js';

interface PackageJson {
  bin: Record<string, string>;
  exports: Record<string, Record<string, string>>;
  scripts: Record<string, string>;
  files: string[];
  license: string;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
let shipped: string[] = [];

beforeAll(() => {
  // --ignore-scripts: list the files without running prepack's build (the global setup built dist/).
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: childEnv() });
  shipped = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path);
}, 60_000);

describe('the npm package', () => {
  it('ships the command, every export, the dashboard, the README and the licence', () => {
    const targets = [...Object.values(pkg.bin), ...Object.values(pkg.exports).flatMap((conditions) => Object.values(conditions))].map((target) => target.replace(/^\.\//, ''));
    expect(targets.filter((target) => !shipped.includes(target))).toEqual([]);
    const dashboard = execFileSync('git', ['ls-files', 'src/web/public'], { cwd: ROOT, encoding: 'utf8', env: childEnv() }).trim().split('\n');
    expect(dashboard).toContain('src/web/public/index.html');
    expect(dashboard.filter((file) => !shipped.includes(file))).toEqual([]);
    expect(shipped).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']));
  });

  it('ships nothing else: no tests, CI, docs, screenshots, sources, configuration, source maps or benchmarks', () => {
    const allowed = (path: string) =>
      ['package.json', 'README.md', 'LICENSE'].includes(path) ||
      path.startsWith('src/web/public/') ||
      (path.startsWith('dist/') && !path.endsWith('.map') && !path.startsWith('dist/bench/'));
    expect(shipped.filter((path) => !allowed(path))).toEqual([]);
    expect(shipped.filter((path) => /(^|\/)(test|\.ci|docs)\/|tsconfig|\.test\.|screenshots\/|\.png$/.test(path))).toEqual([]);
  });

  it('is MIT licensed, built before packing, and runs no script on install', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the Ladder authors\n/);
    expect(pkg.scripts.prepack).toBe('npm run build');
    for (const hook of ['prepare', 'preinstall', 'install', 'postinstall']) expect(pkg.scripts[hook]).toBeUndefined();
    // `npm start` builds (when sources changed) before serving, since a clone has no dist/ after `npm install`.
    expect(pkg.scripts.start).toBe('node scripts/start.mjs');
  });
});
