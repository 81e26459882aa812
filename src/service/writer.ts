/**
 * The only code that changes ratings. Submissions for one ladder queue up in
 * this process and are written in groups (group commit): while a write is in
 * flight, new submissions wait; the next write takes them all (up to 256).
 *
 * Two ways to write a group, with the same result:
 *
 * - **Fast path** (plain matches, the common case): the ladder's player
 *   states are cached in this process together with the ladder's `version`,
 *   a random token that every write of the ladder replaces. The group is rated
 *   against the cache and written in ONE autocommit statement whose first
 *   part swaps the version token only if the ladder still holds the token the
 *   group was rated on and none of its Idempotency-Keys or match ids is
 *   stored; every insert depends on that swap, so all of it is written or
 *   none. Another instance's write, `rebuild --fix` or a repeated key makes
 *   the swap refuse, and the group takes the locked path. The statements go
 *   out in order on one connection; the next group is rated on the projected
 *   result of the one in flight and queued behind it (pipelining, depth 2).
 * - **Locked path** (rounds, repeats, a refused fast write): one transaction
 *   that locks the ladder row (SELECT ... FOR UPDATE, which serialises writers
 *   across instances), answers stored Idempotency-Keys (same body: the stored
 *   answer; other body: 409), reads the players' states, rates, writes, and
 *   replaces the version. What it read and wrote becomes the cache.
 *
 * A submission is answered only after its statement or transaction commits,
 * so a 2xx means the match is durable; if it fails, every submission of the
 * group gets a 503 and nothing of the group was written (or, if the
 * connection broke during the commit, all of it was), so retrying with the
 * same key is always safe.
 */
import { hash, randomInt, randomUUID } from 'node:crypto';
import { InvalidInputError } from '../core/errors.js';
import type { Match } from '../core/match.js';
import type { MatchRating, PlayerState } from '../core/systems.js';
import { wvwGroups } from '../core/wvw.js';
import type { Database, Queryable } from '../store/database.js';
import { ConflictError, HttpError } from './errors.js';
import type { Ladder, Ladders } from './ladders.js';
import { publicState, rateUnit } from './rating.js';

/** An answer: `body` is an object, or the exact JSON text stored for an idempotent repeat. */
export type Outcome = { status: number; body: unknown };

interface Job {
  kind: 'match' | 'round';
  key: string | undefined;
  hash: string;
  matches: Match[];
  roundName?: string;
  /** Epoch ms of the round (rounds only). */
  roundAt?: number;
  receivedAt: number;
  resolve: (outcome: Outcome) => void;
  reject: (error: unknown) => void;
}

export interface CommittedPlayer {
  id: string;
  state: PlayerState;
  seq: number;
}

export interface WriterHooks {
  /** After a commit: the players whose state changed and how many matches were rated. */
  onCommit?: (ladder: Ladder, players: CommittedPlayer[], matchesRated: number, lastSeq: number) => Promise<void> | void;
  /** How many submissions one transaction carried (metrics). */
  onBatch?: (ladder: Ladder, size: number, seconds: number, path: 'fast' | 'locked') => void;
}

export interface WriterOptions {
  /** Submissions per transaction at most. @default 256 */
  maxBatch?: number;
  /** Player states cached per ladder at most; past it the cache starts over. @default 1000000 */
  maxCachedPlayers?: number;
  /** One-statement batches of a ladder in flight at once (the next one is planned and queued before the previous commits). @default 2 */
  pipelineDepth?: number;
}

/**
 * What this process knows of a ladder as of `version`: valid while the stored
 * version is unchanged, since every write of the ladder adds one to it.
 * `null` = known not to exist yet; absent = not known.
 */
interface LadderCache {
  /** The version after the last batch planned on this cache (possibly not committed yet). */
  version: number;
  /** The last few versions of this cache's lineage: a read at any of them saw no one else's write. */
  chain: number[];
  nextSeq: number;
  roundCount: number;
  players: Map<string, PlayerState | null>;
}

interface BatchStart {
  nextSeq: number;
  roundCount: number;
  /** Stored Idempotency-Keys of the batch. */
  stored: Map<string, { hash: string; outcome: Outcome }>;
  takenIds: Set<string>;
  takenRounds: Set<string>;
  /** States of the batch's players that exist (others start from the system's initial state); updated as the batch is rated. */
  working: Map<string, PlayerState>;
}

