/**
 * Typed errors of the rating core. Adapters (CLI, service) map them to exit
 * codes and HTTP statuses; the core never prints or exits.
 */

/** Base class: every error Ladder raises on purpose is a LadderError. */
export class LadderError extends Error {
  override name = 'LadderError';
}

/**
 * Input that does not describe a valid match, game or option. `field` names
 * the offending field as a path (`teams[1].players[0].seconds`); `line` is the
 * 1-based input line when the input came from a file.
 */
export class InvalidInputError extends LadderError {
  override name = 'InvalidInputError';
  readonly field: string | undefined;
  readonly line: number | undefined;
  /** The message without its `line N, field F: ` prefix, for callers that report line and field themselves. */
  readonly detail: string;

  constructor(message: string, options: { field?: string; line?: number } = {}) {
    const where = [options.line !== undefined ? `line ${options.line}` : undefined, options.field !== undefined ? `field ${options.field}` : undefined].filter(Boolean).join(', ');
    super(where ? `${where}: ${message}` : message);
    this.detail = message;
    this.field = options.field;
    this.line = options.line;
  }

  /** The same error, placed on a line of an input file. */
  atLine(line: number): InvalidInputError {
    return new InvalidInputError(this.detail, { field: this.field, line });
  }
}

/** A numerical procedure that could not reach an answer (no bracket, no convergence). */
export class ConvergenceError extends LadderError {
  override name = 'ConvergenceError';
}

/**
 * A performance rating that has no finite value (a record of only wins or only
 * losses under maximum likelihood or netzero), raised only when the caller
 * asks for `unbounded: 'throw'`.
 */
export class UnboundedRatingError extends LadderError {
  override name = 'UnboundedRatingError';
  readonly direction: 'above' | 'below';
  constructor(message: string, direction: 'above' | 'below') {
    super(message);
    this.direction = direction;
  }
}

/**
 * A system name that is not registered (`createSystem('glicko')`): an
 * InvalidInputError naming the field, which also carries the name asked for
 * and the names that exist, so a caller with a name read at run time can
 * offer the choices.
 */
export class UnknownSystemError extends InvalidInputError {
  override name = 'UnknownSystemError';
  /** The name that was asked for. */
  readonly system: string;
  /** Every registered system name. */
  readonly known: readonly string[];

  constructor(system: string, known: readonly string[], field = 'system') {
    super(`unknown system ${JSON.stringify(system)}; expected one of ${known.join(', ')}`, { field });
    this.system = system;
    this.known = known;
  }
}
