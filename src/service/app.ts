/**
 * The HTTP API (docs/SERVICE.md, notes in /work/notes/api.md): routes,
 * authentication, rate limits and error mapping on Fastify.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { InvalidInputError, LadderError } from '../core/errors.js';
import { type Match, parseMatch, parseTime, teamPlacements } from '../core/match.js';
import { eloReplayRule, performanceRatings } from '../core/performance.js';
import { matchmake, parseMode, parseTicket, type Ticket } from '../matchmaking/index.js';
import type { Database } from '../store/database.js';
import { allows, type ApiKey, type KeyStore, type RateLimiter, type Scope } from './auth.js';
import { HttpError, NotFoundError, ConflictError } from './errors.js';
import { type Ladder, ladderJson, type Ladders } from './ladders.js';
import type { ServiceMetrics } from './metrics.js';
import { buildOpenApi, docsPage } from './openapi.js';
import type { Rankings } from './rankings.js';
import {
  createKeySchema,
  createLadderSchema,
  leaderboardQuerySchema,
  matchSchema,
  pageQuerySchema,
  performanceSchema,
  roundSchema,
  ticketSchema,
  validate,
} from './schemas.js';
import type { RecentMatch, StoredTicket, TicketStore } from './tickets.js';
import { type MatchWriter, type PlayerRow, requestHash } from './writer.js';

export interface AppContext {
  db: Database;
  ladders: Ladders;
  writer: MatchWriter;
  rankings: Rankings;
  keys: KeyStore;
  limiter: RateLimiter;
  tickets: TicketStore;
  metrics: ServiceMetrics;
  /** Request body limit in bytes. @default 65536 */
  bodyLimit?: number;
  /** Fastify's logger. @default false */
  logger?: boolean;
  /** Matches `at` may lie in the future by at most this much (clock skew of game servers). @default 86_400_000 */
  maxFutureMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKey | null;
  }
}

/** Who may call a route: anyone, a key with a scope, or anyone when the ladder is public (else read). */
type Access = 'public' | Scope | 'ladder';

