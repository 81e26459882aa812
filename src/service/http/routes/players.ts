/** Players, their history, and the leaderboard. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { historyView, leaderboardView, playerView } from '../../reads.js';
import { historyQuerySchema, ladderParams, leaderboardQuerySchema, playerParams } from '../../schemas.js';
import { readableLadder } from '../access.js';
import { clientGone } from '../client-gone.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { historyResponse, leaderboardResponse, playerResponse } from '../../responses.js';

export const playerRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.get(
    '/v1/ladders/:ladder/players/:player',
    {
      schema: { params: playerParams },
      config: {
        operation: {
          operationId: 'getPlayer',
          tags: ['players'],
          summary: 'Rating, RD and volatility where the system has them, matches, rank, percentile, division or placement matches left',
          auth: 'public ladder or read',
          responses: { 200: playerResponse },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return playerView(ctx, ladder, request.params.player, { signal: clientGone(request, reply) });
    },
  );
  app.get(
    '/v1/ladders/:ladder/players/:player/history',
    {
      schema: { params: playerParams, querystring: historyQuerySchema },
      config: {
        operation: {
          operationId: 'getPlayerHistory',
          tags: ['players'],
          summary: "A player's rating changes, newest first; `next` is the cursor (`before`) of the next page",
          auth: 'public ladder or read',
          responses: { 200: historyResponse },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const q = request.query;
      return historyView(
        ctx,
        ladder,
        request.params.player,
        { limit: q.limit ?? 50, offset: q.offset ?? 0, ...(q.before !== undefined ? { before: q.before } : {}) },
        { signal: clientGone(request, reply) },
      );
    },
  );
  app.get(
    '/v1/ladders/:ladder/leaderboard',
    {
      schema: { params: ladderParams, querystring: leaderboardQuerySchema },
      config: {
        operation: {
          operationId: 'getLeaderboard',
          tags: ['players'],
          summary: 'Ranked players, best first; `around` centres the page on a player, `search` filters by id prefix (and `total` counts every match)',
          auth: 'public ladder or read',
          responses: { 200: leaderboardResponse },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const q = request.query;
      return leaderboardView(
        ctx,
        ladder,
        { limit: q.limit ?? 50, offset: q.offset ?? 0, ...(q.around !== undefined ? { around: q.around } : {}), ...(q.search !== undefined ? { search: q.search } : {}) },
        { signal: clientGone(request, reply) },
      );
    },
  );
};
