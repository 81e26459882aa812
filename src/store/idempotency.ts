/** SQL of the idempotency aggregate: the answer stored for each Idempotency-Key, byte for byte. */
import type { Queryable } from './database.js';

/** Answers to store, as columns. `response` is the JSON text sent. */
export interface IdempotencyRows {
  key: string[];
  hash: string[];
  status: number[];
  response: string[];
}

export interface StoredAnswer {
  hash: string;
  status: number;
  /** The exact JSON text first sent. */
  response: string;
}

export function emptyIdempotencyRows(): IdempotencyRows {
  return { key: [], hash: [], status: [], response: [] };
}

export async function findAnswers(db: Queryable, ladder: string, keys: readonly string[]): Promise<Map<string, StoredAnswer>> {
  const found = new Map<string, StoredAnswer>();
  if (keys.length === 0) return found;
  const rows = await db.query<{ key: string; request_hash: string; status: number; response: string }>(
    'SELECT key, request_hash, status, response FROM idempotency WHERE ladder = $1 AND key = ANY($2::text[])',
    [ladder, keys],
  );
  for (const row of rows) found.set(row.key, { hash: row.request_hash, status: row.status, response: row.response });
  return found;
}

export async function insertAnswers(tx: Queryable, ladder: string, rows: IdempotencyRows, now: number): Promise<void> {
  if (rows.key.length === 0) return;
  await tx.query(
    `INSERT INTO idempotency (ladder, key, request_hash, status, response, created_at)
     SELECT $1, k, h, s, r, $6 FROM unnest($2::text[], $3::text[], $4::int4[], $5::text[]) AS u(k, h, s, r)`,
    [ladder, rows.key, rows.hash, rows.status, rows.response, now],
  );
}