interface BatchPlan {
  outcomes: Array<Outcome | Error>;
  matchRows: { seq: number[]; id: string[]; at: number[]; receivedAt: number[]; round: (string | null)[]; body: string[]; wp: string[] };
  changeRows: { player: string[]; seq: number[]; team: number[]; before: string[]; after: string[]; terms: string[] };
  idemRows: { key: string[]; hash: string[]; status: number[]; response: string[] };
  roundRows: Array<[number, string, number, number, number, string]>;
  changed: Map<string, CommittedPlayer>;
  rated: number;
  nextSeq: number;
  roundCount: number;
}

interface BatchResult {
  path: 'fast' | 'locked';
  outcomes: Array<Outcome | Error>;
  committed: CommittedPlayer[];
  rated: number;
  lastSeq: number;
}

/** A row of the players table as the queries select it. */
export interface PlayerRow {
  id: string;
  rating: number;
  rd: number | null;
  volatility: number | null;
  matches: number;
  last_at: number | null;
}

function rowToState(row: PlayerRow): PlayerState {
  const state: PlayerState = { rating: row.rating, matches: row.matches };
  if (row.rd !== null) state.rd = row.rd;
  if (row.volatility !== null) state.volatility = row.volatility;
  if (row.last_at !== null) state.lastAt = row.last_at;
  return state;
}

/** Request fingerprint for idempotency: the kind and the parsed body, canonical JSON. */
export function requestHash(kind: string, body: unknown): string {
  // One-shot hash: same digest as update(kind).update('\0').update(json), without a Hash object per request.
  return hash('sha256', `${kind}\0${JSON.stringify(body)}`);
}

/**
 * A fresh value for `ladders.version`. Random rather than +1, so a batch
 * planned on a projected version can never match a version someone else
 * wrote (48 random bits; a few versions are compared at a time).
 */
function newVersion(): number {
  return randomInt(1, 2 ** 48 - 1);
}

/**
 * A text[] parameter as a PostgreSQL array literal built by JSON.stringify:
 * node-postgres escapes array elements one by one in JavaScript, which costs
 * about 2 % of the server's time in the load profile. JSON's `\"` and `\\` mean the same in an array
 * literal; any other escape (control characters, lone surrogates) has no
 * equivalent there, so such arrays go to node-postgres unchanged.
 */
