import { LadderError } from 'ladder-core/core/errors.js';

/**
 * A dependency (the database, Redis) or the server itself cannot serve the
 * request now; the same request may succeed later. `message` is written for
 * clients and never carries a driver's text (that stays in `cause`).
 */
export class UnavailableError extends LadderError {
  override name = 'UnavailableError';
  constructor(
    readonly dependency: 'database' | 'redis' | 'server',
    message: string,
    readonly retryAfterSeconds = 1,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
