/**
 * Versioned schema migrations, applied in order on start. Each runs once, in
 * its own transaction, recorded in `schema_migrations`; an advisory lock,
 * taken before anything is created (the schema, in database.ts, and the
 * migrations table), keeps two instances starting together from racing. Never edit a shipped
 * migration: add the next number.
 */
import { LadderError } from 'ladder-core/core/errors.js';
import { type Database, MIGRATION_LOCK } from './database.js';
import { DatabaseRejectedError, DatabaseUnavailableError } from './database-errors.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'ladders, matches, players, history, idempotency, keys, rounds',
    sql: `
CREATE TABLE ladders (
  id text PRIMARY KEY,
  system text NOT NULL,
  options jsonb NOT NULL,
  settings jsonb NOT NULL,
  public boolean NOT NULL DEFAULT false,
  created_at int8 NOT NULL,
  next_seq int8 NOT NULL DEFAULT 1,
  match_count int8 NOT NULL DEFAULT 0,
  player_count int8 NOT NULL DEFAULT 0,
  round_count int8 NOT NULL DEFAULT 0
);
-- Matches are the source of truth: every player state is a replay of them in seq order.
CREATE TABLE matches (
  ladder text NOT NULL,
  seq int8 NOT NULL,
  id text NOT NULL,
  at int8 NOT NULL,
  received_at int8 NOT NULL,
  round text,
  body jsonb NOT NULL,
  win_probability jsonb,
  PRIMARY KEY (ladder, seq),
  UNIQUE (ladder, id)
);
CREATE TABLE players (
  ladder text NOT NULL,
  id text NOT NULL,
  rating float8 NOT NULL,
  rd float8,
  volatility float8,
  matches int4 NOT NULL,
  last_at int8,
  PRIMARY KEY (ladder, id)
);
CREATE INDEX players_by_rating ON players (ladder, rating DESC, id);
CREATE TABLE rating_changes (
  ladder text NOT NULL,
  player text NOT NULL,
  seq int8 NOT NULL,
  team int4 NOT NULL,
  before jsonb NOT NULL,
  after jsonb NOT NULL,
  terms jsonb NOT NULL,
  PRIMARY KEY (ladder, player, seq)
);
CREATE TABLE idempotency (
  ladder text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status int4 NOT NULL,
  -- The answer as sent, byte for byte, so a repeat gets the same body.
  response text NOT NULL,
  created_at int8 NOT NULL,
  PRIMARY KEY (ladder, key)
);
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  hash text NOT NULL UNIQUE,
  name text NOT NULL,
  scopes text[] NOT NULL,
  created_at int8 NOT NULL,
  revoked_at int8
);
CREATE TABLE rounds (
  ladder text NOT NULL,
  number int8 NOT NULL,
  name text NOT NULL,
  at int8 NOT NULL,
  first_seq int8 NOT NULL,
  last_seq int8 NOT NULL,
  summary jsonb NOT NULL,
  PRIMARY KEY (ladder, number),
  UNIQUE (ladder, name)
);`,
  },
  {
    version: 2,
    name: 'ladders.version: bumped by every write of a ladder, validates cached player states',
    sql: `
-- Every transaction that changes a ladder's players, matches or idempotency
-- rows adds one (the writer, rebuild --fix). A process that cached the
-- ladder's player states at version v may trust them while version is still v.
ALTER TABLE ladders ADD COLUMN version int8 NOT NULL DEFAULT 0;`,
  },
  {
    version: 3,
    name: 'cheaper writes: player rows updated in place (no rating index), id-prefix index, rows inline up to a page, history and bodies as json',
    sql: `
-- A rating update is the hottest write there is (12 rows for a 6v6 match).
-- With no index on rating, PostgreSQL can rewrite a player row within its page
-- (a heap-only tuple update) without touching any index; free space left on
-- each page (fillfactor) is what makes that possible. The leaderboard order
-- lives in the rankings (in process or Redis), never in this index; the only
-- query that ordered by it was the id-prefix search, which gets an index on
-- id that rating updates never touch. Measured: about 20 % more 6v6 matches/s.
-- Rows up to a page (a 6v6 answer is ~2 KB) stay inline and uncompressed
-- rather than being compressed from 2 KB on: a few % less PostgreSQL CPU.
-- History values and match bodies are written once per player per match and
-- only ever read back whole, never queried into: json keeps the text as
-- written instead of converting it to jsonb's binary form (about 10 % less
-- PostgreSQL CPU per 6v6 match). Changing the type rewrites both tables once.
DROP INDEX players_by_rating;
CREATE INDEX players_by_id_prefix ON players (ladder, id text_pattern_ops);
ALTER TABLE players SET (fillfactor = 70);
ALTER TABLE idempotency SET (toast_tuple_target = 8160);
ALTER TABLE rating_changes SET (toast_tuple_target = 8160);
ALTER TABLE matches SET (toast_tuple_target = 8160);
ALTER TABLE rating_changes ALTER COLUMN before TYPE json, ALTER COLUMN after TYPE json, ALTER COLUMN terms TYPE json;
ALTER TABLE matches ALTER COLUMN body TYPE json;`,
  },
  {
    version: 4,
    name: 'voided matches, each history row with the times of the last match before and after it, seasons with frozen standings',
    sql: `
-- A voided match stays in the log (and in history, marked) but never counts.
ALTER TABLE matches ADD COLUMN voided_at int8, ADD COLUMN void_reason text;
-- With these, a player's whole state before any match is in one history row,
-- so a correction re-rates from that point without replaying the ladder.
ALTER TABLE rating_changes ADD COLUMN last_at_before int8, ADD COLUMN last_at_after int8;
-- Season n holds the matches from first_seq until the next season's first_seq.
CREATE TABLE seasons (
  ladder text NOT NULL,
  number int4 NOT NULL,
  name text NOT NULL,
  started_at int8 NOT NULL,
  first_seq int8 NOT NULL,
  closed_at int8,
  -- The soft reset applied when this season opened (null for the first).
  reset json,
  PRIMARY KEY (ladder, number),
  UNIQUE (ladder, name)
);
-- A closed season's final standings, frozen when it closed.
CREATE TABLE season_standings (
  ladder text NOT NULL,
  season int4 NOT NULL,
  position int4 NOT NULL,
  id text NOT NULL,
  rank int4,
  rating float8 NOT NULL,
  rd float8,
  percentile int4,
  division text,
  matches int4 NOT NULL,
  PRIMARY KEY (ladder, season, id)
);
CREATE INDEX season_standings_order ON season_standings (ladder, season, position);`,
  },
  {
    version: 5,
    name: 'ladders.log_epoch: changes when the match log is rewritten before its end, or the ladder is created anew',
    sql: `
-- A writer that keeps a whole-history ladder's history in memory (derived
-- from the log in seq order) may bring it up to date by adding the matches
-- after the last one it took in, as long as log_epoch is what it was: a void
-- or a correction (which rewrites the log before its end) and a ladder
-- created anew under the same id give it a new random value.
ALTER TABLE ladders ADD COLUMN log_epoch int8 NOT NULL DEFAULT 0;`,
  },
  {
    version: 6,
    name: "history in the match row: one JSON array of the players' changes per match, chained per player through players.last_seq",
    sql: `
-- A 6v6 match wrote twelve history rows, each with its own index entry: a
-- third of PostgreSQL's work per match. The history now lives in the match's
-- own row (matches.changes, one JSON array entry per rated player), and each
-- entry names the player's previous entry ("prev", a sequence number), so a
-- player's history is a walk back from players.last_seq, one primary-key
-- lookup per entry, with no index of its own to maintain.
ALTER TABLE matches ADD COLUMN changes json;
ALTER TABLE players ADD COLUMN last_seq int8;
-- Rows written before migration 4 carry no times: they are filled in here
-- (the last counted match time before and after each row), so every entry has them.
WITH timed AS (
  SELECT c.ladder, c.player, c.seq,
    max(CASE WHEN m.voided_at IS NULL THEN m.at END) OVER (PARTITION BY c.ladder, c.player ORDER BY c.seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_at,
    max(CASE WHEN m.voided_at IS NULL THEN m.at END) OVER (PARTITION BY c.ladder, c.player ORDER BY c.seq ROWS UNBOUNDED PRECEDING) AS after_at
  FROM rating_changes c JOIN matches m ON m.ladder = c.ladder AND m.seq = c.seq
)
UPDATE rating_changes c SET last_at_before = t.before_at, last_at_after = t.after_at
FROM timed t WHERE c.ladder = t.ladder AND c.player = t.player AND c.seq = t.seq AND c.last_at_before IS NULL AND c.last_at_after IS NULL;
WITH linked AS (
  SELECT ladder, seq, team, ctid AS row_id, json_build_object(
    'player', player, 'team', team, 'before', before, 'after', after, 'terms', terms,
    'lastAtBefore', last_at_before, 'lastAtAfter', last_at_after,
    'prev', lag(seq) OVER (PARTITION BY ladder, player ORDER BY seq)) AS entry
  FROM rating_changes
)
UPDATE matches m SET changes = g.changes
FROM (SELECT ladder, seq, json_agg(entry ORDER BY team, row_id) AS changes FROM linked GROUP BY ladder, seq) g
WHERE m.ladder = g.ladder AND m.seq = g.seq;
UPDATE players p SET last_seq = l.seq
FROM (SELECT ladder, player, max(seq) AS seq FROM rating_changes GROUP BY ladder, player) l
WHERE p.ladder = l.ladder AND p.id = l.player;
DROP TABLE rating_changes;`,
  },
  {
    version: 7,
    name: 'ladders.incarnation: a number no earlier row of any id had, so a ladder created anew under an old id is told apart',
    sql: `
-- A ladder deleted and created again under the same id is another ladder. An
-- instance that still has the old definition cached must not rate the new
-- one's matches with it: every write compares the incarnation of the
-- definition it rates under with the row's, and reloads on a difference.
CREATE SEQUENCE ladder_incarnations;
ALTER TABLE ladders ADD COLUMN incarnation int8 NOT NULL DEFAULT nextval('ladder_incarnations');`,
  },
  {
    version: 8,
    name: 'api keys limited to named ladders',
    sql: `
-- NULL: the key may act on every ladder; else only on the ladders listed.
ALTER TABLE api_keys ADD COLUMN ladders text[];`,
  },
  {
    version: 9,
    name: 'ladders.corrections: counts the rewrites of stored states that move no sequence number (voids, corrections, season resets)',
    sql: `
-- A shared leaderboard (Redis) catches up by sequence number; a void or a
-- correction rewrites states without moving it, so the leaderboard keeps the
-- count it was loaded at and reloads the ladder when this one differs.
ALTER TABLE ladders ADD COLUMN corrections int8 NOT NULL DEFAULT 0;`,
  },
  {
    version: 10,
    name: 'phased corrections: a journal per ladder under correction, its staged writes, and the flag writers check',
    sql: `
-- A phased correction (the default on PGlite, which has one connection) never
-- holds a transaction for long: it computes the corrected history from the
-- untouched log and stages every write (phase compute), then copies the staged
-- writes into place a step at a time (phase apply), recording in the journal
-- how many it applied in the same transaction as each step. While the journal
-- row exists the ladder's flag is set and its writers are refused (503).
ALTER TABLE ladders ADD COLUMN correcting boolean NOT NULL DEFAULT false;
CREATE TABLE pending_corrections (
  ladder text PRIMARY KEY,
  -- 'compute' (staging; restarted from scratch after a crash) or 'apply' (resumed after a crash).
  phase text NOT NULL,
  match_id text NOT NULL,
  correction json NOT NULL,
  at int8 NOT NULL,
  -- Who runs it: every step checks it, so a correction taken over by another run stops.
  token int8 NOT NULL,
  applied int4 NOT NULL DEFAULT 0,
  started_at int8 NOT NULL
);
CREATE TABLE correction_steps (
  ladder text NOT NULL,
  n int4 NOT NULL,
  step json NOT NULL,
  PRIMARY KEY (ladder, n)
);`,
  },
  {
    version: 11,
    name: "players.contexts: a player's per-context offsets (systems with the option on), NULL when they have none",
    sql: `
-- Skill in a context (a map, a mode, a level) is the rating plus the player's
-- offset for it. The offsets are written whole with the rating and read back
-- whole, never queried into: json, as the match bodies. NULL for every player
-- of a ladder whose system has the option off.
ALTER TABLE players ADD COLUMN contexts json;`,
  },
  {
    version: 12,
    name: "frozen_priors: a whole-history ladder's last freeze (a horizon's priors), so a start derives only the matches after it",
    sql: `
-- A whole history with a horizon freezes its past into one prior per player
-- every horizon/4 periods; its state is then a function of those priors and
-- the matches of days after the freeze. One row per ladder, replaced at each
-- freeze in the transaction of the match whose day made it. A start restores
-- the priors and reads the log from from_seq on: before trigger_seq a match
-- of a day on or before the freeze is part of the priors, from trigger_seq on
-- every match counts. The row holds only under the log epoch and the
-- system's options it was made with; otherwise the whole log is derived.
-- The priors are one json value (the players' ids, means, variances,
-- matches and last match times as parallel arrays), never queried into: for
-- 20,000 players it writes in 70-120 ms against 130-300 ms as 20,000 rows,
-- and reads in 13-18 ms against 45-200 ms.
CREATE TABLE frozen_priors (
  ladder text PRIMARY KEY,
  log_epoch int8 NOT NULL,
  options json NOT NULL,
  day float8 NOT NULL,
  from_seq int8 NOT NULL,
  trigger_seq int8 NOT NULL,
  players int4 NOT NULL,
  priors json NOT NULL,
  written_at int8 NOT NULL
);`,
  },
];

