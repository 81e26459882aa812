/** SQL of the seasons aggregate: each season's span of the match log, its reset, and the frozen final standings of closed seasons. */
import type { Queryable } from './database.js';

export interface SeasonRow {
  number: number;
  name: string;
  startedAt: number;
  firstSeq: number;
  closedAt: number | null;
  reset: unknown;
}

export interface FrozenStanding {
  position: number;
  id: string;
  rank: number | null;
  rating: number;
  rd: number | null;
  percentile: number | null;
  division: string | null;
  matches: number;
}

export async function listSeasons(db: Queryable, ladder: string): Promise<SeasonRow[]> {
  const rows = await db.query<{ number: number; name: string; started_at: number; first_seq: number; closed_at: number | null; reset: unknown }>(
    'SELECT number, name, started_at, first_seq, closed_at, reset FROM seasons WHERE ladder = $1 ORDER BY number',
    [ladder],
  );
  return rows.map((r) => ({ number: r.number, name: r.name, startedAt: r.started_at, firstSeq: r.first_seq, closedAt: r.closed_at, reset: r.reset }));
}

/** Inserts a season; false when its name is taken in the ladder. */
export async function insertSeason(tx: Queryable, ladder: string, season: SeasonRow): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO seasons (ladder, number, name, started_at, first_seq, closed_at, reset) VALUES ($1, $2, $3, $4, $5, $6, $7::json)
     ON CONFLICT DO NOTHING RETURNING number`,
    [ladder, season.number, season.name, season.startedAt, season.firstSeq, season.closedAt, season.reset === null ? null : JSON.stringify(season.reset)],
  );
  return rows.length > 0;
}

export async function closeSeason(tx: Queryable, ladder: string, number: number, closedAt: number): Promise<void> {
  await tx.query('UPDATE seasons SET closed_at = $3 WHERE ladder = $1 AND number = $2', [ladder, number, closedAt]);
}

export async function insertStandings(tx: Queryable, ladder: string, season: number, rows: readonly FrozenStanding[]): Promise<void> {
  for (let start = 0; start < rows.length; start += 10_000) {
    const chunk = rows.slice(start, start + 10_000);
    await tx.query(
      `INSERT INTO season_standings (ladder, season, position, id, rank, rating, rd, percentile, division, matches)
       SELECT $1, $2, p, i, r, g, d, c, v, m FROM unnest($3::int4[], $4::text[], $5::int4[], $6::float8[], $7::float8[], $8::int4[], $9::text[], $10::int4[]) AS u(p, i, r, g, d, c, v, m)`,
      [
        ladder,
        season,
        chunk.map((r) => r.position),
        chunk.map((r) => r.id),
        chunk.map((r) => r.rank),
        chunk.map((r) => r.rating),
        chunk.map((r) => r.rd),
        chunk.map((r) => r.percentile),
        chunk.map((r) => r.division),
        chunk.map((r) => r.matches),
      ],
    );
  }
}

/**
 * One page of a closed season's standings in their frozen order, and how
 * many there are. Positions run 1..N, so the page is a range of the index on
 * (ladder, season, position) and the count its last position: every page,
 * however deep, costs what the first does.
 */
export async function standingsPage(db: Queryable, ladder: string, season: number, limit: number, offset: number): Promise<{ total: number; rows: FrozenStanding[] }> {
  const [rows, counted] = await Promise.all([
    db.query<FrozenStanding>(
      'SELECT position, id, rank, rating, rd, percentile, division, matches FROM season_standings WHERE ladder = $1 AND season = $2 AND position > $4 ORDER BY position LIMIT $3',
      [ladder, season, limit, offset],
    ),
    db.query<{ n: number | null }>('SELECT max(position) AS n FROM season_standings WHERE ladder = $1 AND season = $2', [ladder, season]),
  ]);
  return { total: counted[0]?.n ?? 0, rows };
}

export async function standingOf(db: Queryable, ladder: string, season: number, id: string): Promise<FrozenStanding | undefined> {
  const rows = await db.query<FrozenStanding>(
    'SELECT position, id, rank, rating, rd, percentile, division, matches FROM season_standings WHERE ladder = $1 AND season = $2 AND id = $3',
    [ladder, season, id],
  );
  return rows[0];
}
