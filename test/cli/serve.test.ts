/**
 * `ladder serve` as a newcomer meets it: the first admin key is printed only
 * once the server listens; a busy port or an unusable data directory is one
 * line naming it, exit 2, and leaves no key behind; a later start says that a
 * key exists and how to add another. The matchmaker is warmed at the first
 * queue by default, before listening with `--matchmaking-warm-up start`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ladderProgram } from '../../src/cli/program.js';
import { memoryLimitBytes } from '../../src/cli/serve-run.js';
import { containerMemoryLimit } from '../../src/service/memory-limit.js';
import { childEnv } from '../support/test-env.js';

const root = join(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `ladder serve`; stops it (SIGTERM) once it prints that it listens, or waits for it to exit. */
function serve(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', ...args], {
      cwd: root,
      env: childEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      if (stdout.includes('"listening"')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A start refused: exit 2 and one line on stderr, which contains `text` (or matches it). */
function expectRefused(run: Run, text: string | RegExp): void {
  expect(run.code).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  if (typeof text === 'string') expect(lines[0]).toContain(text);
  else expect(lines[0]).toMatch(text);
}

/** Starts `ladder serve`, reads /metrics once it listens, then stops it (SIGTERM) and waits for its exit. */
function serveAndScrape(args: string[], env: Record<string, string> = {}): Promise<Run & { metrics: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', ...args], { cwd: root, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    let metrics = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const had = stdout.includes('"listening"');
      stdout += chunk;
      const listening = /\{"listening":"([^"]+)"\}/.exec(stdout);
      if (had || listening === null) return;
      fetch(`${listening[1]}/metrics`)
        .then((response) => response.text())
        .then((text) => {
          metrics = text;
          child.kill('SIGTERM');
        }, reject);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr, metrics }));
  });
}

/** A series' value in a /metrics text, or undefined when absent. */
function series(metrics: string, name: string): number | undefined {
  const line = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics);
  return line === null ? undefined : Number(line[1]);
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ladder-serve-'));
  dirs.push(dir);
  return dir;
}

