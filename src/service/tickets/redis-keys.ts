/**
 * The keys of a ladder's queue in Redis (redis.ts's header says what each
 * holds), and how the Redis ticket store hands a batch of new tickets to its
 * intake script (redis-scripts.ts) and reads the script's answer for each:
 * the keys and arguments, and the outcome strings.
 */
import { FIGURES_PREFIX } from './redis-scripts.js';
import { type AddOutcome, FIGURES_EPOCH, figuresOf, type IntakeLimits, regionsOf, type StoredTicket } from './store.js';

/** The keys of ladder `ladder`'s queue under the deployment's `prefix`. */
export function queueKeys(prefix: string, ladder: string) {
  const queue = `${prefix}queue:${ladder}`;
  return {
    queue,
    players: `${queue}:players`,
    figures: `${queue}:figures`,
    regions: `${queue}:regioncount`,
    /** The set of every region seen, of earlier versions (deleted with the queue). */
    regionSet: `${queue}:regions`,
    owners: `${queue}:owners`,
    events: `${queue}:events`,
    backfills: `${queue}:backfills`,
    playing: `${queue}:playing`,
    recent: `${prefix}recent:${ladder}`,
    lock: `${prefix}mmlock:${ladder}`,
    /** Why waiting: the last pass's summary (s:at, s:heldBy) and reasons of tickets asked about (t:<id>). */
    why: `${queue}:why`,
    asked: `${queue}:whyasked`,
  };
}

/** A ticket waiting in this event-loop turn's intake batch, with the promise its `add` returned. */
export interface PendingAdd {
  ticket: StoredTicket;
  limits: IntakeLimits | undefined;
  resolve: (outcome: AddOutcome) => void;
  reject: (error: unknown) => void;
}

/** Where one ladder's intake script writes: its queue keys (in the script's order), each ticket's key, the event stream's cap. */
export interface IntakeTarget {
  ladder: string;
  keys: string[];
  ticketKey: (id: string) => string;
  eventsCap: number;
}

/** The intake script's keys and arguments for tickets of one ladder; each ticket's event text goes to `events`. */
export function intakeScriptArgs(target: IntakeTarget, adds: readonly PendingAdd[], events: string[]): Array<string | number> {
  const keys = [...target.keys];
  const args: Array<string | number> = [target.ladder, target.eventsCap, FIGURES_EPOCH, adds[0]?.limits?.maxWaiting ?? -1];
  for (const { ticket, limits } of adds) {
    keys.push(target.ticketKey(ticket.id));
    const figures = figuresOf(ticket.ticket);
    if (ticket.owner !== undefined) figures.owner = ticket.owner;
    // The text starts with the waiting status, which placement and cancellation rewrite in place.
    const head = `${FIGURES_PREFIX}${JSON.stringify(figures)},"id":${JSON.stringify(ticket.id)},"ladder":${JSON.stringify(ticket.ladder)},"createdAt":${ticket.createdAt}${ticket.mode !== undefined ? `,"mode":${JSON.stringify(ticket.mode)}` : ''}${ticket.owner !== undefined ? `,"owner":${JSON.stringify(ticket.owner)}` : ''},"ticket":`;
    const event = JSON.stringify(ticket.ticket);
    events.push(event);
    args.push(ticket.id, ticket.createdAt, `${head}${event}}`, ticket.owner ?? '', limits?.maxWaitingPerKey ?? -1, ticket.ticket.players.length);
    for (const p of ticket.ticket.players) args.push(p.id);
    const regions = figures.regions ?? regionsOf(ticket.ticket);
    args.push(regions.length);
    for (const r of regions) args.push(r);
    args.push(figures.region);
    const bands = new Map<number, number>();
    for (const band of figures.bands) bands.set(band, (bands.get(band) ?? 0) + 1);
    args.push(bands.size);
    for (const [band, players] of bands) args.push(band, players);
    // Lua counts bytes from 1.
    args.push(Buffer.byteLength(head) + 1);
  }
  return [keys.length, ...keys, ...args];
}

/** One ticket's outcome as the intake script answers it. */
export function intakeOutcome(outcome: string): AddOutcome {
  if (outcome === 'ok') return { ok: true };
  if (outcome === 'id') return { ok: false, reason: 'id' };
  if (outcome === 'regions') return { ok: false, reason: 'regions' };
  if (outcome === 'cap:ladder' || outcome === 'cap:key') return { ok: false, reason: 'cap', cap: outcome === 'cap:key' ? 'key' : 'ladder' };
  if (outcome.startsWith('playing:')) {
    const rest = outcome.slice('playing:'.length);
    const colon = rest.indexOf(':');
    return { ok: false, reason: 'playing', index: Number(rest.slice(0, colon)), backfill: rest.slice(colon + 1) };
  }
  return { ok: false, reason: 'player', index: Number(outcome.slice('player:'.length)) };
}
