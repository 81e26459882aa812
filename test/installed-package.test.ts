/**
 * The package as a user installs it: `npm pack`'s tarball installed into an
 * empty project (no devDependencies, nothing from this clone), where every
 * command's help and one real run of each work, the peers that are not
 * installed get a message naming the package (never a stack trace), the
 * service starts and answers, and the library imports. The children run
 * without the `ladder-source` condition the tests use, as a user's Node does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { withoutSourceCondition } from './support/source-condition.js';
import { startServe, stopServe } from './support/serve.js';
import { childEnv } from './support/test-env.js';

let project = '';
let ladderBin = '';

function ladder(args: string[], input = '') {
  const run = spawnSync(process.execPath, [ladderBin, ...args], {
    cwd: project,
    encoding: 'utf8',
    input,
    env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }),
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'ladder-installed-'));
  // --ignore-scripts: the global setup built both dist/ folders already (prepack would build them again).
  // The rating library is its own package (packages/core), a dependency of `ladder`: both tarballs are installed.
  const pack = (cwd: string) =>
    (
      JSON.parse(
        execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], {
          cwd,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
          env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }),
        }),
      ) as Array<{ filename: string }>
    )[0]!.filename;
  const tarballs = [pack(join(ROOT, 'packages', 'core')), pack(ROOT)].map((file) => join(project, file));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'installs-ladder', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], {
    cwd: project,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }),
  });
  ladderBin = join(project, 'node_modules', 'ladder', 'dist', 'cli', 'main.js');
  for (const file of ['sample-matches.jsonl', 'seed-games.jsonl', 'sample-tickets.jsonl']) copyFileSync(join(ROOT, 'examples', file), join(project, file));
  // Fitting needs a training part of some length: 400 matches among 8 players, the stronger player winning three times in four.
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    const a = i % 8;
    const b = (a + 1 + (i % 7)) % 8;
    const strongerWins = i % 4 !== 3;
    const [winner, loser] = a < b === strongerWins ? [a, b] : [b, a];
    lines.push(
      JSON.stringify({
        at: new Date(Date.UTC(2000, 0, 1) + i * 60_000).toISOString(),
        teams: [
          { players: [`q${winner}`], rank: 1 },
          { players: [`q${loser}`], rank: 2 },
        ],
      }),
    );
  }
  writeFileSync(join(project, 'round-robin.jsonl'), `${lines.join('\n')}\n`);
}, 240_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('installs without the development dependencies', () => {
    for (const dev of ['openskill', 'ts-trueskill', 'playwright-core', 'vitest']) {
      expect(
        spawnSync(process.execPath, ['-e', `require.resolve(${JSON.stringify(dev)})`], { cwd: project, env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }) }).status,
        dev,
      ).not.toBe(0);
    }
  });

  it.each(['replay', 'performance', 'matchmake', 'simulate', 'evaluate', 'fit', 'serve', 'rebuild'])('prints the help of %s', (command) => {
    const run = ladder([command, '--help']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: ladder ${command} `));
  });

  it('runs every command once', () => {
    const replay = ladder(['replay', '--system', 'glicko2', '--json', 'sample-matches.jsonl']);
    expect(replay.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(replay.status).toBe(0);
    expect(JSON.parse(replay.stdout)).toBeTruthy();
    const performance = ladder(['performance', '--method', 'ml', '--json', 'seed-games.jsonl']);
    expect(performance.status).toBe(0);
    const matchmake = ladder(['matchmake', '--mode', '3v3', '--now', '240', '--json', 'sample-tickets.jsonl']);
    expect(matchmake.status).toBe(0);
    expect((JSON.parse(matchmake.stdout) as { matches: unknown[] }).matches.length).toBeGreaterThan(0);
    const simulate = ladder(['simulate', '--json', '--players', '200', '--days', '1', '--systems', 'glicko2']);
    expect(simulate.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(simulate.status).toBe(0);
    const evaluate = ladder(['evaluate', '--system', 'elo', '--split', '2024-05-01T12:30:00Z', '--json', 'sample-matches.jsonl']);
    expect(evaluate.status).toBe(0);
    const fit = ladder(['fit', '--system', 'elo', '--split', '2000-01-01T05:00:00Z', 'round-robin.jsonl']);
    expect(fit.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(fit.status).toBe(0);
    const rebuild = ladder(['rebuild', '--data', join(project, 'rebuild-data')]);
    expect(rebuild.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(rebuild.status).toBe(0);
  }, 300_000);

  it('names the package to install for a peer it does not have, with no stack trace', () => {
    const run = ladder(['evaluate', '--system', 'openskill', '--split', '2024-05-01T12:30:00Z', 'sample-matches.jsonl']);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^ladder: .*npm install openskill ts-trueskill/);
    expect(run.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at .*\.js:\d+/);
  });

  it('serves: the service starts on embedded PostgreSQL and answers', async () => {
    const server = await startServe({
      entry: [ladderBin],
      cwd: project,
      args: ['--no-matchmaking-warm-up', '--data', join(project, 'serve-data')],
      timeoutMs: 280_000,
      env: { NODE_OPTIONS: withoutSourceCondition() ?? '' },
    });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/v1/systems`)).status).toBe(200);
    } finally {
      await stopServe(server.child);
    }
  }, 300_000);

  it('registers the dashboard from its own export', () => {
    const script = "import { registerWeb } from 'ladder/web'; console.log(typeof registerWeb);";
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: project, encoding: 'utf8', env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }) });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('function');
  });

  it('imports as a library', () => {
    const script =
      "import { createSystem, rate } from 'ladder'; const s = createSystem('glicko2'); const after = rate(s, { teams: [{ players: ['a'], rank: 1 }, { players: ['b'], rank: 2 }] }); console.log(JSON.stringify([after.get('a').rating, after.get('b').rating].map(Math.round)));";
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: project, encoding: 'utf8', env: childEnv({ NODE_OPTIONS: withoutSourceCondition() }) });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([1662, 1338]);
  });
});
