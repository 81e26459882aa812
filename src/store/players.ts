/** SQL of the players aggregate: each player's current rating state in a ladder. */
import type { Queryable } from './database.js';
import type { LadderHead } from './ladders.js';
import { PLAYER_COLUMNS, type PlayerRow, type PlayerStateRecord, stateColumns } from './rows.js';

export async function findPlayer(db: Queryable, ladder: string, id: string): Promise<PlayerRow | undefined> {
  const rows = await db.query<PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1 AND id = $2`, [ladder, id]);
  return rows[0];
}

export async function findPlayers(db: Queryable, ladder: string, ids: readonly string[]): Promise<PlayerRow[]> {
  if (ids.length === 0) return [];
  return db.query<PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1 AND id = ANY($2::text[])`, [ladder, ids]);
}

export async function allPlayers(db: Queryable, ladder: string): Promise<PlayerRow[]> {
  return db.query<PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1`, [ladder]);
}

/**
 * A ladder's players in id order, at most `pageSize` at a time (keyset pages). A reader that handles each page
 * before asking for the next never holds the event loop for the whole ladder: read at once, a million players
 * were one result to decode and one loop to handle, about 2 s on the loop.
 */
export async function* playerPages(db: Queryable, ladder: string, pageSize = 5000): AsyncGenerator<PlayerRow[]> {
  let rows = await db.query<PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1 ORDER BY id LIMIT $2`, [ladder, pageSize]);
  for (;;) {
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    rows = await playersAfter(db, ladder, rows[rows.length - 1]!.id, pageSize);
  }
}

/** Players whose id sorts after `afterId`, in id order, at most `limit` (a keyset page through a ladder's players). */
export async function playersAfter(db: Queryable, ladder: string, afterId: string, limit: number): Promise<PlayerRow[]> {
  return db.query<PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1 AND id > $2 ORDER BY id LIMIT $3`, [ladder, afterId, limit]);
}

/** LIKE's wildcards and escape taken literally: `prefix` matches only ids that start with it. */
function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Players whose id starts with `prefix`, best rating first, one page of them, and how many match in all. */
export async function searchPlayers(db: Queryable, ladder: string, prefix: string, limit: number, offset: number): Promise<{ total: number; rows: PlayerRow[] }> {
  const pattern = prefixPattern(prefix);
  const [rows, counted] = await Promise.all([
    db.query<PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1 AND id LIKE $2 ORDER BY rating DESC, id LIMIT $3 OFFSET $4`, [ladder, pattern, limit, offset]),
    db.query<{ n: number }>('SELECT count(*)::int4 AS n FROM players WHERE ladder = $1 AND id LIKE $2', [ladder, pattern]),
  ]);
  return { total: counted[0]?.n ?? 0, rows };
}

/** Writes player states; returns how many of them were new. */
export async function upsertPlayers(tx: Queryable, ladder: string, players: readonly PlayerStateRecord[]): Promise<number> {
  if (players.length === 0) return 0;
  const c = stateColumns(players);
  const rows = await tx.query<{ inserted: boolean }>(
    `INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at, last_seq, contexts)
     SELECT $1, i, r, d, v, m, l, q, x::json FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int4[], $7::int8[], $8::int8[], $9::text[]) AS u(i, r, d, v, m, l, q, x)
     ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at,
       last_seq = COALESCE(excluded.last_seq, players.last_seq), contexts = excluded.contexts
     RETURNING (xmax = 0) AS inserted`,
    [ladder, c.id, c.rating, c.rd, c.volatility, c.matches, c.lastAt, c.lastSeq, c.contexts],
  );
  return rows.filter((row) => row.inserted).length;
}

export async function deletePlayers(tx: Queryable, ladder: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query('DELETE FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladder, ids]);
}

/** Players whose state changed after sequence number `seq` (a leaderboard catching up). */
export async function playersChangedSince(db: Queryable, ladder: string, seq: number): Promise<PlayerRow[]> {
  return db.query<PlayerRow>(
    `SELECT ${PLAYER_COLUMNS} FROM players WHERE ladder = $1 AND id IN (
       SELECT x->>'player' FROM matches m CROSS JOIN LATERAL json_array_elements(m.changes) x WHERE m.ladder = $1 AND m.seq > $2
     )`,
    [ladder, seq],
  );
}

/**
 * The ladder's head and the states of `ids` that exist, in ONE statement, so
 * both come from one snapshot: the states read belong to the version read
 * with them. Undefined when the ladder does not exist.
 */
export async function readHeadAndPlayers(db: Queryable, ladder: string, ids: readonly string[]): Promise<{ head: Omit<LadderHead, 'logEpoch'>; players: PlayerRow[] } | undefined> {
  const rows = await db.query<PlayerRow & { version: number; incarnation: number; next_seq: number; round_count: number; correcting: boolean }>(
    `SELECT l.version, l.incarnation, l.next_seq, l.round_count, l.correcting, p.id, p.rating, p.rd, p.volatility, p.matches, p.last_at, p.last_seq, p.contexts
     FROM ladders l LEFT JOIN players p ON p.ladder = l.id AND p.id = ANY($2::text[]) WHERE l.id = $1`,
    [ladder, ids],
  );
  const first = rows[0];
  if (!first) return undefined;
  return {
    head: { version: first.version, incarnation: first.incarnation, nextSeq: first.next_seq, roundCount: first.round_count, correcting: first.correcting },
    players: rows.filter((row) => row.id !== null),
  };
}

/**
 * Bulk-loads `count` synthetic players `p1..pN` (the load benchmark's
 * ladder of a million players), generated inside the database.
 */
export async function seedSyntheticPlayers(db: Queryable, ladder: string, count: number, lastAt: number): Promise<void> {
  await db.query(
    `INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at)
     SELECT $1, 'p' || g, 1500 + 300 * sin(g), 60, 0.06, 20, $3 FROM generate_series(1, $2::int4) AS g`,
    [ladder, count, lastAt],
  );
  // As autovacuum does soon after a bulk load: without statistics the planner takes the table for a few rows and
  // answers each keyset page (`playerPages`) by sorting every player after the cursor instead of walking the key.
  await db.query('ANALYZE players');
}
