import { LadderError } from 'ladder-core/core/errors.js';

/** The backfill can no longer be changed: every slot was filled (the match has its players). */
export class BackfillClosedError extends LadderError {
  override name = 'BackfillClosedError';
  constructor(
    readonly backfill: string,
    readonly status: 'filled',
  ) {
    super(`backfill ${JSON.stringify(backfill.slice(0, 80))} is already ${status}; its players stay in the match`);
  }
}
