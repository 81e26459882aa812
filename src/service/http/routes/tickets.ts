/** Matchmaking: tickets, the queue, and the stream of assignments. */
import type { FastifyPluginAsync, FastifyRequest, RawServerDefault } from 'fastify';
import { NotFoundError } from '../../errors/index.js';
import type { Scope } from '../../keys.js';
import { type Ladder, ruleSetOf } from '../../ladders.js';
import { cancelTicket, createTicket, expireDue, queueView, ticketJson } from '../../queue.js';
import { idParams, ladderParams, ticketSchema } from '../../schemas.js';
import type { ExpiredEvent, RecentMatch, StoredTicket } from '../../tickets/store.js';
import { mayRead, readableLadder, requireLadder, requireScope, writableLadder } from '../access.js';
import type { RouteOptions } from '../context.js';
import { StreamSlots } from '../stream-slots.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { cancelledTicketResponse, createdTicketResponse, queueResponse, ticketResponse } from '../../responses.js';

export const ticketRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  const streams = new StreamSlots(ctx.streams);
  const clock = ctx.clock ?? Date.now;
  app.post(
    '/v1/ladders/:ladder/tickets',
    {
      schema: { params: ladderParams, body: ticketSchema },
      config: {
        operation: {
          operationId: 'createTicket',
          tags: ['matchmaking'],
          summary: 'Join the matchmaking queue (solo or party)',
          auth: 'write',
          responses: { 201: createdTicketResponse },
          example: { players: [{ id: 'ann', pings: { eu: 30, na: 110 }, filter: { within: 10, maxPing: 80 } }] },
        },
      },
    },
    async (request, reply) => {
      const ladder = await writableLadder(ctx.ladders, request, request.params.ladder);
      return reply.code(201).send({ ticket: ticketJson(await createTicket(ctx, ladder, request.body, request.apiKey?.id)) });
    },
  );
  /** The ticket, when the caller may see it: a ticket of a private ladder is "not found" to a caller without a read key. */
  const visibleTicket = async (request: FastifyRequest, id: string, scope: Scope): Promise<{ ticket: StoredTicket; ladder: Ladder }> => {
    const missing = () => new NotFoundError(`no ticket ${JSON.stringify(id.slice(0, 80))}`, 'ticket');
    let ticket = await ctx.tickets.get(id);
    if (!ticket) throw missing();
    const ladder = await ctx.ladders.get(ticket.ladder);
    if (scope === 'read') {
      if (!ladder.public && !mayRead(request)) throw missing();
    } else {
      requireScope(request, scope);
    }
    requireLadder(request, ladder.id);
    // Past its time-to-live but not swept yet (the matchmaking turn sweeps): expire it now, so no reader sees it waiting.
    if (ticket.status === 'waiting' && ticket.createdAt + ladder.matchmaking.ticketTtlSeconds * 1000 <= clock()) {
      await expireDue(ctx, ladder, clock());
      ticket = (await ctx.tickets.get(id)) ?? ticket;
    }
    return { ticket, ladder };
  };
  app.get(
    '/v1/tickets/:id',
    {
      schema: { params: idParams },
      config: {
        operation: {
          operationId: 'getTicket',
          tags: ['matchmaking'],
          summary: 'A ticket: waiting, or the match and team it was placed in',
          auth: 'public ladder or read',
          responses: { 200: ticketResponse },
          errors: [410],
        },
      },
    },
    async (request) => {
      const { ticket, ladder } = await visibleTicket(request, request.params.id, 'read');
      // A waiting ticket of a rule-set queue: the rule that held it in the last pass (null until a pass saw it asked about).
      if (ticket.status !== 'waiting' || ruleSetOf(ladder.matchmaking) === undefined) return ticketJson(ticket);
      return ticketJson(ticket, (await ctx.tickets.askWhy(ladder.id, ticket.id)) ?? null);
    },
  );
  app.delete(
    '/v1/tickets/:id',
    {
      schema: { params: idParams },
      config: {
        operation: { operationId: 'cancelTicket', tags: ['matchmaking'], summary: 'Leave the queue', auth: 'write', responses: { 200: cancelledTicketResponse }, errors: [410] },
      },
    },
    async (request) => cancelTicket(ctx, (await visibleTicket(request, request.params.id, 'write')).ticket),
  );
  app.get(
    '/v1/ladders/:ladder/queue',
    {
      schema: { params: ladderParams },
      config: {
        operation: {
          operationId: 'getQueue',
          tags: ['matchmaking'],
          summary: 'Queue summary: waiting tickets by region and band, recent matches',
          auth: 'public ladder or read',
          responses: { 200: queueResponse },
        },
      },
    },
    async (request) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      return queueView(ctx, ladder);
    },
  );
  app.get(
    '/v1/ladders/:ladder/assignments',
    {
      schema: { params: ladderParams },
      config: {
        operation: {
          operationId: 'streamAssignments',
          tags: ['matchmaking'],
          summary: 'Server-sent events: `assignment` for each match the matchmaker forms',
          auth: 'public ladder or read',
          responses: { 200: 'text/event-stream' },
        },
      },
    },
    async (request, reply) => {
      const ladder = await readableLadder(ctx.ladders, request, request.params.ladder);
      // Before the stream starts: past a cap the answer is a plain 503 with Retry-After.
      const release = streams.take(request.ip);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      });
      res.write(': assignments of ladder ' + ladder.id + '\n\n');
      const listener = (event: { ladder: string; match: RecentMatch }) => {
        if (event.ladder === ladder.id) res.write(`event: assignment\ndata: ${JSON.stringify(event.match)}\n\n`);
      };
      const onExpired = (event: ExpiredEvent) => {
        if (event.ladder === ladder.id) res.write(`event: expired\ndata: ${JSON.stringify({ tickets: event.tickets, backfills: event.backfills })}\n\n`);
      };
      ctx.tickets.events.on('assignment', listener);
      ctx.tickets.events.on('expired', onExpired);
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
      const close = () => {
        clearInterval(heartbeat);
        ctx.tickets.events.off('assignment', listener);
        ctx.tickets.events.off('expired', onExpired);
        release();
      };
      request.raw.on('close', close);
      res.on('close', close);
    },
  );
};
