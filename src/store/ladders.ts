/** SQL of the ladders aggregate: definitions, counters and the write version. */
import type { Queryable } from './database.js';

export interface LadderRow {
  id: string;
  system: string;
  options: Record<string, unknown>;
  settings: Record<string, unknown>;
  public: boolean;
  created_at: number;
  /** Set by the database on insert (migration 7); a ladder created anew under the same id gets a greater one. */
  incarnation: number;
}

export interface LadderCounts {
  players: number;
  matches: number;
  rounds: number;
}

/** What a writer needs to know of a ladder before it appends: the next sequence number and the version token. */
export interface LadderHead {
  version: number;
  /** Which ladder of this id the row is (see LadderRow.incarnation). */
  incarnation: number;
  nextSeq: number;
  roundCount: number;
  /** Changes when the log is rewritten before its end (a void, a correction) or the ladder is created anew. */
  logEpoch: number;
  /** A phased correction of the ladder is under way (store/corrections.ts): nothing else may write it. */
  correcting: boolean;
}

const COLUMNS = 'id, system, options, settings, public, created_at, incarnation';

/** Inserts a ladder; its incarnation, or undefined when the id is taken. */
export async function insertLadder(db: Queryable, row: Omit<LadderRow, 'incarnation'>): Promise<number | undefined> {
  const rows = await db.query<{ incarnation: number }>(
    `INSERT INTO ladders (id, system, options, settings, public, created_at, log_epoch) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, floor(random() * 281474976710655)::int8)
     ON CONFLICT (id) DO NOTHING RETURNING incarnation`,
    [row.id, row.system, JSON.stringify(row.options), JSON.stringify(row.settings), row.public, row.created_at],
  );
  return rows[0]?.incarnation;
}

export async function findLadder(db: Queryable, id: string): Promise<LadderRow | undefined> {
  const rows = await db.query<LadderRow>(`SELECT ${COLUMNS} FROM ladders WHERE id = $1`, [id]);
  return rows[0];
}

export async function listLadders(db: Queryable): Promise<Array<LadderRow & { counts: LadderCounts }>> {
  const rows = await db.query<LadderRow & { player_count: number; match_count: number; round_count: number }>(
    `SELECT ${COLUMNS}, player_count, match_count, round_count FROM ladders ORDER BY id`,
  );
  return rows.map(({ player_count, match_count, round_count, ...row }) => ({ ...row, counts: { players: player_count, matches: match_count, rounds: round_count } }));
}

export async function ladderCounts(db: Queryable, id: string): Promise<LadderCounts | undefined> {
  const rows = await db.query<{ player_count: number; match_count: number; round_count: number }>('SELECT player_count, match_count, round_count FROM ladders WHERE id = $1', [id]);
  const row = rows[0];
  return row && { players: row.player_count, matches: row.match_count, rounds: row.round_count };
}

/** The ladder's head, locking the row until the transaction ends (serialises writers across instances). */
export async function lockLadder(tx: Queryable, id: string): Promise<LadderHead | undefined> {
  const rows = await tx.query<{ next_seq: number; round_count: number; version: number; log_epoch: number; incarnation: number; correcting: boolean }>(
    'SELECT next_seq, round_count, version, log_epoch, incarnation, correcting FROM ladders WHERE id = $1 FOR UPDATE',
    [id],
  );
  const row = rows[0];
  return row && { version: row.version, incarnation: row.incarnation, nextSeq: row.next_seq, roundCount: row.round_count, logEpoch: row.log_epoch, correcting: row.correcting };
}

/** The last sequence number written (0 for none). */
export async function lastSeq(db: Queryable, id: string): Promise<number> {
  const rows = await db.query<{ next_seq: number }>('SELECT next_seq FROM ladders WHERE id = $1', [id]);
  return (rows[0]?.next_seq ?? 1) - 1;
}

/** Records an append made under the ladder lock. */
export async function advanceLadder(
  tx: Queryable,
  id: string,
  change: { nextSeq: number; matchesAdded: number; playersAdded: number; roundCount: number; version: number },
): Promise<void> {
  await tx.query('UPDATE ladders SET next_seq = $2, match_count = match_count + $3, player_count = player_count + $4, round_count = $5, version = $6 WHERE id = $1', [
    id,
    change.nextSeq,
    change.matchesAdded,
    change.playersAdded,
    change.roundCount,
    change.version,
  ]);
}

