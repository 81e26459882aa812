import type { RouteOptions as FastifyRouteOptions } from 'fastify';
/** What the HTTP layer is given: the domain's parts, and the settings of the edge. */
import type { Database } from '../../store/database.js';
import type { Jobs } from '../jobs/index.js';
import type { KeyStore, RateLimiter } from '../keys.js';
import type { CorrectionMode } from '../corrections.js';
import type { Ladders } from '../ladders.js';
import type { ServiceMetrics } from '../metrics.js';
import type { PlayerLookup } from '../player-lookup.js';
import type { Rankings } from '../rankings.js';
import type { TicketStore } from '../tickets/store.js';
import type { MatchWriter } from '../writer/index.js';
import type { CorsOptions } from './security.js';
import type { StreamLimits } from './stream-slots.js';

export interface AppContext {
  db: Database;
  ladders: Ladders;
  writer: MatchWriter;
  rankings: Rankings;
  keys: KeyStore;
  limiter: RateLimiter;
  tickets: TicketStore;
  /** Batched reads of new tickets' players. */
  players: PlayerLookup;
  metrics: ServiceMetrics;
  /** The worker pool for heavy requests, with its caps. */
  jobs: Jobs;
  /** Request body limit in bytes. @default 65536 */
  bodyLimit?: number;
  /** Fastify's logger. @default false */
  logger?: boolean;
  /** Matches' `at` may lie in the future by at most this much (clock skew of game servers). @default 86_400_000 */
  maxFutureMs?: number;
  /**
   * Who may scrape `/metrics`: 'public' answers anyone but leaves out the
   * series of private ladders unless the caller has a read key; 'key' needs a
   * read key. @default 'public'
   */
  metricsAccess?: 'public' | 'key';
  /** Cross-origin browser access; off when absent. */
  cors?: CorsOptions;
  /** Caps on open server-sent-event streams (per client address, per instance). */
  streams?: StreamLimits;
  /** The clock tickets and backfills expire by (epoch ms). @default Date.now */
  clock?: () => number;
  /** How voids and corrections are written (corrections.ts). @default defaultCorrectionMode(db) */
  corrections?: CorrectionMode;
}

/** The options every route plugin is registered with. */
export interface RouteOptions {
  ctx: AppContext;
  /** Every route of the app as registered (the OpenAPI document is built from them). */
  routes: readonly FastifyRouteOptions[];
}
