/**
 * What the Redis ticket store reads back from Redis and from other
 * instances, apart from its scripts' replies: the ids it issues, stream ids
 * and XINFO replies, and the messages published on the assignment and
 * expiration channels.
 */
import type { EventEmitter } from 'node:events';
import type { AssignmentEvent, ExpiredEvent, RecentMatch } from './store.js';

/** A ticket id Ladder issued: a UUID, a dot, the epoch it was issued under (12 hex digits). */
export const ISSUED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.([0-9a-f]{12})$/;

/** The stream id just after `id` (MINID keeps ids ≥ it). */
export function nextId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq) + 1}`;
}

/** The last id and the count of entries ever added, from an XINFO STREAM reply. */
export function streamInfo(reply: unknown[]): { lastId: string; added: number } {
  const lastAt = reply.indexOf('last-generated-id');
  const addedAt = reply.indexOf('entries-added');
  return { lastId: lastAt === -1 ? '0-0' : String(reply[lastAt + 1]), added: addedAt === -1 ? 0 : Number(reply[addedAt + 1]) };
}

/**
 * The handler of the subscriber's messages: assignments and expirations any
 * instance published, emitted on `events` as `assignment` and `expired`.
 * A message that is not Ladder's is ignored.
 */
export function relayTo(events: EventEmitter, expirations: string): (channel: string, message: string) => void {
  return (channel, message) => {
    if (channel === expirations) {
      if (events.listenerCount('expired') === 0) return;
      try {
        const published = JSON.parse(message) as { ladder: string; tickets?: unknown; backfills?: unknown };
        // Lua's cjson writes an empty list as {}.
        const list = (value: unknown) => (Array.isArray(value) ? (value as string[]) : []);
        events.emit('expired', { ladder: published.ladder, tickets: list(published.tickets), backfills: list(published.backfills) } satisfies ExpiredEvent);
      } catch {
        // Not ours.
      }
      return;
    }
    // Nobody streams assignments from this instance: nothing to decode them for.
    if (events.listenerCount('assignment') === 0) return;
    try {
      // One message carries the matches a turn placed (an instance of an earlier version sends one each).
      const published = JSON.parse(message) as AssignmentEvent | { ladder: string; matches: RecentMatch[] };
      if ('matches' in published) for (const match of published.matches) events.emit('assignment', { ladder: published.ladder, match } satisfies AssignmentEvent);
      else events.emit('assignment', published);
    } catch {
      // Not ours.
    }
  };
}

/**
 * The recent-matches lists as decoded, one per ladder, reusing the last
 * decoding while a list is unchanged: matches are only pushed at its head
 * (each with a new id) and it is only trimmed after a push, so the same head
 * and length mean the same list.
 */
export class RecentLists {
  private readonly lists = new Map<string, { head: string | undefined; length: number; parsed: RecentMatch[] }>();

  decode(ladder: string, raws: string[]): RecentMatch[] {
    const cached = this.lists.get(ladder);
    if (cached !== undefined && cached.length === raws.length && cached.head === raws[0]) return cached.parsed;
    const parsed = raws.map((raw) => JSON.parse(raw) as RecentMatch);
    this.lists.set(ladder, { head: raws[0], length: raws.length, parsed });
    return parsed;
  }

  forget(ladder: string): void {
    this.lists.delete(ladder);
  }
}
