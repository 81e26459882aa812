/** World-vs-World rounds. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { InvalidInputError } from '../../../core/errors.js';
import { listRoundSummaries } from '../../../store/rounds.js';
import { ladderParams, roundSchema } from '../../schemas.js';
import { roundSubmission } from '../../submissions.js';
import { requestHash } from '../../writer/index.js';
import { readableLadder, writableLadder } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { idempotencyKey, sendOutcome } from './matches.js';

export const roundRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  const maxFutureMs = ctx.maxFutureMs ?? 86_400_000;
  app.post('/v1/ladders/:ladder/rounds', { schema: { params: ladderParams, body: roundSchema } }, async (request, reply) => {
    const ladder = await writableLadder(ctx.ladders, request, request.params.ladder);
    if (ladder.system !== 'wvw') throw new InvalidInputError(`rounds are for World-vs-World ladders; ${ladder.id} uses ${ladder.system}`, { field: 'ladder' });
    const key = idempotencyKey(request);
    const { at, matches } = roundSubmission(request.body, { now: Date.now(), maxFutureMs });
    return sendOutcome(reply, await ctx.writer.submitRound(ladder, request.body.round, at, matches, key, requestHash('round', request.body)));
  });
  app.get('/v1/ladders/:ladder/rounds', { schema: { params: ladderParams } }, async (request) => {
    const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
    return { rounds: await listRoundSummaries(ctx.db, ladder.id) };
  });
};
