/**
 * SQL of the matches aggregate: the match log (the source of truth, in
 * sequence order per ladder) with each match's history: the change of
 * every player it rated, one JSON array in the match's own row, chained per
 * player (`ChangeEntry.prev`, `players.last_seq`).
 */
import type { Match } from 'ladder-core/core/match.js';
import type { Queryable } from './database.js';
import { numberArray, type PlayerStateRecord, stateColumns, textArray } from './rows.js';
import type { IdempotencyRows } from './idempotency.js';

/**
 * Matches to append, as columns (one entry per match). `body`,
 * `winProbability` and `changes` are JSON text; `changes` is the match's
 * history: an array of `ChangeEntry`, one per player it rated.
 */
export interface MatchRows {
  seq: number[];
  id: string[];
  at: number[];
  receivedAt: number[];
  round: (string | null)[];
  body: string[];
  winProbability: string[];
  changes: string[];
}

/** A player's rating values as a history entry holds them. */
export interface EntryState {
  rating: number;
  rd?: number;
  volatility?: number;
  matches: number;
}

/**
 * One player's change in a match, as stored in the match's `changes` array.
 * `prev` chains a player's entries: the sequence number of the player's
 * previous entry (null: none), newest first from `players.last_seq`.
 */
export interface ChangeEntry {
  player: string;
  team: number;
  before: EntryState;
  after: EntryState;
  terms: unknown;
  /** The player's last match time before and after this match (null: none). */
  lastAtBefore: number | null;
  lastAtAfter: number | null;
  prev: number | null;
}