function errorBody(code: string, message: string, field?: string) {
  return { error: { code, message, ...(field !== undefined ? { field } : {}) } };
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

function resultOf(match: Match, team: number): 'win' | 'loss' | 'draw' {
  const placements = teamPlacements(match);
  const own = placements[team]!;
  const best = Math.min(...placements);
  if (own > best) return 'loss';
  return placements.filter((p) => p === best).length > 1 ? 'draw' : 'win';
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

function ticketJson(t: StoredTicket) {
  const end = t.endedAt ?? Date.now();
  return {
    id: t.id,
    ladder: t.ladder,
    status: t.status,
    mode: t.mode,
    players: t.ticket.players.map((p) => p.id),
    createdAt: new Date(t.createdAt).toISOString(),
    waitedSeconds: Math.max(0, (end - t.createdAt) / 1000),
    ...(t.match ? { match: { ...t.match, at: new Date(t.match.at).toISOString() } } : {}),
  };
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    logger: ctx.logger ?? false,
    bodyLimit: ctx.bodyLimit ?? 65_536,
    // Proto-poisoned bodies ("__proto__", "constructor.prototype") are refused, not cleaned.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    keepAliveTimeout: 65_000,
  });
  const maxFutureMs = ctx.maxFutureMs ?? 86_400_000;
  app.decorateRequest('apiKey', null);

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof HttpError) return reply.code(error.status).send(errorBody(error.code, error.message, error.field));
    if (error instanceof InvalidInputError) {
      const bare = error.message.replace(/^(line \d+, )?(field [^:]+: )?/, '');
      return reply.code(400).send(errorBody('invalid_input', bare, error.field));
    }
    if (error instanceof LadderError) return reply.code(400).send(errorBody('invalid_input', error.message));
    const fastifyError = error as { code?: string; statusCode?: number; message?: string };
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send(errorBody('payload_too_large', `request body is larger than ${ctx.bodyLimit ?? 65_536} bytes`, 'body'));
    if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.code(415).send(errorBody('invalid_input', 'send JSON with Content-Type: application/json', 'content-type'));
    if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      return reply.code(fastifyError.statusCode).send(errorBody('invalid_input', `request body is not valid JSON: ${String(fastifyError.message).slice(0, 200)}`, 'body'));
    }
    request.log.error(error);
    return reply.code(500).send(errorBody('internal', 'internal error'));
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody('not_found', `no route ${request.method} ${request.url.slice(0, 200)}`)));

  app.addHook('onRequest', async (request, reply) => {
    const key = bearer(request);
    const wait = ctx.limiter.take(key ?? `ip:${request.ip}`);
    if (wait > 0) {
      reply.header('retry-after', Math.max(1, Math.ceil(wait)));
      throw new HttpError(429, 'rate_limited', 'too many requests; slow down');
    }
    if (key !== undefined) {
      request.apiKey = await ctx.keys.verify(key);
      if (request.apiKey === null) throw new HttpError(401, 'unauthorized', 'invalid or revoked API key');
    }
  });
  // One label object per method, route and status class, so the histogram renders its label text once.
  const requestLabels = new Map<string, { method: string; route: string; status: string }>();
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    const labelKey = `${request.method} ${status} ${route}`;
    let labels = requestLabels.get(labelKey);
    if (labels === undefined) requestLabels.set(labelKey, (labels = { method: request.method, route, status }));
    ctx.metrics.requestSeconds.observe(labels, reply.elapsedTime / 1000);
  });

  const need = (request: FastifyRequest, scope: Scope) => {
    if (request.apiKey === null) throw new HttpError(401, 'unauthorized', `this needs an API key with the ${scope} scope (Authorization: Bearer <key>)`);
    if (!allows(request.apiKey.scopes, scope)) throw new HttpError(403, 'forbidden', `this key lacks the ${scope} scope`);
  };
  /** The ladder of the route, checking read access (public ladders need no key). */
  const readable = async (request: FastifyRequest, id: string): Promise<Ladder> => {
    const ladder = await ctx.ladders.get(id);
    if (!ladder.public) need(request, 'read');
    return ladder;
  };
  const writable = async (request: FastifyRequest, id: string): Promise<Ladder> => {
    need(request, 'write');
    return ctx.ladders.get(id);
  };
  const idempotencyKey = (request: FastifyRequest): string | undefined => {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return undefined;
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) throw new InvalidInputError('must be 1 to 200 printable ASCII characters', { field: 'Idempotency-Key' });
    return key;
  };
  const sendOutcome = (reply: FastifyReply, outcome: { status: number; body: unknown }) =>
    typeof outcome.body === 'string' ? reply.code(outcome.status).type('application/json; charset=utf-8').send(outcome.body) : reply.code(outcome.status).send(outcome.body);
  const checkAt = (at: number, field: string) => {
    if (at < 0 || at > Date.now() + maxFutureMs) throw new InvalidInputError(`must lie between 1970 and ${Math.round(maxFutureMs / 3_600_000)} hours from now`, { field });
    return at;
  };

  // ---- meta
  app.get('/healthz', async () => {
    await ctx.db.query('SELECT 1');
    return { ok: true };
  });
  const openapi = buildOpenApi();
  app.get('/openapi.json', async () => openapi);
  app.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(docsPage(openapi)));
  app.get('/metrics', async (_request, reply) => {
    const waiting: Array<[Record<string, string>, number]> = [];
    for (const ladder of await ctx.tickets.queues()) waiting.push([{ queue: ladder }, (await ctx.tickets.waiting(ladder)).length]);
    ctx.metrics.setWaiting(waiting);
    return reply.type('text/plain; version=0.0.4').send(ctx.metrics.registry.render());
  });

  // ---- keys
  app.post('/v1/keys', async (request, reply) => {
    need(request, 'admin');
    const body = validate(createKeySchema, request.body);
    const { key, apiKey } = await ctx.keys.create(body.name, body.scopes);
    return reply.code(201).send({ key, ...keyJson(apiKey) });
  });
  app.get('/v1/keys', async (request) => {
    need(request, 'admin');
    return { keys: (await ctx.keys.list()).map(keyJson) };
  });
  app.delete('/v1/keys/:id', async (request) => {
    need(request, 'admin');
    return keyJson(await ctx.keys.revoke((request.params as { id: string }).id));
  });

  // ---- ladders
  app.post('/v1/ladders', async (request, reply) => {
    need(request, 'admin');
    const body = validate(createLadderSchema, request.body);
    const ladder = await ctx.ladders.create(body);
    return reply.code(201).send(ladderJson(ladder, { players: 0, matches: 0 }));
  });
  app.get('/v1/ladders', async (request) => {
    const all = await ctx.ladders.list();
    const mayReadAll = request.apiKey !== null && allows(request.apiKey.scopes, 'read');
    return { ladders: all.filter((l) => l.public || mayReadAll).map((l) => ladderJson(l, l)) };
  });
  app.get('/v1/ladders/:ladder', async (request) => {
    const ladder = await readable(request, (request.params as { ladder: string }).ladder);
    return ladderJson(ladder, await ctx.ladders.counts(ladder.id));
  });

  // ---- matches
  app.post('/v1/ladders/:ladder/matches', async (request, reply) => {
    const ladder = await writable(request, (request.params as { ladder: string }).ladder);
    const key = idempotencyKey(request);
    const raw = validate(matchSchema, request.body);
    const match = parseMatch(raw);
    delete match.period;
    match.at = checkAt(match.at ?? Date.now(), 'at');
    return sendOutcome(reply, await ctx.writer.submitMatch(ladder, match, key, requestHash('match', raw)));
  });
  app.get('/v1/ladders/:ladder/matches', async (request) => {
    const ladder = await readable(request, (request.params as { ladder: string }).ladder);
    const q = validate(pageQuerySchema, request.query, 'query');
    const rows = await ctx.db.query<{ seq: number; id: string; at: number; round: string | null; body: Match; win_probability: number[] | null }>(
      'SELECT seq, id, at, round, body, win_probability FROM matches WHERE ladder = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3',
      [ladder.id, q.limit ?? 50, q.offset ?? 0],
    );
    return {
      matches: rows.map((row) => ({
        id: row.id,
        seq: row.seq,
        at: iso(row.at),
        ...(row.round !== null ? { round: row.round } : {}),
        teams: row.body.teams.map((team) => ({
          players: team.players.map((p) => p.id),
          ...(team.rank !== undefined ? { rank: team.rank } : {}),
          ...(team.score !== undefined ? { score: team.score } : {}),
          ...(team.players.some((p) => p.quit) ? { quitters: team.players.filter((p) => p.quit).map((p) => p.id) } : {}),
        })),
        winProbability: row.win_probability,
      })),
    };
  });

  // ---- players, history, leaderboard
  app.get('/v1/ladders/:ladder/players/:player', async (request) => {
    const params = request.params as { ladder: string; player: string };
    const ladder = await readable(request, params.ladder);
    const rows = await ctx.db.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 AND id = $2', [ladder.id, params.player]);
    const row = rows[0];
    if (!row) throw new NotFoundError(`no player ${JSON.stringify(params.player.slice(0, 80))} in ladder ${ladder.id}`, 'player');
    const standing = await ctx.rankings.standing(ladder, { id: row.id, rating: row.rating, matches: row.matches, lastAt: row.last_at });
    return {
      id: row.id,
      rating: row.rating,
      ...(row.rd !== null ? { rd: row.rd } : {}),
      ...(row.volatility !== null ? { volatility: row.volatility } : {}),
      matches: row.matches,
      ...standing,
      lastAt: iso(row.last_at),
    };
  });
  app.get('/v1/ladders/:ladder/players/:player/history', async (request) => {
    const params = request.params as { ladder: string; player: string };
    const ladder = await readable(request, params.ladder);
    const q = validate(pageQuerySchema, request.query, 'query');
    const rows = await ctx.db.query<{ seq: number; team: number; before: unknown; after: unknown; terms: unknown; id: string; at: number; body: Match }>(
      `SELECT c.seq, c.team, c.before, c.after, c.terms, m.id, m.at, m.body FROM rating_changes c JOIN matches m ON m.ladder = c.ladder AND m.seq = c.seq
       WHERE c.ladder = $1 AND c.player = $2 ORDER BY c.seq DESC LIMIT $3 OFFSET $4`,
      [ladder.id, params.player, q.limit ?? 50, q.offset ?? 0],
    );
    if (rows.length === 0 && (q.offset ?? 0) === 0) {
      const known = await ctx.db.query('SELECT 1 FROM players WHERE ladder = $1 AND id = $2', [ladder.id, params.player]);
      if (known.length === 0) throw new NotFoundError(`no player ${JSON.stringify(params.player.slice(0, 80))} in ladder ${ladder.id}`, 'player');
    }
    return {
      player: params.player,
      history: rows.map((row) => ({
        matchId: row.id,
        seq: row.seq,
        at: iso(row.at),
        team: row.team,
        result: resultOf(row.body, row.team),
        before: row.before,
        after: row.after,
        terms: row.terms,
        teams: row.body.teams.map((t) => t.players.map((p) => p.id)),
      })),
    };
  });
  app.get('/v1/ladders/:ladder/leaderboard', async (request) => {
    const ladder = await readable(request, (request.params as { ladder: string }).ladder);
    const q = validate(leaderboardQuerySchema, request.query, 'query');
    const limit = q.limit ?? 50;
    let offset = q.offset ?? 0;
    let total: number;
    let entries: Array<{ id: string; rating: number; rank: number | null; percentile: number | null; division?: string | null }>;
    if (q.search !== undefined) {
      const pattern = `${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const rows = await ctx.db.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 AND id LIKE $2 ORDER BY rating DESC, id LIMIT $3 OFFSET $4', [
        ladder.id,
        pattern,
        limit,
        offset,
      ]);
      entries = [];
      for (const row of rows) {
        const s = await ctx.rankings.standing(ladder, { id: row.id, rating: row.rating, matches: row.matches, lastAt: row.last_at });
        entries.push({ id: row.id, rating: row.rating, rank: s.rank, percentile: s.percentile, division: s.division });
      }
      total = entries.length;
    } else {
      if (q.around !== undefined) {
        const position = await ctx.rankings.positionOf(ladder, q.around);
        if (position === null) throw new NotFoundError(`player ${JSON.stringify(q.around.slice(0, 80))} is not ranked in ladder ${ladder.id}`, 'around');
        offset = Math.max(0, position - Math.floor(limit / 2));
      }
      const page = await ctx.rankings.page(ladder, offset, limit);
      total = page.total;
      entries = page.entries;
    }
    const ids = entries.map((e) => e.id);
    const details = new Map<string, PlayerRow>();
    if (ids.length > 0) {
      for (const row of await ctx.db.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, ids])) {
        details.set(row.id, row);
      }
    }
    const placement = ladder.resolvedStandings.placementMatches;
    return {
      total,
      offset,
      entries: entries.map((e) => {
        const row = details.get(e.id);
        const matches = row?.matches ?? 0;
        return {
          rank: e.rank,
          id: e.id,
          rating: e.rating,
          ...(row?.rd !== null && row?.rd !== undefined ? { rd: row.rd } : {}),
          matches,
          percentile: e.percentile,
          division: e.division !== undefined ? e.division : e.percentile === null ? null : divisionName(ladder, e.percentile),
          placementRemaining: Math.max(0, placement - matches),
        };
      }),
    };
  });

  // ---- World-vs-World rounds
  app.post('/v1/ladders/:ladder/rounds', async (request, reply) => {
    const ladder = await writable(request, (request.params as { ladder: string }).ladder);
    if (ladder.system !== 'wvw') throw new InvalidInputError(`rounds are for World-vs-World ladders; ${ladder.id} uses ${ladder.system}`, { field: 'ladder' });
    const key = idempotencyKey(request);
    const raw = validate(roundSchema, request.body);
    const at = checkAt(raw.at === undefined ? Date.now() : parseTime(raw.at, 'at'), 'at');
    const seen = new Map<string, number>();
    const matches: Match[] = raw.matches.map((m, i) => {
      const worlds = Object.entries(m.worlds);
      if (worlds.length < 2) throw new InvalidInputError(`a match needs at least two worlds, got ${worlds.length}`, { field: `matches[${i}].worlds` });
      for (const [world] of worlds) {
        if (world.length === 0 || world.length > 200) throw new InvalidInputError('world ids are 1 to 200 characters', { field: `matches[${i}].worlds` });
        const other = seen.get(world);
        if (other !== undefined) throw new InvalidInputError(`world ${JSON.stringify(world)} plays in matches[${other}] and matches[${i}] of one round`, { field: `matches[${i}].worlds.${world}` });
        seen.set(world, i);
      }
      return parseMatch({ ...(m.id !== undefined ? { id: m.id } : {}), at, teams: worlds.map(([world, score]) => ({ players: [world], score })) });
    });
    return sendOutcome(reply, await ctx.writer.submitRound(ladder, raw.round, at, matches, key, requestHash('round', raw)));
  });
  app.get('/v1/ladders/:ladder/rounds', async (request) => {
    const ladder = await readable(request, (request.params as { ladder: string }).ladder);
    const rows = await ctx.db.query<{ summary: unknown }>('SELECT summary FROM rounds WHERE ladder = $1 ORDER BY number', [ladder.id]);
    return { rounds: rows.map((row) => row.summary) };
  });

  // ---- matchmaking
  app.post('/v1/ladders/:ladder/tickets', async (request, reply) => {
    const ladder = await writable(request, (request.params as { ladder: string }).ladder);
    const raw = validate(ticketSchema, request.body);
    if (raw.mode !== undefined) {
      const size = parseMode(raw.mode);
      if (size !== ladder.matchmaking.teamSize) throw new InvalidInputError(`ladder ${ladder.id} matches teams of ${ladder.matchmaking.teamSize}, not ${raw.mode}`, { field: 'mode' });
    }
    const ids = raw.players.map((p) => p.id);
    const known = new Map<string, PlayerRow>();
    for (const row of await ctx.db.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, ids])) {
      known.set(row.id, row);
    }
    const now = Date.now();
    const players = [];
    for (const p of raw.players) {
      const row = known.get(p.id);
      let percentile = p.percentile;
      if (percentile === undefined) {
        // Unknown or unplaced players sit in the middle until the ladder knows better.
        percentile = row ? ((await ctx.rankings.standing(ladder, { id: row.id, rating: row.rating, matches: row.matches, lastAt: row.last_at })).percentile ?? 50) : 50;
      }
      players.push({ ...p, percentile, ...(p.rating === undefined && row ? { rating: row.rating } : {}) });
    }
    const id = raw.id ?? randomUUID();
    const ticket: Ticket = parseTicket({ id, at: now / 1000, players }, ladder.matchmaking.teamSize);
    const stored: StoredTicket = { id, ladder: ladder.id, status: 'waiting', createdAt: now, ticket, ...(raw.mode !== undefined ? { mode: raw.mode } : {}) };
    if (!(await ctx.tickets.add(stored))) throw new ConflictError(`ticket ${JSON.stringify(id)} already exists`, 'id');
    return reply.code(201).send({ ticket: ticketJson(stored) });
  });
  const ownTicket = async (request: FastifyRequest, scope: Scope): Promise<StoredTicket> => {
    const id = (request.params as { id: string }).id;
    const ticket = await ctx.tickets.get(id);
    if (!ticket) throw new NotFoundError(`no ticket ${JSON.stringify(id.slice(0, 80))}`, 'ticket');
    const ladder = await ctx.ladders.get(ticket.ladder);
    if (!(scope === 'read' && ladder.public)) need(request, scope);
    return ticket;
  };
  app.get('/v1/tickets/:id', async (request) => ticketJson(await ownTicket(request, 'read')));
  app.delete('/v1/tickets/:id', async (request) => {
    const ticket = await ownTicket(request, 'write');
    const after = await ctx.tickets.cancel(ticket.id);
    if (!after) throw new NotFoundError(`no ticket ${JSON.stringify(ticket.id)}`, 'ticket');
    if (after.status === 'matched') throw new ConflictError('the ticket was already placed in a match', 'ticket');
    return { id: after.id, status: after.status };
  });
  app.get('/v1/ladders/:ladder/queue', async (request) => {
    const ladder = await readable(request, (request.params as { ladder: string }).ladder);
    const waiting = await ctx.tickets.waiting(ladder.id);
    const byRegion: Record<string, number> = {};
    const bands = Array.from({ length: 10 }, (_, i) => ({ band: `${i * 10 + 1}-${i * 10 + 10}`, count: 0 }));
    for (const t of waiting) {
      const pings = t.ticket.players[0]!.pings;
      const region = Object.entries(pings).sort((a, b) => a[1] - b[1])[0]?.[0];
      if (region !== undefined) byRegion[region] = (byRegion[region] ?? 0) + 1;
      for (const p of t.ticket.players) bands[Math.min(9, Math.floor((p.percentile - 1) / 10))]!.count++;
    }
    return { waiting: waiting.length, byRegion, byBand: bands, recent: await ctx.tickets.recent(ladder.id) };
  });
  app.get('/v1/ladders/:ladder/assignments', async (request, reply) => {
    const ladder = await readable(request, (request.params as { ladder: string }).ladder);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(': assignments of ladder ' + ladder.id + '\n\n');
    const listener = (event: { ladder: string; match: RecentMatch }) => {
      if (event.ladder === ladder.id) res.write(`event: assignment\ndata: ${JSON.stringify(event.match)}\n\n`);
    };
    ctx.tickets.events.on('assignment', listener);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    request.raw.on('close', () => {
      clearInterval(heartbeat);
      ctx.tickets.events.off('assignment', listener);
    });
  });

  // ---- performance ratings
  app.post('/v1/performance', async (request) => {
    const body = validate(performanceSchema, request.body);
    const k = body.k ?? 32;
    const update = eloReplayRule(k);
    const ratings = performanceRatings(body.games, { update });
    let rating = body.games.reduce((sum, g) => sum + g.opponent, 0) / body.games.length;
    const path = body.games.map((game) => (rating = update(rating, game)));
    return { ...ratings, path };
  });

  return app;
}

function divisionName(ladder: Ladder, percentile: number): string {
  const table = ladder.resolvedStandings.divisions;
  let found = table[0]!;
  for (const d of table) if (d.minPercentile <= percentile) found = d;
  return found.name;
}

function keyJson(key: ApiKey) {
  return { id: key.id, name: key.name, scopes: key.scopes, createdAt: new Date(key.createdAt).toISOString(), revokedAt: key.revokedAt === null ? null : new Date(key.revokedAt).toISOString() };
}

/**
 * One matchmaking pass over a ladder's queue: forms matches with the
 * matchmaking library, predicts each match's win probability from the
 * ladder's ratings and stores the assignments.
 */
export async function matchmakingPass(ctx: Pick<AppContext, 'db' | 'tickets' | 'metrics' | 'ladders'>, ladderId: string): Promise<number> {
  let formed = 0;
  await ctx.tickets.withPassLock(ladderId, async () => {
    const ladder = await ctx.ladders.get(ladderId);
    const waiting = await ctx.tickets.waiting(ladderId);
    if (waiting.length === 0) return;
    const now = Date.now();
    const result = matchmake(
      waiting.map((t) => t.ticket),
      now / 1000,
      { teamSize: ladder.matchmaking.teamSize },
    );
    if (result.matches.length === 0) return;
    const byId = new Map(waiting.map((t) => [t.id, t]));
    const playerIds = result.matches.flatMap((m) => m.players.flat());
    const states = new Map<string, { rating: number; rd?: number; matches: number }>();
    for (const row of await ctx.db.query<{ id: string; rating: number; rd: number | null; matches: number }>('SELECT id, rating, rd, matches FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladderId, playerIds])) {
      states.set(row.id, { rating: row.rating, ...(row.rd !== null ? { rd: row.rd } : {}), matches: row.matches });
    }
    const work = result.matches.map((m) => {
      const matchId = randomUUID();
      let winProbability: number | null = null;
      try {
        winProbability = ladder.rating.predict(m.players.map((team) => team.map((id) => states.get(id) ?? ladder.rating.initial())))[0]!;
      } catch {
        winProbability = null;
      }
      const waits = m.teams.flat().map((id) => (now - byId.get(id)!.createdAt) / 1000).sort((a, b) => a - b);
      const recent: RecentMatch = {
        matchId,
        region: m.region,
        teams: m.teams,
        players: m.players,
        winProbability,
        waitSeconds: { p50: waits[Math.floor((waits.length - 1) / 2)]!, max: waits[waits.length - 1]! },
        quality: m.quality,
        at: new Date(now).toISOString(),
      };
      const tickets = m.teams.flatMap((teamTickets, team) =>
        teamTickets.map((id): StoredTicket => ({ ...byId.get(id)!, status: 'matched', endedAt: now, match: { id: matchId, region: m.region, team, teams: m.teams, players: m.players, at: now } })),
      );
      return { recent, tickets, waits };
    });
    const applied = new Set(await ctx.tickets.assign(ladderId, work.map(({ recent, tickets }) => ({ recent, tickets }))));
    for (const w of work) {
      if (!applied.has(w.recent)) continue;
      formed++;
      ctx.metrics.matchesFormed.inc({ queue: ladderId });
      for (const wait of w.waits) ctx.metrics.ticketWaitSeconds.observe({ queue: ladderId }, wait);
    }
  });
  return formed;
}
