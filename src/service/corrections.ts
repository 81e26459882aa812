/**
 * Voiding and correcting a stored match. Matches are the source of truth, so
 * a correction is a partial replay: starting from each affected player's
 * state just before the match (one history entry each), every later match that
 * involves a player whose state changed is rated again, in sequence order;
 * a player whose new state equals the stored one drops out of the replay.
 * Matches that involve no changed player are not touched. The result equals a
 * replay of the corrected log from the start (test/service/corrections.test.ts
 * checks it, and `ladder rebuild` confirms it).
 *
 * Two ways to write it (`CorrectionMode`). 'transaction' (the default on
 * PostgreSQL): one transaction holding the ladder lock; submissions that
 * arrive meanwhile wait for it, and the version it writes makes every
 * writer's cached states stale, so they are rated on the corrected states.
 * 'phased' (the default on PGlite, whose one connection a long transaction
 * would hold away from every other ladder): a short transaction opens a
 * journal row and sets the ladder's `correcting` flag (writes to the ladder
 * then get 503 with Retry-After; other ladders are untouched); phase compute
 * reads the stored rows, which nothing changes meanwhile, in short
 * statements and stages each write (a page of history, a batch of players)
 * a few to a transaction; phase apply copies the staged writes into
 * place, as many per transaction as fit in a few milliseconds, recording in
 * the journal how many are applied in that same transaction, so none is
 * applied twice; the last staged write
 * moves the counters, and a short transaction closes the journal. A run
 * stopped in phase compute (a crash, a failed statement) has changed
 * nothing: it is computed again from scratch; one stopped in phase apply
 * resumes where it stopped (`resumeCorrections`, at the service's start, on
 * the ladder's next write or correction). Reads of the ladder serve the
 * stored rows until the apply starts, and 503 during it (in the process
 * running it). The stored answers of Idempotency-Keys are left as first sent.
 *
 * Bounded work per step: the later matches are read a page at a time (keyset
 * on seq, `chunk` matches), rated, and the page's new history written before
 * the next is read, so memory holds one page plus the moved players' states
 * (at most the ladder's players), never the log. Between rows the event loop
 * gets a turn whenever `sliceMs` has passed, so no synchronous stretch is
 * longer than about one slice (plus one match): the work is mostly database
 * round trips and JSON, which a worker thread would not make cheaper, and a
 * worker could not share the transaction. Season resets are carried to each
 * moved state lazily (each keeps the seq it was last carried to), so a step
 * costs the match's players, not every moved player.
 *
 * Chains: a correction that takes a player out of the match or puts one in
 * changes that player's chain of history entries; only the player's first
 * entry after the match (or `players.last_seq`, when there is none) needs
 * its link moved, so the correction tracks just those players.
 *
 * A whole-history ladder (Whole-History Rating) has no state just before a
 * match to start from: a correction derives the ladder's whole history again
 * from the corrected log, as `ladder rebuild` would, rewrites the history
 * and win probabilities of the corrected match and of every counted
 * match after it (page by page, as above), and writes every player whose
 * state changed. The derived history itself is held in memory while it runs
 * (the system needs all of it; about 140 bytes per match). It moves the
 * ladder's log epoch, so every writer derives its history again.
 *
 * Every correction adds one to the ladder's `corrections` count in the same
 * transaction: a shared leaderboard compares it with the count it was loaded
 * at (rankings.ts), since a correction moves states but no sequence number.
 */