export function emptyMatchRows(): MatchRows {
  return { seq: [], id: [], at: [], receivedAt: [], round: [], body: [], winProbability: [], changes: [] };
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

/** A page of a ladder's match list. */
export interface MatchPage {
  limit: number;
  /** Matches skipped (after `before`): each costs an index entry and a row visit, so callers cap it. */
  offset: number;
  /** Only matches with a sequence number below this: the keyset cursor, an index range on (ladder, seq). */
  before?: number;
}

/** Newest first: a backward range scan of the primary key (ladder, seq), from `before` when given. */
export async function listMatches(db: Queryable, ladder: string, page: MatchPage): Promise<StoredMatchRow[]> {
  return db.query<StoredMatchRow>(
    'SELECT seq, id, at, round, body, win_probability, voided_at, void_reason FROM matches WHERE ladder = $1 AND seq < $4::int8 ORDER BY seq DESC LIMIT $2 OFFSET $3',
    [ladder, page.limit, page.offset, page.before ?? Number.MAX_SAFE_INTEGER],
  );
}

/** Matches in sequence order after `afterSeq`, at most `limit` (replays page through the log). */
export async function matchesAfter(db: Queryable, ladder: string, afterSeq: number, limit: number): Promise<StoredMatchRow[]> {
  return db.query<StoredMatchRow>('SELECT seq, id, at, round, body, win_probability, voided_at, void_reason FROM matches WHERE ladder = $1 AND seq > $2 ORDER BY seq LIMIT $3', [
    ladder,
    afterSeq,
    limit,
  ]);
}

/** A page of a player's history. */
export interface HistoryPage {
  limit: number;
  /** Entries skipped (after `before`): one step of the walk each. */
  offset: number;
  /** Only entries of matches before this sequence number (the keyset cursor). */
  before?: number;
  /**
   * Most entries from `before` on the walk passes over when `before` is not
   * one of the player's entries (it then starts at the newest): past that,
   * the page is not read and `tooFarBack` is set.
   */
  maxSkipped: number;
}

/**
 * A player's history, newest first, with the match of each entry: a walk
 * back along the player's chain of entries from `players.last_seq`, one
 * primary-key lookup per entry, `offset + limit` of them. With `before`,
 * only entries of matches before that sequence number: when the player has
 * an entry in match `before` (the last one of the previous page), the walk
 * starts from its link, so the page costs what the first does; otherwise it
 * starts at the newest entry and passes over the entries from `before` on
 * without counting them, at most `maxSkipped` of them (`tooFarBack` when
 * there are more: no rows are read then).
 */
export async function historyOf(db: Queryable, ladder: string, player: string, page: HistoryPage): Promise<{ rows: HistoryRow[]; tooFarBack: boolean }> {
  const rows = await db.query<HistoryRow & { skipped: number; n: number | null }>(
    // Each step finds the player's entry in the match it reached (parsing that match's history once)
    // and carries it, with the link to the next step; n counts the entries before `before` only,
    // skipped the ones from `before` on (the walk stops once it has passed more than $6 of them).
    // The one summary row of the walk is joined to the page's rows, so the answer says how far the
    // walk skipped even when the page is empty.
    `WITH RECURSIVE origin AS (
       SELECT CASE WHEN at.found THEN at.prev ELSE p.last_seq END AS seq
       FROM players p
       LEFT JOIN LATERAL (
         SELECT true AS found, (x->>'prev')::int8 AS prev FROM matches m CROSS JOIN LATERAL json_array_elements(m.changes) x
         WHERE m.ladder = $1 AND m.seq = $5::int8 AND x->>'player' = $2 LIMIT 1
       ) at ON true
       WHERE p.ladder = $1 AND p.id = $2
     ), walk(seq, n, skipped, entry) AS (
       SELECT m.seq, CASE WHEN m.seq < $5::int8 THEN 1 ELSE 0 END, CASE WHEN m.seq < $5::int8 THEN 0 ELSE 1 END, x FROM origin o
       JOIN matches m ON m.ladder = $1 AND m.seq = o.seq
       CROSS JOIN LATERAL json_array_elements(m.changes) x
       WHERE x->>'player' = $2
       UNION ALL
       SELECT m.seq, CASE WHEN m.seq < $5::int8 THEN w.n + 1 ELSE 0 END, CASE WHEN m.seq < $5::int8 THEN w.skipped ELSE w.skipped + 1 END, x FROM walk w
       JOIN matches m ON m.ladder = $1 AND m.seq = (w.entry->>'prev')::int8
       CROSS JOIN LATERAL json_array_elements(m.changes) x
       WHERE w.n < $3::int4 + $4::int4 AND w.skipped <= $6::int4 AND x->>'player' = $2
     )
     SELECT s.skipped, r.* FROM (SELECT coalesce(max(skipped), 0)::int4 AS skipped FROM walk) s
     LEFT JOIN (
       SELECT w.n, m.seq, (w.entry->>'team')::int4 AS team, w.entry->'before' AS before, w.entry->'after' AS after, w.entry->'terms' AS terms, m.id, m.at, m.body, m.voided_at
       FROM walk w JOIN matches m ON m.ladder = $1 AND m.seq = w.seq
       WHERE w.n > $4::int4
     ) r ON true
     ORDER BY r.n`,
    [ladder, player, page.limit, page.offset, page.before ?? Number.MAX_SAFE_INTEGER, page.maxSkipped],
  );
  const tooFarBack = (rows[0]?.skipped ?? 0) > page.maxSkipped;
  return { rows: tooFarBack ? [] : rows.filter((row) => row.n !== null).map(({ skipped: _skipped, n: _n, ...row }) => row), tooFarBack };
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
    `INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability, changes)
     SELECT $1, s, i, a, r, rd, b::json, w::jsonb, c::json FROM unnest($2::int8[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::text[], $8::text[], $9::text[]) AS u(s, i, a, r, rd, b, w, c)`,
    [ladder, rows.seq, rows.id, rows.at, rows.receivedAt, rows.round, rows.body, rows.winProbability, rows.changes],
  );
}

/** A batch of plain matches for the one-statement write. */
export interface GuardedBatch {
  ladder: string;
  /** The version and next sequence number the batch was rated on, and the incarnation of the definition it was rated under. */
  expectedVersion: number;
  expectedIncarnation: number;
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
  idempotency: IdempotencyRows;
  now: number;
}