describe('ladder serve', () => {
  it("leaves the collector to V8 by default: the service on the main thread, the heap's growth V8's own", async () => {
    const serveCommand = (await ladderProgram(['serve'])).commands.find((command) => command.name() === 'serve')!;
    const defaults = serveCommand.opts<{ youngGeneration: number; heapGrowingPercent: number }>();
    expect(defaults.youngGeneration).toBe(0);
    expect(defaults.heapGrowingPercent).toBe(0);
  });

  it('takes a soft memory limit from the container by default: nine tenths of its limit, none without one', async () => {
    const serveCommand = (await ladderProgram(['serve'])).commands.find((command) => command.name() === 'serve')!;
    expect(serveCommand.opts<{ memoryLimit: number | 'auto' }>().memoryLimit).toBe('auto');
    expect(memoryLimitBytes('auto', () => 1000 * 1024 * 1024)).toBe(900 * 1024 * 1024);
    expect(memoryLimitBytes('auto', () => undefined)).toBeUndefined();
    expect(memoryLimitBytes(0, () => 1000 * 1024 * 1024)).toBeUndefined();
    expect(memoryLimitBytes(300)).toBe(300 * 1024 * 1024);
  });

  it('on a busy port: one line naming the port, exit 2, no key generated; then a real start prints the key once, and later starts say one exists', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const data = join(tempDir(), 'data');
    try {
      const busy = await serve(['--port', String(port), '--data', data]);
      expectRefused(busy, new RegExp(`^ladder: cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE`));
      expect(busy.stderr).not.toContain('admin key');
      // The same from the service's own thread: its failure reported by the main thread, once.
      const busyThread = await serve(['--port', String(port), '--data', data, '--young-generation', '6']);
      expect(busyThread.code).toBe(2);
      expect(busyThread.stderr.trim().split('\n')).toEqual([busy.stderr.trim()]);
    } finally {
      blocker.close();
    }
    // By default the matchmaker is warmed at the first queue (none here), not before listening.
    const first = await serve(['--port', '0', '--data', data]);
    expect(first.stderr).toMatch(/first admin key \(shown once, store it now\): lk_[a-z0-9]{12}_/);
    expect(first.stderr).not.toContain('warmed up');
    const warmed = await serve(['--port', '0', '--data', data, '--matchmaking-warm-up', 'start']);
    expect(warmed.stderr).toMatch(/^ladder: matchmaker warmed up before listening \(8 passes over synthetic queues, \d+ ms\)$/m);
    const later = await serve(['--port', '0', '--data', data, '--no-matchmaking-warm-up']);
    expect(later.stderr).not.toContain('warmed up');
    expect(later.stderr).not.toMatch(/lk_[a-z0-9]{12}_/);
    expect(later.stderr).toContain('an admin key exists already; add another with POST /v1/keys');
  });

  it('with a data directory that cannot be used: one line naming the path, exit 2', async () => {
    const file = join(tempDir(), 'not-a-directory');
    writeFileSync(file, 'x');
    const run = await serve(['--port', '0', '--data', file]);
    expectRefused(run, file);
  });

  it('--pglite-shared-buffers reaches the embedded database: 16 MB starts, 4096 is one line naming the option, exit 2', async () => {
    const data = join(tempDir(), 'data');
    const bad = await serve(['--port', '0', '--data', data, '--pglite-shared-buffers', '4096', '--no-matchmaking-warm-up']);
    expectRefused(bad, 'sharedBuffersMb must be a whole number of MB from 1 to 1024 (got 4096)');
    const good = await serve(['--port', '0', '--data', data, '--pglite-shared-buffers', '16', '--no-matchmaking-warm-up']);
    expect(good.stdout).toContain('"listening"');
  });

  it('--heap-growing-percent takes a whole number from 0 to 1000 (or LADDER_HEAP_GROWING_PERCENT); anything else is one line naming it, exit 2', async () => {
    const data = join(tempDir(), 'data');
    for (const [args, env] of [
      [['--heap-growing-percent', '1001'], {}],
      [['--heap-growing-percent', '12.5'], {}],
      [[], { LADDER_HEAP_GROWING_PERCENT: 'lots' }],
    ] as Array<[string[], Record<string, string>]>) {
      const bad = await serve(['--port', '0', '--data', data, '--no-matchmaking-warm-up', ...args], env);
      expectRefused(bad, '--heap-growing-percent takes a whole number from 0 to 1000');
    }
    const good = await serve(['--port', '0', '--data', data, '--heap-growing-percent', '10', '--no-matchmaking-warm-up']);
    expect(good.stdout).toContain('"listening"');
    const v8sOwn = await serve(['--port', '0', '--data', data, '--heap-growing-percent', '0', '--no-matchmaking-warm-up']);
    expect(v8sOwn.stdout).toContain('"listening"');
  });

  it('--young-generation N runs the service on a thread whose young generation is N MB (or LADDER_YOUNG_GENERATION_MB); by default and at 0 it stays on the main thread; SIGTERM exits 0 either way; anything else is one line naming it, exit 2', async () => {
    const data = join(tempDir(), 'data');
    const quiet = ['--port', '0', '--data', data, '--no-matchmaking-warm-up'];
    const MB = 1024 * 1024;
    const lean = await serveAndScrape([...quiet, '--young-generation', '6']);
    expect(lean.code).toBe(0);
    expect(series(lean.metrics, 'ladder_heap_young_generation_max_bytes')).toBe(6 * MB);
    // The young generation's two halves in use, at most 2 MB each.
    expect(series(lean.metrics, 'ladder_heap_space_bytes{space="new_space"}')).toBeLessThanOrEqual(4 * MB);
    const fromEnv = await serveAndScrape(quiet, { LADDER_YOUNG_GENERATION_MB: '24' });
    expect(fromEnv.code).toBe(0);
    expect(series(fromEnv.metrics, 'ladder_heap_young_generation_max_bytes')).toBe(24 * MB);
    for (const onMain of [await serveAndScrape(quiet), await serveAndScrape([...quiet, '--young-generation', '0'], { LADDER_YOUNG_GENERATION_MB: '6' })]) {
      expect(onMain.code).toBe(0);
      expect(series(onMain.metrics, 'ladder_heap_young_generation_max_bytes')).toBeUndefined();
      expect(series(onMain.metrics, 'ladder_heap_space_bytes{space="new_space"}')).toBeGreaterThan(0);
    }
    for (const [args, env] of [
      [['--young-generation', '2'], {}],
      [['--young-generation', '6.5'], {}],
      [[], { LADDER_YOUNG_GENERATION_MB: 'small' }],
    ] as Array<[string[], Record<string, string>]>) {
      const bad = await serve([...quiet, ...args], env);
      expectRefused(bad, '--young-generation takes 0 or a whole number of MB from 3 to 1024');
    }
  });

  it("--memory-limit MB sets a soft limit seen in /metrics (or LADDER_MEMORY_LIMIT_MB), on the main thread and on its own; auto, the default, takes nine tenths of a container's limit and sets none without one; anything else is one line naming it, exit 2", async () => {
    const data = join(tempDir(), 'data');
    const quiet = ['--port', '0', '--data', data, '--no-matchmaking-warm-up'];
    const MB = 1024 * 1024;
    for (const [args, env] of [
      [['--memory-limit', '4096'], {}],
      [['--memory-limit', '4096', '--young-generation', '6'], {}],
      [[], { LADDER_MEMORY_LIMIT_MB: '4096' }],
    ] as Array<[string[], Record<string, string>]>) {
      const limited = await serveAndScrape([...quiet, ...args], env);
      expect(limited.code).toBe(0);
      expect(series(limited.metrics, 'ladder_memory_limit_bytes')).toBe(4096 * MB);
      // A fresh instance (PGlite's memory included, about 250 MB) is far below 80 % of 4 GB: nothing held, nothing collected.
      expect(series(limited.metrics, 'ladder_memory_limit_held')).toBe(0);
      expect(series(limited.metrics, 'ladder_memory_limit_collections')).toBe(0);
      expect(limited.stderr).toContain('memory limit 4096 MB');
    }
    // Below what the instance needs to start: held from the first reading, and collecting (at most two a second) on both threads.
    for (const thread of [[], ['--young-generation', '6']]) {
      const tight = await serveAndScrape([...quiet, '--memory-limit', '64', ...thread]);
      expect(tight.code).toBe(0);
      expect(series(tight.metrics, 'ladder_memory_limit_held')).toBe(1);
      expect(series(tight.metrics, 'ladder_memory_limit_collections')).toBeGreaterThanOrEqual(1);
    }
    const none = await serveAndScrape([...quiet, '--memory-limit', '0'], { LADDER_MEMORY_LIMIT_MB: '300' });
    expect(none.code).toBe(0);
    expect(series(none.metrics, 'ladder_memory_limit_bytes')).toBeUndefined();
    // The default reads the container this test runs in.
    const container = containerMemoryLimit();
    const auto = await serveAndScrape(quiet);
    expect(auto.code).toBe(0);
    expect(series(auto.metrics, 'ladder_memory_limit_bytes')).toBe(container === undefined ? undefined : Math.floor(0.9 * container));
    for (const [args, env] of [
      [['--memory-limit', '63'], {}],
      [['--memory-limit', '300.5'], {}],
      [['--memory-limit', '-1'], {}],
      [[], { LADDER_MEMORY_LIMIT_MB: 'plenty' }],
    ] as Array<[string[], Record<string, string>]>) {
      const bad = await serve([...quiet, ...args], env);
      expectRefused(bad, '--memory-limit takes auto, 0 (none) or a whole number of MB from 64');
    }
  });

  it('a SIGTERM while the service starts closes it once started, on the main thread and on its own: exit 0, and the next start finds its store whole', async () => {
    for (const thread of [[], ['--young-generation', '6']]) {
      const data = join(tempDir(), 'data');
      const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', '--port', '0', '--data', data, '--no-matchmaking-warm-up', ...thread], {
        cwd: root,
        env: childEnv({}),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      // The service makes the data directory as it opens the store: the signal then comes during the start.
      while (!existsSync(data)) await new Promise((resolve) => setTimeout(resolve, 10));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // It finished starting (and said so), then closed.
      expect(stdout).toContain('"listening"');
      expect(stderr).not.toContain('Error');
      const again = await serve(['--port', '0', '--data', data, '--no-matchmaking-warm-up', ...thread]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('"listening"');
    }
  });

  it('--corrections takes phased or transaction; anything else is one line naming the choices, exit 2, before any start', async () => {
    const data = join(tempDir(), 'data');
    const bad = await serve(['--port', '0', '--data', data, '--corrections', 'later']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'later' is invalid");
    expect(bad.stderr).toContain('phased, transaction');
    const good = await serve(['--port', '0', '--data', data, '--corrections', 'transaction', '--no-matchmaking-warm-up']);
    expect(good.stdout).toContain('"listening"');
  });
});

describe('ladder serve: the matchmaker warmed at the first queue', () => {
  it('says so on standard error once a ticket makes the first queue, not before', async () => {
    const key = 'serve-test-admin-key-0123456789';
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', '--port', '0', '--data', join(tempDir(), 'data')], {
      cwd: root,
      env: childEnv({ LADDER_ADMIN_KEY: key, LADDER_MATCHMAKING_INTERVAL_MS: '100' }),
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk;
          const line = /\{"listening":"([^"]+)"\}/.exec(stdout);
          if (line) resolve(line[1]!);
        });
        child.on('exit', () => reject(new Error(`serve exited: ${stderr}`)));
      });
      const post = (path: string, body: unknown) =>
        fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      // Several turns of the loop with no queue: nothing warmed.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(stderr).not.toContain('warmed up');
      expect((await post('/v1/ladders', { id: 'duel', system: 'elo' })).status).toBe(201);
      expect((await post('/v1/ladders/duel/tickets', { players: [{ id: 'ann', percentile: 50, pings: { eu: 20 } }] })).status).toBe(201);
      const deadline = Date.now() + 30_000;
      while (!stderr.includes('warmed up') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stderr).toMatch(/^ladder: matchmaker warmed up at the first queue \(8 passes over synthetic queues, \d+ ms\)$/m);
      expect(stderr).not.toContain('before listening');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
