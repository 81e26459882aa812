/**
 * What a new ticket needs to know about its players: each one's percentile
 * in the ladder (the matchmaker's skill coordinate) and stored rating (for
 * team balance), from the rankings (Redis, or the in-process leaderboard):
 * no database read. Lookups of requests that arrive in the same event-loop
 * turn are answered together, one read per ladder however many tickets are
 * being created.
 */
import type { Ladder } from './ladders.js';
import type { PlayerFacts, Rankings } from './rankings.js';

export type { PlayerFacts } from './rankings.js';

/** A player's facts as intake reads them. */
export interface LookedUp extends PlayerFacts {
  /** The stored rating as it is (negative too); null for a player the standings do not list. */
  ladderRating: number | null;
}

interface Pending {
  ladder: Ladder;
  ids: Set<string>;
  waiters: Array<{ resolve: (facts: Map<string, LookedUp>) => void; reject: (error: unknown) => void }>;
}

export class PlayerLookup {
  private pending = new Map<string, Pending>();

  constructor(private readonly rankings: Rankings) {}

  /** Facts of the given players (others of the same batch may be in the answer too). */
  lookup(ladder: Ladder, ids: readonly string[]): Promise<Map<string, LookedUp>> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      let batch = this.pending.get(ladder.id);
      if (!batch) this.pending.set(ladder.id, (batch = { ladder, ids: new Set(), waiters: [] }));
      for (const id of ids) batch.ids.add(id);
      batch.waiters.push({ resolve, reject });
    });
  }

  private flush(): void {
    const batches = [...this.pending.values()];
    this.pending = new Map();
    for (const batch of batches) {
      const ids = [...batch.ids];
      this.rankings.facts(batch.ladder, ids).then(
        (facts) => {
          const byId = new Map<string, LookedUp>();
          // The matchmaker takes no negative rating (an Elo rating can fall below zero): balance on the percentile then.
          ids.forEach((id, i) => {
            const { percentile, rating } = facts[i]!;
            byId.set(id, { percentile, rating: rating !== null && rating >= 0 ? rating : null, ladderRating: rating });
          });
          for (const w of batch.waiters) w.resolve(byId);
        },
        (error) => batch.waiters.forEach((w) => w.reject(error)),
      );
    }
  }
}
