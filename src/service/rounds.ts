/** World-vs-World rounds as the read side lists them. */
import type { Database } from '../store/database.js';
import { listRoundSummaries } from '../store/rounds.js';
import type { Ladder } from './ladders.js';

/** The ladder's rounds, oldest first (a public read: bounded, cancellable). */
export function roundsOf(db: Database, ladder: Ladder, signal?: AbortSignal) {
  return db.read((read) => listRoundSummaries(read, ladder.id), { signal });
}
