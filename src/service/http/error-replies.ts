/**
 * The only place where errors become HTTP statuses. Domain errors carry
 * their data as properties (field, scope, retry time); this maps each class
 * to a status and a body `{"error":{"code","message","field"?}}`. Anything
 * unexpected is logged and answered 500 with no detail; no 5xx body ever
 * carries a driver's text.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInputError, LadderError } from 'ladder-core/core/errors.js';
import { DatabaseReadStoppedError, DatabaseRejectedError, DatabaseUnavailableError } from '../../store/database-errors.js';
import { DataDirectoryLockedError } from '../../store/database.js';
import {
  BackfillClosedError,
  ConflictError,
  ForbiddenError,
  JobsBusyError,
  JobCancelledError,
  JobTimeoutError,
  LadderNotAllowedError,
  NotFoundError,
  PlayerBusyError,
  QuotaExceededError,
  RateLimitedError,
  StreamsFullError,
  TicketLostError,
  UnauthorizedError,
  UnavailableError,
} from '../errors/index.js';

export type ErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'gone'
  | 'unauthorized'
  | 'forbidden'
  | 'conflict'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unavailable'
  | 'internal';

export interface ErrorReply {
  status: number;
  code: ErrorCode;
  message: string;
  field?: string;
  /** Why, when a code alone does not say it (`queue-lost`). */
  reason?: string;
  retryAfterSeconds?: number;
}

export function errorBody(code: ErrorCode, message: string, field?: string, reason?: string) {
  return { error: { code, message, ...(field !== undefined ? { field } : {}), ...(reason !== undefined ? { reason } : {}) } };
}

/** The reply for an error, or undefined for one that is not understood (a bug: 500). */
export function replyFor(error: unknown, bodyLimit: number): ErrorReply | undefined {
  if (error instanceof InvalidInputError) return { status: 400, code: 'invalid_input', message: error.detail, ...(error.field !== undefined ? { field: error.field } : {}) };
  // Known gone: 410; an id the client chose, which may never have been queued: 404. Both say why.
  if (error instanceof TicketLostError)
    return { status: error.certain ? 410 : 404, code: error.certain ? 'gone' : 'not_found', message: error.message, field: 'ticket', reason: error.reason };
  if (error instanceof NotFoundError) return { status: 404, code: 'not_found', message: error.message, ...(error.field !== undefined ? { field: error.field } : {}) };
  if (error instanceof ConflictError) return { status: 409, code: 'conflict', message: error.message, ...(error.field !== undefined ? { field: error.field } : {}) };
  if (error instanceof PlayerBusyError) return { status: 409, code: 'conflict', message: error.message, field: error.field };
  if (error instanceof BackfillClosedError) return { status: 409, code: 'conflict', message: error.message, field: 'backfill' };
  if (error instanceof UnauthorizedError) return { status: 401, code: 'unauthorized', message: error.message };
  if (error instanceof ForbiddenError) return { status: 403, code: 'forbidden', message: error.message };
  if (error instanceof LadderNotAllowedError) return { status: 403, code: 'forbidden', message: error.message, field: 'ladder' };
  if (error instanceof QuotaExceededError) return { status: 429, code: 'quota_exceeded', message: error.message, field: error.field, retryAfterSeconds: error.retryAfterSeconds };
  if (error instanceof StreamsFullError)
    return { status: 503, code: 'unavailable', message: error.message, field: `streams.${error.cap}`, retryAfterSeconds: error.retryAfterSeconds };
  if (error instanceof RateLimitedError) return { status: 429, code: 'rate_limited', message: error.message, retryAfterSeconds: error.retryAfterSeconds };
  // The instance's own cap is the server's state, not the caller's doing: 503, as for any overload.
  if (error instanceof JobsBusyError)
    return {
      status: error.scope === 'instance' ? 503 : 429,
      code: error.scope === 'instance' ? 'unavailable' : 'rate_limited',
      message: error.message,
      retryAfterSeconds: error.retryAfterSeconds,
    };
  // Its client is gone and never sees this; logged as a 503 like a cancelled read.
  if (error instanceof JobCancelledError) return { status: 503, code: 'unavailable', message: error.message, retryAfterSeconds: 1 };
  if (error instanceof JobTimeoutError) return { status: 503, code: 'unavailable', message: error.message, retryAfterSeconds: Math.ceil(error.limitMs / 1000) };
  if (error instanceof UnavailableError) return { status: 503, code: 'unavailable', message: error.message, retryAfterSeconds: error.retryAfterSeconds };
  if (error instanceof DatabaseReadStoppedError) {
    // A read past its statement timeout; a cancelled one's client is gone and never sees this.
    const message =
      error.reason === 'timeout'
        ? `the read ran longer than ${error.timeoutMs} ms and was stopped; retry, or ask for less (a lower limit, or the next page through its cursor)`
        : error.reason === 'busy'
          ? 'too many reads are waiting for the database; retry shortly'
          : 'the read was cancelled: the client went away';
    return { status: 503, code: 'unavailable', message, retryAfterSeconds: 1 };
  }
  if (error instanceof DatabaseUnavailableError || error instanceof DataDirectoryLockedError) {
    return { status: 503, code: 'unavailable', message: 'the database is unavailable; retry shortly', retryAfterSeconds: 1 };
  }
  // Data the database refused that validation let through: the input's fault, though validation should have caught it.
  if (error instanceof DatabaseRejectedError)
    return { status: 400, code: 'invalid_input', message: 'the database refused this request; check its ids and names for characters it cannot store', field: 'body' };
  const fastify = error as Partial<FastifyError>;
  if (fastify.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, code: 'payload_too_large', message: `request body is larger than ${bodyLimit} bytes`, field: 'body' };
  if (fastify.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return { status: 415, code: 'unsupported_media_type', message: 'send JSON with Content-Type: application/json', field: 'content-type' };
  if (typeof fastify.statusCode === 'number' && fastify.statusCode >= 400 && fastify.statusCode < 500) {
    // Fastify's own client errors (malformed JSON, empty body, bad headers): short, and the input's fault.
    return { status: fastify.statusCode, code: 'invalid_input', message: `request body is not valid JSON: ${String(fastify.message).slice(0, 200)}`, field: 'body' };
  }
  if (error instanceof LadderError) return { status: 400, code: 'invalid_input', message: error.message };
  return undefined;
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, bodyLimit: number) {
  const mapped = replyFor(error, bodyLimit);
  if (mapped === undefined) {
    request.log.error(error);
    return reply.code(500).send(errorBody('internal', 'internal error'));
  }
  if (mapped.status >= 500) request.log.warn(error);
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', Math.max(1, Math.ceil(mapped.retryAfterSeconds)));
  return reply.code(mapped.status).send(errorBody(mapped.code, mapped.message, mapped.field, mapped.reason));
}
