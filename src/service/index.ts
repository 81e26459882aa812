/**
 * Starts the service: database (PGlite or PostgreSQL), migrations, shared
 * state (Redis or in process), the HTTP app and the matchmaking loop. This
 * is the composition root; the dashboard or any other Fastify plugin is
 * registered by whoever starts the service (`plugins`), never imported here.
 */
import type { FastifyInstance } from 'fastify';
import { DataDirectoryLockedError, type Database, openDatabase } from '../store/database.js';
import { isDatabaseUnreachable } from '../store/database-errors.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { MigrationFailedError, migrate } from '../store/migrations.js';
import { type CorrectionMode, defaultCorrectionMode, resumeCorrections, resumeInBackground } from './corrections.js';
import { type AppContext, buildApp } from './http/app.js';
import { type JobOptions, Jobs } from './jobs/index.js';
import type { CorsOptions } from './http/security.js';
import type { StreamLimits } from './http/stream-slots.js';
import { KeyStore, RateLimiter, type RateLimitOptions } from './keys.js';
import { Ladders } from './ladders.js';
import { type MatchmakingLoop, startMatchmakingLoop } from './matchmaking-loop.js';
import type { WarmUpReport } from './matchmaking-warm-up.js';
import { inProcessMatchmakers, workerMatchmakers } from './matchmaking-worker/host.js';
import { serviceMetrics } from './metrics.js';
import { MemoryRankings, RedisRankings, type Rankings } from './rankings.js';
import { ServiceStartError } from './start-errors.js';
import { PlayerLookup } from './player-lookup.js';
import { MemoryTicketStore } from './tickets/memory.js';
import type { TicketStore } from './tickets/store.js';
import { RedisTicketStore } from './tickets/redis.js';
import { MatchWriter, type WriterOptions } from './writer/index.js';
import { MemoryLimiter } from './memory-limit.js';

export { ServiceStartError } from './start-errors.js';

/** What happened to the first admin key at start. */
export type AdminKeyEvent =
  /** Generated now (no key existed): print it, it is shown once. */
  | { kind: 'generated'; key: string }
  /** LADDER_ADMIN_KEY (adminKey) was stored now. */
  | { kind: 'registered' }
  /** Keys exist already; nothing was created. */
  | { kind: 'exists' };