/**
 * Sets the counters after a replay rewrote the players (rebuild --fix), and
 * moves the version so writers holding cached states of this ladder reload them.
 */
export async function resetLadderCounts(tx: Queryable, id: string, counts: { players: number; matches: number }): Promise<void> {
  await tx.query('UPDATE ladders SET player_count = $2, match_count = $3, version = version + 1 WHERE id = $1', [id, counts.players, counts.matches]);
}

/** Adds players created outside the writer (bulk loads of the benchmarks) to the counters. */
export async function addPlayerCount(db: Queryable, id: string, added: number): Promise<void> {
  await db.query('UPDATE ladders SET player_count = player_count + $2, version = version + 1 WHERE id = $1', [id, added]);
}

/** Changes a ladder's definition; false when there is no such ladder. */
export async function updateLadder(tx: Queryable, id: string, change: { options: Record<string, unknown>; settings: Record<string, unknown>; public: boolean }): Promise<boolean> {
  const rows = await tx.query('UPDATE ladders SET options = $2::jsonb, settings = $3::jsonb, public = $4, version = version + 1 WHERE id = $1 RETURNING id', [
    id,
    JSON.stringify(change.options),
    JSON.stringify(change.settings),
    change.public,
  ]);
  return rows.length > 0;
}

/** Deletes a ladder and everything of it; false when there is no such ladder. */
export async function deleteLadder(tx: Queryable, id: string): Promise<boolean> {
  for (const table of ['correction_steps', 'pending_corrections', 'frozen_priors', 'idempotency', 'rounds', 'season_standings', 'seasons', 'players', 'matches']) {
    // Table names come from the list above, never from input.
    await tx.query(`DELETE FROM ${table} WHERE ladder = $1`, [id]);
  }
  const rows = await tx.query('DELETE FROM ladders WHERE id = $1 RETURNING id', [id]);
  return rows.length > 0;
}

/**
 * Counts a correction (a void, a corrected match) or a season's reset: a
 * rewrite of stored states that moves no sequence number, which shared
 * leaderboards compare with the count they were loaded at.
 */
export async function countCorrection(tx: Queryable, id: string): Promise<void> {
  await tx.query('UPDATE ladders SET corrections = corrections + 1 WHERE id = $1', [id]);
}

/** The last sequence number written and the corrections counted (see countCorrection); undefined for no ladder. */
export async function syncPoint(db: Queryable, id: string): Promise<{ lastSeq: number; corrections: number } | undefined> {
  const rows = await db.query<{ next_seq: number; corrections: number }>('SELECT next_seq, corrections FROM ladders WHERE id = $1', [id]);
  const row = rows[0];
  return row && { lastSeq: row.next_seq - 1, corrections: row.corrections };
}

/**
 * Moves the counters after a correction or a season, and the version so
 * cached states are reloaded; `logEpoch` when the log was rewritten before
 * its end (whole histories kept in memory are derived again).
 */
export async function adjustLadder(tx: Queryable, id: string, change: { matches: number; players: number; version: number; logEpoch?: number }): Promise<void> {
  await tx.query('UPDATE ladders SET match_count = match_count + $2, player_count = player_count + $3, version = $4, log_epoch = coalesce($5, log_epoch) WHERE id = $1', [
    id,
    change.matches,
    change.players,
    change.version,
    change.logEpoch ?? null,
  ]);
}

/** Where the ladder's log stands, read without a lock: its last sequence number and log epoch (undefined: no such ladder). */
export async function logHead(db: Queryable, id: string): Promise<{ lastSeq: number; logEpoch: number } | undefined> {
  const rows = await db.query<{ next_seq: number; log_epoch: number }>('SELECT next_seq, log_epoch FROM ladders WHERE id = $1', [id]);
  const row = rows[0];
  return row && { lastSeq: row.next_seq - 1, logEpoch: row.log_epoch };
}