function textArray(values: readonly (string | null)[]): string | readonly (string | null)[] {
  const json = JSON.stringify(values);
  if (/\\[^"\\]/.test(json)) return values;
  return `{${json.slice(1, -1)}}`;
}

/**
 * A numeric array parameter (int4[], int8[], float8[]) as an array literal,
 * for the same reason as `textArray`. Exact: a JS number's shortest
 * round-trip text reads back as the same double in PostgreSQL. Integers past
 * 1e21 (which JS would write in exponent form, invalid for int8) are never
 * stored: sequence numbers, counts and epoch milliseconds.
 */
function numberArray(values: readonly (number | null)[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ',';
    const value = values[i];
    literal += value === null ? 'NULL' : String(value);
  }
  return `${literal}}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class MatchWriter {
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Set<string>();
  private readonly maxBatch: number;
  private readonly maxCachedPlayers: number;
  private readonly pipelineDepth: number;
  private readonly caches = new Map<string, LadderCache>();
  private readonly inFlight = new Map<string, { keys: Set<string>; ids: Set<string> }>();
  private closed = false;
  /** Batches written by each path since start (tests, diagnostics). */
  readonly writes = { fast: 0, locked: 0 };

  constructor(
    private readonly db: Database,
    private readonly ladders: Ladders,
    private readonly hooks: WriterHooks = {},
    options: WriterOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
    this.maxCachedPlayers = options.maxCachedPlayers ?? 1_000_000;
    this.pipelineDepth = Math.max(1, options.pipelineDepth ?? 2);
  }

  /** Rates one match (already validated by parseMatch, `at` filled in). */
  submitMatch(ladder: Ladder, match: Match, key: string | undefined, hash: string): Promise<Outcome> {
    return this.enqueue(ladder, { kind: 'match', key, hash, matches: [match], receivedAt: Date.now() });
  }

  /** Rates one World-vs-World round: its matches form one rating period. */
  submitRound(ladder: Ladder, name: string | undefined, at: number, matches: Match[], key: string | undefined, hash: string): Promise<Outcome> {
    return this.enqueue(ladder, { kind: 'round', key, hash, matches, roundName: name, roundAt: at, receivedAt: Date.now() });
  }

  /** Stops taking work; waits for transactions in flight. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running.size > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private enqueue(ladder: Ladder, job: Omit<Job, 'resolve' | 'reject'>): Promise<Outcome> {
    if (this.closed) return Promise.reject(new HttpError(503, 'unavailable', 'the server is shutting down'));
    return new Promise<Outcome>((resolve, reject) => {
      let queue = this.queues.get(ladder.id);
      if (!queue) this.queues.set(ladder.id, (queue = []));
      (job as Job).resolve = resolve;
      (job as Job).reject = reject;
      queue.push(job as Job);
      if (!this.running.has(ladder.id)) {
        // Start after the current I/O phase, so every request already received joins the first batch.
        this.running.add(ladder.id);
        setImmediate(() => void this.drain(ladder));
      }
    });
  }

  private async drain(ladder: Ladder): Promise<void> {
    this.running.add(ladder.id);
    const inflight = new Set<Promise<void>>();
    // Batches are answered (and reported to onCommit) in the order they were taken, so the
    // leaderboard sees commits in seq order even when a later batch's commit returns first.
    let answered: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        const queue = this.queues.get(ladder.id);
        if (!queue || queue.length === 0 || inflight.size >= this.pipelineDepth) {
          if (inflight.size === 0) break;
          await Promise.race(inflight);
          continue;
        }
        // Let the requests already received join this batch (PGlite blocks the thread while it runs).
        if (queue.length < this.maxBatch) await new Promise((resolve) => setImmediate(resolve));
        const batch = queue.splice(0, this.maxBatch);
        const started = performance.now();
        let sent: { result: Promise<BatchResult | null> } | null;
        try {
          sent = await this.sendFast(ladder, batch, inflight);
        } catch (error) {
          sent = { result: Promise.reject(error) };
        }
        // Handled below, in order; this only keeps an early rejection from counting as unhandled.
        sent?.result.catch(() => {});
        const settled = (async (): Promise<BatchResult> => {
          // A database error of the fast path answers 503 rather than falling back: if the
          // connection broke after the commit, a second try would rate key-less matches twice.
          const fast = sent === null ? null : await sent.result;
          if (fast !== null) {
            this.writes.fast++;
            return fast;
          }
          this.writes.locked++;
          const locked = await this.db.transaction((tx) => this.writeLocked(tx, ladder, batch));
          // Only once committed does what the transaction saw and wrote become the cache.
          this.caches.set(ladder.id, locked.cache);
          return locked;
        })();
        const previous = answered;
        const task = (async () => {
          let result: BatchResult | undefined;
          let failure: unknown;
          try {
            result = await settled;
          } catch (error) {
            failure = error;
          }
          await previous;
          await this.answer(ladder, batch, started, result, failure);
        })();
        answered = task;
        inflight.add(task);
        void task.finally(() => inflight.delete(task));
      }
    } finally {
      this.running.delete(ladder.id);
      // A job may have arrived between the last check and the delete.
      const queue = this.queues.get(ladder.id);
      if (queue && queue.length > 0) {
        this.running.add(ladder.id);
        setImmediate(() => void this.drain(ladder));
      }
    }
  }

  private async answer(ladder: Ladder, batch: Job[], started: number, result: BatchResult | undefined, failure: unknown): Promise<void> {
    if (result === undefined) {
      const failed = failure instanceof HttpError ? failure : new HttpError(503, 'unavailable', `could not store the submission, nothing was rated; retry with the same Idempotency-Key (${(failure as Error).message})`);
      for (const job of batch) job.reject(failed);
      return;
    }
    const { outcomes, committed, rated, lastSeq } = result;
    this.hooks.onBatch?.(ladder, batch.length, (performance.now() - started) / 1000, result.path);
    if (committed.length > 0 && this.hooks.onCommit) {
      try {
        await this.hooks.onCommit(ladder, committed, rated, lastSeq);
      } catch {
        // Derived state (leaderboard order) catches up on its own; the matches are committed.
      }
    }
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof Error) job.reject(outcome);
      else job.resolve(outcome);
    });
  }

  /**
   * Rates a batch against player states the caller provides and collects the
   * rows to write. Pure apart from `randomUUID`: nothing is written here.
   */
  private plan(ladder: Ladder, batch: Job[], start: BatchStart): BatchPlan {
    const system = ladder.rating;
    const { stored, takenIds, takenRounds, working } = start;
    let nextSeq = start.nextSeq;
    let roundCount = start.roundCount;
    const matchRows = { seq: [] as number[], id: [] as string[], at: [] as number[], receivedAt: [] as number[], round: [] as (string | null)[], body: [] as string[], wp: [] as string[] };
    const changeRows = { player: [] as string[], seq: [] as number[], team: [] as number[], before: [] as string[], after: [] as string[], terms: [] as string[] };
    const idemRows = { key: [] as string[], hash: [] as string[], status: [] as number[], response: [] as string[] };
    const roundRows: Array<[number, string, number, number, number, string]> = [];
    const changed = new Map<string, CommittedPlayer>();
    const batchKeys = new Map<string, { hash: string; outcome: Outcome }>();
    let rated = 0;

    const outcomes: Array<Outcome | Error> = batch.map((job) => {
      if (job.key !== undefined) {
        const previous = stored.get(job.key) ?? batchKeys.get(job.key);
        if (previous) {
          if (previous.hash === job.hash) return previous.outcome;
          return new ConflictError('this Idempotency-Key was already used with a different body', 'Idempotency-Key');
        }
      }
      for (const [m, match] of job.matches.entries()) {
        if (match.id !== undefined && takenIds.has(match.id)) {
          return new ConflictError(`match id ${JSON.stringify(match.id)} is already rated in this ladder`, job.kind === 'round' ? `matches[${m}].id` : 'id');
        }
      }
      let roundName = job.roundName;
      if (job.kind === 'round') {
        if (roundName === undefined) {
          roundName = `r${roundCount + 1}`;
          while (takenRounds.has(roundName)) roundName = `${roundName}'`;
        } else if (takenRounds.has(roundName)) {
          return new ConflictError(`round ${JSON.stringify(roundName)} is already rated in this ladder`, 'round');
        }
      }
      let ratings: MatchRating[];
      let winProbabilities: number[][];
      try {
        winProbabilities = job.matches.map((match) => system.predict(match.teams.map((team) => team.players.map((p) => working.get(p.id) ?? system.initial()))));
        ratings = rateUnit(system, job.matches, working, job.kind === 'round');
      } catch (error) {
        if (error instanceof InvalidInputError) return error;
        throw error;
      }
      const players: unknown[] = [];
      const firstSeq = nextSeq;
      const matchesOut: Array<{ id: string; seq: number; at: string }> = [];
      job.matches.forEach((match, m) => {
        const seq = nextSeq++;
        const id = match.id ?? randomUUID();
        takenIds.add(id);
        const at = match.at!;
        const body: Match = { ...match, id };
        matchRows.seq.push(seq);
        matchRows.id.push(id);
        matchRows.at.push(at);
        matchRows.receivedAt.push(job.receivedAt);
        matchRows.round.push(job.kind === 'round' ? roundName! : null);
        matchRows.body.push(JSON.stringify(body));
        matchRows.wp.push(JSON.stringify(winProbabilities[m]));
        matchesOut.push({ id, seq, at: iso(at) });
        rated++;
        for (const change of ratings[m]!.players) {
          // Serialised once: the same text goes into the history row and the answer.
          const before = JSON.stringify(publicState(change.before));
          const after = JSON.stringify(publicState(change.after));
          const terms = JSON.stringify(change.terms);
          changeRows.player.push(change.id);
          changeRows.seq.push(seq);
          changeRows.team.push(change.team);
          changeRows.before.push(before);
          changeRows.after.push(after);
          changeRows.terms.push(terms);
          players.push(`{"id":${JSON.stringify(change.id)},"team":${change.team},"before":${before},"after":${after},"terms":${terms}}`);
        }
      });
      // States move only after the whole unit is rated (a round rates from the states before it).
      job.matches.forEach((_, m) => {
        for (const change of ratings[m]!.players) {
          working.set(change.id, change.after);
          changed.set(change.id, { id: change.id, state: change.after, seq: nextSeq - 1 });
        }
      });
      let text: string;
      if (job.kind === 'match') {
        text = `{"match":${JSON.stringify(matchesOut[0])},"winProbability":${JSON.stringify(winProbabilities[0])},"players":[${players.join(',')}]}`;
      } else {
        roundCount++;
        const worlds = [...working].map(([id, s]) => ({ id, rating: s.rating, rd: s.rd ?? 0 }));
        const groups = wvwGroups(worlds);
        const ratingsOut = ratings.flatMap((r) => r.players.map((c) => ({ id: c.id, before: publicState(c.before), after: publicState(c.after), terms: c.terms })));
        const summary = {
          round: roundName,
          at: iso(job.roundAt!),
          groups,
          matches: job.matches.map((match, m) => {
            const total = match.teams.reduce((sum, t) => sum + t.score!, 0);
            return {
              id: matchesOut[m]!.id,
              worlds: Object.fromEntries(match.teams.map((t) => [t.players[0]!.id, t.score!])),
              shares: Object.fromEntries(match.teams.map((t) => [t.players[0]!.id, total > 0 ? t.score! / total : 1 / match.teams.length])),
            };
          }),
          ratings: Object.fromEntries([...working].map(([id, s]) => [id, { rating: s.rating, rd: s.rd }])),
        };
        roundRows.push([roundCount, roundName!, job.roundAt!, firstSeq, nextSeq - 1, JSON.stringify(summary)]);
        takenRounds.add(roundName!);
        text = JSON.stringify({ round: roundName, matches: matchesOut, ratings: ratingsOut, groups });
      }
      const outcome: Outcome = { status: 201, body: text };
      if (job.key !== undefined) {
        batchKeys.set(job.key, { hash: job.hash, outcome });
        idemRows.key.push(job.key);
        idemRows.hash.push(job.hash);
        idemRows.status.push(201);
        idemRows.response.push(text);
      }
      return outcome;
    });
    return { outcomes, matchRows, changeRows, idemRows, roundRows, changed, rated, nextSeq, roundCount };
  }

  /**
   * The fast path, for batches of plain matches: rate against the cached
   * player states and write everything in ONE statement (autocommit, so one
   * round trip carries the commit too). The statement's first part sets the
   * ladder's `version` to a fresh token only if it still holds the token the
   * batch was planned on and none of the batch's Idempotency-Keys or match ids
   * is stored; every insert depends on that update, so either all of it is
   * written or none.
   *
   * Pipelining: the next batch is planned on this one's projected result and
   * sent before this one commits, guarded by this one's token; PostgreSQL
   * makes it wait for the ladder row, and it applies only if this one did.
   *
   * Resolves to null at once when the fast path cannot decide (a round,
   * nothing to write); the returned statement resolves to null when its guard
   * refused (another writer moved the ladder, a repeated key, a reused match
   * id). Either way the caller runs the locked transaction.
   */
  /** Idempotency-Keys and match ids of this ladder's one-statement batches not yet committed. */
  private sending(ladderId: string): { keys: Set<string>; ids: Set<string> } {
    let sending = this.inFlight.get(ladderId);
    if (!sending) this.inFlight.set(ladderId, (sending = { keys: new Set(), ids: new Set() }));
    return sending;
  }

  private async sendFast(ladder: Ladder, batch: Job[], inflight: Set<Promise<void>>): Promise<{ result: Promise<BatchResult | null> } | null> {
    if (batch.some((job) => job.kind !== 'match')) return null;
    const keys = [...new Set(batch.map((job) => job.key).filter((key): key is string => key !== undefined))];
    const givenIds = [...new Set(batch.flatMap((job) => job.matches.map((m) => m.id)).filter((id): id is string => id !== undefined))];
    const sending = this.sending(ladder.id);
    if (inflight.size > 0 && (keys.some((key) => sending.keys.has(key)) || givenIds.some((id) => sending.ids.has(id)))) {
      // A key or match id of a batch not committed yet: the guard's snapshot might not show it,
      // so wait until it is stored (then the guard refuses and the locked path answers the repeat).
      await Promise.all(inflight);
    }
    const playerIds = [...new Set(batch.flatMap((job) => job.matches.flatMap((m) => m.teams.flatMap((t) => t.players.map((p) => p.id)))))];
    let cache = this.caches.get(ladder.id);
    for (let attempt = 0; ; attempt++) {
      const missing = cache ? playerIds.filter((id) => !cache!.players.has(id)) : playerIds;
      if (cache && missing.length === 0) break;
      if (attempt === 3) return null;
      if (!cache && inflight.size > 0) {
        // Start over only from a settled ladder: what is in flight may still move it.
        await Promise.all(inflight);
        cache = this.caches.get(ladder.id);
        continue;
      }
      // One statement, one snapshot: the states read belong to the version read with them.
      const rows = await this.db.ordered.query<PlayerRow & { version: number; next_seq: number; round_count: number }>(
        `SELECT l.version, l.next_seq, l.round_count, p.id, p.rating, p.rd, p.volatility, p.matches, p.last_at
         FROM ladders l LEFT JOIN players p ON p.ladder = l.id AND p.id = ANY($2::text[]) WHERE l.id = $1`,
        [ladder.id, missing],
      );
      if (rows.length === 0) return null;
      const head = rows[0]!;
      if (cache && this.caches.get(ladder.id) !== cache) {
        // Replaced while we read (a locked transaction finished): use the newer one.
        cache = this.caches.get(ladder.id);
        continue;
      }
      if (cache && !cache.chain.includes(head.version)) {
        // Someone else wrote the ladder: let our batches in flight settle (their guards refuse), then reload.
        if (this.caches.get(ladder.id) === cache) this.caches.delete(ladder.id);
        cache = undefined;
        continue;
      }
      if (!cache) {
        cache = { version: head.version, chain: [head.version], nextSeq: head.next_seq, roundCount: head.round_count, players: new Map() };
        this.caches.set(ladder.id, cache);
      }
      // Players this process's batches in flight did not touch (those are cached): same at every version of our chain.
      for (const id of missing) cache.players.set(id, null);
      for (const row of rows) if (row.id !== null) cache.players.set(row.id, rowToState(row));
    }
    const known = cache!;
    const working = new Map<string, PlayerState>();
    for (const id of playerIds) {
      const state = known.players.get(id);
      if (state) working.set(id, state);
    }
    const planned = this.plan(ladder, batch, { nextSeq: known.nextSeq, roundCount: known.roundCount, stored: new Map(), takenIds: new Set(), takenRounds: new Set(), working });
    if (planned.rated === 0) return null;
    const finals = [...planned.changed.values()];
    const newPlayers = finals.filter((p) => known.players.get(p.id) === null).length;
    const { matchRows, changeRows, idemRows } = planned;
    const expectedVersion = known.version;
    const expectedSeq = known.nextSeq;
    const token = newVersion();
    // Project the batch into the cache now, so the next batch can be planned on it before this one commits.
    known.version = token;
    known.chain.push(token);
    if (known.chain.length > this.pipelineDepth + 2) known.chain.shift();
    known.nextSeq = planned.nextSeq;
    for (const player of finals) known.players.set(player.id, player.state);
    if (known.players.size > this.maxCachedPlayers) this.caches.delete(ladder.id);
    for (const key of idemRows.key) sending.keys.add(key);
    for (const id of matchRows.id) sending.ids.add(id);
    const forget = () => {
      if (this.caches.get(ladder.id) === known) this.caches.delete(ladder.id);
    };
    const sent = () => {
      for (const key of idemRows.key) sending.keys.delete(key);
      for (const id of matchRows.id) sending.ids.delete(id);
    };
    // On the one ordered connection: the next batch's statement reaches PostgreSQL only after this one, so
    // it finds this one's version (unless this one was refused, and then it must refuse too).
    const statement = this.db.ordered.query<{ applied: number }>(
      `WITH fresh AS (
         SELECT NOT EXISTS (SELECT 1 FROM idempotency WHERE ladder = $1 AND key = ANY($7::text[]))
            AND NOT EXISTS (SELECT 1 FROM matches WHERE ladder = $1 AND id = ANY($8::text[])) AS ok
       ), l AS (
         -- No version test in WHERE: that would be checked against this statement's snapshot, which
         -- predates the commit of the batch sent before this one. SET expressions are evaluated on the
         -- newest row version once its lock is ours (READ COMMITTED re-check), so the test goes there.
         UPDATE ladders SET
           version = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN $32 ELSE version END,
           next_seq = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN $4 ELSE next_seq END,
           match_count = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN match_count + $5 ELSE match_count END,
           player_count = CASE WHEN version = $2 AND next_seq = $3 AND fresh.ok THEN player_count + $6 ELSE player_count END
         FROM fresh WHERE id = $1
         RETURNING version = $32 AS applied
       ), m AS (
         INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability)
         SELECT $1, s, i, a, r, NULL, b::json, w::jsonb FROM unnest($9::int8[], $10::text[], $11::int8[], $12::int8[], $13::text[], $14::text[]) AS u(s, i, a, r, b, w)
         WHERE EXISTS (SELECT 1 FROM l WHERE applied)
       ), p AS (
         INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at)
         SELECT $1, i, r, d, v, n, t FROM unnest($15::text[], $16::float8[], $17::float8[], $18::float8[], $19::int4[], $20::int8[]) AS u(i, r, d, v, n, t)
         WHERE EXISTS (SELECT 1 FROM l WHERE applied)
         ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at
       ), c AS (
         INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms)
         SELECT $1, p, s, t, b::json, a::json, x::json FROM unnest($21::text[], $22::int8[], $23::int4[], $24::text[], $25::text[], $26::text[]) AS u(p, s, t, b, a, x)
         WHERE EXISTS (SELECT 1 FROM l WHERE applied)
       ), k AS (
         INSERT INTO idempotency (ladder, key, request_hash, status, response, created_at)
         SELECT $1, k, h, s, r, $31 FROM unnest($27::text[], $28::text[], $29::int4[], $30::text[]) AS u(k, h, s, r)
         WHERE EXISTS (SELECT 1 FROM l WHERE applied)
       )
       SELECT count(*)::int4 AS applied FROM l WHERE applied`,
      [
        ladder.id,
        expectedVersion,
        expectedSeq,
        planned.nextSeq,
        planned.rated,
        newPlayers,
        textArray(keys),
        textArray(givenIds),
        numberArray(matchRows.seq),
        textArray(matchRows.id),
        numberArray(matchRows.at),
        numberArray(matchRows.receivedAt),
        textArray(matchRows.body),
        textArray(matchRows.wp),
        textArray(finals.map((p) => p.id)),
        numberArray(finals.map((p) => p.state.rating)),
        numberArray(finals.map((p) => p.state.rd ?? null)),
        numberArray(finals.map((p) => p.state.volatility ?? null)),
        numberArray(finals.map((p) => p.state.matches)),
        numberArray(finals.map((p) => p.state.lastAt ?? null)),
        textArray(changeRows.player),
        numberArray(changeRows.seq),
        numberArray(changeRows.team),
        textArray(changeRows.before),
        textArray(changeRows.after),
        textArray(changeRows.terms),
        textArray(idemRows.key),
        textArray(idemRows.hash),
        numberArray(idemRows.status),
        textArray(idemRows.response),
        Date.now(),
        token,
      ],
      // Not a prepared statement on purpose: a generic plan cannot see that `ladder = $1 AND key = ANY(...)`
      // picks a handful of rows and may scan whole tables; a custom plan per batch costs less than that.
    );
    const result = statement.then(
      (rows) => {
        sent();
        if (rows[0]?.applied !== 1) {
          forget();
          return null;
        }
        return { path: 'fast' as const, outcomes: planned.outcomes, committed: finals, rated: planned.rated, lastSeq: planned.nextSeq - 1 };
      },
      (error: unknown) => {
        // Nothing of a failed statement was written, but the projection in the cache is wrong now.
        sent();
        forget();
        throw error;
      },
    );
    return { result };
  }

  /**
   * The general path (rounds, repeated keys, another writer in between): one
   * transaction holding the ladder lock, reading what it needs, then writing.
   * Afterwards the cache holds exactly what this transaction saw and wrote.
   */
  private async writeLocked(tx: Queryable, ladder: Ladder, batch: Job[]): Promise<BatchResult & { cache: LadderCache }> {
    const locked = await tx.query<{ next_seq: number; round_count: number; version: number }>('SELECT next_seq, round_count, version FROM ladders WHERE id = $1 FOR UPDATE', [ladder.id]);
    if (locked.length === 0) throw new HttpError(404, 'not_found', `no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
    const { next_seq: nextSeq, round_count: roundCount, version } = locked[0]!;

    const keys = [...new Set(batch.map((job) => job.key).filter((key): key is string => key !== undefined))];
    const stored = new Map<string, { hash: string; outcome: Outcome }>();
    if (keys.length > 0) {
      const rows = await tx.query<{ key: string; request_hash: string; status: number; response: unknown }>(
        'SELECT key, request_hash, status, response FROM idempotency WHERE ladder = $1 AND key = ANY($2::text[])',
        [ladder.id, keys],
      );
      for (const row of rows) stored.set(row.key, { hash: row.request_hash, outcome: { status: row.status, body: row.response } });
    }
    const givenIds = [...new Set(batch.flatMap((job) => job.matches.map((m) => m.id)).filter((id): id is string => id !== undefined))];
    const takenIds = new Set<string>();
    if (givenIds.length > 0) {
      const rows = await tx.query<{ id: string }>('SELECT id FROM matches WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, givenIds]);
      for (const row of rows) takenIds.add(row.id);
    }
    const roundNames = batch.map((job) => job.roundName).filter((n): n is string => n !== undefined);
    const takenRounds = new Set<string>();
    if (roundNames.length > 0) {
      const rows = await tx.query<{ name: string }>('SELECT name FROM rounds WHERE ladder = $1 AND name = ANY($2::text[])', [ladder.id, roundNames]);
      for (const row of rows) takenRounds.add(row.name);
    }
    const hasRound = batch.some((job) => job.kind === 'round');
    const working = new Map<string, PlayerState>();
    const playerIds = [...new Set(batch.flatMap((job) => job.matches.flatMap((m) => m.teams.flatMap((t) => t.players.map((p) => p.id)))))];
    // A round needs every world for the next round's groups; other writes only their players.
    const rows = hasRound
      ? await tx.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1', [ladder.id])
      : await tx.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, playerIds]);
    const cache: LadderCache = { version, chain: [version], nextSeq, roundCount, players: new Map() };
    for (const id of playerIds) cache.players.set(id, null);
    for (const row of rows) {
      const state = rowToState(row);
      working.set(row.id, state);
      cache.players.set(row.id, state);
    }

    const planned = this.plan(ladder, batch, { nextSeq, roundCount, stored, takenIds, takenRounds, working });
    const { matchRows, changeRows, idemRows, roundRows, changed, rated } = planned;

    let newPlayers = 0;
    if (rated > 0) {
      await tx.query(
        `INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability)
         SELECT $1, s, i, a, r, rd, b::json, w::jsonb FROM unnest($2::int8[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::text[], $8::text[]) AS u(s, i, a, r, rd, b, w)`,
        [ladder.id, matchRows.seq, matchRows.id, matchRows.at, matchRows.receivedAt, matchRows.round, matchRows.body, matchRows.wp],
      );
      const finals = [...changed.values()];
      const inserted = await tx.query<{ inserted: boolean }>(
        `INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at)
         SELECT $1, i, r, d, v, m, l FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int4[], $7::int8[]) AS u(i, r, d, v, m, l)
         ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at
         RETURNING (xmax = 0) AS inserted`,
        [
          ladder.id,
          finals.map((p) => p.id),
          finals.map((p) => p.state.rating),
          finals.map((p) => p.state.rd ?? null),
          finals.map((p) => p.state.volatility ?? null),
          finals.map((p) => p.state.matches),
          finals.map((p) => p.state.lastAt ?? null),
        ],
      );
      newPlayers = inserted.filter((row) => row.inserted).length;
      await tx.query(
        `INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms)
         SELECT $1, p, s, t, b::json, a::json, x::json FROM unnest($2::text[], $3::int8[], $4::int4[], $5::text[], $6::text[], $7::text[]) AS u(p, s, t, b, a, x)`,
        [ladder.id, changeRows.player, changeRows.seq, changeRows.team, changeRows.before, changeRows.after, changeRows.terms],
      );
    }
    if (idemRows.key.length > 0) {
      await tx.query(
        `INSERT INTO idempotency (ladder, key, request_hash, status, response, created_at)
         SELECT $1, k, h, s, r, $6 FROM unnest($2::text[], $3::text[], $4::int4[], $5::text[]) AS u(k, h, s, r)`,
        [ladder.id, idemRows.key, idemRows.hash, idemRows.status, idemRows.response, Date.now()],
      );
    }
    for (const row of roundRows) {
      await tx.query('INSERT INTO rounds (ladder, number, name, at, first_seq, last_seq, summary) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)', [ladder.id, ...row]);
    }
    if (rated > 0) {
      const token = newVersion();
      await tx.query('UPDATE ladders SET next_seq = $2, match_count = match_count + $3, player_count = player_count + $4, round_count = $5, version = $6 WHERE id = $1', [
        ladder.id,
        planned.nextSeq,
        rated,
        newPlayers,
        planned.roundCount,
        token,
      ]);
      cache.version = token;
      cache.chain = [token];
      cache.nextSeq = planned.nextSeq;
      cache.roundCount = planned.roundCount;
      for (const player of changed.values()) cache.players.set(player.id, player.state);
    }
    return { path: 'locked' as const, outcomes: planned.outcomes, committed: [...changed.values()], rated, lastSeq: planned.nextSeq - 1, cache };
  }
}
