import { LadderError } from 'ladder-core/core/errors.js';

/**
 * A player cannot be placed where the request asks: they wait in a ticket
 * (`ticket` when known), or they are in a match that an open backfill is
 * filling (`backfill`). `field` names where the request names them.
 */
export class PlayerBusyError extends LadderError {
  override name = 'PlayerBusyError';
  constructor(
    readonly player: string,
    readonly field: string,
    readonly busy: { kind: 'waiting'; ticket?: string } | { kind: 'playing'; backfill: string },
  ) {
    super(
      busy.kind === 'waiting'
        ? `player ${JSON.stringify(player.slice(0, 80))} is waiting in a ticket of this ladder${busy.ticket !== undefined ? ` (${JSON.stringify(busy.ticket.slice(0, 80))})` : ''}`
        : `player ${JSON.stringify(player.slice(0, 80))} is in a match that backfill ${JSON.stringify(busy.backfill.slice(0, 80))} is filling`,
    );
  }
}
