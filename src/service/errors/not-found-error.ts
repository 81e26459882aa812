import { LadderError } from 'ladder-core/core/errors.js';

/** The thing named by `field` does not exist, or the caller may not know that it does. */
export class NotFoundError extends LadderError {
  override name = 'NotFoundError';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}