/** A migration (or the migrations table, `version` 0) could not be applied; `cause` is the classified database error. */
export class MigrationFailedError extends LadderError {
  override name = 'MigrationFailedError';
  constructor(
    readonly version: number,
    readonly sqlState: string | undefined,
    options: { cause: unknown },
  ) {
    super(`${version === 0 ? 'creating the migrations table' : `migration ${version}`} failed${sqlState ? ` (SQLSTATE ${sqlState})` : ''}`, options);
  }
}

async function step<T>(version: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const sqlState = error instanceof DatabaseRejectedError || error instanceof DatabaseUnavailableError ? error.sqlState : undefined;
    throw new MigrationFailedError(version, sqlState, { cause: error });
  }
}

/** Applies every migration not yet recorded; returns the versions applied now. */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  // The lock comes first, even before the table: concurrent CREATE TABLE IF NOT EXISTS is not safe in PostgreSQL (23505 or 42P07).
  await step(0, () =>
    db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version int4 PRIMARY KEY, name text NOT NULL, applied_at int8 NOT NULL)`);
    }),
  );
  const applied: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const done = await step(migration.version, () =>
      db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        const rows = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
        if (rows.length > 0) return false;
        await tx.exec(migration.sql);
        await tx.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, Date.now()]);
        return true;
      }),
    );
    if (done) applied.push(migration.version);
  }
  return applied;
}
