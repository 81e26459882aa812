/** SQL of the API keys aggregate. Only a key's SHA-256 is stored. */
import type { Queryable } from './database.js';

export interface KeyRow {
  id: string;
  hash: string;
  name: string;
  scopes: string[];
  created_at: number;
  revoked_at: number | null;
  /** The ladders the key may act on; null: every ladder. */
  ladders: string[] | null;
}

const COLUMNS = 'id, hash, name, scopes, created_at, revoked_at, ladders';

/** Inserts a key; false when its id or hash is taken. */
export async function insertKey(db: Queryable, key: Omit<KeyRow, 'revoked_at' | 'ladders'> & { ladders?: string[] | null }): Promise<boolean> {
  const rows = await db.query(
    'INSERT INTO api_keys (id, hash, name, scopes, created_at, ladders) VALUES ($1, $2, $3, $4::text[], $5, $6::text[]) ON CONFLICT DO NOTHING RETURNING id',
    [key.id, key.hash, key.name, key.scopes, key.created_at, key.ladders ?? null],
  );
  return rows.length > 0;
}

export async function findKeyById(db: Queryable, id: string): Promise<KeyRow | undefined> {
  return (await db.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]))[0];
}

export async function findKeyByHash(db: Queryable, hash: string): Promise<KeyRow | undefined> {
  return (await db.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE hash = $1`, [hash]))[0];
}

export async function anyKeyExists(db: Queryable): Promise<boolean> {
  return (await db.query('SELECT 1 FROM api_keys LIMIT 1')).length > 0;
}

export async function listKeys(db: Queryable): Promise<KeyRow[]> {
  return db.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`);
}

/** Marks a key revoked (keeping the first revocation time); undefined when there is no such key. */
export async function revokeKey(db: Queryable, id: string, now: number): Promise<KeyRow | undefined> {
  return (await db.query<KeyRow>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${COLUMNS}`, [id, now]))[0];
}
