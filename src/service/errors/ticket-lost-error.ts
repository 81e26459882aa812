import { LadderError } from 'ladder-core/core/errors.js';

/**
 * No ticket `ticket`, and the shared queue state (Redis) lost its data since
 * it may have been queued: Redis restarted empty or was flushed. `certain`
 * when the id was issued by Ladder under an earlier epoch of that state (the
 * ticket existed and is gone); otherwise the id was the client's own and may
 * never have been queued. `lostAt` is when an instance noticed the loss (ms),
 * when known.
 */
export class TicketLostError extends LadderError {
  override name = 'TicketLostError';
  readonly reason = 'queue-lost';
  constructor(
    readonly ticket: string,
    readonly certain: boolean,
    readonly lostAt: number | undefined,
  ) {
    const when = lostAt !== undefined ? ` at ${new Date(lostAt).toISOString()}` : '';
    super(
      certain
        ? `ticket ${JSON.stringify(ticket.slice(0, 80))} was lost: the queue's state was lost${when} (Redis restarted without its data); queue again`
        : `no ticket ${JSON.stringify(ticket.slice(0, 80))}; the queue's state was lost${when} (Redis restarted without its data), so a ticket queued before then is gone; queue again`,
    );
  }
}
