/** Players, their history, and the leaderboard. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { historyView, leaderboardView, playerView } from '../../reads.js';
import { ladderParams, leaderboardQuerySchema, pageQuerySchema, playerParams } from '../../schemas.js';
import { readableLadder } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const playerRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.get('/v1/ladders/:ladder/players/:player', { schema: { params: playerParams } }, async (request) => {
    const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
    return playerView(ctx, ladder, request.params.player);
  });
  app.get('/v1/ladders/:ladder/players/:player/history', { schema: { params: playerParams, querystring: pageQuerySchema } }, async (request) => {
    const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
    return historyView(ctx, ladder, request.params.player, request.query.limit ?? 50, request.query.offset ?? 0);
  });
  app.get('/v1/ladders/:ladder/leaderboard', { schema: { params: ladderParams, querystring: leaderboardQuerySchema } }, async (request) => {
    const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
    const q = request.query;
    return leaderboardView(ctx, ladder, { limit: q.limit ?? 50, offset: q.offset ?? 0, ...(q.around !== undefined ? { around: q.around } : {}), ...(q.search !== undefined ? { search: q.search } : {}) });
  });
};
