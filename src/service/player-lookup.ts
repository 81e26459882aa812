/**
 * What a new ticket needs to know about its players: each one's percentile
 * in the ladder (the matchmaker's skill coordinate) and stored rating (for
 * team balance). Lookups of requests that arrive in the same event-loop turn
 * are answered together: one read of the players' rows and one read of their
 * standings per ladder, however many tickets are being created.
 */
import type { Database } from '../store/database.js';
import { findPlayers } from '../store/players.js';
import type { Ladder } from './ladders.js';
import type { Rankings } from './rankings.js';

export interface PlayerFacts {
  /** The ladder's percentile, or null while the player is not ranked (unknown, in placement, inactive). */
  percentile: number | null;
  /** The stored rating, or null for an unknown player (or one the matchmaker cannot take: negative). */
  rating: number | null;
}

interface Pending {
  ladder: Ladder;
  ids: Set<string>;
  waiters: Array<{ resolve: (facts: Map<string, PlayerFacts>) => void; reject: (error: unknown) => void }>;
}

export class PlayerLookup {
  private pending = new Map<string, Pending>();

  constructor(
    private readonly db: Database,
    private readonly rankings: Rankings,
  ) {}

  /** Facts of the given players (others of the same batch may be in the answer too). */
  lookup(ladder: Ladder, ids: readonly string[]): Promise<Map<string, PlayerFacts>> {
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
      this.read(batch.ladder, [...batch.ids]).then(
        (facts) => batch.waiters.forEach((w) => w.resolve(facts)),
        (error) => batch.waiters.forEach((w) => w.reject(error)),
      );
    }
  }

  private async read(ladder: Ladder, ids: string[]): Promise<Map<string, PlayerFacts>> {
    const [rows, percentiles] = await Promise.all([findPlayers(this.db, ladder.id, ids), this.rankings.percentiles(ladder, ids)]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const placement = ladder.resolvedStandings.placementMatches;
    const facts = new Map<string, PlayerFacts>();
    ids.forEach((id, i) => {
      const row = byId.get(id);
      const percentile = row !== undefined && row.matches >= placement ? percentiles[i]! : null;
      const rating = row !== undefined && Number.isFinite(row.rating) && row.rating >= 0 ? row.rating : null;
      facts.set(id, { percentile, rating });
    });
    return facts;
  }
}
