#!/usr/bin/env node
/**
 * `npm start [-- serve options]`: serves Ladder with the demo ladders.
 * Checks the embedded database's lock first (a running Ladder holds it), so
 * a second start says so at once instead of after a build; then builds only
 * when a source file changed since the last build, and starts
 * `node dist/cli/main.js serve --demo` with the arguments given.
 */
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const stamp = join(root, 'dist', '.build-stamp');

function dataDirectory() {
  const at = args.findIndex((a) => a === '--data' || a.startsWith('--data='));
  if (at < 0) return './ladder-data';
  return args[at].includes('=') ? args[at].slice('--data='.length) : args[at + 1];
}

function lockHolder(dir) {
  try {
    const pid = Number(readFileSync(join(dir, 'ladder.lock'), 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return error && error.code === 'EPERM' ? -1 : undefined;
  }
}

function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else if (!path.endsWith('.test.ts')) newest = Math.max(newest, stat.mtimeMs);
  };
  visit(join(root, 'src'));
  visit(join(root, 'packages', 'core', 'src'));
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'packages/core/package.json', 'packages/core/tsconfig.build.json'])
    newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return newest;
}

// Help builds nothing and serves nothing: this script's usage, then serve's options from the last build.
const end = args.indexOf('--');
if ((end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h')) {
  process.stdout.write(
    'usage: npm start [-- serve options]\n\nBuilds Ladder when a source changed since the last build, then runs `ladder serve --demo` with the options given.\n\n',
  );
  const cli = join(root, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) {
    process.stdout.write('The serve options are listed by `npx ladder serve --help` once Ladder is built (npm run build).\n');
    process.exit(0);
  }
  process.exit(spawnSync(process.execPath, [cli, 'serve', '--help'], { stdio: 'inherit' }).status ?? 1);
}

if (!process.env.DATABASE_URL) {
  const dir = dataDirectory();
  const holder = lockHolder(dir);
  if (holder !== undefined) {
    process.stderr.write(`ladder: data directory ${resolve(dir)} is in use by ${holder > 0 ? `process ${holder}` : 'another process'}; stop it or use another --data directory\n`);
    process.exit(2);
  }
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built < newestSource()) {
  process.stderr.write('ladder: building (sources changed since the last build)\n');
  const started = Date.now();
  // The rating library (packages/core, `ladder-core`) first: the service imports its build.
  for (const config of [join(root, 'packages', 'core', 'tsconfig.build.json'), join(root, 'tsconfig.build.json')]) {
    const result = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { stdio: 'inherit' });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
  // The stamp carries the build's start time: a source saved during the build is newer, so the next start builds again.
  writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
  utimesSync(stamp, started / 1000, started / 1000);
}

const child = spawn(process.execPath, [join(root, 'dist', 'cli', 'main.js'), 'serve', '--demo', ...args], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
