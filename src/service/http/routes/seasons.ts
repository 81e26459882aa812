/** Seasons: listing, opening the next (closing the current), and a closed season's frozen standings. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { leaderboardView, playerView } from '../../reads.js';
import { openedSeasonResponse, seasonLeaderboardResponse, seasonListResponse, seasonPlayerResponse } from '../../responses.js';
import { ladderParams, pageQuerySchema, seasonParams, seasonPlayerParams, seasonSchema } from '../../schemas.js';
import { findSeason, frozenStanding, frozenStandingsPage, openSeason, seasonJson, seasonsOf } from '../../seasons.js';
import { readableLadder, requireScope } from '../access.js';
import { clientGone } from '../client-gone.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const seasonRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.get(
    '/v1/ladders/:ladder/seasons',
    {
      schema: { params: ladderParams },
      config: {
        operation: {
          operationId: 'listSeasons',
          tags: ['seasons'],
          summary: 'Seasons, oldest first; the last is the current one',
          auth: 'public ladder or read',
          responses: { 200: seasonListResponse },
        },
      },
    },
    async (request) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return { seasons: (await seasonsOf(ctx.db, ladder)).map(seasonJson) };
    },
  );
  app.post(
    '/v1/ladders/:ladder/seasons',
    {
      schema: { params: ladderParams, body: seasonSchema },
      config: {
        operation: {
          operationId: 'openSeason',
          tags: ['seasons'],
          summary: 'Close the current season (its final standings are frozen) and open the next with a soft reset: rating → toward + keep · (rating − toward), RD → max(RD, rd)',
          auth: 'admin',
          responses: { 201: openedSeasonResponse },
          example: { name: 's2', reset: { toward: 1500, keep: 0.5, rd: 200 } },
        },
      },
    },
    async (request, reply) => {
      requireScope(request, 'admin');
      const ladder = await ctx.ladders.get(request.params.ladder);
      const result = await openSeason(ctx.db, ladder, request.body);
      ctx.ladders.forget(ladder.id);
      try {
        await ctx.rankings.reset(ladder.id);
      } catch {
        // Derived state: reloaded from the database on the next read.
      }
      return reply.code(201).send({ closed: seasonJson(result.closed), opened: seasonJson(result.opened), players: result.players });
    },
  );
  app.get(
    '/v1/ladders/:ladder/seasons/:season/leaderboard',
    {
      schema: { params: seasonParams, querystring: pageQuerySchema },
      config: {
        operation: {
          operationId: 'getSeasonLeaderboard',
          tags: ['seasons'],
          summary: "A season's standings: frozen final standings of a closed season, the live ones of the current season",
          auth: 'public ladder or read',
          responses: { 200: seasonLeaderboardResponse },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const season = await findSeason(ctx.db, ladder, request.params.season);
      const limit = request.query.limit ?? 50;
      const offset = request.query.offset ?? 0;
      const signal = clientGone(request, reply);
      if (season.closedAt === null) {
        const live = await leaderboardView(ctx, ladder, { limit, offset }, { signal });
        return {
          season: season.name,
          total: live.total,
          offset: live.offset,
          limit,
          entries: live.entries.map((e, i) => ({
            position: live.offset + i + 1,
            id: e.id,
            rank: e.rank,
            rating: e.rating,
            rd: e.rd ?? null,
            percentile: e.percentile,
            division: e.division,
            matches: e.matches,
          })),
        };
      }
      const page = await frozenStandingsPage(ctx.db, ladder, season, limit, offset, signal);
      return { season: season.name, total: page.total, offset, limit, entries: page.rows };
    },
  );
  app.get(
    '/v1/ladders/:ladder/seasons/:season/players/:player',
    {
      schema: { params: seasonPlayerParams },
      config: {
        operation: {
          operationId: 'getSeasonPlayer',
          tags: ['seasons'],
          summary: "A player's final standing in a season (live in the current one)",
          auth: 'public ladder or read',
          responses: { 200: seasonPlayerResponse },
        },
      },
    },
    async (request) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const season = await findSeason(ctx.db, ladder, request.params.season);
      if (season.closedAt === null) {
        const live = await playerView(ctx, ladder, request.params.player);
        return {
          season: season.name,
          position: live.rank ?? 0,
          id: live.id,
          rank: live.rank,
          rating: live.rating,
          rd: live.rd ?? null,
          percentile: live.percentile,
          division: live.division,
          matches: live.matches,
        };
      }
      return { season: season.name, ...(await frozenStanding(ctx.db, ladder, season, request.params.player)) };
    },
  );
};
