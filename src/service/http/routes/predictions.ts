/** Win probabilities of a proposed match from the ladder's current ratings. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { predictTeams } from '../../heavy-requests.js';
import { predictionResponse } from '../../responses.js';
import { ladderParams, predictSchema } from '../../schemas.js';
import { callerOf, readableLadder } from '../access.js';
import { clientGone } from '../client-gone.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const predictionRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post(
    '/v1/ladders/:ladder/predict',
    {
      schema: { params: ladderParams, body: predictSchema },
      config: {
        operation: {
          operationId: 'predict',
          tags: ['predictions'],
          summary: "Each team's chance of winning from the ladder's system and current ratings; unknown players at the system's starting state",
          auth: 'public ladder or read',
          responses: { 200: predictionResponse },
          example: { teams: [{ players: ['a', 'b'] }, { players: ['c', 'd'] }] },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return { probabilities: await predictTeams(ctx, ladder, request.body.teams, callerOf(request), clientGone(request, reply), request.body.context) };
    },
  );
};