/**
 * Writes a batch of plain matches in ONE autocommit statement (one round
 * trip carries the commit too). Its first part sets the ladder's `version`
 * to `newVersion` only if it still holds `expectedVersion` and
 * `expectedIncarnation` (not a ladder created anew under the id) and none of the
 * batch's Idempotency-Keys or match ids is stored; every insert depends on
 * that update, so either all of it is written or none. Resolves to whether
 * it was written.
 */
export async function writeGuardedBatch(db: Queryable, batch: GuardedBatch): Promise<boolean> {
  const players = stateColumns(batch.players);
  const { matches, idempotency } = batch;
  const rows = await db.query<{ applied: number }>(
    `WITH fresh AS (
       SELECT NOT EXISTS (SELECT 1 FROM idempotency WHERE ladder = $1 AND key = ANY($7::text[]))
          AND NOT EXISTS (SELECT 1 FROM matches WHERE ladder = $1 AND id = ANY($8::text[])) AS ok
     ), l AS (
       -- No version test in WHERE: that would be checked against this statement's snapshot, which
       -- predates the commit of the batch sent before this one. SET expressions are evaluated on the
       -- newest row version once its lock is ours (READ COMMITTED re-check), so the test goes there.
       UPDATE ladders SET
         version = CASE WHEN version = $2 AND next_seq = $3 AND incarnation = $29 AND fresh.ok THEN $28 ELSE version END,
         next_seq = CASE WHEN version = $2 AND next_seq = $3 AND incarnation = $29 AND fresh.ok THEN $4 ELSE next_seq END,
         match_count = CASE WHEN version = $2 AND next_seq = $3 AND incarnation = $29 AND fresh.ok THEN match_count + $5 ELSE match_count END,
         player_count = CASE WHEN version = $2 AND next_seq = $3 AND incarnation = $29 AND fresh.ok THEN player_count + $6 ELSE player_count END
       FROM fresh WHERE id = $1
       RETURNING version = $28 AS applied
     ), m AS (
       INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability, changes)
       SELECT $1, s, i, a, r, NULL, b::json, w::jsonb, c::json FROM unnest($9::int8[], $10::text[], $11::int8[], $12::int8[], $13::text[], $14::text[], $15::text[]) AS u(s, i, a, r, b, w, c)
       WHERE EXISTS (SELECT 1 FROM l WHERE applied)
     ), p AS (
       INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at, last_seq, contexts)
       SELECT $1, i, r, d, v, n, t, q, x::json FROM unnest($16::text[], $17::float8[], $18::float8[], $19::float8[], $20::int4[], $21::int8[], $22::int8[], $30::text[]) AS u(i, r, d, v, n, t, q, x)
       WHERE EXISTS (SELECT 1 FROM l WHERE applied)
       ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at,
         last_seq = COALESCE(excluded.last_seq, players.last_seq), contexts = excluded.contexts
     ), k AS (
       INSERT INTO idempotency (ladder, key, request_hash, status, response, created_at)
       SELECT $1, k, h, s, r, $27 FROM unnest($23::text[], $24::text[], $25::int4[], $26::text[]) AS u(k, h, s, r)
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
      textArray(matches.changes),
      textArray(players.id),
      numberArray(players.rating),
      numberArray(players.rd),
      numberArray(players.volatility),
      numberArray(players.matches),
      numberArray(players.lastAt),
      numberArray(players.lastSeq),
      textArray(idempotency.key),
      textArray(idempotency.hash),
      numberArray(idempotency.status),
      textArray(idempotency.response),
      batch.now,
      batch.newVersion,
      batch.expectedIncarnation,
      textArray(players.contexts),
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

/** A history entry with the sequence number of its match, as corrections read it. */
export interface ChangeRecord extends ChangeEntry {
  seq: number;
}

/**
 * Each player's last counted history entry before `seq` (the state after
 * it), with that entry's sequence number; players with none are absent. A
 * walk back along each player's chain from `players.last_seq`, past the
 * entries from `seq` on and those of voided matches. Each statement takes
 * at most `steps` steps of every walk and the next one carries on from
 * there: a player in every match of a long ladder has a chain as long as
 * the ladder, and one statement walking all of it would hold the database
 * (on PGlite, the process's thread) for seconds.
 */
export async function lastChangesBefore(
  db: Queryable,
  ladder: string,
  players: readonly string[],
  seq: number,
  steps = 1000,
  between: () => Promise<void> = async () => {},
): Promise<Map<string, { seq: number; after: EntryState; lastAtAfter: number | null }>> {
  const found = new Map<string, { seq: number; after: EntryState; lastAtAfter: number | null }>();
  if (players.length === 0) return found;
  const starts = await db.query<{ id: string; last_seq: number }>('SELECT id, last_seq FROM players WHERE ladder = $1 AND id = ANY($2::text[]) AND last_seq IS NOT NULL', [
    ladder,
    players,
  ]);
  let frontier = starts.map((row) => ({ id: row.id, seq: row.last_seq }));
  while (frontier.length > 0) {
    await between();
    const rows = await db.query<{ id: string; seq: number; depth: number; found: boolean; after: EntryState | null; last_at_after: number | null }>(
      // `found`: the walk reached a counted entry before $3; else a row at depth $5 is where the next statement starts.
      `WITH RECURSIVE walk(id, seq, depth) AS (
         SELECT id, s, 0 FROM unnest($2::text[], $4::int8[]) AS u(id, s)
         UNION ALL
         SELECT w.id, (x->>'prev')::int8, w.depth + 1 FROM walk w
         JOIN matches m ON m.ladder = $1 AND m.seq = w.seq
         CROSS JOIN LATERAL json_array_elements(m.changes) x
         WHERE w.depth < $5 AND (m.seq >= $3 OR m.voided_at IS NOT NULL) AND x->>'player' = w.id AND x->>'prev' IS NOT NULL
       )
       SELECT w.id, w.seq, w.depth, (m.seq < $3 AND m.voided_at IS NULL) AS found,
         CASE WHEN m.seq < $3 AND m.voided_at IS NULL THEN x->'after' END AS after,
         CASE WHEN m.seq < $3 AND m.voided_at IS NULL THEN (x->>'lastAtAfter')::int8 END AS last_at_after
       FROM walk w JOIN matches m ON m.ladder = $1 AND m.seq = w.seq
       CROSS JOIN LATERAL json_array_elements(m.changes) x
       WHERE x->>'player' = w.id AND ((m.seq < $3 AND m.voided_at IS NULL) OR w.depth = $5)`,
      [ladder, frontier.map((f) => f.id), seq, frontier.map((f) => f.seq), steps],
    );
    const next: Array<{ id: string; seq: number }> = [];
    for (const row of rows) {
      if (row.found) found.set(row.id, { seq: row.seq, after: row.after!, lastAtAfter: row.last_at_after });
      else next.push({ id: row.id, seq: row.seq });
    }
    frontier = next;
  }
  return found;
}

export async function markVoid(tx: Queryable, ladder: string, seq: number, reason: string, now: number): Promise<void> {
  await tx.query('UPDATE matches SET voided_at = $3, void_reason = $4 WHERE ladder = $1 AND seq = $2', [ladder, seq, now, reason]);
}

export async function replaceMatchBody(tx: Queryable, ladder: string, seq: number, change: { at: number; body: string; winProbability: string }): Promise<void> {
  await tx.query('UPDATE matches SET at = $3, body = $4::json, win_probability = $5::jsonb WHERE ladder = $1 AND seq = $2', [
    ladder,
    seq,
    change.at,
    change.body,
    change.winProbability,
  ]);
}

/** A stored match as a correction pages through the log: its body as JSON text (parsed only when it is rated again) and its history. */
export interface LogRow {
  seq: number;
  voided: boolean;
  body: string;
  changes: ChangeEntry[] | null;
}

/**
 * The log after `afterSeq`, voided matches included, at most `limit`
 * matches in sequence order: a correction reads it page by page (keyset on
 * seq), so it never holds more than one page.
 */
export async function logPage(db: Queryable, ladder: string, afterSeq: number, limit: number): Promise<LogRow[]> {
  return db.query<LogRow>('SELECT seq, voided_at IS NOT NULL AS voided, body::text AS body, changes FROM matches WHERE ladder = $1 AND seq > $2 ORDER BY seq LIMIT $3', [
    ladder,
    afterSeq,
    limit,
  ]);
}

/**
 * Rewrites the history (`changes`, JSON text) of the given matches and,
 * where `winProbability` is not null, their win probabilities: one page of
 * a correction's work in one statement.
 */
export async function rewriteHistory(
  tx: Queryable,
  ladder: string,
  rows: { seq: readonly number[]; changes: readonly string[]; winProbability: readonly (string | null)[] },
): Promise<void> {
  if (rows.seq.length === 0) return;
  await tx.query(
    `UPDATE matches SET changes = u.c::json, win_probability = COALESCE(u.w::jsonb, matches.win_probability)
     FROM unnest($2::int8[], $3::text[], $4::text[]) AS u(s, c, w) WHERE matches.ladder = $1 AND matches.seq = u.s`,
    [ladder, numberArray(rows.seq), textArray(rows.changes), textArray(rows.winProbability)],
  );
}

/**
 * Each player's newest history entry before `seq`, a voided match's
 * included (the link a chain needs), by a walk back along the player's
 * chain from `players.last_seq`; players with none are absent.
 */
export async function lastEntriesBefore(db: Queryable, ladder: string, players: readonly string[], seq: number): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (players.length === 0) return found;
  const rows = await db.query<{ id: string; seq: number }>(
    `WITH RECURSIVE walk(id, seq) AS (
       SELECT id, last_seq FROM players WHERE ladder = $1 AND id = ANY($2::text[]) AND last_seq IS NOT NULL
       UNION ALL
       SELECT w.id, (x->>'prev')::int8 FROM walk w
       JOIN matches m ON m.ladder = $1 AND m.seq = w.seq
       CROSS JOIN LATERAL json_array_elements(m.changes) x
       WHERE m.seq >= $3 AND x->>'player' = w.id AND x->>'prev' IS NOT NULL
     )
     SELECT id, seq FROM walk WHERE seq < $3`,
    [ladder, players, seq],
  );
  for (const row of rows) found.set(row.id, row.seq);
  return found;
}

/** Sets `players.last_seq` (null: no history entry left) of the rows that exist. */
export async function setLastSeqs(tx: Queryable, ladder: string, ids: readonly string[], seqs: readonly (number | null)[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query('UPDATE players SET last_seq = u.q FROM unnest($2::text[], $3::int8[]) AS u(i, q) WHERE players.ladder = $1 AND players.id = u.i', [ladder, ids, seqs]);
}

/** The last `limit` counting (not voided) matches of a ladder, oldest first. */
export async function recentCountingMatches(db: Queryable, ladder: string, limit: number): Promise<Match[]> {
  const rows = await db.query<{ body: Match }>(
    'SELECT body FROM (SELECT seq, body FROM matches WHERE ladder = $1 AND voided_at IS NULL ORDER BY seq DESC LIMIT $2) recent ORDER BY seq',
    [ladder, limit],
  );
  return rows.map((row) => row.body);
}

/**
 * The same matches as one JSON array text, each body as stored: the
 * integrity report parses it in a worker thread, so the event loop never
 * parses or copies 200,000 objects.
 */
export async function recentCountingMatchesJson(db: Queryable, ladder: string, limit: number): Promise<string> {
  const rows = await db.query<{ body: string }>(
    'SELECT body::text AS body FROM (SELECT seq, body FROM matches WHERE ladder = $1 AND voided_at IS NULL ORDER BY seq DESC LIMIT $2) recent ORDER BY seq',
    [ladder, limit],
  );
  return `[${rows.map((row) => row.body).join(',')}]`;
}
