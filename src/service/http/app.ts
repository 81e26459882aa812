/**
 * The HTTP edge (docs/SERVICE.md): Fastify with zod-typed routes grouped by
 * resource as plugins, authentication and rate limits, security headers and
 * CORS, and the one mapping from domain errors to statuses.
 */
import { isUtf8 } from 'node:buffer';
import Fastify, { type FastifyInstance, type RouteOptions as FastifyRouteOptions } from 'fastify';
import { InvalidInputError } from '../../core/errors.js';
import { registerAccess } from './access.js';
import type { AppContext } from './context.js';
import { errorBody, sendError } from './error-replies.js';
import { keyRoutes } from './routes/keys.js';
import { ladderRoutes } from './routes/ladders.js';
import { matchRoutes } from './routes/matches.js';
import { metaRoutes } from './routes/meta.js';
import { performanceRoutes } from './routes/performance.js';
import { playerRoutes } from './routes/players.js';
import { roundRoutes } from './routes/rounds.js';
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
  registerAccess(app, ctx.keys, ctx.limiter);
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

  const routes: FastifyRouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  app.decorate('routeTable', routes);
  const options = { ctx, routes };
  await app.register(metaRoutes, options);
  await app.register(keyRoutes, options);
  await app.register(ladderRoutes, options);
  await app.register(matchRoutes, options);
  await app.register(playerRoutes, options);
  await app.register(roundRoutes, options);
  await app.register(ticketRoutes, options);
  await app.register(performanceRoutes, options);
  return app;
}
