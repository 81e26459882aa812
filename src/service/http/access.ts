/**
 * Who is calling: the rate limit (charged before any key is verified) and the
 * key's scopes, checked by the routes through `requireScope` and
 * `readableLadder`, and a key's ladders: a key limited to named ladders gets
 * 403 on every route whose path names another (`:ladder`), checked here for
 * all of them at once. A private ladder answers exactly as a missing one to a
 * caller who may not read it, so ladder names cannot be probed.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, LadderNotAllowedError, NotFoundError, RateLimitedError, UnauthorizedError } from '../errors/index.js';
import { allows, allowsLadder, type ApiKey, type KeyStore, type RateLimiter, type Scope } from '../keys.js';
import type { Ladder, Ladders } from '../ladders.js';
import { refuseHalfCorrected } from '../correction-state.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKey | null;
  }
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

export function registerAccess(app: FastifyInstance, keys: KeyStore, limiter: RateLimiter): void {
  app.decorateRequest('apiKey', null);
  // A callback hook, not an async one: every request passes here, and a key this process has
  // verified (the common case) needs no promise at all.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config && (request.routeOptions.config as { preflight?: boolean }).preflight) return done();
    const presented = bearer(request);
    // A key this process has verified is charged to its own bucket; anything else (no key, or a key
    // not verified yet, which costs a database read) to the client's address, so random tokens are limited too.
    const known = presented === undefined ? null : keys.recentlyVerified(presented);
    const wait = limiter.take(known ? `key:${known.id}` : `ip:${request.ip}`);
    if (wait > 0) return done(new RateLimitedError(wait));
    if (presented === undefined) return done();
    if (known) {
      request.apiKey = known;
      return done();
    }
    keys.verify(presented).then(
      (key) => {
        request.apiKey = key;
        done(key === null ? new UnauthorizedError('invalid or revoked API key') : undefined);
      },
      (error: Error) => done(error),
    );
  });
  // After validation (the parameter is a well-formed id) and before any handler: every route with a `:ladder`.
  app.addHook('preHandler', (request, _reply, done) => {
    const key = request.apiKey;
    if (key === null || key.ladders === null) return done();
    const ladder = (request.params as { ladder?: unknown } | undefined)?.ladder;
    if (typeof ladder === 'string' && !allowsLadder(key, ladder)) return done(new LadderNotAllowedError(ladder));
    done();
  });
}

/** For routes that reach a ladder other than through `:ladder` (a ticket's, a backfill's, a new ladder's id): 403 when the key is limited to other ladders. */
export function requireLadder(request: FastifyRequest, ladder: string): void {
  if (request.apiKey !== null && !allowsLadder(request.apiKey, ladder)) throw new LadderNotAllowedError(ladder);
}

/** For routes that act on no one ladder but on all (API keys): 403 for a key limited to named ladders. */
export function requireEveryLadder(request: FastifyRequest): void {
  if (request.apiKey !== null && request.apiKey.ladders !== null) throw new LadderNotAllowedError(null);
}

/** Who is asking, as the heavy-job caps count callers: the verified key, else the client address. */
export function callerOf(request: FastifyRequest): string {
  return request.apiKey !== null ? `key:${request.apiKey.id}` : `ip:${request.ip}`;
}

export function mayRead(request: FastifyRequest): boolean {
  return request.apiKey !== null && allows(request.apiKey.scopes, 'read');
}

export function requireScope(request: FastifyRequest, scope: Scope): void {
  if (request.apiKey === null) throw new UnauthorizedError(`this needs an API key with the ${scope} scope (Authorization: Bearer <key>)`);
  if (!allows(request.apiKey.scopes, scope)) throw new ForbiddenError(scope);
}

export function ladderNotFound(id: string): NotFoundError {
  return new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
}

/** The ladder, when the caller may read it (public ladders need no key); else NotFoundError, as for a missing one. */
export async function readableLadder(ladders: Ladders, request: FastifyRequest, id: string): Promise<Ladder> {
  const ladder = await ladders.get(id);
  if (!ladder.public && !mayRead(request)) throw ladderNotFound(id);
  refuseHalfCorrected(ladders.db, id);
  return ladder;
}

/** The ladder, for a caller with the correct scope (voids and corrections rewrite what was rated). */
export async function correctableLadder(ladders: Ladders, request: FastifyRequest, id: string): Promise<Ladder> {
  requireScope(request, 'correct');
  return ladders.get(id);
}

/** The ladder, for a caller with the write scope. */
export async function writableLadder(ladders: Ladders, request: FastifyRequest, id: string): Promise<Ladder> {
  requireScope(request, 'write');
  return ladders.get(id);
}
