import { LadderError } from 'ladder-core/core/errors.js';

/**
 * Too many heavy jobs (src/service/jobs/) are queued or running for this
 * caller (its key, or its address without one), for this ladder, or for the
 * whole instance (`scope`); `limit` is that cap. Retry after
 * `retryAfterSeconds`, the pool's estimate of when a place frees up.
 */
export class JobsBusyError extends LadderError {
  override name = 'JobsBusyError';
  constructor(
    readonly scope: 'caller' | 'ladder' | 'instance',
    readonly limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      scope === 'caller'
        ? `this caller already has ${limit} heavy requests (balance, predict, integrity) queued or running; wait for an answer first`
        : scope === 'ladder'
          ? `this ladder already has ${limit} heavy requests (balance, predict, integrity) queued or running; retry shortly`
          : `the server has ${limit} heavy requests (balance, predict, integrity) queued or running; retry shortly`,
    );
  }
}
