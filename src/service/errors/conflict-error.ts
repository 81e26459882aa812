import { LadderError } from 'ladder-core/core/errors.js';

/** The request is valid but contradicts what is stored (an id taken, a key reused with another body). */
export class ConflictError extends LadderError {
  override name = 'ConflictError';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}
