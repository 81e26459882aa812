/** HTTP-facing errors; the core's InvalidInputError maps to 400 with its field. */
import { LadderError } from '../core/errors.js';

export type ErrorCode = 'invalid_input' | 'not_found' | 'unauthorized' | 'forbidden' | 'conflict' | 'rate_limited' | 'payload_too_large' | 'unavailable' | 'internal';

export class HttpError extends LadderError {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export class NotFoundError extends HttpError {
  constructor(message: string, field?: string) {
    super(404, 'not_found', message, field);
  }
}

export class ConflictError extends HttpError {
  constructor(message: string, field?: string) {
    super(409, 'conflict', message, field);
  }
}
