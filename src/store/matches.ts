/**
 * SQL of the matches aggregate: the match log (the source of truth, in
 * sequence order per ladder) and each player's history rows.
 */
import type { Match } from '../core/match.js';
import type { Queryable } from './database.js';
import { numberArray, type PlayerStateRecord, stateColumns, textArray } from './rows.js';
import type { IdempotencyRows } from './idempotency.js';

/** Matches to append, as columns (one entry per match). `body` and `winProbability` are JSON text. */
export interface MatchRows {
  seq: number[];
  id: string[];
  at: number[];
  receivedAt: number[];
  round: (string | null)[];
  body: string[];
  winProbability: string[];
}

/** History rows to append, as columns (one entry per player per match); values are JSON text. */
export interface ChangeRows {
  player: string[];
  seq: number[];
  team: number[];
  before: string[];
  after: string[];
  terms: string[];
  /** The player's last match time before and after this match (null: none). */
  lastAtBefore: (number | null)[];
  lastAtAfter: (number | null)[];
}

export function emptyMatchRows(): MatchRows {
  return { seq: [], id: [], at: [], receivedAt: [], round: [], body: [], winProbability: [] };
}

export function emptyChangeRows(): ChangeRows {
  return { player: [], seq: [], team: [], before: [], after: [], terms: [], lastAtBefore: [], lastAtAfter: [] };
}

export interface StoredMatchRow {
  seq: number;
  id: string;
  at: number;
  round: string | null;
  body: Match;
  win_probability: number[] | null;
  voided_at: number | null;
  void_reason: string | null;
}

export interface HistoryRow {
  voided_at: number | null;
  seq: number;
  team: number;
  before: unknown;
  after: unknown;
  terms: unknown;
  id: string;
  at: number;
  body: Match;
}

/** Newest first. */
export async function listMatches(db: Queryable, ladder: string, limit: number, offset: number): Promise<StoredMatchRow[]> {
  return db.query<StoredMatchRow>('SELECT seq, id, at, round, body, win_probability, voided_at, void_reason FROM matches WHERE ladder = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3', [ladder, limit, offset]);
}

/** Matches in sequence order after `afterSeq`, at most `limit` (replays page through the log). */
export async function matchesAfter(db: Queryable, ladder: string, afterSeq: number, limit: number): Promise<StoredMatchRow[]> {
  return db.query<StoredMatchRow>('SELECT seq, id, at, round, body, win_probability, voided_at, void_reason FROM matches WHERE ladder = $1 AND seq > $2 ORDER BY seq LIMIT $3', [ladder, afterSeq, limit]);
}

/** A player's history, newest first, with the match of each row. */
export async function historyOf(db: Queryable, ladder: string, player: string, limit: number, offset: number): Promise<HistoryRow[]> {
  return db.query<HistoryRow>(
    `SELECT c.seq, c.team, c.before, c.after, c.terms, m.id, m.at, m.body, m.voided_at FROM rating_changes c JOIN matches m ON m.ladder = c.ladder AND m.seq = c.seq
     WHERE c.ladder = $1 AND c.player = $2 ORDER BY c.seq DESC LIMIT $3 OFFSET $4`,
    [ladder, player, limit, offset],
  );
}

/** The ids among `ids` already taken by a stored match. */
export async function takenMatchIds(db: Queryable, ladder: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.query<{ id: string }>('SELECT id FROM matches WHERE ladder = $1 AND id = ANY($2::text[])', [ladder, ids]);
  return new Set(rows.map((row) => row.id));
}

export async function insertMatches(tx: Queryable, ladder: string, rows: MatchRows): Promise<void> {
  if (rows.seq.length === 0) return;
  await tx.query(
    `INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability)
     SELECT $1, s, i, a, r, rd, b::json, w::jsonb FROM unnest($2::int8[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::text[], $8::text[]) AS u(s, i, a, r, rd, b, w)`,
    [ladder, rows.seq, rows.id, rows.at, rows.receivedAt, rows.round, rows.body, rows.winProbability],
  );
}

