/**
 * Starts the service: database (PGlite or PostgreSQL), migrations, shared
 * state (Redis or in process), the HTTP app and the matchmaking loop.
 */
import type { FastifyInstance } from 'fastify';
import { registerWeb } from '../web/index.js';
import { type Database, openDatabase } from '../store/database.js';
import { migrate } from '../store/migrations.js';
import { matchmakingPass, buildApp } from './app.js';
import { KeyStore, RateLimiter, type RateLimitOptions } from './auth.js';
import { Ladders } from './ladders.js';
import { serviceMetrics } from './metrics.js';
import { MemoryRankings, RedisRankings, type Rankings } from './rankings.js';
import { MemoryTicketStore, RedisTicketStore, type TicketStore } from './tickets.js';
import { MatchWriter, type WriterOptions } from './writer.js';

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
  /** Milliseconds between matchmaking passes. @default 1000 */
  matchmakingIntervalMs?: number;
  /** Serve the dashboard (src/web) at `/`. @default true */
  web?: boolean;
  /** @default false */
  logger?: boolean;
  /** PostgreSQL pool size. @default 10 */
  poolSize?: number;
  /**
   * Match writer tuning (see WriterOptions). Unset fields fall back to the
   * environment (`LADDER_WRITE_BATCH`, `LADDER_WRITE_PIPELINE`), then to the defaults.
   */
  writer?: WriterOptions;
  /** Called once with a generated first admin key (print it). */
  onAdminKey?: (key: string, generated: boolean) => void;
}

export interface Service {
  app: FastifyInstance;
  db: Database;
  url: string;
  ladders: Ladders;
  writer: MatchWriter;
  tickets: TicketStore;
  close(): Promise<void>;
  /** Runs one matchmaking pass over every queue now (tests, demo). */
  matchmakeNow(): Promise<number>;
}

/** A positive integer from the environment, or undefined (unset or not a positive integer). */
function positiveEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

export async function startService(options: ServiceOptions = {}): Promise<Service> {
  const db = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: options.dataDir, schema: options.databaseSchema, poolSize: options.poolSize });
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
    await migrate(db);
    const keys = new KeyStore(db);
    const boot = await keys.bootstrap(options.adminKey);
    if (boot) options.onAdminKey?.(boot.key, boot.generated);

    const ladders = new Ladders(db);
    const metrics = serviceMetrics();
    let rankings: Rankings;
    let tickets: TicketStore;
    if (options.redisUrl) {
      const { Redis } = await import('ioredis');
      const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
      redis.on('error', () => {});
      await redis.connect();
      cleanups.push(() => {
        redis.disconnect();
      });
      const prefix = options.redisPrefix ?? 'ladder:';
      rankings = new RedisRankings(redis, db, prefix);
      const store = new RedisTicketStore(redis, prefix);
      await store.start();
      tickets = store;
    } else {
      rankings = new MemoryRankings(db);
      tickets = new MemoryTicketStore();
    }
    cleanups.push(() => rankings.close(), () => tickets.close());

    const writer = new MatchWriter(db, ladders, {
      onCommit: async (ladder, players, rated, lastSeq) => {
        metrics.matchesRated.inc({ ladder: ladder.id }, rated);
        await rankings.update(ladder, players, lastSeq);
      },
      onBatch: (_ladder, size, _seconds, path) => {
        metrics.batchSize.observe({}, size);
        metrics.writeBatches.inc({ path });
      },
    }, {
      maxBatch: options.writer?.maxBatch ?? positiveEnv('LADDER_WRITE_BATCH'),
      pipelineDepth: options.writer?.pipelineDepth ?? positiveEnv('LADDER_WRITE_PIPELINE'),
      maxCachedPlayers: options.writer?.maxCachedPlayers,
    });
    cleanups.push(() => writer.close());

    const app = await buildApp({ db, ladders, writer, rankings, keys, limiter: new RateLimiter(options.rateLimit), tickets, metrics, bodyLimit: options.bodyLimit, logger: options.logger });
    if (options.web ?? true) await registerWeb(app, {});

    const matchmakeNow = async () => {
      let formed = 0;
      for (const ladder of await tickets.queues()) {
        try {
          formed += await matchmakingPass({ db, tickets, metrics, ladders }, ladder);
        } catch {
          // A ladder removed or a transient failure: the next pass retries.
        }
      }
      return formed;
    };
    let passing = false;
    const timer = setInterval(() => {
      if (passing) return;
      passing = true;
      void matchmakeNow().finally(() => (passing = false));
    }, options.matchmakingIntervalMs ?? 1000);
    timer.unref();
    cleanups.push(() => clearInterval(timer));

    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
    cleanups.push(() => app.close());
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : options.port;
    const host = options.host ?? '127.0.0.1';
    return {
      app,
      db,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      ladders,
      writer,
      tickets,
      matchmakeNow,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
