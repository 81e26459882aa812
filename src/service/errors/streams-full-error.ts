import { LadderError } from 'ladder-core/core/errors.js';

/**
 * No slot for another server-sent-event stream: the caller's address holds
 * its `perAddress` streams, or the instance its `total`. A slot frees as soon
 * as a stream closes.
 */
export class StreamsFullError extends LadderError {
  override name = 'StreamsFullError';
  constructor(
    readonly cap: 'perAddress' | 'total',
    readonly limit: number,
    readonly retryAfterSeconds = 5,
  ) {
    super(
      cap === 'perAddress'
        ? `this address already holds ${limit} event streams (the cap per address); close one first`
        : `this instance already serves ${limit} event streams (its cap); retry later`,
    );
  }
}