import type { Match } from 'ladder-core/core/match.js';
import type { PlayerState } from 'ladder-core/core/systems.js';
import type { Database, Queryable } from '../store/database.js';
import { adjustLadder, countCorrection, lockLadder } from '../store/ladders.js';
import {
  closeJournal,
  dropSteps,
  holdJournal,
  openJournal,
  pendingCorrections,
  setApplied,
  setJournalPhase,
  stagedSteps,
  stageSteps,
  takeOverJournal,
} from '../store/corrections.js';
import { applyingCorrections, beingCorrected } from './correction-state.js';
import {
  type ChangeEntry,
  type ChangeRecord,
  findMatch,
  lastChangesBefore,
  lastEntriesBefore,
  logPage,
  type LogRow,
  type MatchRecord,
  markVoid,
  replaceMatchBody,
  rewriteHistory,
  setLastSeqs,
} from '../store/matches.js';
import { deletePlayers, findPlayers, playersAfter, upsertPlayers } from '../store/players.js';
import { rowToState } from '../store/rows.js';
import { listSeasons } from '../store/seasons.js';
import { ConflictError, NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import { matchChanges, publicState, rateUnit } from './rating.js';
import { resetAt } from './seasons.js';
import { keepsWholeHistory, LadderHistory } from './whole-history.js';
import type { LadderHead } from '../store/ladders.js';
import type { CommittedPlayer } from './writer/plan.js';
import { randomInt } from 'node:crypto';

export type Correction = { kind: 'void'; reason: string } | { kind: 'replace'; match: Match };

export interface CorrectionResult {
  match: { id: string; seq: number; void: boolean };
  /** False when nothing changed (a match voided again). */
  changed: boolean;
  /** Every player whose stored state changed: before and after (null: not in the ladder). */
  players: Array<{ id: string; before: ReturnType<typeof publicState> | null; after: ReturnType<typeof publicState> | null }>;
  /** Matches rated again, besides the corrected one. */
  rerated: number;
  /** For the rankings. */
  committed: CommittedPlayer[];
  removed: string[];
  lastSeq: number;
}

function stateOfRecord(values: ChangeRecord['after'], lastAt: number | null): PlayerState {
  const state: PlayerState = { rating: values.rating, matches: values.matches };
  if (values.rd !== undefined) state.rd = values.rd;
  if (values.volatility !== undefined) state.volatility = values.volatility;
  if (lastAt !== null) state.lastAt = lastAt;
  return state;
}

function same(a: number | undefined, b: number | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)));
}

function sameState(a: PlayerState | undefined, b: PlayerState | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return same(a.rating, b.rating) && same(a.rd, b.rd) && same(a.volatility, b.volatility) && a.matches === b.matches && a.lastAt === b.lastAt;
}

function playersOf(match: Match): string[] {
  return match.teams.flatMap((t) => t.players.map((p) => p.id));
}

function newVersion(): number {
  return randomInt(1, 2 ** 48 - 1);
}

/**
 * How a correction is written. 'transaction': all of it in one transaction
 * holding the ladder lock (atomic; everything else that needs the
 * connection waits for it, which on PGlite, with its one connection, is every
 * other ladder's writes too). 'phased': computed from the untouched log with
 * its writes staged, then copied into place, each step a short transaction
 * of its own; durable and resumable (see the top of this file).
 */
export type CorrectionMode = 'transaction' | 'phased';

/**
 * The mode used when none is given: phased on PGlite, one transaction on
 * PostgreSQL. PGlite has one connection, so a correction in one transaction
 * holds every other ladder's writes for as long as it runs (13.7 s for
 * 100,000 later matches, docs/BENCHMARKS.md); phased frees the connection
 * between steps of a few milliseconds each. PostgreSQL holds only the
 * corrected ladder's lock, and one transaction is the faster of the two there.
 */
export function defaultCorrectionMode(db: Pick<Database, 'kind'>): CorrectionMode {
  return db.kind === 'pglite' ? 'phased' : 'transaction';
}

/** Where a phased correction is between two of its steps (test hooks and progress). */
export type CorrectionPoint = { phase: 'compute'; staged: number } | { phase: 'apply'; applied: number };

export interface CorrectionOptions {
  /** Matches read, rated and written per page. @default 1000 (200 on PGlite; 100 when phased) */
  chunk?: number;
  /** Longest stretch of work before the event loop gets a turn, in ms. @default 20 */
  sliceMs?: number;
  /** @default defaultCorrectionMode(db) */
  mode?: CorrectionMode;
  /** Phased: writes staged per transaction in phase compute. @default 4 */
  stageBatch?: number;
  /**
   * Phased: milliseconds a transaction of phase apply goes on applying staged
   * writes (at least one each); another ladder's write on PGlite waits about
   * this long at most. @default 10
   */
  stepBudgetMs?: number;
  /**
   * Called between two steps of a phased correction (after a write is
   * staged, before a staged write is applied). A rejection stops the
   * correction there, as a crash would: the journal stays, and
   * `resumeCorrections` (or the next correction of the ladder) finishes it.
   */
  onStep?: (ladder: string, point: CorrectionPoint) => void | Promise<void>;
}

