/** SQL of the rounds aggregate: World-vs-World rounds, each a rating period of several matches. */
import type { Queryable } from './database.js';

export interface RoundRow {
  number: number;
  name: string;
  at: number;
  firstSeq: number;
  lastSeq: number;
  /** JSON text of the round's summary. */
  summary: string;
}

export async function takenRoundNames(db: Queryable, ladder: string, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await db.query<{ name: string }>('SELECT name FROM rounds WHERE ladder = $1 AND name = ANY($2::text[])', [ladder, names]);
  return new Set(rows.map((row) => row.name));
}

export async function insertRounds(tx: Queryable, ladder: string, rounds: readonly RoundRow[]): Promise<void> {
  for (const round of rounds) {
    await tx.query('INSERT INTO rounds (ladder, number, name, at, first_seq, last_seq, summary) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)', [
      ladder,
      round.number,
      round.name,
      round.at,
      round.firstSeq,
      round.lastSeq,
      round.summary,
    ]);
  }
}

/** Round summaries in order. */
export async function listRoundSummaries(db: Queryable, ladder: string): Promise<unknown[]> {
  const rows = await db.query<{ summary: unknown }>('SELECT summary FROM rounds WHERE ladder = $1 ORDER BY number', [ladder]);
  return rows.map((row) => row.summary);
}
