import { LadderError } from 'ladder-core/core/errors.js';

/**
 * The caller's API key is limited to named ladders: `ladder` is not one of
 * them, or (null) the operation reaches every ladder (managing API keys).
 */
export class LadderNotAllowedError extends LadderError {
  override name = 'LadderNotAllowedError';
  constructor(readonly ladder: string | null) {
    super(
      ladder === null
        ? 'this API key is limited to named ladders; this needs a key for every ladder'
        : `this API key is limited to ladders other than ${JSON.stringify(ladder.slice(0, 80))}`,
    );
  }
}