export interface ServiceOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 8080 */
  port?: number;
  /** PGlite data directory (ignored with databaseUrl). @default './ladder-data' */
  dataDir?: string;
  /** PostgreSQL connection string; embedded PGlite when absent. */
  databaseUrl?: string;
  /** PostgreSQL schema (tests use one per run). */
  databaseSchema?: string;
  /** Redis URL; shared state stays in process when absent. */
  redisUrl?: string;
  /** Prefix of every Redis key (one deployment per prefix). @default 'ladder:' */
  redisPrefix?: string;
  /** First admin key; generated and reported through `onAdminKey` when absent on first start. */
  adminKey?: string;
  /** @default 65536 */
  bodyLimit?: number;
  rateLimit?: RateLimitOptions;
  /**
   * How voids and corrections are written (corrections.ts): 'phased' never
   * holds the database for long (each step a short transaction; durable and
   * resumed on start), 'transaction' writes each in one transaction.
   * @default 'phased' on PGlite, 'transaction' on PostgreSQL
   */
  corrections?: CorrectionMode;
  /** Milliseconds between matchmaking passes. @default LADDER_MATCHMAKING_INTERVAL_MS, else 1000 */
  matchmakingIntervalMs?: number;
  /**
   * Warm the matchmaker's compiled code (src/service/matchmaking-warm-up.ts), about a second of CPU
   * where the matchmakers run, so the first pass after a failover runs at full speed: `'start'` (or
   * `true`) before listening; `'first-queue'` when a matchmaking turn first finds a queue (any
   * instance's: a standby warms up as soon as one exists), so an instance that serves no queue never
   * starts the matchmaking worker nor keeps the heap the warm-up grows (about 90 MB); `false`, never.
   * `ladder serve` warms on the first queue unless `--matchmaking-warm-up start|off`. @default false
   */
  matchmakingWarmUp?: boolean | 'start' | 'first-queue';
  /** Milliseconds a ladder's matchmaking lock lasts unless renewed (Redis). @default 10000 */
  matchmakingLockMs?: number;
  /**
   * Run the matchmakers and their passes in a worker thread, so a pass over a big queue never
   * stalls the requests (docs/SERVICE.md, "Matchmaking"). `false` keeps them on the main thread:
   * for an embedding that may not start threads, or a profile of the pass next to the rest. @default true
   */
  matchmakingWorker?: boolean;
  /**
   * A soft limit on the process's resident set (src/service/memory-limit.ts): near it the service's
   * thread collects its garbage sooner; `basePercent` is the heap growing factor kept below it
   * (`--heap-growing-percent`; 0: V8's own). `ladder serve --memory-limit`. @default none
   */
  memoryLimit?: { limitBytes: number; basePercent?: number };
  /** @default false */
  logger?: boolean;
  /** PostgreSQL pool size. @default 10 */
  poolSize?: number;
  /**
   * Statement timeout of public reads on PostgreSQL, in milliseconds: a read
   * that runs longer is stopped and answered 503. @default LADDER_READ_TIMEOUT_MS, else 5000
   */
  readTimeoutMs?: number;
  /** PostgreSQL connections public reads may hold at once, besides `poolSize`. @default 4 */
  readPoolSize?: number;
  /**
   * Run embedded PGlite in a worker thread, so its statements never stall the
   * event loop (docs/SERVICE.md, "Persistence"); `false` runs it on the event
   * loop. @default true
   */
  pgliteThread?: boolean;
  /**
   * Embedded PGlite's buffer cache in MB (`shared_buffers`, 1–1024), for an
   * instance with a memory budget (docs/SERVICE.md, "Persistence").
   * @default LADDER_PGLITE_SHARED_BUFFERS_MB, else PGlite's 128
   */
  pgliteSharedBuffersMb?: number;
  /**
   * Match writer tuning (see WriterOptions). Unset fields fall back to the
   * environment (`LADDER_WRITE_BATCH`, `LADDER_WRITE_PIPELINE`), then to the defaults.
   */
  writer?: WriterOptions;
  /** The worker pool for heavy requests (balance, large predictions, the integrity report): threads, caps, limits (docs/SERVICE.md). */
  jobs?: JobOptions;
  /** Who may scrape /metrics (see AppContext.metricsAccess). @default 'public' */
  metricsAccess?: 'public' | 'key';
  /** Cross-origin browser access by a list of origins; off when absent. */
  cors?: CorsOptions;
  /** Caps on open server-sent-event streams: per client address (default 16) and per instance (default 10,000). */
  streams?: StreamLimits;
  /** The clock tickets and backfills expire by (epoch ms; tests advance it). @default Date.now */
  clock?: () => number;
  /** Fastify plugins registered on the app before it listens (the dashboard: `registerWeb` from `ladder/web`). */
  plugins?: Array<(app: FastifyInstance) => Promise<void> | void>;
  /** Called once the server listens, with what happened to the first admin key. */
  onAdminKey?: (event: AdminKeyEvent) => void;
  /** Called after the matchmaker's warm-up (`matchmakingWarmUp`), with what it took: before listening, or at the first queue. */
  onWarmUp?: (report: WarmUpReport) => void;
  /**
   * Problems the service survives (a failed matchmaking pass, Redis away),
   * at most one line per kind every 10 s. @default a line on standard error
   */
  onWarning?: (message: string) => void;
}

export interface Service {
  app: FastifyInstance;
  db: Database;
  url: string;
  ladders: Ladders;
  writer: MatchWriter;
  tickets: TicketStore;
  rankings: Rankings;
  /** The worker pool for heavy requests (its threads, for tests and diagnosis). */
  jobs: Jobs;
  close(): Promise<void>;
  /** Runs one matchmaking pass over every queue now (tests, demo). */
  matchmakeNow(): Promise<number>;
  /** The matchmaking loop (its long-lived matchmakers, for tests). */
  matchmaking: MatchmakingLoop;
}

