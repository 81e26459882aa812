import { LadderError } from 'ladder-core/core/errors.js';

/** No API key, or one that is unknown or revoked. */
export class UnauthorizedError extends LadderError {
  override name = 'UnauthorizedError';
}
