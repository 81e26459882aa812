import { LadderError } from 'ladder-core/core/errors.js';

/**
 * A cap on what the caller may hold is reached (waiting tickets of a ladder
 * or of one key): the same request succeeds once some of what is held ends
 * (matched, cancelled, expired). `field` names the cap, `limit` its value.
 */
export class QuotaExceededError extends LadderError {
  override name = 'QuotaExceededError';
  constructor(
    readonly field: string,
    readonly limit: number,
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
  }
}
