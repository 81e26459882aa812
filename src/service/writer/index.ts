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
 * - **Whole-history ladders** (`capabilities.wholeHistory`, Whole-History
 *   Rating) always take the locked path, one batch at a time per ladder: the
 *   ladder's history lives in this process (a `LadderHistory`, derived from
 *   the match log in sequence order), and each match of the batch is added to
 *   it and rated from it; every player whose state it moves is written, not
 *   only the match's. Under the lock the history is first brought up to the
 *   log: the matches after the last one it took in are added (another
 *   instance wrote them), or, when the ladder's `log_epoch` moved (a void or
 *   correction rewrote the log) or this process has none, it is derived from
 *   the log: with a horizon, from the stored last freeze and the matches
 *   after it (`frozen_priors`, written in the transaction whose match made
 *   the freeze), else from the whole log. A history that took in a batch
 *   whose transaction failed is dropped and derived again.
 *
 * A submission is answered only after its statement or transaction commits,
 * so a 2xx means the match is durable; if it fails, every submission of the
 * group gets a 503 and nothing of the group was written (or, if the
 * connection broke during the commit, all of it was), so retrying with the
 * same key is always safe.
 */
import { hash, randomInt } from 'node:crypto';
import type { Match } from 'ladder-core/core/match.js';
import type { PlayerState } from 'ladder-core/core/systems.js';
import { DatabaseRejectedError } from '../../store/database-errors.js';
import type { Database, Queryable } from '../../store/database.js';
import { findAnswers, insertAnswers } from '../../store/idempotency.js';
import { advanceLadder, findLadder, lockLadder, logHead } from '../../store/ladders.js';
import { beingCorrected } from '../correction-state.js';
import { insertMatches, takenMatchIds, writeGuardedBatch } from '../../store/matches.js';
import { allPlayers, findPlayers, readHeadAndPlayers, upsertPlayers } from '../../store/players.js';
import { takenRoundNames, insertRounds } from '../../store/rounds.js';
import { rowToState } from '../../store/rows.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { NotFoundError, UnavailableError } from '../errors/index.js';
import { type Ladder, ladderFromRow } from '../ladders.js';
import { storedFreezeMark, writeFreeze } from '../../store/frozen.js';
import { type DerivationOptions, FREEZE_SHARE_MS, FREEZE_SLICE_MS, FreezeAheadMismatchError, keepsWholeHistory, type LadderHistory, startHistory } from '../whole-history.js';
import { Turns } from '../turns.js';
import type { LadderHead } from '../../store/ladders.js';
import { type CommittedPlayer, type Idempotency, type Job, planBatch, type Written } from './plan.js';

export type { CommittedPlayer, Idempotency, Written } from './plan.js';

export interface WriterHooks {
  /** After a commit: the players whose state changed and how many matches were rated. */
  onCommit?: (ladder: Ladder, players: CommittedPlayer[], matchesRated: number, lastSeq: number) => Promise<void> | void;
  /** How many submissions one transaction carried (metrics). */
  onBatch?: (ladder: Ladder, size: number, seconds: number, path: 'fast' | 'locked') => void;
  /**
   * The ladder's definition as stored, read in `tx` (which holds the ladder's lock), when the one a
   * batch came with is of an earlier incarnation (the ladder was deleted and created anew). Default:
   * read the row.
   */
  reloadLadder?: (id: string, tx: Queryable) => Promise<Ladder | undefined>;
  /** A batch was refused because the ladder is under correction (a correction stopped by a failure is resumed from here). */
  onCorrecting?: (ladder: Ladder) => void;
}

export interface WriterOptions {
  /** Submissions per transaction at most. @default 256 */
  maxBatch?: number;
  /** Player states cached per ladder at most; past it the cache starts over. @default 1000000 */
  maxCachedPlayers?: number;
  /** One-statement batches of a ladder in flight at once (the next one is planned and queued before the previous commits). @default 2 */
  pipelineDepth?: number;
  /** How a whole history is derived from the log before the ladder is locked (pages, slices between turns of the event loop). */
  derivation?: DerivationOptions;
}

/**
 * What this process knows of a ladder as of `version`: valid while the stored
 * version is unchanged, since every write of the ladder replaces it.
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
  /** The sequence number of each cached player's newest history entry (absent: none). */
  lastSeqs: Map<string, number>;
}

