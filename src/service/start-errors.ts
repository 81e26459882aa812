import { LadderError } from 'ladder-core/core/errors.js';

/**
 * The service could not start for a reason the operator fixes (a busy port,
 * an unusable data directory, Redis unreachable, a database that refused a
 * migration); `message` is one line that
 * names the port, path or address.
 */
export class ServiceStartError extends LadderError {
  override name = 'ServiceStartError';
  constructor(
    readonly reason: 'port-in-use' | 'data-directory' | 'redis-unreachable' | 'database-unreachable' | 'database-migration',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
