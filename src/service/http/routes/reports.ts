/** Lobby balance and the integrity report. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { integrityReport } from '../../../integrity/report.js';
import { balance } from '../../../matchmaking/balance.js';
import { recentCountingMatches } from '../../../store/matches.js';
import { findPlayers } from '../../../store/players.js';
import { rowToState } from '../../../store/rows.js';
import { balanceResponse, integrityResponse } from '../../responses.js';
import { balanceSchema, integrityQuerySchema, ladderParams } from '../../schemas.js';
import { readableLadder, requireScope } from '../access.js';
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
    async (request) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const states = new Map((await findPlayers(ctx.db, ladder.id, request.body.players)).map((row) => [row.id, rowToState(row)]));
      const initial = ladder.rating.initial();
      const result = balance(
        {
          players: request.body.players.map((id) => ({ id, state: states.get(id) ?? initial })),
          ...(request.body.parties !== undefined ? { parties: request.body.parties } : {}),
          ...(request.body.teams !== undefined ? { teams: request.body.teams } : {}),
        },
        (teams) => ladder.rating.predict(teams),
      );
      return { teams: result.teams, probabilities: result.probabilities, imbalance: result.imbalance, exact: result.exact };
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
          summary: 'Pairs who meet far more often than their activity predicts with alternating or one-sided results, and players whose quit rate or results stand out; most suspicious first, with counts, expected counts and z-scores',
          auth: 'admin',
          responses: { 200: integrityResponse },
        },
      },
    },
    async (request) => {
      requireScope(request, 'admin');
      const ladder = await ctx.ladders.get(request.params.ladder);
      const matches = await recentCountingMatches(ctx.db, ladder.id, request.query.matches ?? 20_000);
      const report = integrityReport(matches, { limit: request.query.limit ?? 100 });
      return { matches: report.matches, players: report.players, quitRate: report.quitRate, tested: report.tested, entries: report.entries };
    },
  );
};
