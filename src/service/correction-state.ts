/**
 * What the rest of the service needs to know of phased corrections
 * (corrections.ts): the answer a writer gets while one runs, and which
 * ladders this process is copying corrected rows into (their stored rows are
 * then part old, part new, so reads of them are refused until the switch).
 */
import type { Database } from '../store/database.js';
import { UnavailableError } from './errors/index.js';

/** Seconds a client is told to wait before it retries a write to a ladder under correction. */
export const CORRECTION_RETRY_AFTER_SECONDS = 2;

/** The answer to a write (or a read while corrected rows are copied) of a ladder under correction: 503 with Retry-After. */
export function beingCorrected(ladder: string): UnavailableError {
  return new UnavailableError('server', `ladder ${ladder} is being corrected; retry shortly`, CORRECTION_RETRY_AFTER_SECONDS);
}

const applying = new WeakMap<Database, Set<string>>();

/** The ladders of `db` whose corrected rows this process is copying into place now. */
export function applyingCorrections(db: Database): Set<string> {
  let set = applying.get(db);
  if (!set) applying.set(db, (set = new Set()));
  return set;
}

/** Refuses a read of a ladder whose stored rows are part corrected (503 with Retry-After). */
export function refuseHalfCorrected(db: Database, ladder: string): void {
  if (applying.get(db)?.has(ladder)) throw beingCorrected(ladder);
}