/** Gives the event loop a turn once `sliceMs` has passed since the last one. */
class Turns {
  private since = performance.now();
  constructor(private readonly sliceMs: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/** A page of the log, read ahead; a failure is handled where it is awaited (or by the transaction's end). */
function prefetch(tx: Queryable, ladder: string, afterSeq: number, chunk: number): Promise<LogRow[]> {
  const page = logPage(tx, ladder, afterSeq, chunk);
  page.catch(() => {});
  return page;
}

/** A moved player's state (undefined: not in the ladder), carried through the season resets up to just before `at`. */
interface Moved {
  state: PlayerState | undefined;
  at: number;
}

export async function correctMatch(
  db: Database,
  ladder: Ladder,
  matchId: string,
  correction: Correction,
  now = Date.now(),
  options: CorrectionOptions = {},
): Promise<CorrectionResult> {
  const mode = options.mode ?? defaultCorrectionMode(db);
  const turns = new Turns(options.sliceMs ?? 20);
  if (mode === 'transaction') {
    // PGlite runs each statement on this thread: smaller pages keep each one short.
    const chunk = Math.max(1, Math.floor(options.chunk ?? (db.kind === 'pglite' ? 200 : 1000)));
    return db.transaction(async (tx) => {
      const begun = await begin(tx, ladder, matchId, correction);
      if ('unchanged' in begun) return begun.unchanged;
      return compute({ reads: tx, write: (step) => applyStep(tx, ladder.id, step), chunk, playerBatch: PLAYER_BATCH, turns }, ladder, begun.head, begun.target, correction, now);
    });
  }
  // A journal left by a run that stopped (a crash, a failed statement) is finished first.
  await resumeInBackground(db, ladder, options);
  // Held from before the journal exists, so no write refused meanwhile takes this run for a stopped one.
  const here = runningHere(db);
  if (here.has(ladder.id)) throw beingCorrected(ladder.id);
  here.add(ladder.id);
  try {
    const token = newVersion();
    const begun = await db.transaction(async (tx) => {
      const found = await begin(tx, ladder, matchId, correction);
      if ('unchanged' in found) return found;
      await openJournal(tx, { ladder: ladder.id, matchId, correction, at: now, token, version: newVersion() });
      return found;
    });
    if ('unchanged' in begun) return begun.unchanged;
    return await runPhased(db, ladder, token, begun.head, begun.target, correction, now, options, turns);
  } finally {
    here.delete(ladder.id);
  }
}

/** Players read or written per statement at the end of a correction (per step when phased). */
const PLAYER_BATCH = 5000;
const PHASED_PLAYER_BATCH = 1000;
/** Staged writes deleted per statement once applied. */
const DROP_BATCH = 50;
/** Writes staged per transaction in phase compute, and the JSON they may reach before they are staged sooner. */
const STAGE_BATCH = 4;
const STAGE_BYTES = 64 * 1024;
/** Staged writes read per transaction in phase apply (applied while the step budget lasts). */
const APPLY_READ_AHEAD = 4;
/** Milliseconds a transaction of phase apply goes on applying staged writes. */
const STEP_BUDGET_MS = 10;

/** One write of a correction: run at once in the transaction, or staged (as JSON) and applied later. */
type Step =
  | { op: 'void'; seq: number; reason: string; at: number }
  | { op: 'replace'; seq: number; at: number; body: string; winProbability: string }
  | { op: 'history'; seq: number[]; changes: string[]; winProbability: (string | null)[] }
  | { op: 'lastSeqs'; ids: string[]; seqs: (number | null)[] }
  | { op: 'upsert'; players: CommittedPlayer[] }
  | { op: 'delete'; ids: string[] }
  | { op: 'adjust'; matches: number; players: number; version: number; logEpoch?: number };

async function applyStep(tx: Queryable, ladder: string, step: Step): Promise<void> {
  switch (step.op) {
    case 'void':
      return markVoid(tx, ladder, step.seq, step.reason, step.at);
    case 'replace':
      return replaceMatchBody(tx, ladder, step.seq, { at: step.at, body: step.body, winProbability: step.winProbability });
    case 'history':
      return rewriteHistory(tx, ladder, step);
    case 'lastSeqs':
      return setLastSeqs(tx, ladder, step.ids, step.seqs);
    case 'upsert':
      await upsertPlayers(tx, ladder, step.players);
      return;
    case 'delete':
      return deletePlayers(tx, ladder, step.ids);
    case 'adjust':
      // The count shared leaderboards compare, moved in the same transaction as the counters.
      await countCorrection(tx, ladder);
      return adjustLadder(tx, ladder, { matches: step.matches, players: step.players, version: step.version, ...(step.logEpoch !== undefined ? { logEpoch: step.logEpoch } : {}) });
  }
}

const running = new WeakMap<Database, Set<string>>();

/** Ladders with a phased correction run in this process now. */
function runningHere(db: Database): Set<string> {
  let set = running.get(db);
  if (!set) running.set(db, (set = new Set()));
  return set;
}

/** A run whose journal another run took over (or that the ladder's deletion removed) stops. */
class TakenOverError extends ConflictError {
  override name = 'TakenOverError';
}

function takenOver(ladder: string): TakenOverError {
  return new TakenOverError(`the correction of ladder ${ladder} was taken over or the ladder deleted`, 'ladder');
}

/**
 * Phase compute, then phase apply, of the correction whose journal `token`
 * holds: the corrected rows are computed from the stored ones (untouched
 * until the apply) and each write staged in a short transaction; then the
 * journal moves to apply and the staged writes are copied into place.
 */
async function runPhased(
  db: Database,
  ladder: Ladder,
  token: number,
  head: LadderHead,
  target: MatchRecord,
  correction: Correction,
  now: number,
  options: CorrectionOptions,
  turns: Turns,
): Promise<CorrectionResult> {
  const here = runningHere(db);
  const held = here.has(ladder.id);
  here.add(ladder.id);
  try {
    let staged = 0;
    // Writes are staged a few at a time: each transaction costs a round trip and a commit of its own.
    let buffered: string[] = [];
    const flush = async () => {
      if (buffered.length === 0) return;
      const steps = buffered;
      buffered = [];
      const n = staged;
      await turns.pause();
      await db.transaction(async (tx) => {
        if (!(await holdJournal(tx, ladder.id, token))) throw takenOver(ladder.id);
        await stageSteps(tx, ladder.id, n, steps);
      });
      staged = n + steps.length;
      await options.onStep?.(ladder.id, { phase: 'compute', staged });
    };
    const stageBatch = Math.max(1, Math.floor(options.stageBatch ?? STAGE_BATCH));
    let bytes = 0;
    const write = async (step: Step) => {
      const text = JSON.stringify(step);
      buffered.push(text);
      bytes += text.length;
      if (buffered.length >= stageBatch || bytes >= STAGE_BYTES) {
        bytes = 0;
        await flush();
      }
    };
    const chunk = Math.max(1, Math.floor(options.chunk ?? 100));
    const result = await compute({ reads: db, write, chunk, playerBatch: PHASED_PLAYER_BATCH, turns }, ladder, head, target, correction, now);
    await flush();
    await db.transaction(async (tx) => {
      if (!(await holdJournal(tx, ladder.id, token))) throw takenOver(ladder.id);
      await setJournalPhase(tx, ladder.id, 'apply');
    });
    await applyStaged(db, ladder.id, token, options);
    return result;
  } finally {
    if (!held) here.delete(ladder.id);
  }
}

/**
 * Copies the staged writes into place from the first not yet applied, one
 * per transaction, each recorded as applied in the same transaction (so none
 * is applied twice); then deletes them and closes the journal. Reads of the
 * ladder are refused meanwhile (its rows are part corrected).
 */
async function applyStaged(db: Database, ladder: string, token: number, options: CorrectionOptions): Promise<void> {
  // Until the journal closes, reads of the ladder are refused; a run stopped by a failure keeps them refused until it is resumed.
  const applying = applyingCorrections(db);
  applying.add(ladder);
  try {
    let applied = await db.transaction(async (tx) => {
      const journal = await holdJournal(tx, ladder, token);
      if (!journal) throw takenOver(ladder);
      return journal.applied;
    });
    // PGlite answers on the event loop's own thread, settling promises only: without a turn given here the
    // loop would not run a timer or take a request until the last step is applied.
    const turns = new Turns(options.sliceMs ?? 20);
    // Each transaction applies staged writes until `stepBudgetMs` has passed (at least one): other
    // ladders' writes, which wait for the one connection on PGlite, wait about that long at most.
    const budget = options.stepBudgetMs ?? STEP_BUDGET_MS;
    for (let more = true; more; ) {
      await turns.pause();
      await options.onStep?.(ladder, { phase: 'apply', applied });
      more = await db.transaction(async (tx) => {
        const started = performance.now();
        const journal = await holdJournal(tx, ladder, token);
        if (!journal) throw takenOver(ladder);
        let next = journal.applied;
        for (const text of await stagedSteps(tx, ladder, next, APPLY_READ_AHEAD)) {
          await applyStep(tx, ladder, JSON.parse(text) as Step);
          next++;
          if (performance.now() - started >= budget) break;
        }
        if (next === journal.applied) return false;
        await setApplied(tx, ladder, next);
        applied = next;
        return true;
      });
    }
    while ((await dropSteps(db, ladder, DROP_BATCH)) > 0) await turns.pause();
    await db.transaction(async (tx) => {
      if (!(await holdJournal(tx, ladder, token))) throw takenOver(ladder);
      await closeJournal(tx, ladder, newVersion());
    });
  } catch (error) {
    // Another run has the journal now (or the ladder is gone): that run decides what reads see.
    if (error instanceof TakenOverError) applying.delete(ladder);
    throw error;
  }
  applying.delete(ladder);
}

/**
 * Finishes the ladder's unfinished correction unless a run of this process
 * has it (resolves true when it finished one). Nothing else of this process
 * runs it meanwhile; another process's run is taken over.
 */
export async function resumeInBackground(db: Database, ladder: Ladder, options: CorrectionOptions): Promise<boolean> {
  const here = runningHere(db);
  if (here.has(ladder.id)) return false;
  here.add(ladder.id);
  try {
    return (await resumeCorrections(db, async () => ladder, { ...options, only: ladder.id, held: true })).length > 0;
  } finally {
    here.delete(ladder.id);
  }
}

/** A correction left unfinished and finished now: its ladder and what it changed. */
export interface ResumedCorrection {
  ladder: string;
  result: CorrectionResult | undefined;
}

/**
 * Finishes every phased correction left unfinished (a crash, a failed
 * statement): one in phase apply resumes copying where it stopped; one in
 * phase compute is computed again from scratch (nothing of it was applied).
 * `ladderOf` gives a ladder's definition. Each is taken over with a new
 * token, so a run still going elsewhere stops at its next step.
 */
export async function resumeCorrections(
  db: Database,
  ladderOf: (id: string) => Promise<Ladder>,
  options: CorrectionOptions & { only?: string; held?: boolean } = {},
): Promise<ResumedCorrection[]> {
  const done: ResumedCorrection[] = [];
  const here = runningHere(db);
  for (const pending of await pendingCorrections(db)) {
    if (options.only !== undefined && pending.ladder !== options.only) continue;
    // A run of this process has it (unless the caller is that run).
    if (!options.held) {
      if (here.has(pending.ladder)) continue;
      here.add(pending.ladder);
    }
    try {
      const result = await resumeOne(db, pending.ladder, ladderOf, options);
      if (result) done.push(result);
    } finally {
      if (!options.held) here.delete(pending.ladder);
    }
  }
  return done;
}

async function resumeOne(db: Database, id: string, ladderOf: (id: string) => Promise<Ladder>, options: CorrectionOptions): Promise<ResumedCorrection | undefined> {
  const token = newVersion();
  const taken = await db.transaction((tx) => takeOverJournal(tx, id, token));
  if (!taken) return undefined;
  if (taken.phase === 'apply') {
    await applyStaged(db, id, token, options);
    return { ladder: id, result: undefined };
  }
  // Nothing of it was applied: staged writes of the stopped run are dropped and it is computed again.
  while ((await dropSteps(db, id, DROP_BATCH)) > 0) await new Promise((resolve) => setImmediate(resolve));
  const ladder = await ladderOf(id);
  const head = await db.transaction((tx) => lockLadder(tx, id));
  const target = await findMatch(db, id, taken.matchId);
  if (!head || !target) throw takenOver(id);
  const result = await runPhased(db, ladder, token, head, target, taken.correction as Correction, taken.at, options, new Turns(options.sliceMs ?? 20));
  return { ladder: id, result };
}

/**
 * The ladder locked, the match found and checked: the work to do, or the
 * answer when there is none (a match voided again). A ladder another
 * correction is under way on is refused (503).
 */
async function begin(tx: Queryable, ladder: Ladder, matchId: string, correction: Correction): Promise<{ head: LadderHead; target: MatchRecord } | { unchanged: CorrectionResult }> {
  const head = await lockLadder(tx, ladder.id);
  if (!head) throw new NotFoundError(`no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
  if (head.correcting) throw beingCorrected(ladder.id);
  const target = await findMatch(tx, ladder.id, matchId);
  if (!target) throw new NotFoundError(`no match ${JSON.stringify(matchId.slice(0, 80))} in ladder ${ladder.id}`, 'match');
  if (target.voidedAt !== null) {
    if (correction.kind === 'void')
      return {
        unchanged: {
          match: { id: target.id, seq: target.seq, void: true },
          changed: false,
          players: [],
          rerated: 0,
          committed: [],
          removed: [],
          lastSeq: head.nextSeq - 1,
        },
      };
    throw new ConflictError(`match ${JSON.stringify(target.id)} is void; a voided match cannot be corrected`, 'match');
  }
  if (target.round !== null)
    throw new ConflictError(
      `match ${JSON.stringify(target.id)} is part of round ${JSON.stringify(target.round)}; World-vs-World rounds are rated as one period and cannot be corrected match by match`,
      'match',
    );
  return { head, target };
}

/** How a correction reads the ladder as it was and where its writes go. */
interface Work {
  reads: Queryable;
  write: (step: Step) => Promise<void>;
  chunk: number;
  playerBatch: number;
  turns: Turns;
}

/** Computes the correction from the stored (uncorrected) rows, handing every write to `work.write` in order. */
function compute(work: Work, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  if (keepsWholeHistory(ladder.system)) return correctWholeHistory(work, ladder, head, target, correction, now);
  return correctIn(work, ladder, head, target, correction, now);
}

async function correctIn(work: Work, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  const { reads: tx, write, chunk, turns } = work;

  const system = ladder.rating;
  const seasons = await listSeasons(tx, ladder.id);
  // A correction without `at` keeps the stored time.
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  const touched = [...new Set([...playersOf(target.body), ...(replacement ? playersOf(replacement) : [])])];
  const carried = (moved: Moved, toSeq: number): PlayerState | undefined => moved.state && resetAt(system, seasons, moved.at, toSeq, moved.state);

  // The affected players' states just before the match (season resets applied up to it).
  const moved = new Map<string, Moved>();
  // A walk of `chunk` entries per statement at most (a page's worth of matches).
  const previous = await lastChangesBefore(tx, ladder.id, touched, target.seq, chunk, () => turns.pause());
  for (const id of touched) {
    const last = previous.get(id);
    moved.set(id, { state: last ? resetAt(system, seasons, last.seq, target.seq, stateOfRecord(last.after, last.lastAtAfter)) : undefined, at: target.seq });
  }
  const statesAt = (ids: readonly string[], seq: number, stored: ReadonlyMap<string, ChangeEntry>) => {
    const states = new Map<string, PlayerState>();
    for (const id of ids) {
      const entry = moved.get(id);
      if (entry) {
        const state = carried(entry, seq);
        if (state) states.set(id, state);
        continue;
      }
      const row = stored.get(id);
      if (row) states.set(id, stateOfRecord(row.before, row.lastAtBefore));
    }
    return states;
  };

  // Players a correction takes out of the match or puts into it: the link their next entry after it must carry.
  const relink = new Map<string, number | null>();
  const takeLink = (id: string, stored: number | null): number | null => {
    if (!relink.has(id)) return stored;
    const link = relink.get(id)!;
    relink.delete(id);
    return link;
  };

  if (replacement) {
    const [targetRow] = await logPage(tx, ladder.id, target.seq - 1, 1);
    const storedPrev = new Map((targetRow?.changes ?? []).map((entry) => [entry.player, entry.prev]));
    const now = new Set(playersOf(replacement));
    const added = playersOf(replacement).filter((id) => !storedPrev.has(id));
    const before = await lastEntriesBefore(tx, ladder.id, added, target.seq);
    for (const [id, prev] of storedPrev) if (!now.has(id)) relink.set(id, prev);
    for (const id of added) {
      storedPrev.set(id, before.get(id) ?? null);
      relink.set(id, target.seq);
    }
    const states = statesAt(touched, target.seq, new Map());
    const probabilities = system.predict(
      replacement.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())),
      replacement.context,
    );
    const rating = rateUnit(system, [replacement], states, false)[0]!;
    for (const change of rating.players) moved.set(change.id, { state: change.after, at: target.seq });
    await write({ op: 'replace', seq: target.seq, at: replacement.at!, body: JSON.stringify(replacement), winProbability: JSON.stringify(probabilities) });
    await write({ op: 'history', seq: [target.seq], changes: [matchChanges(rating.players, (id) => storedPrev.get(id) ?? null)], winProbability: [null] });
  } else {
    await write({ op: 'void', seq: target.seq, reason: correction.kind === 'void' ? correction.reason : '', at: now });
  }

  // Later matches, in order, a page at a time; only those with a player whose state moved are rated again.
  let rerated = 0;
  for (let next = prefetch(tx, ladder.id, target.seq, chunk); ; ) {
    const page = await next;
    // The next page is read while this one is rated: this page's writes touch none of its rows.
    const more = page.length === chunk;
    if (more) next = prefetch(tx, ladder.id, page[page.length - 1]!.seq, chunk);
    const out: { seq: number[]; changes: string[]; winProbability: (string | null)[] } = { seq: [], changes: [], winProbability: [] };
    for (const row of page) {
      await turns.pause();
      const entries = row.changes ?? [];
      if (!row.voided && (entries.length === 0 ? playersOf(JSON.parse(row.body) as Match) : entries.map((e) => e.player)).some((id) => moved.has(id))) {
        const body = JSON.parse(row.body) as Match;
        const stored = new Map(entries.map((entry) => [entry.player, entry]));
        const states = statesAt(playersOf(body), row.seq, stored);
        const probabilities = system.predict(
          body.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())),
          body.context,
        );
        const rating = rateUnit(system, [body], states, false)[0]!;
        for (const change of rating.players) {
          const entry = stored.get(change.id);
          const storedAfter = entry ? stateOfRecord(entry.after, entry.lastAtAfter) : undefined;
          if (sameState(change.after, storedAfter)) moved.delete(change.id);
          else moved.set(change.id, { state: change.after, at: row.seq });
        }
        out.seq.push(row.seq);
        out.changes.push(matchChanges(rating.players, (id) => takeLink(id, stored.get(id)?.prev ?? null)));
        out.winProbability.push(JSON.stringify(probabilities));
        rerated++;
        continue;
      }
      if (relink.size > 0 && entries.some((entry) => relink.has(entry.player))) {
        for (const entry of entries) entry.prev = takeLink(entry.player, entry.prev);
        out.seq.push(row.seq);
        out.changes.push(JSON.stringify(entries));
        out.winProbability.push(null);
      }
    }
    if (out.seq.length > 0) await write({ op: 'history', ...out });
    if (!more) break;
  }
  // Players with no entry after the match: their newest entry is the link kept for them.
  if (relink.size > 0) await write({ op: 'lastSeqs', ids: [...relink.keys()], seqs: [...relink.values()] });

  // Moved states carried past the last season boundary, compared with the stored ones.
  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  let added = 0;
  const ids = [...moved.keys()];
  for (let i = 0; i < ids.length; i += work.playerBatch) {
    const batch = ids.slice(i, i + work.playerBatch);
    const stored = new Map((await findPlayers(tx, ladder.id, batch)).map((row) => [row.id, rowToState(row)]));
    const written: CommittedPlayer[] = [];
    const gone: string[] = [];
    for (const id of batch) {
      await turns.pause();
      const after = carried(moved.get(id)!, head.nextSeq);
      const before = stored.get(id);
      if (sameState(after, before)) continue;
      players.push({ id, before: before ? publicState(before) : null, after: after ? publicState(after) : null });
      if (after) {
        const player: CommittedPlayer = { id, state: after, seq: head.nextSeq - 1 };
        if (relink.has(id)) player.lastSeq = relink.get(id)!;
        written.push(player);
        if (!before) added++;
      } else gone.push(id);
    }
    if (written.length > 0) await write({ op: 'upsert', players: written });
    if (gone.length > 0) await write({ op: 'delete', ids: gone });
    finals.push(...written);
    removed.push(...gone);
  }
  await write({ op: 'adjust', matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion() });
  return { match: { id: target.id, seq: target.seq, void: !replacement }, changed: true, players, rerated, committed: finals, removed, lastSeq: head.nextSeq - 1 };
}

/**
 * A correction of a whole-history ladder: the log corrected, then the whole
 * history derived again from it, page by page; the history of the corrected
 * match and of every counted match after it is rewritten a page at a time.
 */
async function correctWholeHistory(work: Work, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  const { reads: tx, write, chunk, turns } = work;
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  // Players a replacement takes out of the match or puts in, with the link their next entry must carry.
  const relink = new Map<string, number | null>();
  let storedPrev = new Map<string, number | null>();
  if (replacement) {
    const [targetRow] = await logPage(tx, ladder.id, target.seq - 1, 1);
    storedPrev = new Map((targetRow?.changes ?? []).map((entry) => [entry.player, entry.prev]));
    const now = new Set(playersOf(replacement));
    const added = playersOf(replacement).filter((id) => !storedPrev.has(id));
    const before = await lastEntriesBefore(tx, ladder.id, added, target.seq);
    for (const [id, prev] of storedPrev) if (!now.has(id)) relink.set(id, prev);
    for (const id of added) {
      storedPrev.set(id, before.get(id) ?? null);
      relink.set(id, target.seq);
    }
    // Its win probability is set below with the others, once the history before it is known.
    await write({ op: 'replace', seq: target.seq, at: replacement.at!, body: JSON.stringify(replacement), winProbability: 'null' });
  } else {
    await write({ op: 'void', seq: target.seq, reason: correction.kind === 'void' ? correction.reason : '', at: now });
  }
  // The log is read as stored; the corrected match is taken as corrected (its write may not be applied yet).
  const correctedBody = replacement ? (JSON.parse(JSON.stringify(replacement)) as Match) : undefined;
  const takeLink = (id: string, stored: number | null): number | null => {
    if (!relink.has(id)) return stored;
    const link = relink.get(id)!;
    relink.delete(id);
    return link;
  };
  const logEpoch = newVersion();
  const history = new LadderHistory(ladder.system, ladder.options, logEpoch);
  let rewritten = 0;
  for (let next = prefetch(tx, ladder.id, 0, chunk); ; ) {
    const page = await next;
    const more = page.length === chunk;
    if (more) next = prefetch(tx, ladder.id, page[page.length - 1]!.seq, chunk);
    const out: { seq: number[]; changes: string[]; winProbability: (string | null)[] } = { seq: [], changes: [], winProbability: [] };
    for (const row of page) {
      await turns.pause();
      const isTarget = row.seq === target.seq;
      const body = isTarget && correctedBody ? correctedBody : (JSON.parse(row.body) as Match);
      const voided = row.voided || (isTarget && !correctedBody);
      if (voided || row.seq < target.seq) {
        // Before the corrected match, history and probabilities stay as they are: the same steps give the same states.
        history.add(row.seq, body, voided);
        if (row.seq > target.seq && relink.size > 0 && (row.changes ?? []).some((entry) => relink.has(entry.player))) {
          const entries = row.changes!;
          for (const entry of entries) entry.prev = takeLink(entry.player, entry.prev);
          out.seq.push(row.seq);
          out.changes.push(JSON.stringify(entries));
          out.winProbability.push(null);
        }
        continue;
      }
      const probabilities = history.predict(body);
      const step = history.add(row.seq, body)!;
      const stored = row.seq === target.seq ? storedPrev : new Map((row.changes ?? []).map((entry) => [entry.player, entry.prev]));
      out.seq.push(row.seq);
      out.changes.push(matchChanges(step.rating.players, (id) => (row.seq === target.seq ? (stored.get(id) ?? null) : takeLink(id, stored.get(id) ?? null))));
      out.winProbability.push(JSON.stringify(probabilities));
      rewritten++;
    }
    if (out.seq.length > 0) await write({ op: 'history', ...out });
    if (!more) break;
  }
  if (relink.size > 0) await write({ op: 'lastSeqs', ids: [...relink.keys()], seqs: [...relink.values()] });

  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  let added = 0;
  // Every stored player, a batch at a time (keyset on id), then the derived players the table does not hold.
  const seen = new Set<string>();
  for (let from = ''; ; ) {
    const rows = await playersAfter(tx, ladder.id, from, work.playerBatch);
    const written: CommittedPlayer[] = [];
    const gone: string[] = [];
    for (const row of rows) {
      await turns.pause();
      seen.add(row.id);
      const before = rowToState(row);
      const after = history.states.get(row.id);
      if (sameState(after, before)) continue;
      players.push({ id: row.id, before: publicState(before), after: after ? publicState(after) : null });
      if (after) written.push(lastSeqOf({ id: row.id, state: after, seq: head.nextSeq - 1 }, relink));
      else gone.push(row.id);
    }
    if (written.length > 0) await write({ op: 'upsert', players: written });
    if (gone.length > 0) await write({ op: 'delete', ids: gone });
    finals.push(...written);
    removed.push(...gone);
    if (rows.length < work.playerBatch) break;
    from = rows[rows.length - 1]!.id;
  }
  const fresh: CommittedPlayer[] = [];
  for (const [id, after] of history.states) {
    if (seen.has(id)) continue;
    players.push({ id, before: null, after: publicState(after) });
    fresh.push(lastSeqOf({ id, state: after, seq: head.nextSeq - 1 }, relink));
    added++;
  }
  for (let i = 0; i < fresh.length; i += work.playerBatch) await write({ op: 'upsert', players: fresh.slice(i, i + work.playerBatch) });
  finals.push(...fresh);
  await write({ op: 'adjust', matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion(), logEpoch });
  return {
    match: { id: target.id, seq: target.seq, void: !replacement },
    changed: true,
    players,
    rerated: rewritten - (replacement ? 1 : 0),
    committed: finals,
    removed,
    lastSeq: head.nextSeq - 1,
  };
}

/** A player written by a correction, with its newest history entry when the correction moved it. */
function lastSeqOf(player: CommittedPlayer, relink: ReadonlyMap<string, number | null>): CommittedPlayer {
  if (relink.has(player.id)) player.lastSeq = relink.get(player.id)!;
  return player;
}