export async function insertChanges(tx: Queryable, ladder: string, rows: ChangeRows): Promise<void> {
  if (rows.player.length === 0) return;
  await tx.query(
    `INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms, last_at_before, last_at_after)
     SELECT $1, p, s, t, b::json, a::json, x::json, lb, la FROM unnest($2::text[], $3::int8[], $4::int4[], $5::text[], $6::text[], $7::text[], $8::int8[], $9::int8[]) AS u(p, s, t, b, a, x, lb, la)`,
    [ladder, rows.player, rows.seq, rows.team, rows.before, rows.after, rows.terms, rows.lastAtBefore, rows.lastAtAfter],
  );
}

/** A batch of plain matches for the one-statement write. */
export interface GuardedBatch {
  ladder: string;
  /** The version and next sequence number the batch was rated on. */
  expectedVersion: number;
  expectedSeq: number;
  /** Written when the guard holds. */
  newVersion: number;
  nextSeq: number;
  matchesAdded: number;
  playersAdded: number;
  /** Idempotency-Keys and match ids that must not be stored yet. */
  keys: readonly string[];
  matchIds: readonly string[];
  matches: MatchRows;
  players: readonly PlayerStateRecord[];
  changes: ChangeRows;
  idempotency: IdempotencyRows;
  now: number;
}

/**
 * Writes a batch of plain matches in ONE autocommit statement (one round
 * trip carries the commit too). Its first part sets the ladder's `version`
 * to `newVersion` only if it still holds `expectedVersion` and none of the
 * batch's Idempotency-Keys or match ids is stored; every insert depends on
 * that update, so either all of it is written or none. Resolves to whether
 * it was written.
 */
export async function writeGuardedBatch(db: Queryable, batch: GuardedBatch): Promise<boolean> {
  const players = stateColumns(batch.players);
  const { matches, changes, idempotency } = batch;
  const rows = await db.query<{ applied: number }>(
    `WITH fresh AS (
       SELECT NOT EXISTS (SELECT 1 FROM idempotency WHERE ladder = $1 AND key = ANY($7::text[]))
          AND NOT EXISTS (SELECT 1 FROM matches WHERE ladder = $1 AND id = ANY($8::text[])) AS ok
     ), l AS (
       -- No version test in WHERE: that would be checked against this statement's snapshot, which
       -- predates the commit of the batch sent before this one. SET expressions are evaluated on the
       -- newest row version once its lock is ours (READ COMMITTED re-check), so the test goes there.
       UPDATE ladders SET
         version = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN $32 ELSE version END,
         next_seq = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN $4 ELSE next_seq END,
         match_count = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN match_count + $5 ELSE match_count END,
         player_count = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN player_count + $6 ELSE player_count END
       FROM fresh WHERE id = $1
       RETURNING version = $32 AS applied
     ), m AS (
       INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability)
       SELECT $1, s, i, a, r, NULL, b::json, w::jsonb FROM unnest($9::int8[], $10::text[], $11::int8[], $12::int8[], $13::text[], $14::text[]) AS u(s, i, a, r, b, w)
       WHERE EXISTS (SELECT 1 FROM l WHERE applied)
     ), p AS (
       INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at)
       SELECT $1, i, r, d, v, n, t FROM unnest($15::text[], $16::float8[], $17::float8[], $18::float8[], $19::int4[], $20::int8[]) AS u(i, r, d, v, n, t)
       WHERE EXISTS (SELECT 1 FROM l WHERE applied)
       ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at
     ), c AS (
       INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms, last_at_before, last_at_after)
       SELECT $1, p, s, t, b::json, a::json, x::json, lb, la FROM unnest($21::text[], $22::int8[], $23::int4[], $24::text[], $25::text[], $26::text[], $33::int8[], $34::int8[]) AS u(p, s, t, b, a, x, lb, la)
       WHERE EXISTS (SELECT 1 FROM l WHERE applied)
     ), k AS (
       INSERT INTO idempotency (ladder, key, request_hash, status, response, created_at)
       SELECT $1, k, h, s, r, $31 FROM unnest($27::text[], $28::text[], $29::int4[], $30::text[]) AS u(k, h, s, r)
       WHERE EXISTS (SELECT 1 FROM l WHERE applied)
     )
     SELECT count(*)::int4 AS applied FROM l WHERE applied`,
    [
      batch.ladder,
      batch.expectedVersion,
      batch.expectedSeq,
      batch.nextSeq,
      batch.matchesAdded,
      batch.playersAdded,
      textArray(batch.keys),
      textArray(batch.matchIds),
      numberArray(matches.seq),
      textArray(matches.id),
      numberArray(matches.at),
      numberArray(matches.receivedAt),
      textArray(matches.body),
      textArray(matches.winProbability),
      textArray(players.id),
      numberArray(players.rating),
      numberArray(players.rd),
      numberArray(players.volatility),
      numberArray(players.matches),
      numberArray(players.lastAt),
      textArray(changes.player),
      numberArray(changes.seq),
      numberArray(changes.team),
      textArray(changes.before),
      textArray(changes.after),
      textArray(changes.terms),
      textArray(idempotency.key),
      textArray(idempotency.hash),
      numberArray(idempotency.status),
      textArray(idempotency.response),
      batch.now,
      batch.newVersion,
      numberArray(changes.lastAtBefore),
      numberArray(changes.lastAtAfter),
    ],
    // Not a prepared statement on purpose: a generic plan cannot see that `ladder = $1 AND key = ANY(...)`
    // picks a handful of rows and may scan whole tables; a custom plan per batch costs less than that.
  );
  return rows[0]?.applied === 1;
}

