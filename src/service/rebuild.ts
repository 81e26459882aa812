/**
 * Matches are the source of truth: `rebuildLadder` replays a ladder's stored
 * matches in sequence order through the rating core and compares the result
 * with the stored player states; with `fix` it rewrites the states that differ
 * (and the player count) in one transaction that holds the ladder lock.
 */
import type { PlayerState } from '../core/systems.js';
import type { Database } from '../store/database.js';
import type { Ladder } from './ladders.js';
import { replayStored, type StoredMatch } from './rating.js';

export interface PlayerDifference {
  id: string;
  stored: PlayerState | null;
  replayed: PlayerState | null;
}

export interface RebuildReport {
  ladder: string;
  matches: number;
  players: number;
  differences: PlayerDifference[];
  fixed: boolean;
}

function same(a: number | undefined, b: number | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  // Both sides come from the same code on the same doubles; allow only float noise of the text round trip.
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

function equal(a: PlayerState, b: PlayerState): boolean {
  return same(a.rating, b.rating) && same(a.rd, b.rd) && same(a.volatility, b.volatility) && a.matches === b.matches && same(a.lastAt, b.lastAt);
}

export async function rebuildLadder(db: Database, ladder: Ladder, options: { fix?: boolean } = {}): Promise<RebuildReport> {
  return db.transaction(async (tx) => {
    // The lock keeps writers out so stored state and match log are read at one point in time.
    await tx.query('SELECT 1 FROM ladders WHERE id = $1 FOR UPDATE', [ladder.id]);
    const matches: StoredMatch[] = [];
    const pageSize = 20_000;
    for (let after = 0; ; ) {
      const rows = await tx.query<{ seq: number; id: string; at: number; round: string | null; body: StoredMatch['body'] }>(
        'SELECT seq, id, at, round, body FROM matches WHERE ladder = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [ladder.id, after, pageSize],
      );
      for (const row of rows) matches.push({ seq: row.seq, id: row.id, at: row.at, round: row.round, body: row.body });
      if (rows.length < pageSize) break;
      after = rows[rows.length - 1]!.seq;
    }
    const replayed = replayStored(ladder.rating, matches);
    const storedRows = await tx.query<{ id: string; rating: number; rd: number | null; volatility: number | null; matches: number; last_at: number | null }>(
      'SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1',
      [ladder.id],
    );
    const stored = new Map<string, PlayerState>();
    for (const row of storedRows) {
      const state: PlayerState = { rating: row.rating, matches: row.matches };
      if (row.rd !== null) state.rd = row.rd;
      if (row.volatility !== null) state.volatility = row.volatility;
      if (row.last_at !== null) state.lastAt = row.last_at;
      stored.set(row.id, state);
    }
    const differences: PlayerDifference[] = [];
    for (const [id, state] of replayed) {
      const have = stored.get(id);
      if (!have || !equal(have, state)) differences.push({ id, stored: have ?? null, replayed: state });
    }
    for (const [id, state] of stored) if (!replayed.has(id)) differences.push({ id, stored: state, replayed: null });
    if (options.fix && differences.length > 0) {
      const gone = differences.filter((d) => d.replayed === null).map((d) => d.id);
      if (gone.length > 0) await tx.query('DELETE FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, gone]);
      const put = differences.filter((d) => d.replayed !== null);
      await tx.query(
        `INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at)
         SELECT $1, i, r, d, v, m, l FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int4[], $7::int8[]) AS u(i, r, d, v, m, l)
         ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at`,
        [
          ladder.id,
          put.map((d) => d.id),
          put.map((d) => d.replayed!.rating),
          put.map((d) => d.replayed!.rd ?? null),
          put.map((d) => d.replayed!.volatility ?? null),
          put.map((d) => d.replayed!.matches),
          put.map((d) => d.replayed!.lastAt ?? null),
        ],
      );
      // version + 1: writers holding cached states of this ladder must reload them.
      await tx.query('UPDATE ladders SET player_count = $2, match_count = $3, version = version + 1 WHERE id = $1', [ladder.id, replayed.size, matches.length]);
    }
    return { ladder: ladder.id, matches: matches.length, players: replayed.size, differences, fixed: Boolean(options.fix) && differences.length > 0 };
  });
}
