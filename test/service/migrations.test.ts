/**
 * Upgrading a database made by an earlier release: data written under
 * migrations 1–2 reads back the same after the later ones (migration 3
 * changes column types and indexes; migration 6 moves the history rows into
 * their matches, chained per player), on PostgreSQL; PGlite runs the same SQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/store/database.js';
import { MIGRATIONS, migrate } from '../../src/store/migrations.js';
import { historyOf, lastChangesBefore } from '../../src/store/matches.js';
import { DATABASE_URL, uniqueName } from './helpers.js';

const schema = uniqueName('ladder_migration_test');
let db: Database;

beforeAll(async () => {
  db = await openPostgres({ url: DATABASE_URL, schema });
});

afterAll(async () => {
  await db?.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await db?.close();
});

it('keeps matches, history and players across migrations 3 to 6', async () => {
  expect(
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 2),
    ),
  ).toEqual([1, 2]);
  await db.query(`INSERT INTO ladders (id, system, options, settings, public, created_at) VALUES ('l', 'glicko2', '{}', '{}', true, 0)`);
  const body = {
    teams: [
      { players: [{ id: 'ann' }], rank: 1 },
      { players: [{ id: 'bob' }], rank: 2 },
    ],
  };
  await db.query(`INSERT INTO matches (ladder, seq, id, at, received_at, body) VALUES ('l', 1, 'm1', 5, 6, $1::jsonb)`, [JSON.stringify(body)]);
  await db.query(`INSERT INTO matches (ladder, seq, id, at, received_at, body) VALUES ('l', 2, 'm2', 9, 9, $1::jsonb), ('l', 3, 'm3', 7, 10, $1::jsonb)`, [JSON.stringify(body)]);
  await db.query(`INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms) VALUES ('l', 'ann', 1, 0, '{"rating":1500}', '{"rating":1662.31}', '{"score":1}')`);
  await db.query(`INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms) VALUES
    ('l', 'bob', 1, 1, '{"rating":1500}', '{"rating":1337.69}', '{"score":0}'),
    ('l', 'ann', 2, 0, '{"rating":1662.31}', '{"rating":1700}', '{}'), ('l', 'bob', 2, 1, '{"rating":1337.69}', '{"rating":1300}', '{}'),
    ('l', 'ann', 3, 0, '{"rating":1700}', '{"rating":1720}', '{}'), ('l', 'bob', 3, 1, '{"rating":1300}', '{"rating":1280}', '{}')`);
  await db.query(`INSERT INTO players (ladder, id, rating, matches) VALUES ('l', 'ann', 1720, 3), ('l', 'anna', 1400, 1), ('l', 'bob', 1280, 3)`);

  expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version > 2).map((m) => m.version));
  const [match] = await db.query<{ body: unknown }>(`SELECT body FROM matches WHERE ladder = 'l'`);
  expect(match!.body).toEqual(body);
  // Migration 6: each match's history in its row, in team order, with the times the rows lacked
  // (the last match time before and after, which only moves forward: m3 at 7 follows m2 at 9), chained per player.
  const [first] = await db.query<{ changes: unknown }>(`SELECT changes FROM matches WHERE ladder = 'l' AND seq = 1`);
  expect(first!.changes).toEqual([
    { player: 'ann', team: 0, before: { rating: 1500 }, after: { rating: 1662.31 }, terms: { score: 1 }, lastAtBefore: null, lastAtAfter: 5, prev: null },
    { player: 'bob', team: 1, before: { rating: 1500 }, after: { rating: 1337.69 }, terms: { score: 0 }, lastAtBefore: null, lastAtAfter: 5, prev: null },
  ]);
  const [third] = await db.query<{ changes: Array<{ lastAtBefore: number; lastAtAfter: number; prev: number }> }>(`SELECT changes FROM matches WHERE ladder = 'l' AND seq = 3`);
  expect(third!.changes.map((e) => [e.lastAtBefore, e.lastAtAfter, e.prev])).toEqual([
    [9, 9, 2],
    [9, 9, 2],
  ]);
  const lastSeqs = await db.query<{ id: string; last_seq: number | null }>(`SELECT id, last_seq::int4 FROM players WHERE ladder = 'l' ORDER BY id`);
  expect(lastSeqs).toEqual([
    { id: 'ann', last_seq: 3 },
    { id: 'anna', last_seq: null },
    { id: 'bob', last_seq: 3 },
  ]);
  const history = (await historyOf(db, 'l', 'ann', { limit: 2, offset: 1, maxSkipped: 1000 })).rows;
  expect(history.map((row) => [Number(row.seq), row.id, row.after])).toEqual([
    [2, 'm2', { rating: 1700 }],
    [1, 'm1', { rating: 1662.31 }],
  ]);
  const before = await lastChangesBefore(db, 'l', ['ann', 'bob', 'anna'], 3);
  expect([...before].map(([id, last]) => [id, Number(last.seq), last.after.rating, Number(last.lastAtAfter)]).sort()).toEqual([
    ['ann', 2, 1700, 9],
    ['bob', 2, 1300, 9],
  ]);
  expect((await db.query<{ n: number }>(`SELECT count(*)::int4 AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'rating_changes'`, [schema]))[0]!.n).toBe(0);
  const found = await db.query<{ id: string }>(`SELECT id FROM players WHERE ladder = 'l' AND id LIKE 'ann%' ORDER BY rating DESC`);
  expect(found.map((r) => r.id)).toEqual(['ann', 'anna']);
  // A rating update now touches no index: the row is rewritten in its page (a HOT update).
  const hot = await db.transaction(async (tx) => {
    await tx.query(`UPDATE players SET rating = 1700 WHERE ladder = 'l' AND id = 'ann'`);
    return tx.query<{ n_tup_upd: number; n_tup_hot_upd: number }>(
      `SELECT n_tup_upd::int4, n_tup_hot_upd::int4 FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname = 'players'`,
      [schema],
    );
  });
  // (The counts may include the migration's own updates of last_seq, not yet flushed from this session: all HOT too.)
  expect(hot[0]!.n_tup_upd).toBeGreaterThanOrEqual(1);
  expect(hot[0]!.n_tup_hot_upd).toBe(hot[0]!.n_tup_upd);
  const indexes = await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'players' ORDER BY indexname`, [schema]);
  expect(indexes.map((r) => r.indexname)).toEqual(['players_by_id_prefix', 'players_pkey']);
});
