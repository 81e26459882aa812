/** Backfill: a match in progress asks the ladder's matchmaker for players. */
import type { FastifyPluginAsync, FastifyRequest, RawServerDefault } from 'fastify';
import { backfillJson, cancelBackfill, createBackfill } from '../../backfills.js';
import { NotFoundError } from '../../errors/index.js';
import { expireDue } from '../../queue.js';
import type { Scope } from '../../keys.js';
import { backfillResponse, cancelledBackfillResponse } from '../../responses.js';
import { backfillSchema, idParams, ladderParams } from '../../schemas.js';
import type { StoredBackfill } from '../../tickets/store.js';
import { mayRead, requireLadder, requireScope, writableLadder } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const backfillRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post(
    '/v1/ladders/:ladder/backfills',
    {
      schema: { params: ladderParams, body: backfillSchema },
      config: {
        operation: {
          operationId: 'createBackfill',
          tags: ['matchmaking'],
          summary: 'Ask for players to fill the open slots of a match in progress (filled from waiting tickets before new matches form)',
          auth: 'write',
          responses: { 201: backfillResponse },
          example: { match: 'live-1', declared: true, region: 'eu', teams: [['a', 'b'], ['c']], filter: { maxPing: 80 } },
        },
      },
    },
    async (request, reply) => {
      const ladder = await writableLadder(ctx.ladders, request, request.params.ladder);
      return reply.code(201).send(backfillJson(await createBackfill(ctx, ladder, request.body)));
    },
  );
  /** The backfill, when the caller may see it: one of a private ladder is "not found" to a caller without a read key. */
  const visibleBackfill = async (request: FastifyRequest, id: string, scope: Scope): Promise<StoredBackfill> => {
    const missing = () => new NotFoundError(`no backfill ${JSON.stringify(id.slice(0, 80))}`, 'backfill');
    const backfill = await ctx.tickets.getBackfill(id);
    if (!backfill) throw missing();
    const ladder = await ctx.ladders.get(backfill.ladder);
    if (scope === 'read') {
      if (!ladder.public && !mayRead(request)) throw missing();
    } else {
      requireScope(request, scope);
    }
    requireLadder(request, ladder.id);
    // Past its time-to-live but not swept yet: expire it now, so no reader sees it open.
    const now = (ctx.clock ?? Date.now)();
    if (backfill.status === 'waiting' && backfill.createdAt + ladder.matchmaking.backfillTtlSeconds * 1000 <= now) {
      await expireDue(ctx, ladder, now);
      return (await ctx.tickets.getBackfill(id)) ?? backfill;
    }
    return backfill;
  };
  app.get(
    '/v1/backfills/:id',
    {
      schema: { params: idParams },
      config: {
        operation: {
          operationId: 'getBackfill',
          tags: ['matchmaking'],
          summary: 'A backfill: waiting, filled or cancelled, with the tickets and players added to each team',
          auth: 'public ladder or read',
          responses: { 200: backfillResponse },
        },
      },
    },
    async (request) => backfillJson(await visibleBackfill(request, request.params.id, 'read')),
  );
  app.delete(
    '/v1/backfills/:id',
    {
      schema: { params: idParams },
      config: {
        operation: {
          operationId: 'cancelBackfill',
          tags: ['matchmaking'],
          summary: 'Cancel a backfill (409 once filled; players already added stay in the match)',
          auth: 'write',
          responses: { 200: cancelledBackfillResponse },
        },
      },
    },
    async (request) => cancelBackfill(ctx, await visibleBackfill(request, request.params.id, 'write')),
  );
};
