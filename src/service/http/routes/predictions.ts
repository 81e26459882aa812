/** Win probabilities of a proposed match from the ladder's current ratings. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { findPlayers } from '../../../store/players.js';
import { rowToState } from '../../../store/rows.js';
import { predictionResponse } from '../../responses.js';
import { ladderParams, predictSchema } from '../../schemas.js';
import { readableLadder } from '../access.js';
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
    async (request) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const ids = request.body.teams.flatMap((t) => t.players);
      const states = new Map((await findPlayers(ctx.db, ladder.id, ids)).map((row) => [row.id, rowToState(row)]));
      const initial = ladder.rating.initial();
      return { probabilities: ladder.rating.predict(request.body.teams.map((t) => t.players.map((id) => states.get(id) ?? initial))) };
    },
  );
};
