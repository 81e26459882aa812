/** Job kinds for the pool's own tests (src/service/jobs/pool.test.ts): each exercises one way a job can end. */
import { getPriority } from 'node:os';
import { threadId } from 'node:worker_threads';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { kernelThreadId } from '../../src/service/jobs/serve.js';

/** Jobs `count` has run on this thread. */
let counted = 0;

export const TEST_KINDS = Object.freeze({
  /** How many `count` jobs this thread has run, this one included: a job that never ran is missing from it. */
  count: () => ({ counted: ++counted, threadId }),
  /** Its input back, with the thread that ran it. */
  echo: (input: { value: unknown }) => ({ value: input.value, threadId }),
  /** Busy for `ms` milliseconds of this thread's time (a stand-in for a long synchronous search). */
  spin: (input: { ms: number }) => {
    const end = performance.now() + input.ms;
    while (performance.now() < end);
    return threadId;
  },
  /** This thread's scheduling priority (nice), or null where threads have none of their own. */
  priority: () => {
    const id = kernelThreadId();
    return id === undefined ? null : getPriority(id);
  },
  /** A domain error naming a field. */
  invalid: (input: { field: string }) => {
    throw new InvalidInputError('is not acceptable', { field: input.field });
  },
  /** A bug: a TypeError. */
  bug: () => {
    const missing = undefined as unknown as { call(): void };
    missing.call();
  },
  /** The worker exits under the job. */
  exit: () => process.exit(3),
  /** An error thrown outside the job, on a later turn: the worker dies of it. */
  crashLater: () => {
    setTimeout(() => {
      throw new Error('uncaught in the worker');
    }, 0);
    return 'answered before the worker dies';
  },
});
