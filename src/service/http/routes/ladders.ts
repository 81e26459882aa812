/** Ladder definitions. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { ConflictError } from '../../errors/index.js';
import { ladderJson } from '../../ladders.js';
import { createLadderSchema, ladderParams, updateLadderSchema } from '../../schemas.js';
import { deletedLadderResponse } from '../../responses.js';
import { mayRead, readableLadder, requireLadder, requireScope } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { ladderListResponse, ladderResponse } from '../../responses.js';

export const ladderRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post(
    '/v1/ladders',
    {
      schema: { body: createLadderSchema },
      config: {
        operation: {
          operationId: 'createLadder',
          tags: ['ladders'],
          summary: 'Create a ladder',
          auth: 'admin',
          responses: { 201: ladderResponse },
          example: { id: 'duel', system: 'glicko2', public: true },
        },
      },
    },
    async (request, reply) => {
      requireScope(request, 'admin');
      requireLadder(request, request.body.id);
      const ladder = await ctx.ladders.create(request.body);
      return reply.code(201).send(ladderJson(ladder, { players: 0, matches: 0 }));
    },
  );
  app.get(
    '/v1/ladders',
    {
      config: {
        operation: {
          operationId: 'listLadders',
          tags: ['ladders'],
          summary: 'List ladders (public ones without a key)',
          auth: 'public ladder or read',
          responses: { 200: ladderListResponse },
        },
      },
    },
    async (request) => {
      const all = await ctx.ladders.list();
      const mayReadAll = mayRead(request);
      // A key limited to named ladders lists only those (it gets 403 on any other).
      const limited = request.apiKey?.ladders ?? null;
      return { ladders: all.filter((l) => (limited === null || limited.includes(l.id)) && (l.public || mayReadAll)).map((l) => ladderJson(l, l)) };
    },
  );
  app.get(
    '/v1/ladders/:ladder',
    {
      schema: { params: ladderParams },
      config: {
        operation: {
          operationId: 'getLadder',
          tags: ['ladders'],
          summary: 'One ladder with its player and match counts',
          auth: 'public ladder or read',
          responses: { 200: ladderResponse },
        },
      },
    },
    async (request) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return ladderJson(ladder, await ctx.ladders.counts(ladder.id));
    },
  );
  app.patch(
    '/v1/ladders/:ladder',
    {
      schema: { params: ladderParams, body: updateLadderSchema },
      config: {
        operation: {
          operationId: 'updateLadder',
          tags: ['ladders'],
          summary: 'Change `public`, `standings` and `matchmaking`; rating `options` only while the ladder has no matches (else 409 naming `options`)',
          auth: 'admin',
          responses: { 200: ladderResponse },
          example: { public: false, standings: { placementMatches: 5 } },
        },
      },
    },
    async (request) => {
      requireScope(request, 'admin');
      const body = request.body;
      // Waiting tickets were checked against the rule set in force: they would not fit another.
      // Likewise their attributes were filled in (or not) by the ladder as set then.
      const queueBound = body.matchmaking?.ruleSet !== undefined ? 'ruleSet' : body.matchmaking?.attributesFromLadder !== undefined ? 'attributesFromLadder' : undefined;
      if (queueBound !== undefined) {
        const { waiting } = await ctx.tickets.figures(request.params.ladder);
        if (waiting > 0)
          throw new ConflictError(
            `ladder ${request.params.ladder}'s queue holds ${waiting} waiting tickets; its ${queueBound === 'ruleSet' ? 'rule set' : 'attributes from the ladder'} can change only while the queue is empty`,
            `matchmaking.${queueBound}`,
          );
      }
      const ladder = await ctx.ladders.update(request.params.ladder, {
        ...(body.public !== undefined ? { public: body.public } : {}),
        ...(body.standings !== undefined ? { standings: body.standings } : {}),
        ...(body.matchmaking !== undefined ? { matchmaking: body.matchmaking } : {}),
        ...(body.options !== undefined ? { options: body.options } : {}),
      });
      try {
        await ctx.rankings.reset(ladder.id);
      } catch {
        // Derived state: reloaded from the database on the next read.
      }
      return ladderJson(ladder, await ctx.ladders.counts(ladder.id));
    },
  );
  app.delete(
    '/v1/ladders/:ladder',
    {
      schema: { params: ladderParams },
      config: {
        operation: {
          operationId: 'deleteLadder',
          tags: ['ladders'],
          summary: 'Delete a ladder and all its data: matches, players, history, seasons, idempotency keys; its waiting tickets and open backfills are cancelled',
          auth: 'admin',
          responses: { 200: deletedLadderResponse },
        },
      },
    },
    async (request) => {
      requireScope(request, 'admin');
      await ctx.ladders.remove(request.params.ladder);
      try {
        await ctx.rankings.reset(request.params.ladder);
      } catch {
        // Leftover Redis keys of a deleted ladder are never read again.
      }
      try {
        await ctx.tickets.closeQueue(request.params.ladder);
      } catch {
        // Redis is down: the matchmaking pass closes the queue once it finds the ladder gone.
      }
      return { id: request.params.ladder, deleted: true as const };
    },
  );
};
