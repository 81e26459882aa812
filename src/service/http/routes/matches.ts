/** Submitting matches, and the match list. */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { matchesView } from '../../reads.js';
import { correctMatch, type CorrectionMode, type CorrectionResult, defaultCorrectionMode } from '../../corrections.js';
import type { Ladder } from '../../ladders.js';
import { correctionResponse } from '../../responses.js';
import { ladderParams, matchListQuerySchema, matchParams, matchSchema, voidSchema } from '../../schemas.js';
import type { AppContext } from '../context.js';
import { matchSubmission } from '../../submissions.js';
import { type Idempotency, requestHash, type Written } from '../../writer/index.js';
import { correctableLadder, readableLadder, writableLadder } from '../access.js';
import { clientGone } from '../client-gone.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { matchListResponse, ratedMatchResponse } from '../../responses.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** A written match or round answers 201 Created; a repeat under its Idempotency-Key answers as it was first answered. */
const CREATED = 201;

export function idempotencyKey(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) throw new InvalidInputError('must be 1 to 200 printable ASCII characters', { field: 'Idempotency-Key' });
  return key;
}

/** What the writer stores with an Idempotency-Key: the fingerprint of the body (its kind and parsed body) and the status a fresh write answers with. */
export function idempotency(key: string | undefined, kind: string, body: unknown): Idempotency | undefined {
  return key === undefined ? undefined : { key, hash: requestHash(kind, body), status: CREATED };
}

/** The writer's records, sent as the exact JSON text it wrote (and stored for repeats). */
export function sendWritten(reply: FastifyReply, written: Written) {
  return reply
    .code(written.status ?? CREATED)
    .type('application/json; charset=utf-8')
    .send(written.body);
}

/** The answer of a correction; the rankings learn the moved states. */
async function corrected(ctx: AppContext, ladder: Ladder, result: CorrectionResult) {
  if (result.changed) {
    try {
      if (result.removed.length > 0) await ctx.rankings.reset(ladder.id);
      else await ctx.rankings.update(ladder, result.committed, result.lastSeq);
    } catch {
      // Derived state: the leaderboard catches up from the database.
    }
  }
  return { match: result.match, changed: result.changed, rerated: result.rerated, players: result.players };
}

function correctionMode(ctx: AppContext): CorrectionMode {
  return ctx.corrections ?? defaultCorrectionMode(ctx.db);
}

export const matchRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  const maxFutureMs = ctx.maxFutureMs ?? 86_400_000;
  app.post(
    '/v1/ladders/:ladder/matches',
    {
      schema: { params: ladderParams, body: matchSchema },
      config: {
        operation: {
          operationId: 'rateMatch',
          tags: ['matches'],
          summary: 'Rate one match. With an Idempotency-Key, a repeat gets the stored answer and is not rated again; the same key with another body is 409.',
          auth: 'write',
          headers: ['Idempotency-Key'],
          responses: { 201: ratedMatchResponse },
          example: {
            teams: [
              { players: ['ann'], rank: 1 },
              { players: ['bob'], rank: 2 },
            ],
          },
        },
      },
    },
    async (request, reply) => {
      const ladder = await writableLadder(ctx.ladders, request, request.params.ladder);
      const key = idempotencyKey(request);
      const match = matchSubmission(request.body, { now: Date.now(), maxFutureMs }, ladder.system);
      return sendWritten(reply, await ctx.writer.submitMatch(ladder, match, idempotency(key, 'match', request.body)));
    },
  );
  app.post(
    '/v1/ladders/:ladder/matches/:match/void',
    {
      schema: { params: matchParams, body: voidSchema },
      config: {
        operation: {
          operationId: 'voidMatch',
          tags: ['matches'],
          summary:
            'Void a match: it stays stored and listed, marked void, and never counts; every later match whose players’ states change is rated again. A second void changes nothing.',
          auth: 'correct',
          responses: { 200: correctionResponse },
          example: { reason: 'server bug: wrong winner reported' },
        },
      },
    },
    async (request) => {
      const ladder = await correctableLadder(ctx.ladders, request, request.params.ladder);
      return corrected(
        ctx,
        ladder,
        await correctMatch(ctx.db, ladder, request.params.match, { kind: 'void', reason: request.body.reason }, Date.now(), { mode: correctionMode(ctx) }),
      );
    },
  );
  app.put(
    '/v1/ladders/:ladder/matches/:match',
    {
      schema: { params: matchParams, body: matchSchema },
      config: {
        operation: {
          operationId: 'correctMatch',
          tags: ['matches'],
          summary:
            'Correct a match (teams, ranks or scores, `at`; the stored `at` when absent): it is rated again from the states before it, and so is every later match whose players’ states change.',
          auth: 'correct',
          responses: { 200: correctionResponse },
          example: {
            teams: [
              { players: ['ann'], rank: 2 },
              { players: ['bob'], rank: 1 },
            ],
          },
        },
      },
    },
    async (request) => {
      const ladder = await correctableLadder(ctx.ladders, request, request.params.ladder);
      const { id: _id, at, ...rest } = request.body;
      const match = matchSubmission({ ...rest, at: at ?? 0 }, { now: Date.now(), maxFutureMs }, ladder.system);
      if (at === undefined) delete match.at;
      return corrected(ctx, ladder, await correctMatch(ctx.db, ladder, request.params.match, { kind: 'replace', match }, Date.now(), { mode: correctionMode(ctx) }));
    },
  );
  app.get(
    '/v1/ladders/:ladder/matches',
    {
      schema: { params: ladderParams, querystring: matchListQuerySchema },
      config: {
        operation: {
          operationId: 'listMatches',
          tags: ['matches'],
          summary: 'Matches, newest first, with the win probability predicted before rating; `next` is the cursor (`before`) of the next page',
          auth: 'public ladder or read',
          responses: { 200: matchListResponse },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      const q = request.query;
      return matchesView(
        ctx,
        ladder,
        { limit: q.limit ?? 50, offset: q.offset ?? 0, ...(q.before !== undefined ? { before: q.before } : {}) },
        { signal: clientGone(request, reply) },
      );
    },
  );
};
