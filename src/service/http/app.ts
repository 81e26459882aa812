/**
 * The HTTP edge (docs/SERVICE.md): Fastify with zod-typed routes grouped by
 * resource as plugins, authentication and rate limits, security headers and
 * CORS, and the one mapping from domain errors to statuses.
 */
import { isUtf8 } from 'node:buffer';
import Fastify, { type FastifyInstance, type FastifyReply, type RouteOptions as FastifyRouteOptions } from 'fastify';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { registerAccess } from './access.js';
import type { AppContext } from './context.js';
import { errorBody, sendError } from './error-replies.js';
import { backfillRoutes } from './routes/backfills.js';
import { keyRoutes } from './routes/keys.js';
import { ladderRoutes } from './routes/ladders.js';
import { matchRoutes } from './routes/matches.js';
import { metaRoutes } from './routes/meta.js';
import { performanceRoutes } from './routes/performance.js';
import { playerRoutes } from './routes/players.js';
import { predictionRoutes } from './routes/predictions.js';
import { reportRoutes } from './routes/reports.js';
import { roundRoutes } from './routes/rounds.js';
import { seasonRoutes } from './routes/seasons.js';
import { systemRoutes } from './routes/systems.js';
import { ticketRoutes } from './routes/tickets.js';
import { registerSecurity } from './security.js';
import { zodValidatorCompiler } from './zod-provider.js';

export type { AppContext } from './context.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered, with its schemas and `config.operation` (the OpenAPI document's source). */
    routeTable: readonly FastifyRouteOptions[];
  }
}

/** Path parameters named after the collection segment before them (`/v1/ladders/{ladder}/players/{player}`). */
const PARAMETER_AFTER: Record<string, string> = { ladders: 'ladder', players: 'player', matches: 'match', seasons: 'season', tickets: 'id', keys: 'id', backfills: 'id' };

/** The name of the first path segment that is not valid percent-encoded UTF-8. */
function badPathParameter(url: string): string {
  const segments = url.split('?', 1)[0]!.split('/');
  for (let i = 1; i < segments.length; i++) {
    try {
      decodeURIComponent(segments[i]!);
    } catch {
      return PARAMETER_AFTER[segments[i - 1]!] ?? 'path';
    }
  }
  return 'path';
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const bodyLimit = ctx.bodyLimit ?? 65_536;
  const app = Fastify({
    logger: ctx.logger ?? false,
    bodyLimit,
    // Proto-poisoned bodies ("__proto__", "constructor.prototype") are refused, not cleaned.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    keepAliveTimeout: 65_000,
    // A path whose percent-encoding is not UTF-8 (a lone surrogate sent as %ED%A0%80) never reaches a route.
    frameworkErrors: (error, request, reply) => {
      if (error.code === 'FST_ERR_BAD_URL')
        return void (reply as FastifyReply).code(400).send(errorBody('invalid_input', 'is not valid percent-encoded UTF-8', badPathParameter(request.url)));
      return void sendError(error, request, reply as FastifyReply, bodyLimit);
    },
  });
  app.setValidatorCompiler(zodValidatorCompiler);
  // JSON bodies must be valid UTF-8: decoding would silently turn bad bytes into U+FFFD.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer;
    if (!isUtf8(buffer)) {
      done(new InvalidInputError('request body is not valid UTF-8', { field: 'body' }), undefined);
      return;
    }
    parseJson(request, buffer.toString('utf8'), done);
  });
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, bodyLimit));
  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody('not_found', `no route ${request.method} ${request.url.slice(0, 200)}`)));

  registerSecurity(app, ctx.cors);
  // Query values must be valid percent-encoded UTF-8 too: the query parser would turn bad bytes into U+FFFD.
  app.addHook('onRequest', (request, _reply, done) => {
    const mark = request.url.indexOf('?');
    if (mark < 0) return done();
    for (const pair of request.url.slice(mark + 1).split('&')) {
      const [name = '', value = ''] = pair.split('=', 2);
      try {
        decodeURIComponent(value.replace(/\+/g, ' '));
        decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        let field = name;
        try {
          field = decodeURIComponent(name);
        } catch {
          field = 'query';
        }
        return done(new InvalidInputError('is not valid percent-encoded UTF-8', { field: field === '' ? 'query' : field }));
      }
    }
    done();
  });
  registerAccess(app, ctx.keys, ctx.limiter);
  // One label object per method, route and status class, so the histogram renders its label text once.
  const requestLabels = new Map<string, { method: string; route: string; status: string }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    const labelKey = `${request.method} ${status} ${route}`;
    let labels = requestLabels.get(labelKey);
    if (labels === undefined) requestLabels.set(labelKey, (labels = { method: request.method, route, status }));
    ctx.metrics.requestSeconds.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  const routes: FastifyRouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  app.decorate('routeTable', routes);
  const options = { ctx, routes };
  await app.register(metaRoutes, options);
  await app.register(systemRoutes, options);
  await app.register(keyRoutes, options);
  await app.register(ladderRoutes, options);
  await app.register(matchRoutes, options);
  await app.register(playerRoutes, options);
  await app.register(roundRoutes, options);
  await app.register(ticketRoutes, options);
  await app.register(backfillRoutes, options);
  await app.register(seasonRoutes, options);
  await app.register(predictionRoutes, options);
  await app.register(reportRoutes, options);
  await app.register(performanceRoutes, options);
  return app;
}
