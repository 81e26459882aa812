/** Health, metrics, the OpenAPI document and its reference page. */
import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { databaseHealth } from '../../health.js';
import { buildOpenApi, DOCS_STYLE, docsPage } from '../../openapi.js';
import { mayRead, requireScope } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { z } from 'zod';
import { healthResponse } from '../../responses.js';

/** The reference page's one inline style, allowed by its hash and nothing else. */
const DOCS_POLICY = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(DOCS_STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

export const metaRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx, routes }) => {
  app.get(
    '/healthz',
    { config: { operation: { operationId: 'health', tags: ['meta'], summary: 'Liveness and database check', auth: 'none', responses: { 200: healthResponse } } } },
    async () => {
      await databaseHealth(ctx.db);
      return { ok: true };
    },
  );
  // Built on first use, when every route is registered.
  let openapi: Record<string, unknown> | undefined;
  let page: string | undefined;
  const document = () => (openapi ??= buildOpenApi(routes));
  app.get(
    '/openapi.json',
    { config: { operation: { operationId: 'openApi', tags: ['meta'], summary: 'This document', auth: 'none', responses: { 200: z.record(z.string(), z.unknown()) } } } },
    async () => document(),
  );
  app.get(
    '/docs',
    { config: { operation: { operationId: 'docs', tags: ['meta'], summary: 'A reference page of every operation', auth: 'none', responses: { 200: 'text/html' } } } },
    async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', DOCS_POLICY)
        .send((page ??= docsPage(document()))),
  );
  app.get(
    '/metrics',
    {
      config: {
        operation: {
          operationId: 'metrics',
          tags: ['meta'],
          summary: 'Prometheus metrics: request latency, matches rated, tickets waiting, wait times and pass failures per queue (private ladders only with a read key)',
          auth: 'none',
          responses: { 200: 'text/plain' },
          errors: [403],
        },
      },
    },
    async (request, reply) => {
      if (ctx.metricsAccess === 'key') requireScope(request, 'read');
      await ctx.metrics.scrapeShared(() => ctx.tickets.waitingByQueue());
      let hidden: ReadonlySet<string> = new Set();
      if (!mayRead(request)) hidden = new Set((await ctx.ladders.list()).filter((l) => !l.public).map((l) => l.id));
      return reply.type('text/plain; version=0.0.4').send(ctx.metrics.registry.render((labels) => hidden.has(labels.ladder ?? '') || hidden.has(labels.queue ?? '')));
    },
  );
};
