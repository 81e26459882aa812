import { LadderError } from 'ladder-core/core/errors.js';

/** The caller sent more requests than its rate allows. */
export class RateLimitedError extends LadderError {
  override name = 'RateLimitedError';
  constructor(readonly retryAfterSeconds: number) {
    super('too many requests; slow down');
  }
}