interface BatchResult {
  path: 'fast' | 'locked';
  /** The definition the batch was rated under, when it is not the one it came with (a newer incarnation). */
  ladder?: Ladder;
  outcomes: Array<Written | Error>;
  committed: CommittedPlayer[];
  rated: number;
  lastSeq: number;
}

/** Request fingerprint for idempotency: the kind and the parsed body, canonical JSON. */
export function requestHash(kind: string, body: unknown): string {
  // One-shot hash: same digest as update(kind).update('\0').update(json), without a Hash object per request.
  return hash('sha256', `${kind}\0${JSON.stringify(body)}`);
}

/** The definition a ladder's row holds now (when no `reloadLadder` hook is given). */
async function readDefinition(id: string, tx: Queryable): Promise<Ladder | undefined> {
  const row = await findLadder(tx, id);
  return row && ladderFromRow(row);
}

/**
 * A fresh value for `ladders.version`. Random rather than +1, so a batch
 * planned on a projected version can never match a version someone else
 * wrote (48 random bits; a few versions are compared at a time).
 */
function newVersion(): number {
  return randomInt(1, 2 ** 48 - 1);
}

/** `kept` when it can be brought up to the log at (`logEpoch`, `lastSeq`) by adding matches, else undefined. */
function usableHistory(kept: LadderHistory | undefined, ladder: Ladder, logEpoch: number, lastSeq: number): LadderHistory | undefined {
  if (kept === undefined || kept.broken || kept.logEpoch !== logEpoch || kept.lastSeq > lastSeq) return undefined;
  return JSON.stringify(kept.resolvedOptions) === JSON.stringify(ladder.rating.options) ? kept : undefined;
}

export class MatchWriter {
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Set<string>();
  private readonly maxBatch: number;
  private readonly maxCachedPlayers: number;
  private readonly pipelineDepth: number;
  private readonly derivation: DerivationOptions;
  private readonly caches = new Map<string, LadderCache>();
  private readonly inFlight = new Map<string, { keys: Set<string>; ids: Set<string> }>();
  /** The newest definition of each ladder this writer has been given or has read: batches are rated under it. */
  private readonly definitions = new Map<string, Ladder>();
  /** Whole-history ladders' histories, each up to date with the log as of the last batch this process wrote. */
  private readonly histories = new Map<string, LadderHistory>();
  private closed = false;
  /** Batches written by each path since start (tests, diagnostics). */
  readonly writes = { fast: 0, locked: 0, isolated: 0 };

  constructor(
    private readonly db: Database,
    private readonly hooks: WriterHooks = {},
    options: WriterOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
    this.maxCachedPlayers = options.maxCachedPlayers ?? 1_000_000;
    this.pipelineDepth = Math.max(1, options.pipelineDepth ?? 2);
    this.derivation = options.derivation ?? {};
  }

  /** Rates one match (already validated by parseMatch, `at` filled in). */
  submitMatch(ladder: Ladder, match: Match, idempotency?: Idempotency): Promise<Written> {
    return this.enqueue(ladder, { kind: 'match', idempotency, matches: [match], receivedAt: Date.now() });
  }

  /** Rates one World-vs-World round: its matches form one rating period. */
  submitRound(ladder: Ladder, name: string | undefined, at: number, matches: Match[], idempotency?: Idempotency): Promise<Written> {
    return this.enqueue(ladder, { kind: 'round', idempotency, matches, roundName: name, roundAt: at, receivedAt: Date.now() });
  }

  /** Stops taking work; waits for transactions in flight. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running.size > 0) await new Promise((r) => setTimeout(r, 10));
  }

  /** Keeps `ladder` as the definition to rate under unless one of a later incarnation is known. */
  private learn(ladder: Ladder): void {
    const known = this.definitions.get(ladder.id);
    if (known === undefined || ladder.incarnation >= known.incarnation) this.definitions.set(ladder.id, ladder);
  }

