import { LadderError } from 'ladder-core/core/errors.js';

/**
 * A heavy job (src/service/jobs/) was dropped before a worker took it: the
 * client that asked for it went away while it waited in the queue, so it
 * never ran and its place went to the next job.
 */
export class JobCancelledError extends LadderError {
  override name = 'JobCancelledError';
  constructor(readonly kind: string) {
    super(`the ${kind} job was cancelled before it ran: its client went away`);
  }
}
