/** World-vs-World rounds. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { allSystems, describeSystem } from 'ladder-core/core/registry.js';
import { roundsOf } from '../../rounds.js';
import { ladderParams, roundSchema } from '../../schemas.js';
import { roundSubmission } from '../../submissions.js';
import { readableLadder, writableLadder } from '../access.js';
import { clientGone } from '../client-gone.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { idempotency, idempotencyKey, sendWritten } from './matches.js';
import { ratedRoundResponse, roundListResponse } from '../../responses.js';

export const roundRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  const maxFutureMs = ctx.maxFutureMs ?? 86_400_000;
  app.post(
    '/v1/ladders/:ladder/rounds',
    {
      schema: { params: ladderParams, body: roundSchema },
      config: {
        operation: {
          operationId: 'rateRound',
          tags: ['rounds'],
          summary: 'Rate a World-vs-World round (one rating period); answers the new ratings and the next round groups',
          auth: 'write',
          headers: ['Idempotency-Key'],
          responses: { 201: ratedRoundResponse },
          example: { round: 'week 1', matches: [{ worlds: { 'World A': 120000, 'World B': 90000, 'World C': 60000 } }] },
        },
      },
    },
    async (request, reply) => {
      const ladder = await writableLadder(ctx.ladders, request, request.params.ladder);
      if (!describeSystem(ladder.system).capabilities.rounds) {
        const inRounds = allSystems()
          .filter((d) => d.capabilities.rounds)
          .map((d) => d.label);
        throw new InvalidInputError(`rounds are for ladders of a system rated in rounds (${inRounds.join(', ')}); ${ladder.id} uses ${ladder.system}`, { field: 'ladder' });
      }
      const key = idempotencyKey(request);
      const { at, matches } = roundSubmission(request.body, { now: Date.now(), maxFutureMs });
      return sendWritten(reply, await ctx.writer.submitRound(ladder, request.body.round, at, matches, idempotency(key, 'round', request.body)));
    },
  );
  app.get(
    '/v1/ladders/:ladder/rounds',
    {
      schema: { params: ladderParams },
      config: {
        operation: {
          operationId: 'listRounds',
          tags: ['rounds'],
          summary: 'Rounds, oldest first, with groups, score shares and ratings after each',
          auth: 'public ladder or read',
          responses: { 200: roundListResponse },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return { rounds: await roundsOf(ctx.db, ladder, clientGone(request, reply)) };
    },
  );
};
