/** Performance ratings of a record of games (stateless). */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { clampedDirection, eloReplayRule, performanceRatings } from 'ladder-core/core/performance.js';
import { performanceSchema } from '../../schemas.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { performanceResponse } from '../../responses.js';

export const performanceRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app) => {
  app.post(
    '/v1/performance',
    {
      schema: { body: performanceSchema },
      config: {
        operation: {
          operationId: 'performanceRatings',
          tags: ['performance'],
          summary: 'Every performance rating of a game record (algorithm of 400, maximum likelihood, netzero, unordered netzero) and the Elo path',
          auth: 'none',
          responses: { 200: performanceResponse },
          example: {
            games: [
              { opponent: 1500, result: 'win' },
              { opponent: 1600, result: 'loss' },
            ],
          },
        },
      },
    },
    async (request) => {
      const body = request.body;
      const update = eloReplayRule(body.k ?? 32);
      const ratings = performanceRatings(body.games, { update });
      let rating = body.games.reduce((sum, g) => sum + g.opponent, 0) / body.games.length;
      const path = body.games.map((game) => (rating = update(rating, game)));
      return { ...ratings, clamped: clampedDirection(body.games), path };
    },
  );
};
