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
}

export function emptyMatchRows(): MatchRows {
  return { seq: [], id: [], at: [], receivedAt: [], round: [], body: [], winProbability: [] };
}

export function emptyChangeRows(): ChangeRows {
  return { player: [], seq: [], team: [], before: [], after: [], terms: [] };
}

export interface StoredMatchRow {
  seq: number;
  id: string;
  at: number;
  round: string | null;
  body: Match;
  win_probability: number[] | null;
}

export interface HistoryRow {
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
  return db.query<StoredMatchRow>('SELECT seq, id, at, round, body, win_probability FROM matches WHERE ladder = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3', [ladder, limit, offset]);
}

/** Matches in sequence order after `afterSeq`, at most `limit` (replays page through the log). */
export async function matchesAfter(db: Queryable, ladder: string, afterSeq: number, limit: number): Promise<StoredMatchRow[]> {
  return db.query<StoredMatchRow>('SELECT seq, id, at, round, body, win_probability FROM matches WHERE ladder = $1 AND seq > $2 ORDER BY seq LIMIT $3', [ladder, afterSeq, limit]);
}

/** A player's history, newest first, with the match of each row. */
export async function historyOf(db: Queryable, ladder: string, player: string, limit: number, offset: number): Promise<HistoryRow[]> {
  return db.query<HistoryRow>(
    `SELECT c.seq, c.team, c.before, c.after, c.terms, m.id, m.at, m.body FROM rating_changes c JOIN matches m ON m.ladder = c.ladder AND m.seq = c.seq
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
    `INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms)
     SELECT $1, p, s, t, b::json, a::json, x::json FROM unnest($2::text[], $3::int8[], $4::int4[], $5::text[], $6::text[], $7::text[]) AS u(p, s, t, b, a, x)`,
    [ladder, rows.player, rows.seq, rows.team, rows.before, rows.after, rows.terms],
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
       INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms)
       SELECT $1, p, s, t, b::json, a::json, x::json FROM unnest($21::text[], $22::int8[], $23::int4[], $24::text[], $25::text[], $26::text[]) AS u(p, s, t, b, a, x)
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
    ],
    // Not a prepared statement on purpose: a generic plan cannot see that `ladder = $1 AND key = ANY(...)`
    // picks a handful of rows and may scan whole tables; a custom plan per batch costs less than that.
  );
  return rows[0]?.applied === 1;
}
