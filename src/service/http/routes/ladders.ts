/** Ladder definitions. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { ladderJson } from '../../ladders.js';
import { createLadderSchema, ladderParams } from '../../schemas.js';
import { mayRead, readableLadder, requireScope } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const ladderRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post('/v1/ladders', { schema: { body: createLadderSchema } }, async (request, reply) => {
    requireScope(request, 'admin');
    const ladder = await ctx.ladders.create(request.body);
    return reply.code(201).send(ladderJson(ladder, { players: 0, matches: 0 }));
  });
  app.get('/v1/ladders', async (request) => {
    const all = await ctx.ladders.list();
    const mayReadAll = mayRead(request);
    return { ladders: all.filter((l) => l.public || mayReadAll).map((l) => ladderJson(l, l)) };
  });
  app.get('/v1/ladders/:ladder', { schema: { params: ladderParams } }, async (request) => {
    const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
    return ladderJson(ladder, await ctx.ladders.counts(ladder.id));
  });
};
