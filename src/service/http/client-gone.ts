/**
 * A signal that aborts when the client of a request goes away before its
 * answer is sent (closed the connection, gave up): the read behind it is
 * then cancelled (`Database.read`) instead of running on for nobody.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export function clientGone(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  // A response closes when it is sent or when its connection is lost; only the second means the client left.
  if (request.raw.socket?.destroyed === true || response.destroyed) controller.abort();
  else
    response.once('close', () => {
      if (!response.writableFinished) controller.abort();
    });
  return controller.signal;
}
