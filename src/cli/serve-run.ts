/**
 * What `ladder serve` does once its options are read: start the service,
 * report it on standard error, print the line scripts wait for, and hand
 * back how to stop it. It runs on whichever thread `serve.ts` chose: the
 * main one, or a thread of its own whose heap has the young generation
 * asked for (serve-thread.ts), so its settings are plain data.
 */
import { seedDemo } from '../service/demo.js';
import { startService } from '../service/index.js';
import type { WarmUpReport } from '../service/matchmaking-warm-up.js';
import { registerWeb } from '../web/index.js';
import { CONTAINER_SHARE, containerMemoryLimit } from '../service/memory-limit.js';
import { setHeapGrowingPercent } from './heap.js';

export interface ServeSettings {
  host: string;
  port: number;
  data: string;
  demo: boolean;
  rateLimit: number;
  log: boolean;
  corsOrigin?: string[];
  metricsKey: boolean;
  matchmakingWarmUp: 'start' | 'first-queue' | 'off' | false;
  pgliteThread: boolean;
  pgliteSharedBuffers?: number;
  jobThreads?: number;
  corrections?: 'phased' | 'transaction';
  /** 0 leaves the heap's growth to V8. */
  heapGrowingPercent: number;
  /** The young generation in MB; 0 leaves V8's own sizing and the service on the main thread. */
  youngGeneration: number;
  /** The soft limit on the resident set in MB (0: none), or 'auto': a share of the container's limit, when one is set. */
  memoryLimit: number | 'auto';
}

/** The soft memory limit `--memory-limit` asks for, in bytes (undefined: none). */
export function memoryLimitBytes(setting: number | 'auto', container: () => number | undefined = containerMemoryLimit): number | undefined {
  if (setting === 'auto') {
    const bytes = container();
    return bytes === undefined ? undefined : Math.floor(CONTAINER_SHARE * bytes);
  }
  return setting > 0 ? setting * 1024 * 1024 : undefined;
}

/** Starts the service; resolves, once it listens, to the function that closes it. */
export async function runServe(opts: ServeSettings): Promise<() => Promise<void>> {
  // First, so that every collection from here on follows it (a whole-history ladder's derivation at its first write among them).
  setHeapGrowingPercent(opts.heapGrowingPercent);
  const corsOrigins =
    opts.corsOrigin ??
    (process.env.LADDER_CORS_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== '');
  // Reported once the service listens: a start that fails says only why.
  let warmUp: WarmUpReport | undefined;
  let listening = false;
  const limitBytes = memoryLimitBytes(opts.memoryLimit);
  const service = await startService({
    ...(limitBytes !== undefined ? { memoryLimit: { limitBytes, basePercent: opts.heapGrowingPercent } } : {}),
    host: opts.host,
    port: opts.port,
    dataDir: opts.data,
    databaseUrl: process.env.DATABASE_URL || undefined,
    databaseSchema: process.env.DATABASE_SCHEMA || undefined,
    redisUrl: process.env.REDIS_URL || undefined,
    redisPrefix: process.env.REDIS_PREFIX || undefined,
    adminKey: process.env.LADDER_ADMIN_KEY || undefined,
    rateLimit: { perSecond: opts.rateLimit },
    logger: opts.log,
    cors: corsOrigins.length > 0 ? { origins: corsOrigins } : undefined,
    metricsAccess: opts.metricsKey ? 'key' : 'public',
    matchmakingWarmUp: opts.matchmakingWarmUp === 'off' ? false : opts.matchmakingWarmUp,
    pgliteThread: opts.pgliteThread,
    ...(opts.pgliteSharedBuffers !== undefined ? { pgliteSharedBuffersMb: opts.pgliteSharedBuffers } : {}),
    ...(opts.corrections !== undefined ? { corrections: opts.corrections } : {}),
    ...(opts.jobThreads !== undefined ? { jobs: { threads: opts.jobThreads } } : {}),
    onWarmUp: (report) => {
      // Before listening it is reported with the start; at the first queue, when it happens.
      if (!listening) warmUp = report;
      else process.stderr.write(`ladder: matchmaker warmed up at the first queue (${report.passes} passes over synthetic queues, ${Math.round(report.ms)} ms)\n`);
    },
    plugins: [(app) => registerWeb(app, {})],
    onAdminKey: (event) => {
      if (event.kind === 'generated') process.stderr.write(`ladder: first admin key (shown once, store it now): ${event.key}\n`);
      else if (event.kind === 'registered') process.stderr.write('ladder: admin key from LADDER_ADMIN_KEY registered\n');
      else
        process.stderr.write(
          'ladder: an admin key exists already; add another with POST /v1/keys (admin scope), or start with LADDER_ADMIN_KEY set to a new key of 16+ characters\n',
        );
    },
  });
  if (opts.demo && (await seedDemo(service))) process.stderr.write('ladder: seeded demo ladders ranked-6v6, duel-1v1, wvw-eu\n');
  const store = process.env.DATABASE_URL ? 'PostgreSQL' : `PGlite in ${opts.data}`;
  listening = true;
  if (warmUp) process.stderr.write(`ladder: matchmaker warmed up before listening (${warmUp.passes} passes over synthetic queues, ${Math.round(warmUp.ms)} ms)\n`);
  const limit = limitBytes === undefined ? '' : `, memory limit ${Math.round(limitBytes / 1024 / 1024)} MB${opts.memoryLimit === 'auto' ? " (the container's, less a tenth)" : ''}`;
  process.stderr.write(`ladder: serving on ${service.url} (${store}${process.env.REDIS_URL ? ', Redis' : ''}${limit}); dashboard ${service.url}/ , API docs ${service.url}/docs\n`);
  // Machine-readable line for scripts and tests that start the server on port 0.
  process.stdout.write(`${JSON.stringify({ listening: service.url })}\n`);
  return () => service.close();
}

/**
 * The close of a service that a signal may ask for before the service has
 * started: it runs once the service can be closed, then the process (or
 * the service's thread) exits 0. Asking again changes nothing.
 */
export function closeWhenStarted(): { ask(): void; started(close: () => Promise<void>): void } {
  let close: (() => Promise<void>) | undefined;
  let asked = false;
  const run = () => {
    const closing = close;
    close = undefined;
    if (closing !== undefined) void closing().then(() => process.exit(0));
  };
  return {
    ask() {
      asked = true;
      run();
    },
    started(closeService) {
      close = closeService;
      if (asked) run();
    },
  };
}
