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
 * (the system needs all of it; about 300–360 bytes per one-on-one match, the live window only with a horizon). It moves the
 * ladder's log epoch, so every writer derives its history again.
 *
 * Every correction adds one to the ladder's `corrections` count in the same
 * transaction: a shared leaderboard compares it with the count it was loaded
 * at (rankings.ts), since a correction moves states but no sequence number.
 */
import type { Database, Queryable } from '../store/database.js';
import { deleteFreeze, writeFreeze } from '../store/frozen.js';
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
import { findMatch, type MatchRecord, markVoid, replaceMatchBody, rewriteHistory, setLastSeqs } from '../store/matches.js';
import { deletePlayers, upsertPlayers } from '../store/players.js';
import { ConflictError, NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import type { LadderHead } from '../store/ladders.js';
import { type Correction, type CorrectionResult, compute, newVersion, type Step } from './correction-compute.js';
import { Turns } from './turns.js';

export type { Correction, CorrectionResult } from './correction-compute.js';

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
    case 'freeze':
      return step.freeze ? writeFreeze(tx, ladder, step.freeze, Date.now()) : deleteFreeze(tx, ladder);
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
