/** Lobby balance and the integrity report. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { balanceLobby, integrityOf } from '../../heavy-requests.js';
import { balanceResponse, integrityResponse } from '../../responses.js';
import { balanceSchema, integrityQuerySchema, ladderParams } from '../../schemas.js';
import { callerOf, readableLadder, requireScope } from '../access.js';
import { clientGone } from '../client-gone.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const reportRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post(
    '/v1/ladders/:ladder/balance',
    {
      schema: { params: ladderParams, body: balanceSchema },
      config: {
        operation: {
          operationId: 'balanceTeams',
          tags: ['predictions'],
          summary: 'Split players into teams of equal size, parties kept whole, with the predicted win probability closest to even (exact up to 16 players)',
          auth: 'public ladder or read',
          responses: { 200: balanceResponse },
          example: { players: ['a', 'b', 'c', 'd'], parties: [['a', 'b']], teams: 2 },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return balanceLobby(ctx, ladder, request.body, callerOf(request), clientGone(request, reply));
    },
  );
  app.get(
    '/v1/ladders/:ladder/reports/integrity',
    {
      schema: { params: ladderParams, querystring: integrityQuerySchema },
      config: {
        operation: {
          operationId: 'integrityReport',
          tags: ['reports'],
          summary:
            'Pairs who meet far more often than their activity predicts with alternating or one-sided results, and players whose quit rate or results stand out; most suspicious first, with counts, expected counts and z-scores',
          auth: 'admin',
          responses: { 200: integrityResponse },
        },
      },
    },
    async (request, reply) => {
      requireScope(request, 'admin');
      const ladder = await ctx.ladders.get(request.params.ladder);
      const report = await integrityOf(ctx, ladder, request.query.matches ?? 20_000, request.query.limit ?? 100, callerOf(request), clientGone(request, reply));
      return { matches: report.matches, players: report.players, quitRate: report.quitRate, tested: report.tested, entries: report.entries };
    },
  );
};