/** A stored match as a correction reads it. */
export interface MatchRecord {
  seq: number;
  id: string;
  at: number;
  round: string | null;
  body: Match;
  voidedAt: number | null;
}

/** The match with this id, or undefined. */
export async function findMatch(db: Queryable, ladder: string, id: string): Promise<MatchRecord | undefined> {
  const rows = await db.query<{ seq: number; id: string; at: number; round: string | null; body: Match; voided_at: number | null }>(
    'SELECT seq, id, at, round, body, voided_at FROM matches WHERE ladder = $1 AND id = $2',
    [ladder, id],
  );
  const row = rows[0];
  return row && { seq: row.seq, id: row.id, at: row.at, round: row.round, body: row.body, voidedAt: row.voided_at };
}

/** Matches after `seq` that count (not voided), in sequence order. */
export async function countingMatchesAfter(db: Queryable, ladder: string, seq: number): Promise<MatchRecord[]> {
  const rows = await db.query<{ seq: number; id: string; at: number; round: string | null; body: Match }>(
    'SELECT seq, id, at, round, body FROM matches WHERE ladder = $1 AND seq > $2 AND voided_at IS NULL ORDER BY seq',
    [ladder, seq],
  );
  return rows.map((row) => ({ ...row, voidedAt: null }));
}

/** A history row as corrections read and rewrite it. */
export interface ChangeRecord {
  player: string;
  seq: number;
  team: number;
  before: { rating: number; rd?: number; volatility?: number; matches: number };
  after: { rating: number; rd?: number; volatility?: number; matches: number };
  lastAtBefore: number | null;
  lastAtAfter: number | null;
}

/** History rows of the matches from `seq` on, grouped by sequence number. */
export async function changesFrom(db: Queryable, ladder: string, seq: number): Promise<Map<number, ChangeRecord[]>> {
  const rows = await db.query<{ player: string; seq: number; team: number; before: ChangeRecord['before']; after: ChangeRecord['after']; last_at_before: number | null; last_at_after: number | null }>(
    'SELECT player, seq, team, before, after, last_at_before, last_at_after FROM rating_changes WHERE ladder = $1 AND seq >= $2',
    [ladder, seq],
  );
  const bySeq = new Map<number, ChangeRecord[]>();
  for (const row of rows) {
    let list = bySeq.get(row.seq);
    if (!list) bySeq.set(row.seq, (list = []));
    list.push({ player: row.player, seq: row.seq, team: row.team, before: row.before, after: row.after, lastAtBefore: row.last_at_before, lastAtAfter: row.last_at_after });
  }
  return bySeq;
}

/**
 * Each player's last counted history row before `seq` (the state after it),
 * with that row's sequence number; players with none are absent. Rows written
 * before migration 4 carry no times; their `lastAtAfter` is recomputed from
 * the player's counted matches.
 */
