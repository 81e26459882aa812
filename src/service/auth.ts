/**
 * API keys and rate limits. A key is `lk_<id>_<secret>` with 32 random
 * bytes of secret; only its SHA-256 is stored, and the presented key's hash
 * is compared to the stored one in constant time. Scopes nest: admin ⊃ write
 * ⊃ read.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../store/database.js';
import { HttpError, NotFoundError } from './errors.js';

export type Scope = 'admin' | 'write' | 'read';

export interface ApiKey {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: number;
  revokedAt: number | null;
}

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

export function allows(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.some((scope) => RANK[scope] >= RANK[needed]);
}

function sha256(text: string): string {
  return hash('sha256', text);
}

/** Key id embedded in a key, so lookups go by primary key and revocation can name it. */
function parseKey(key: string): string | undefined {
  const match = /^lk_([a-z0-9]{12})_[A-Za-z0-9_-]{43}$/.exec(key);
  return match?.[1];
}

export function newKeyText(): { id: string; key: string } {
  const id = randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 12);
  return { id, key: `lk_${id}_${randomBytes(32).toString('base64url')}` };
}

interface KeyRow {
  id: string;
  hash: string;
  name: string;
  scopes: Scope[];
  created_at: number;
  revoked_at: number | null;
}

export interface KeyStoreOptions {
  /**
   * How long a verified key is trusted without asking the database again.
   * Revocation on another instance takes effect within this time (at once on
   * the instance that revoked). @default 5000
   */
  cacheMs?: number;
}

export class KeyStore {
  private readonly cache = new Map<string, { key: ApiKey | null; hash: string; until: number }>();
  private readonly cacheMs: number;

  constructor(
    private readonly db: Database,
    options: KeyStoreOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 5000;
  }

  async create(name: string, scopes: Scope[], text = newKeyText()): Promise<{ key: string; apiKey: ApiKey }> {
    const createdAt = Date.now();
    await this.db.query('INSERT INTO api_keys (id, hash, name, scopes, created_at) VALUES ($1, $2, $3, $4::text[], $5)', [text.id, sha256(text.key), name, scopes, createdAt]);
    return { key: text.key, apiKey: { id: text.id, name, scopes, createdAt, revokedAt: null } };
  }

  /**
   * On first start: the admin key from LADDER_ADMIN_KEY (any string of 16+
   * characters, stored hashed) or a generated one, returned so the caller
   * prints it once. Returns undefined when keys already exist.
   */
  async bootstrap(adminKey: string | undefined): Promise<{ key: string; generated: boolean } | undefined> {
    if (adminKey !== undefined) {
      if (adminKey.length < 16) throw new HttpError(500, 'internal', 'LADDER_ADMIN_KEY must be at least 16 characters');
      const hash = sha256(adminKey);
      const rows = await this.db.query('SELECT 1 FROM api_keys WHERE hash = $1', [hash]);
      if (rows.length > 0) return undefined;
      const id = `env${sha256(adminKey).slice(0, 9)}`;
      await this.db.query('INSERT INTO api_keys (id, hash, name, scopes, created_at) VALUES ($1, $2, $3, $4::text[], $5) ON CONFLICT DO NOTHING', [id, hash, 'LADDER_ADMIN_KEY', ['admin'], Date.now()]);
      return { key: adminKey, generated: false };
    }
    const rows = await this.db.query('SELECT 1 FROM api_keys LIMIT 1');
    if (rows.length > 0) return undefined;
    const { key } = await this.create('first admin key', ['admin']);
    return { key, generated: true };
  }

  /** The key's record when valid and not revoked, else null. */
  async verify(presented: string): Promise<ApiKey | null> {
    if (presented.length > 200) return null;
    const now = Date.now();
    // Cached by the presented text (at most 200 characters), so a repeat costs no SHA-256.
    const cached = this.cache.get(presented);
    if (cached && cached.until > now) return cached.key;
    const hash = sha256(presented);
    const id = parseKey(presented);
    const rows = id
      ? await this.db.query<KeyRow>('SELECT id, hash, name, scopes, created_at, revoked_at FROM api_keys WHERE id = $1', [id])
      : await this.db.query<KeyRow>('SELECT id, hash, name, scopes, created_at, revoked_at FROM api_keys WHERE hash = $1', [hash]);
    const row = rows[0];
    let key: ApiKey | null = null;
    if (row && row.revoked_at === null && timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(hash, 'hex'))) {
      key = { id: row.id, name: row.name, scopes: row.scopes, createdAt: row.created_at, revokedAt: null };
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(presented, { key, hash, until: now + this.cacheMs });
    return key;
  }

  async list(): Promise<ApiKey[]> {
    const rows = await this.db.query<KeyRow>('SELECT id, hash, name, scopes, created_at, revoked_at FROM api_keys ORDER BY created_at, id');
    return rows.map((row) => ({ id: row.id, name: row.name, scopes: row.scopes, createdAt: row.created_at, revokedAt: row.revoked_at }));
  }

  async revoke(id: string): Promise<ApiKey> {
    const rows = await this.db.query<KeyRow>('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING id, hash, name, scopes, created_at, revoked_at', [id, Date.now()]);
    if (rows.length === 0) throw new NotFoundError(`no key ${JSON.stringify(id.slice(0, 40))}`, 'key');
    for (const [presented, entry] of this.cache) if (entry.key?.id === id || entry.hash === rows[0]!.hash) this.cache.delete(presented);
    const row = rows[0]!;
    return { id: row.id, name: row.name, scopes: row.scopes, createdAt: row.created_at, revokedAt: row.revoked_at };
  }
}

export interface RateLimitOptions {
  /** Sustained requests per second per key (or per client address without a key). @default 5000 */
  perSecond?: number;
  /** Burst size. @default 2 × perSecond */
  burst?: number;
}

/** Token bucket per caller; refilled lazily on each request, so idle callers cost nothing. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  readonly perSecond: number;
  readonly burst: number;

  constructor(options: RateLimitOptions = {}) {
    this.perSecond = options.perSecond ?? 5000;
    this.burst = options.burst ?? this.perSecond * 2;
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait. */
  take(caller: string, now = performance.now()): number {
    let bucket = this.buckets.get(caller);
    if (!bucket) {
      if (this.buckets.size > 100_000) this.buckets.clear();
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(caller, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.perSecond;
  }
}
