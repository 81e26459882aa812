/**
 * When a waiting ticket's or backfill's player range stops widening: after
 * that, a pass can match it only if the queue changes, which the service
 * uses to decide when a ticket may wait without being looked at again.
 */
import type { BackfillInput } from './backfill.js';
import type { PlayerFilter, Ticket } from './ticket.js';
import type { ResolvedWidening } from './widening.js';

/** Seconds after its arrival at which a ticket's range last changes (its loosest player's last widening step). */
export function lastWideningSeconds(ticket: Ticket, widening: ResolvedWidening): number {
  let steps = 0;
  for (const player of ticket.players) {
    if (player.filter?.strict) continue;
    const own = player.filter?.within ?? 0;
    let wider = 0;
    for (const step of widening.steps) if (step > own) wider++;
    if (wider > steps) steps = wider;
  }
  return steps * widening.everySeconds;
}

/** Seconds after its `at` at which a backfill's range last changes (its loosest match player's last widening step). */
export function lastBackfillWideningSeconds(request: BackfillInput, widening: ResolvedWidening, defaults: PlayerFilter): number {
  let steps = 0;
  for (const id of request.teams.flat()) {
    const filter = request.players?.[id]?.filter;
    if (filter?.strict ?? request.filter?.strict ?? defaults.strict) continue;
    const own = filter?.within ?? request.filter?.within ?? defaults.within;
    let wider = 0;
    for (const step of widening.steps) if (step > own) wider++;
    if (wider > steps) steps = wider;
  }
  return steps * widening.everySeconds;
}