export async function lastChangesBefore(db: Queryable, ladder: string, players: readonly string[], seq: number): Promise<Map<string, { seq: number; after: ChangeRecord['after']; lastAtAfter: number | null }>> {
  const found = new Map<string, { seq: number; after: ChangeRecord['after']; lastAtAfter: number | null }>();
  if (players.length === 0) return found;
  const rows = await db.query<{ id: string; seq: number; after: ChangeRecord['after']; last_at_after: number | null; has_times: boolean }>(
    `SELECT p.id, c.seq, c.after, c.last_at_after, c.has_times FROM unnest($2::text[]) AS p(id)
     JOIN LATERAL (
       SELECT c.seq, c.after, c.last_at_after, c.last_at_before IS NOT NULL OR c.last_at_after IS NOT NULL AS has_times
       FROM rating_changes c JOIN matches m ON m.ladder = c.ladder AND m.seq = c.seq
       WHERE c.ladder = $1 AND c.player = p.id AND c.seq < $3 AND m.voided_at IS NULL
       ORDER BY c.seq DESC LIMIT 1
     ) c ON true`,
    [ladder, players, seq],
  );
  const untimed: string[] = [];
  for (const row of rows) {
    found.set(row.id, { seq: row.seq, after: row.after, lastAtAfter: row.last_at_after });
    if (!row.has_times) untimed.push(row.id);
  }
  if (untimed.length > 0) {
    const times = await db.query<{ id: string; last_at: number | null }>(
      `SELECT c.player AS id, max(m.at) AS last_at FROM rating_changes c JOIN matches m ON m.ladder = c.ladder AND m.seq = c.seq
       WHERE c.ladder = $1 AND c.player = ANY($2::text[]) AND c.seq < $3 AND m.voided_at IS NULL GROUP BY c.player`,
      [ladder, untimed, seq],
    );
    for (const row of times) found.get(row.id)!.lastAtAfter = row.last_at;
  }
  return found;
}

export async function markVoid(tx: Queryable, ladder: string, seq: number, reason: string, now: number): Promise<void> {
  await tx.query('UPDATE matches SET voided_at = $3, void_reason = $4 WHERE ladder = $1 AND seq = $2', [ladder, seq, now, reason]);
}

export async function replaceMatchBody(tx: Queryable, ladder: string, seq: number, change: { at: number; body: string; winProbability: string }): Promise<void> {
  await tx.query('UPDATE matches SET at = $3, body = $4::json, win_probability = $5::jsonb WHERE ladder = $1 AND seq = $2', [ladder, seq, change.at, change.body, change.winProbability]);
}

/** Sets the win probabilities of re-rated matches. */
export async function updateWinProbabilities(tx: Queryable, ladder: string, seqs: readonly number[], winProbabilities: readonly string[]): Promise<void> {
  if (seqs.length === 0) return;
  await tx.query(
    `UPDATE matches SET win_probability = u.w::jsonb FROM unnest($2::int8[], $3::text[]) AS u(s, w) WHERE matches.ladder = $1 AND matches.seq = u.s`,
    [ladder, seqs, winProbabilities],
  );
}

/** Replaces the history rows of the given matches (a correction re-rated them). */
export async function replaceChanges(tx: Queryable, ladder: string, seqs: readonly number[], rows: ChangeRows): Promise<void> {
  if (seqs.length === 0) return;
  await tx.query('DELETE FROM rating_changes WHERE ladder = $1 AND seq = ANY($2::int8[])', [ladder, seqs]);
  await insertChanges(tx, ladder, rows);
}

/** The last `limit` counting (not voided) matches of a ladder, oldest first. */
export async function recentCountingMatches(db: Queryable, ladder: string, limit: number): Promise<Match[]> {
  const rows = await db.query<{ body: Match }>(
    'SELECT body FROM (SELECT seq, body FROM matches WHERE ladder = $1 AND voided_at IS NULL ORDER BY seq DESC LIMIT $2) recent ORDER BY seq',
    [ladder, limit],
  );
  return rows.map((row) => row.body);
}
