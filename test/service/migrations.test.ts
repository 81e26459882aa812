/**
 * Upgrading a database made by an earlier release: data written under
 * migrations 1–2 reads back the same after the later ones (migration 3
 * changes column types and indexes), on PostgreSQL; PGlite runs the same SQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgres, type Database } from '../../src/store/database.js';
import { MIGRATIONS, migrate } from '../../src/store/migrations.js';
import { DATABASE_URL } from './helpers.js';

const schema = `ladder_migration_test_${process.pid}`;
let db: Database;

beforeAll(async () => {
  db = await openPostgres({ url: DATABASE_URL, schema });
});

afterAll(async () => {
  await db?.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await db?.close();
});

it('keeps matches, history and players across migration 3', async () => {
  expect(await migrate(db, MIGRATIONS.filter((m) => m.version <= 2))).toEqual([1, 2]);
  await db.query(`INSERT INTO ladders (id, system, options, settings, public, created_at) VALUES ('l', 'glicko2', '{}', '{}', true, 0)`);
  const body = { teams: [{ players: [{ id: 'ann' }], rank: 1 }, { players: [{ id: 'bob' }], rank: 2 }] };
  await db.query(`INSERT INTO matches (ladder, seq, id, at, received_at, body) VALUES ('l', 1, 'm1', 5, 6, $1::jsonb)`, [JSON.stringify(body)]);
  await db.query(`INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms) VALUES ('l', 'ann', 1, 0, '{"rating":1500}', '{"rating":1662.31}', '{"score":1}')`);
  await db.query(`INSERT INTO players (ladder, id, rating, matches) VALUES ('l', 'ann', 1662.31, 1), ('l', 'anna', 1400, 1)`);

  expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version > 2).map((m) => m.version));
  const [match] = await db.query<{ body: unknown }>(`SELECT body FROM matches WHERE ladder = 'l'`);
  expect(match!.body).toEqual(body);
  const [change] = await db.query<{ before: unknown; after: unknown; terms: unknown }>(`SELECT before, after, terms FROM rating_changes`);
  expect(change).toEqual({ before: { rating: 1500 }, after: { rating: 1662.31 }, terms: { score: 1 } });
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
  expect(hot).toEqual([{ n_tup_upd: 1, n_tup_hot_upd: 1 }]);
  const indexes = await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'players' ORDER BY indexname`, [schema]);
  expect(indexes.map((r) => r.indexname)).toEqual(['players_by_id_prefix', 'players_pkey']);
});
