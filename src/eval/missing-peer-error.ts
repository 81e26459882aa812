import { LadderError } from 'ladder-core/core/errors.js';

/**
 * A peer rating library (openskill, ts-trueskill) that evaluation compares
 * Ladder with is not installed. They are development dependencies of
 * Ladder, so an installed package has neither; the error names what to
 * install instead of failing with a module-resolution stack trace.
 */
export class MissingPeerError extends LadderError {
  override name = 'MissingPeerError';
  /** The npm packages to install. */
  readonly packages: readonly string[];

  constructor(packages: readonly string[]) {
    super(
      `comparing with the peer rating libraries needs ${packages.join(' and ')}, which Ladder does not install; run \`npm install ${packages.join(' ')}\` in this project, or leave the peers out`,
    );
    this.packages = packages;
  }
}
