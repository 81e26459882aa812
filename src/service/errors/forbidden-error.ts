import { LadderError } from 'ladder-core/core/errors.js';
import type { Scope } from '../scopes.js';

/** A valid key that lacks the scope the operation needs. */
export class ForbiddenError extends LadderError {
  override name = 'ForbiddenError';
  constructor(readonly scope: Scope) {
    super(`this key lacks the ${scope} scope`);
  }
}
