/** Ladder definitions. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { ladderJson } from '../../ladders.js';
import { createLadderSchema, ladderParams } from '../../schemas.js';
import { mayRead, readableLadder, requireScope } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { ladderListResponse, ladderResponse } from '../../responses.js';

export const ladderRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post('/v1/ladders', { schema: { body: createLadderSchema }, config: { operation: { operationId: 'createLadder', tags: ['ladders'], summary: 'Create a ladder', auth: 'admin', responses: { 201: ladderResponse }, example: { id: 'duel', system: 'glicko2', public: true } } } }, async (request, reply) => {
    requireScope(request, 'admin');
    const ladder = await ctx.ladders.create(request.body);
    return reply.code(201).send(ladderJson(ladder, { players: 0, matches: 0 }));
  });
  app.get('/v1/ladders', { config: { operation: { operationId: 'listLadders', tags: ['ladders'], summary: 'List ladders (public ones without a key)', auth: 'public ladder or read', responses: { 200: ladderListResponse } } } }, async (request) => {
    const all = await ctx.ladders.list();
    const mayReadAll = mayRead(request);
    return { ladders: all.filter((l) => l.public || mayReadAll).map((l) => ladderJson(l, l)) };
  });
  app.get('/v1/ladders/:ladder', { schema: { params: ladderParams }, config: { operation: { operationId: 'getLadder', tags: ['ladders'], summary: 'One ladder with its player and match counts', auth: 'public ladder or read', responses: { 200: ladderResponse } } } }, async (request) => {
    const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
    return ladderJson(ladder, await ctx.ladders.counts(ladder.id));
  });
};
