/**
 * The rating library on its own: `npm pack` of packages/core (`ladder-core`)
 * installed into an empty project with no registry (`--offline`) brings
 * exactly one package, which rates, predicts and exposes each entry point.
 * The children run without the `ladder-source` condition the tests use: the
 * tarball ships dist/ only, as a user's Node resolves it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { withoutSourceCondition } from './support/source-condition.js';
import { childEnv } from './support/test-env.js';

const CORE = join(ROOT, 'packages', 'core');
let project = '';
let shipped: string[] = [];

function node(script: string) {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: project, encoding: 'utf8', env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }) });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'ladder-core-installed-'));
  // --ignore-scripts: the global setup built packages/core/dist already (prepack would build it again).
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], {
      cwd: CORE,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }),
    }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  shipped = packed[0]!.files.map((file) => file.path);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'installs-ladder-core', private: true, type: 'module' }));
  // --offline: a package with no dependency needs nothing from a registry; one it needed would fail here.
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(project, packed[0]!.filename)], {
    cwd: project,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }),
  });
}, 300_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the ladder-core package', () => {
  it('declares no dependency of any kind', () => {
    const pkg = JSON.parse(readFileSync(join(CORE, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.name).toBe('ladder-core');
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies']) expect(pkg[field], field).toBeUndefined();
  });

  it('ships its build, README and licence, and no sources, tests or source maps', () => {
    expect(shipped).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/core/index.js',
        'dist/core/index.d.ts',
        'dist/standings/index.js',
        'dist/matchmaking/index.js',
        'dist/integrity/index.js',
      ]),
    );
    expect(shipped.filter((path) => !['package.json', 'README.md', 'LICENSE'].includes(path) && !path.startsWith('dist/'))).toEqual([]);
    expect(shipped.filter((path) => /\.test\.|\.map$|\.ts$/.test(path) && !path.endsWith('.d.ts'))).toEqual([]);
  });

  it('installs as exactly one package', () => {
    const installed = readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['ladder-core']);
  });

  it('rates and predicts with createSystem and rate', () => {
    const run = node(
      "import { createSystem, rate, predict } from 'ladder-core'; const s = createSystem('glicko2'); const after = rate(s, { teams: [{ players: ['a'], rank: 1 }, { players: ['b'], rank: 2 }] }); console.log(JSON.stringify([after.get('a').rating, after.get('b').rating].map(Math.round))); console.log(predict(s, [['a'], ['b']], after)[0] > 0.5);",
    );
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(['[1662,1338]', 'true']);
  });

  it('exposes the standings, matchmaking and integrity entry points', () => {
    const run = node(
      "for (const entry of ['ladder-core/standings', 'ladder-core/matchmaking', 'ladder-core/integrity']) { const m = await import(entry); console.log(entry, Object.keys(m).length > 0); }",
    );
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(['ladder-core/standings true', 'ladder-core/matchmaking true', 'ladder-core/integrity true']);
  });
});
