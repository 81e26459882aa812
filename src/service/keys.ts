/**
 * API keys and rate limits. A key is `lk_<id>_<secret>` with 32 random
 * bytes of secret; only its SHA-256 is stored, and the presented key's hash
 * is compared to the stored one in constant time. Scopes nest: admin ⊃
 * correct ⊃ write ⊃ read. `correct` (voiding and correcting stored matches)
 * ranks above `write` because it rewrites what was already rated: a key
 * that may do that may also post matches, but a game server's write key
 * cannot rewrite a ladder's history.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Database } from '../store/database.js';
import { anyKeyExists, findKeyByHash, findKeyById, insertKey, type KeyRow, listKeys, revokeKey } from '../store/keys.js';
import { NotFoundError } from './errors/index.js';
import type { Scope } from './scopes.js';

export type { Scope } from './scopes.js';

export interface ApiKey {
  id: string;
  name: string;
  scopes: Scope[];
  createdAt: number;
  revokedAt: number | null;
  /** The ladders the key may act on; null: every ladder. */
  ladders: string[] | null;
}

const RANK: Record<Scope, number> = { read: 1, write: 2, correct: 3, admin: 4 };

export function allows(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.some((scope) => RANK[scope] >= RANK[needed]);
}

/** Whether a key may act on a ladder (a key without a list may act on every one). */
export function allowsLadder(key: ApiKey, ladder: string): boolean {
  return key.ladders === null || key.ladders.includes(ladder);
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
  const id = randomBytes(9)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')
    .slice(0, 12);
  return { id, key: `lk_${id}_${randomBytes(32).toString('base64url')}` };
}

function keyOf(row: KeyRow): ApiKey {
  return { id: row.id, name: row.name, scopes: row.scopes as Scope[], createdAt: row.created_at, revokedAt: row.revoked_at, ladders: row.ladders ?? null };
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

  /** A new key; `ladders` limits it to those ladders (absent or null: every ladder). */
  async create(name: string, scopes: Scope[], text = newKeyText(), ladders: string[] | null = null): Promise<{ key: string; apiKey: ApiKey }> {
    const createdAt = Date.now();
    await insertKey(this.db, { id: text.id, hash: sha256(text.key), name, scopes, created_at: createdAt, ladders });
    return { key: text.key, apiKey: { id: text.id, name, scopes, createdAt, revokedAt: null, ladders } };
  }

  /**
   * On first start: the admin key from LADDER_ADMIN_KEY (any string of 16+
   * characters, stored hashed) or a generated one, returned so the caller
   * prints it once. Returns undefined when keys already exist.
   */
  async bootstrap(adminKey: string | undefined): Promise<{ key: string; generated: boolean } | undefined> {
    if (adminKey !== undefined) {
      if (adminKey.length < 16) throw new InvalidInputError('must be at least 16 characters', { field: 'LADDER_ADMIN_KEY' });
      const hash = sha256(adminKey);
      if (await findKeyByHash(this.db, hash)) return undefined;
      await insertKey(this.db, { id: `env${hash.slice(0, 9)}`, hash, name: 'LADDER_ADMIN_KEY', scopes: ['admin'], created_at: Date.now() });
      return { key: adminKey, generated: false };
    }
    if (await anyKeyExists(this.db)) return undefined;
    const { key } = await this.create('first admin key', ['admin']);
    return { key, generated: true };
  }

  /**
   * The key's record when this process verified it recently, without any
   * work: the rate limiter uses it to charge known keys to their own bucket
   * and everything else (no key, unknown or wrong keys) to the client address.
   */
  recentlyVerified(presented: string): ApiKey | null {
    const cached = this.cache.get(presented);
    return cached && cached.until > Date.now() ? cached.key : null;
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
    const row = id ? await findKeyById(this.db, id) : await findKeyByHash(this.db, hash);
    let key: ApiKey | null = null;
    if (row && row.revoked_at === null && timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(hash, 'hex'))) key = keyOf(row);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(presented, { key, hash, until: now + this.cacheMs });
    return key;
  }

  async list(): Promise<ApiKey[]> {
    return (await listKeys(this.db)).map(keyOf);
  }

  async revoke(id: string): Promise<ApiKey> {
    const row = await revokeKey(this.db, id, Date.now());
    if (!row) throw new NotFoundError(`no key ${JSON.stringify(id.slice(0, 40))}`, 'key');
    for (const [presented, entry] of this.cache) if (entry.key?.id === id || entry.hash === row.hash) this.cache.delete(presented);
    return keyOf(row);
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
