/**
 * What the matchmaking loop and its matchmakers' thread say to each other
 * (src/service/matchmaking-worker/host.ts), and the one function both sides
 * use to apply a batch of queue changes to a `Matchmaker`, so a matchmaker
 * kept in process behaves exactly as one in the worker.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Backfill, BackfillInput, Matchmaker, ResolvedWidening, TicketInput } from 'ladder-core/matchmaking';
import type { WarmUpOptions, WarmUpReport } from '../matchmaking-warm-up.js';
import type { PassBackfill, PassMatch, QueueMatchmakerOptions, RuleSetQueue } from './rule-set-queue.js';

/** A ladder's matchmaker: the team-rank one, or a rule-set queue behind the same calls. */
export type QueueMatchmaker = Matchmaker | RuleSetQueue;

/** One change to a matchmaker, as the queue's events describe them. */
export type MatchmakerOp =
  | { op: 'add'; ticket: TicketInput }
  | { op: 'cancel'; id: string }
  | { op: 'addBackfill'; backfill: BackfillInput }
  | { op: 'removeBackfill'; id: string };

/** An InvalidInputError as data (errors lose their class crossing threads). */
export interface RefusedInput {
  field: string | undefined;
  detail: string;
}

/**
 * The outcome of one op, in the order sent: `add` and `addBackfill` give
 * null when accepted, 'present' when the matchmaker already holds that id
 * (told by `has`/`hasBackfill`, never by an error's text), or the refusal;
 * `cancel` and `removeBackfill` whether the ticket or backfill was there.
 */
export type OpResult = null | boolean | { refused: RefusedInput } | 'present';

/** What a matchmaker counts, sent back with every answer so the proxy can read them without a round trip. */
export interface MatchmakerCounts {
  size: number;
  backfillCount: number;
}

/** What the loop reads of a pass (the pass's `waiting` list stays in the worker: nobody reads it and it holds every ticket id). */
export interface RemotePassResult {
  matches: PassMatch[];
  /** Fills in the pass (a rule-set queue's name their teams and roles). */
  backfills: PassBackfill[];
  /** Wall and CPU milliseconds of the library's pass where it ran. */
  ms: number;
  cpuMs: number;
  /** Rule-set queues: rule name → waiting tickets it held most often in this pass. */
  why?: Record<string, number>;
}

/**
 * A pass whose matches are handed over a part at a time (MATCHES_PER_PART),
 * so a burst's hundred thousand matches never sit decoded on the main thread
 * at once: its heap stays small (no long garbage collection) and each part is
 * placed before the next is asked for.
 */
export interface StreamedPass extends Omit<RemotePassResult, 'matches'> {
  /** Matches the pass formed, in all its parts. */
  formed: number;
  /** The matches in order, a part at a time (from a worker, after a turn of the event loop before each part after the first). Read once. */
  parts(): AsyncGenerator<PassMatch[]>;
}

/** The settings a matchmaker resolved from its options. */
export interface MatchmakerSettings {
  teamSize: number;
  widening: ResolvedWidening;
  maxCandidates: number;
  /** Thread the matchmaker lives on (worker_threads' threadId; 0 on the main thread). */
  threadId: number;
  /** Rule-set queues: seconds after a ticket's arrival at which its last expansion step applies. */
  expansionSeconds?: number;
}

export type Request =
  | { kind: 'create'; handle: number; options: QueueMatchmakerOptions }
  | { kind: 'apply'; handle: number; ops: MatchmakerOp[] }
  | { kind: 'pass'; handle: number; now: number }
  | { kind: 'part'; handle: number }
  | { kind: 'backfills'; handle: number }
  /** Rule-set queues: the last pass's reason for each of these waiting tickets. */
  | { kind: 'why'; handle: number; ids: string[] }
  | { kind: 'dispose'; handle: number }
  | { kind: 'warmUp'; options: WarmUpOptions };

export type Answer =
  | { kind: 'create'; settings: MatchmakerSettings }
  | { kind: 'apply'; results: OpResult[]; counts: MatchmakerCounts }
  /** `parts`: further parts of the matches to ask for with `part`, one at a time. */
  | { kind: 'pass'; result: RemotePassResult; parts: number; formed: number; counts: MatchmakerCounts }
  /** Matches as JSON text: a string crosses threads as one copy, and JSON.parse decodes it faster than a structured clone of as many objects. */
  | { kind: 'part'; matches: string }
  | { kind: 'backfills'; backfills: Backfill[] }
  | { kind: 'why'; reasons: Record<string, string> }
  | { kind: 'warmUp'; report: WarmUpReport };

/** An error thrown while answering a request, as data. */
export interface FailureData {
  name: string;
  message: string;
  /** Set for an InvalidInputError. */
  refused?: RefusedInput;
}

/** Main thread → worker. `dispose` expects no reply. */
export interface RequestMessage {
  id: number;
  request: Request;
}

/** Worker → main thread. */
export type ReplyMessage = { id: number; answer: Answer } | { id: number; failure: FailureData };

/**
 * Matches per part of a pass's answer. The main thread asks for each part
 * once it has decoded the one before, so its event loop turns between
 * parts: decoding 130,000 matches in one go would stall it for a second,
 * and a part of 1,000 decodes in a few milliseconds.
 */
export const MATCHES_PER_PART = 1000;

/**
 * Applies ops in order, each seeing the ones before, as the loop once did
 * call by call. An InvalidInputError of an add is that op's refusal; any
 * other error stops the batch and is thrown (the ops before it stay applied).
 */
export function applyOps(matchmaker: QueueMatchmaker, ops: readonly MatchmakerOp[]): OpResult[] {
  const results: OpResult[] = [];
  for (const op of ops) {
    if (op.op === 'cancel') results.push(matchmaker.cancel(op.id));
    else if (op.op === 'removeBackfill') results.push(matchmaker.removeBackfill(op.id));
    else if (op.op === 'add' ? matchmaker.has(String(op.ticket.id)) : matchmaker.hasBackfill(op.backfill.id)) results.push('present');
    else {
      try {
        if (op.op === 'add') matchmaker.add(op.ticket);
        else matchmaker.addBackfill(op.backfill);
        results.push(null);
      } catch (error) {
        if (!(error instanceof InvalidInputError)) throw error;
        results.push({ refused: { field: error.field, detail: error.detail } });
      }
    }
  }
  return results;
}

export function countsOf(matchmaker: QueueMatchmaker): MatchmakerCounts {
  return { size: matchmaker.size, backfillCount: matchmaker.backfillCount };
}

/** The settings a matchmaker resolved, as sent to the loop. */
export function settingsOf(matchmaker: QueueMatchmaker, threadId: number): MatchmakerSettings {
  return {
    teamSize: matchmaker.teamSize,
    widening: matchmaker.widening,
    maxCandidates: matchmaker.maxCandidates,
    threadId,
    ...('expansionSeconds' in matchmaker ? { expansionSeconds: matchmaker.expansionSeconds } : {}),
  };
}

export function failureData(error: unknown): FailureData {
  if (error instanceof InvalidInputError) return { name: error.name, message: error.message, refused: { field: error.field, detail: error.detail } };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

/** The error a failure stands for on this side: an InvalidInputError again when it was one. */
export function failureError(failure: FailureData): Error {
  if (failure.refused !== undefined) return new InvalidInputError(failure.refused.detail, { field: failure.refused.field });
  const error = new Error(failure.message);
  error.name = failure.name;
  return error;
}