  private enqueue(ladder: Ladder, job: Omit<Job, 'resolve' | 'reject'>): Promise<Written> {
    if (this.closed) return Promise.reject(new UnavailableError('server', 'the server is shutting down; retry on another instance or shortly'));
    this.learn(ladder);
    return new Promise<Written>((resolve, reject) => {
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

  private async drain(given: Ladder): Promise<void> {
    let ladder = given;
    this.running.add(ladder.id);
    const inflight = new Set<Promise<void>>();
    // A whole history takes in one batch at a time: the next is rated on what the one before committed.
    const depth = keepsWholeHistory(ladder.system) ? 1 : this.pipelineDepth;
    // Batches are answered (and reported to onCommit) in the order they were taken, so the
    // leaderboard sees commits in seq order even when a later batch's commit returns first.
    let answered: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        const queue = this.queues.get(ladder.id);
        if (!queue || queue.length === 0 || inflight.size >= depth) {
          if (inflight.size === 0) break;
          await Promise.race(inflight);
          continue;
        }
        // Let the requests already received join this batch (on PGlite every batch waits for the one before).
        if (queue.length < this.maxBatch) await new Promise((resolve) => setImmediate(resolve));
        // The newest definition known (a PATCH, or a later incarnation a batch before this one met).
        ladder = this.definitions.get(ladder.id) ?? ladder;
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
          return this.writeLockedAndCache(ladder, batch);
        })().catch((error: unknown) => {
          // The database refused some data of the batch (no statement of it was written): find the
          // submission at fault by writing them one by one, so that it alone fails.
          if (error instanceof DatabaseRejectedError && batch.length > 1) return this.writeOneByOne(ladder, batch);
          throw error;
        });
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

  private async writeLockedAndCache(ladder: Ladder, batch: Job[]): Promise<BatchResult> {
    // A whole history is taken out while the transaction runs and put back only once it committed:
    // one that took in a batch that was not written is dropped (derived again next time).
    let history = this.histories.get(ladder.id);
    this.histories.delete(ladder.id);
    if (keepsWholeHistory(ladder.system)) {
      history = await this.historyBeforeLock(ladder, history);
      // A ladder whose writes come without a pause leaves its pending freeze's rebuild no time between them: it gets a share.
      history?.shareFreeze(this.derivation.freezeSliceMs ?? FREEZE_SLICE_MS, this.derivation.freezeShareMs ?? FREEZE_SHARE_MS);
      await this.freezeBeforeLock(history, batch);
    }
    let locked: Awaited<ReturnType<MatchWriter['writeLocked']>>;
    try {
      locked = await this.db.transaction((tx) => this.writeLocked(tx, ladder, batch, history));
    } catch (error) {
      if (!(error instanceof FreezeAheadMismatchError)) throw error;
      // The freeze run before the lock met another log (another instance wrote first, or its match was
      // refused): rolled back, derived again, written with the freeze inside the transaction.
      history = await this.historyBeforeLock(ladder, undefined);
      locked = await this.db.transaction((tx) => this.writeLocked(tx, ladder, batch, history));
    }
    if (locked.ladder) this.learn(locked.ladder);
    // Only once committed does what the transaction saw and wrote become the cache.
    this.caches.set(ladder.id, locked.cache);
    if (locked.history) {
      this.histories.set(ladder.id, locked.history);
      this.rebuildFreeze(ladder.id, locked.history);
    }
    return locked;
  }

  /**
   * While a freeze of the ladder's whole history is rebuilt beside it (a
   * horizon's `freezeLag`), runs that rebuild in slices between requests,
   * so that the match which puts it in effect finds it done and the
   * ladder's writes never wait for a replay of its whole window. It gives
   * way to the ladder's own writes (it waits while a batch of the ladder
   * is queued or running), and stops once it has caught up (the next
   * batch starts it again), the history is no longer this writer's, or the
   * writer closes. A ladder whose queue never empties leaves it no such
   * time; its writes then give the rebuild a slice of 5 ms in every 50
   * (`LadderHistory.shareFreeze`, in `writeLockedAndCache`).
   */
  private rebuildFreeze(ladder: string, history: LadderHistory): void {
    if (!history.freezeRebuilding) return;
    const turns = new Turns(this.derivation.freezeSliceMs ?? FREEZE_SLICE_MS);
    void history.rebuildFreeze(turns, () => {
      // A writer shutting down leaves the rebuild (the next instance derives the freeze from the log).
      if (this.closed) return 'stop';
      if (this.running.has(ladder)) return 'wait';
      return this.histories.get(ladder) === history ? 'run' : 'stop';
    });
  }

  /**
   * The ladder's whole history, up to date with the log under the lock
   * (`head`): `kept` brought up to date by adding the matches after its
   * last one, or, when it cannot be (none, another log epoch, other options,
   * ahead of the log), a new one derived from the whole log.
   */
  private async historyAt(tx: Queryable, ladder: Ladder, head: LadderHead, kept: LadderHistory | undefined): Promise<LadderHistory> {
    const last = head.nextSeq - 1;
    const history = usableHistory(kept, ladder, head.logEpoch, last) ?? (await startHistory(tx, ladder, head.logEpoch, last));
    await history.catchUp(tx, ladder.id, last);
    return history;
  }

  /**
   * Runs the freeze the batch's first match would make (a horizon whose
   * point its day passes) before the ladder is locked, in steps with turns
   * of the event loop between them: a freeze of seconds then holds neither
   * the ladder's lock nor, on PGlite, the one connection every ladder's
   * queries wait for. Under the lock the history must take that match in
   * first (`LadderHistory.freezeBeforeLock`); when it cannot, the write is
   * rolled back and run again on a history derived afresh
   * (`writeLockedAndCache`).
   */
  private async freezeBeforeLock(history: LadderHistory | undefined, batch: readonly Job[]): Promise<void> {
    const first = batch[0];
    if (history === undefined || first === undefined || first.kind !== 'match' || first.matches.length !== 1) return;
    await history.freezeBeforeLock(first.matches[0]!, new Turns(this.derivation.freezeSliceMs ?? FREEZE_SLICE_MS));
  }

  /**
   * The history brought up to the log as it stands before the ladder is
   * locked: derived (after a start, a correction, a failed write) or caught
   * up (another instance wrote) outside any transaction, page by page, in
   * slices with turns of the event loop between them. Deriving a long log
   * then holds neither the process (other ladders' requests are served
   * meanwhile; this ladder's wait in its queue) nor the ladder lock nor, on
   * PGlite, the one connection; under the lock, `historyAt` adds only what
   * was written since.
   */
  private async historyBeforeLock(ladder: Ladder, kept: LadderHistory | undefined): Promise<LadderHistory | undefined> {
    const head = await logHead(this.db, ladder.id);
    if (!head) return kept;
    const history = usableHistory(kept, ladder, head.logEpoch, head.lastSeq) ?? (await startHistory(this.db, ladder, head.logEpoch, head.lastSeq));
    await history.deriveInSlices(this.db, ladder.id, head.lastSeq, this.derivation);
    return history;
  }

  /**
   * Writes each submission of a refused batch in a transaction of its own.
   * One the database refuses again gets a 400; validation at the edge is
   * meant to make this never happen, so it is a last line of defence.
   */
  private async writeOneByOne(ladder: Ladder, batch: Job[]): Promise<BatchResult> {
    this.writes.isolated++;
    const outcomes: Array<Written | Error> = [];
    const committed = new Map<string, CommittedPlayer>();
    let rated = 0;
    let lastSeq = 0;
    let fresh: Ladder | undefined;
    for (const job of batch) {
      try {
        const result = await this.writeLockedAndCache(fresh ?? ladder, [job]);
        fresh = result.ladder ?? fresh;
        outcomes.push(result.outcomes[0]!);
        for (const player of result.committed) committed.set(player.id, player);
        rated += result.rated;
        lastSeq = Math.max(lastSeq, result.lastSeq);
      } catch (error) {
        if (!(error instanceof DatabaseRejectedError)) throw error;
        outcomes.push(new InvalidInputError('the database refused this submission; check its ids and names for characters it cannot store', { field: 'body' }));
      }
    }
    return { path: 'locked', outcomes, committed: [...committed.values()], rated, lastSeq, ...(fresh ? { ladder: fresh } : {}) };
  }

  private async answer(ladder: Ladder, batch: Job[], started: number, result: BatchResult | undefined, failure: unknown): Promise<void> {
    if (result === undefined) {
      // Ladder's own errors say what went wrong; anything else is the database's, and its text stays in `cause`.
      const failed =
        failure instanceof NotFoundError || failure instanceof UnavailableError || failure instanceof InvalidInputError
          ? failure
          : new UnavailableError('database', 'could not store the submission, nothing was rated; retry with the same Idempotency-Key', 1, { cause: failure });
      for (const job of batch) job.reject(failed);
      return;
    }
    const { outcomes, committed, rated, lastSeq } = result;
    ladder = result.ladder ?? ladder;
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
    if (batch.some((job) => job.kind !== 'match') || keepsWholeHistory(ladder.system)) return null;
    const keys = [...new Set(batch.map((job) => job.idempotency?.key).filter((key): key is string => key !== undefined))];
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
      const read = await readHeadAndPlayers(this.db.ordered, ladder.id, missing);
      if (!read) return null;
      const { head } = read;
      // A ladder created anew under this id since the definition was read: the locked path rates under the new one.
      // A ladder under correction: the locked path refuses the batch.
      if (head.incarnation !== ladder.incarnation || head.correcting) return null;
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
        cache = { version: head.version, chain: [head.version], nextSeq: head.nextSeq, roundCount: head.roundCount, players: new Map(), lastSeqs: new Map() };
        this.caches.set(ladder.id, cache);
      }
      // Players this process's batches in flight did not touch (those are cached): same at every version of our chain.
      for (const id of missing) cache.players.set(id, null);
      for (const row of read.players) {
        cache.players.set(row.id, rowToState(row));
        if (row.last_seq !== null) cache.lastSeqs.set(row.id, row.last_seq);
      }
    }
    const known = cache!;
    const working = new Map<string, PlayerState>();
    const lastSeqs = new Map<string, number>();
    for (const id of playerIds) {
      const state = known.players.get(id);
      if (state) working.set(id, state);
      const lastSeq = known.lastSeqs.get(id);
      if (lastSeq !== undefined) lastSeqs.set(id, lastSeq);
    }
    const planned = await planBatch(ladder, batch, {
      nextSeq: known.nextSeq,
      roundCount: known.roundCount,
      stored: new Map(),
      takenIds: new Set(),
      takenRounds: new Set(),
      working,
      lastSeqs,
    });
    if (planned.rated === 0) return null;
    const finals = [...planned.changed.values()];
    const newPlayers = finals.filter((p) => known.players.get(p.id) === null).length;
    const { matchRows, idemRows } = planned;
    const expectedVersion = known.version;
    const expectedSeq = known.nextSeq;
    const token = newVersion();
    // Project the batch into the cache now, so the next batch can be planned on it before this one commits.
    known.version = token;
    known.chain.push(token);
    if (known.chain.length > this.pipelineDepth + 2) known.chain.shift();
    known.nextSeq = planned.nextSeq;
    for (const player of finals) known.players.set(player.id, player.state);
    for (const [id, lastSeq] of lastSeqs) known.lastSeqs.set(id, lastSeq);
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
    const statement = writeGuardedBatch(this.db.ordered, {
      ladder: ladder.id,
      expectedVersion,
      expectedIncarnation: ladder.incarnation,
      expectedSeq,
      newVersion: token,
      nextSeq: planned.nextSeq,
      matchesAdded: planned.rated,
      playersAdded: newPlayers,
      keys,
      matchIds: givenIds,
      matches: matchRows,
      players: finals,
      idempotency: idemRows,
      now: Date.now(),
    });
    const result = statement.then(
      (applied) => {
        sent();
        if (!applied) {
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
  private async writeLocked(tx: Queryable, given: Ladder, batch: Job[], kept?: LadderHistory): Promise<BatchResult & { cache: LadderCache; history?: LadderHistory }> {
    let ladder = given;
    const head = await lockLadder(tx, ladder.id);
    if (!head) throw new NotFoundError(`no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
    // Never rated against a half-corrected ladder: the client retries once the correction is done.
    if (head.correcting) {
      this.hooks.onCorrecting?.(ladder);
      throw beingCorrected(ladder.id);
    }
    if (head.incarnation !== ladder.incarnation) {
      // The ladder was deleted and created anew (by another instance): rate under the definition stored
      // now, read under the lock that keeps it so until this transaction ends.
      const fresh = await (this.hooks.reloadLadder ?? readDefinition)(ladder.id, tx);
      if (!fresh) throw new NotFoundError(`no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
      ladder = fresh;
    }
    const { nextSeq, roundCount, version } = head;
    const history = keepsWholeHistory(ladder.system) ? await this.historyAt(tx, ladder, head, kept) : undefined;

    const keys = [...new Set(batch.map((job) => job.idempotency?.key).filter((key): key is string => key !== undefined))];
    const stored = new Map<string, { hash: string; written: Written }>();
    for (const [key, answer] of await findAnswers(tx, ladder.id, keys)) stored.set(key, { hash: answer.hash, written: { body: answer.response, status: answer.status } });
    const givenIds = [...new Set(batch.flatMap((job) => job.matches.map((m) => m.id)).filter((id): id is string => id !== undefined))];
    const takenIds = await takenMatchIds(tx, ladder.id, givenIds);
    const takenRounds = await takenRoundNames(
      tx,
      ladder.id,
      batch.map((job) => job.roundName).filter((n): n is string => n !== undefined),
    );
    const hasRound = batch.some((job) => job.kind === 'round');
    const working = new Map<string, PlayerState>();
    const playerIds = [...new Set(batch.flatMap((job) => job.matches.flatMap((m) => m.teams.flatMap((t) => t.players.map((p) => p.id)))))];
    // A round needs every world for the next round's groups; other writes only their players.
    const rows = hasRound ? await allPlayers(tx, ladder.id) : await findPlayers(tx, ladder.id, playerIds);
    const cache: LadderCache = { version, chain: [version], nextSeq, roundCount, players: new Map(), lastSeqs: new Map() };
    const lastSeqs = new Map<string, number>();
    for (const id of playerIds) cache.players.set(id, null);
    for (const row of rows) {
      const state = rowToState(row);
      working.set(row.id, state);
      cache.players.set(row.id, state);
      if (row.last_seq !== null) {
        lastSeqs.set(row.id, row.last_seq);
        cache.lastSeqs.set(row.id, row.last_seq);
      }
    }

    const planned = await planBatch(ladder, batch, { nextSeq, roundCount, stored, takenIds, takenRounds, working, lastSeqs, ...(history ? { history } : {}) });
    // Frozen before the lock for a match the batch did not take in (refused, a repeat): that freeze is no state of the log.
    if (history?.freezeAheadPending) throw new FreezeAheadMismatchError();
    const { matchRows, idemRows, roundRows, changed, rated } = planned;
    const now = Date.now();
    let newPlayers = 0;
    if (rated > 0) {
      await insertMatches(tx, ladder.id, matchRows);
      newPlayers = await upsertPlayers(tx, ladder.id, [...changed.values()]);
    }
    await insertAnswers(tx, ladder.id, idemRows, now);
    await insertRounds(tx, ladder.id, roundRows);
    const freeze = history?.freezeUnsaved ? history.freeze() : undefined;
    if (freeze) {
      // In the transaction of the match that made the freeze (or of the first write after a derivation
      // that froze): the stored priors never describe a log that was not committed. A freeze met in
      // matches another instance wrote is stored already (a freeze is a function of the log up to the
      // match that made it): not written twice.
      const mark = await storedFreezeMark(tx, ladder.id);
      if (mark?.logEpoch !== freeze.logEpoch || mark.triggerSeq !== freeze.triggerSeq) await writeFreeze(tx, ladder.id, freeze, now);
      history!.freezeUnsaved = false;
    }
    if (rated > 0) {
      const token = newVersion();
      await advanceLadder(tx, ladder.id, { nextSeq: planned.nextSeq, matchesAdded: rated, playersAdded: newPlayers, roundCount: planned.roundCount, version: token });
      cache.version = token;
      cache.chain = [token];
      cache.nextSeq = planned.nextSeq;
      cache.roundCount = planned.roundCount;
      for (const player of changed.values()) cache.players.set(player.id, player.state);
      for (const [id, lastSeq] of lastSeqs) cache.lastSeqs.set(id, lastSeq);
    }
    return {
      path: 'locked' as const,
      outcomes: planned.outcomes,
      committed: [...changed.values()],
      rated,
      lastSeq: planned.nextSeq - 1,
      cache,
      ...(history ? { history } : {}),
      ...(ladder !== given ? { ladder } : {}),
    };
  }
}
