import { LadderError } from 'ladder-core/core/errors.js';

/**
 * The matchmakers' thread stopped (crashed, ran out of memory, was
 * terminated) before it answered. Its matchmakers are gone; the loop builds
 * them again from the shared queue in a new thread, as after a lost lock.
 * Internal to the matchmaking loop: no request ever sees it.
 */
export class MatchmakingWorkerStoppedError extends LadderError {
  override name = 'MatchmakingWorkerStoppedError';
  constructor(
    /** The thread's exit code, when it exited. */
    readonly exitCode: number | undefined,
    /** Why, when the thread said (an uncaught error's message). */
    readonly reason: string | undefined,
  ) {
    super(
      `the matchmaking worker stopped${exitCode !== undefined ? ` (exit code ${exitCode})` : ''}${reason !== undefined ? `: ${reason}` : ''}; its matchmakers are rebuilt from the queue`,
    );
  }
}
