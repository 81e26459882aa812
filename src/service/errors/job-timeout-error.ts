import { LadderError } from 'ladder-core/core/errors.js';

/**
 * A heavy job (src/service/jobs/) ran past its time limit: its worker thread
 * was stopped and replaced. The same request may fit when the machine is
 * less busy, or with less work asked for.
 */
export class JobTimeoutError extends LadderError {
  override name = 'JobTimeoutError';
  constructor(
    readonly kind: string,
    readonly limitMs: number,
  ) {
    super(`the ${kind} job ran longer than its limit of ${limitMs} ms and was stopped; retry later or ask for less`);
  }
}