/** A positive integer from the environment, or undefined (unset or not a positive integer). */
function positiveEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** `host:port` of a Redis URL, for messages (never the password). */
function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || '127.0.0.1'}:${parsed.port || '6379'}`;
  } catch {
    return 'the configured address';
  }
}

/** A warning sink that says each kind of problem at most once every 10 s. */
function throttled(sink: (message: string) => void): (kind: string, message: string) => void {
  const last = new Map<string, number>();
  return (kind, message) => {
    const now = Date.now();
    if ((last.get(kind) ?? 0) > now - 10_000) return;
    last.set(kind, now);
    sink(message);
  };
}

function describeCause(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
}

async function connectRedis(url: string): Promise<import('ioredis').Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    // While Redis is away, calls fail at once (503 to clients) instead of queueing; the client keeps reconnecting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new ServiceStartError(
      'redis-unreachable',
      `Redis at ${redisAddress(url)} is unreachable (${describeCause(error)}); start it, or unset REDIS_URL to keep shared state in process`,
      { cause: error },
    );
  }
  return redis;
}

export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const warn = throttled(options.onWarning ?? ((message) => process.stderr.write(`ladder: ${message}\n`)));
  let db: Database;
  try {
    db = await openDatabase({
      databaseUrl: options.databaseUrl,
      dataDir: options.dataDir,
      schema: options.databaseSchema,
      poolSize: options.poolSize,
      readTimeoutMs: options.readTimeoutMs ?? positiveEnv('LADDER_READ_TIMEOUT_MS'),
      readPoolSize: options.readPoolSize,
      pgliteThread: options.pgliteThread,
      pgliteSharedBuffersMb: options.pgliteSharedBuffersMb ?? positiveEnv('LADDER_PGLITE_SHARED_BUFFERS_MB'),
    });
  } catch (error) {
    if (error instanceof DataDirectoryLockedError) throw new ServiceStartError('data-directory', error.message, { cause: error });
    // A bad option (pgliteSharedBuffersMb) names itself.
    if (error instanceof InvalidInputError) throw error;
    if (options.databaseUrl === undefined) {
      throw new ServiceStartError(
        'data-directory',
        `cannot open the data directory ${options.dataDir ?? './ladder-data'} (${describeCause(error)}); check that it is writable or choose another with --data`,
        { cause: error },
      );
    }
    if (isDatabaseUnreachable(error))
      throw new ServiceStartError('database-unreachable', `PostgreSQL at ${redisAddress(options.databaseUrl)} is unreachable (${describeCause((error as Error).cause)})`, {
        cause: error,
      });
    throw error;
  }
  const cleanups: Array<() => Promise<void> | void> = [() => db.close()];
  const closeAll = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // Keep closing the rest.
      }
    }
  };
  try {
    try {
      await migrate(db);
    } catch (error) {
      if (error instanceof MigrationFailedError && options.databaseUrl !== undefined) {
        const where = `PostgreSQL at ${redisAddress(options.databaseUrl)}`;
        // Only a connection failure is called one: a statement the server ran and refused (42P07: a table already there) is named as such.
        if (isDatabaseUnreachable(error.cause)) {
          throw new ServiceStartError('database-unreachable', `${where} is unreachable (${error.sqlState ?? describeCause((error.cause as Error).cause)})`, { cause: error });
        }
        const what = error.version === 0 ? 'the migrations table' : `migration ${error.version}`;
        throw new ServiceStartError(
          'database-migration',
          `${where} refused ${what} (SQLSTATE ${error.sqlState ?? 'unknown'}); check that the schema ${options.databaseSchema ?? 'in use'} holds only Ladder's tables`,
          { cause: error },
        );
      }
      throw error;
    }
    const keys = new KeyStore(db);
    const ladders = new Ladders(db);
    const metrics = serviceMetrics();
    if (options.memoryLimit !== undefined) {
      // Before the first write, whose derivation of a whole-history ladder is the start's largest heap.
      const limiter = new MemoryLimiter(options.memoryLimit).start();
      metrics.watchMemoryLimit(limiter);
      cleanups.push(() => limiter.stop());
    }
    let rankings: Rankings;
    let tickets: TicketStore;
    if (options.redisUrl) {
      const redis = await connectRedis(options.redisUrl);
      cleanups.push(() => redis.disconnect());
      redis.on('error', (error: unknown) =>
        warn(
          'redis',
          `Redis at ${redisAddress(options.redisUrl!)} is unavailable (${describeCause(error)}); ratings are still written, leaderboards and tickets answer 503 until it returns`,
        ),
      );
      const prefix = options.redisPrefix ?? 'ladder:';
      rankings = new RedisRankings(redis, db, prefix);
      metrics.useRedis();
      const store = new RedisTicketStore(redis, prefix, { lockMs: options.matchmakingLockMs });
      await store.start();
      tickets = store;
    } else {
      rankings = new MemoryRankings(db);
      tickets = new MemoryTicketStore();
    }
    cleanups.push(
      () => rankings.close(),
      () => tickets.close(),
    );

    const writer = new MatchWriter(
      db,
      {
        onCommit: async (ladder, players, rated, lastSeq) => {
          metrics.matchesRated.inc({ ladder: ladder.id }, rated);
          // Derived state: when it fails (Redis away), the leaderboard catches up from the database later.
          await rankings.update(ladder, players, lastSeq);
        },
        onBatch: (_ladder, size, _seconds, path) => {
          metrics.batchSize.observe({}, size);
          metrics.writeBatches.inc({ path });
        },
        // A ladder created anew by another instance: the writer rates under the new definition, and this instance serves it.
        reloadLadder: (id, tx) => ladders.reload(id, tx),
        // A correction that stopped on a failure (its run gone) is finished on the ladder's next write.
        onCorrecting: (ladder) => {
          void resumeInBackground(db, ladder, {}).then(
            (done) => (done ? rankings.reset(ladder.id) : undefined),
            (error: unknown) => warn('corrections', `the correction of ladder ${ladder.id} could not be finished (${error instanceof Error ? error.message : String(error)})`),
          );
        },
      },
      {
        maxBatch: options.writer?.maxBatch ?? positiveEnv('LADDER_WRITE_BATCH'),
        pipelineDepth: options.writer?.pipelineDepth ?? positiveEnv('LADDER_WRITE_PIPELINE'),
        maxCachedPlayers: options.writer?.maxCachedPlayers,
        ...(options.writer?.derivation ? { derivation: options.writer.derivation } : {}),
      },
    );
    cleanups.push(() => writer.close());
    const jobs = new Jobs(options.jobs, (kind, outcome, runMs) => {
      metrics.jobs.inc({ kind, outcome });
      if (runMs !== undefined) metrics.jobSeconds.observe({ kind }, runMs / 1000);
    });
    // Closed after the HTTP server (cleanups run in reverse): requests in flight get their answers first.
    cleanups.push(() => jobs.close());

    const context: AppContext = {
      db,
      ladders,
      writer,
      rankings,
      keys,
      limiter: new RateLimiter(options.rateLimit),
      tickets,
      players: new PlayerLookup(rankings),
      metrics,
      jobs,
      bodyLimit: options.bodyLimit,
      logger: options.logger,
      metricsAccess: options.metricsAccess,
      cors: options.cors,
      streams: options.streams,
      clock: options.clock,
      corrections: options.corrections ?? defaultCorrectionMode(db),
    };
    // Corrections a stop interrupted are finished in the background; their ladders answer 503 until then.
    const resumed = resumeCorrections(db, (id) => ladders.get(id))
      .then(async (done) => {
        for (const { ladder } of done) await rankings.reset(ladder).catch(() => {});
      })
      .catch((error: unknown) =>
        warn(
          'corrections',
          `an interrupted correction could not be finished (${error instanceof Error ? error.message : String(error)}); it is retried with the next correction of its ladder`,
        ),
      );
    cleanups.push(() => resumed);
    const app = await buildApp(context);
    for (const plugin of options.plugins ?? []) await plugin(app);

    const matchmakers = options.matchmakingWorker === false ? inProcessMatchmakers() : workerMatchmakers();
    cleanups.push(() => matchmakers.close());
    if (options.matchmakingWarmUp === true || options.matchmakingWarmUp === 'start') {
      // Where the passes will run: with the worker, its thread's code is the one to warm.
      const warm = await matchmakers.warmUp();
      options.onWarmUp?.(warm);
    }
    const trace = process.env.LADDER_MATCHMAKING_TRACE === '1';
    const loop = startMatchmakingLoop({ db, tickets, metrics, ladders }, options.matchmakingIntervalMs ?? positiveEnv('LADDER_MATCHMAKING_INTERVAL_MS') ?? 1000, {
      host: matchmakers,
      warmUpOnFirstQueue: options.matchmakingWarmUp === 'first-queue',
      ...(options.onWarmUp ? { onWarmUp: options.onWarmUp } : {}),
      onError: (error) => warn('matchmaking', `a matchmaking pass failed (${error instanceof Error ? error.message : String(error)}); it is retried on the next interval`),
      // One JSON line per ladder turn on standard error (benchmarks, diagnosis).
      onPass: trace ? (report) => process.stderr.write(`${JSON.stringify({ matchmakingPass: report })}\n`) : undefined,
      now: options.clock,
    });
    cleanups.push(() => loop.stop());

    const host = options.host ?? '127.0.0.1';
    try {
      await app.listen({ host, port: options.port ?? 8080 });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
        throw new ServiceStartError(
          'port-in-use',
          `cannot listen on ${host}:${options.port ?? 8080} (${code}${code === 'EADDRINUSE' ? ': the port is in use' : ''}); choose another with --port`,
          { cause: error },
        );
      }
      throw error;
    }
    cleanups.push(() => app.close());
    // From now on, not through the start's own synchronous work (migrations, the matchmaker's warm-up).
    cleanups.push(metrics.watchEventLoop());
    // Only now, with the server listening, is a first admin key created and reported: a start that fails leaves none behind.
    const boot = await keys.bootstrap(options.adminKey);
    options.onAdminKey?.(boot === undefined ? { kind: 'exists' } : boot.generated ? { kind: 'generated', key: boot.key } : { kind: 'registered' });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : options.port;
    return {
      app,
      db,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      ladders,
      writer,
      tickets,
      rankings,
      jobs,
      matchmakeNow: loop.runNow,
      matchmaking: loop,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
