/**
 * What a failed statement means for the caller, decided from PostgreSQL's
 * SQLSTATE class rather than from message text: either the statement's data
 * was refused (a retry with the same data fails again), or the database could
 * not be reached or could not finish (a retry may succeed). Drivers' own
 * messages stay inside these errors, as `cause`, for logs only.
 */
import { LadderError } from 'ladder-core/core/errors.js';

/** The database refused the data of a statement (SQLSTATE class 22 data exception or 23 integrity violation). */
export class DatabaseRejectedError extends LadderError {
  override name = 'DatabaseRejectedError';
  constructor(
    readonly sqlState: string,
    options: { cause: unknown },
  ) {
    super(`the database refused the data (SQLSTATE ${sqlState})`, options);
  }
}

/** The database could not run the statement: unreachable, shutting down, out of resources, or any other failure not caused by the data. */
export class DatabaseUnavailableError extends LadderError {
  override name = 'DatabaseUnavailableError';
  constructor(
    readonly sqlState: string | undefined,
    options: { cause: unknown },
  ) {
    super(`the database is unavailable${sqlState ? ` (SQLSTATE ${sqlState})` : ''}`, options);
  }
}

/**
 * A read was stopped before it finished: it ran past the read statement
 * timeout (`timeout`, after `timeoutMs`), or the client that asked for it went
 * away and it was cancelled (`cancelled`), or it was refused because too many
 * reads already wait for the embedded database (`busy`). Nothing was written; the same read
 * may succeed later, or as a smaller page.
 */
export class DatabaseReadStoppedError extends LadderError {
  override name = 'DatabaseReadStoppedError';
  constructor(
    readonly reason: 'timeout' | 'cancelled' | 'busy',
    readonly timeoutMs: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(
      reason === 'timeout'
        ? `the read ran longer than ${timeoutMs} ms and was stopped`
        : reason === 'busy'
          ? 'too many reads are waiting for the embedded database'
          : 'the read was cancelled: its client went away',
      options,
    );
  }
}

/** SQLSTATE 57014 query_canceled: a statement timeout or a cancel request stopped the statement. */
export const QUERY_CANCELED = '57014';

/**
 * Whether an error means the server could not be reached or would not serve
 * (no SQLSTATE: a network error; class 08 connection exception; 53300 too
 * many connections; 57P01–57P03 shutting down or starting), as opposed to a
 * statement the server ran and refused.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof DatabaseUnavailableError)) return false;
  const state = error.sqlState;
  return state === undefined || state.startsWith('08') || state === '53300' || state === '57P01' || state === '57P02' || state === '57P03';
}

/** Classifies a driver error; Ladder's own errors (thrown inside a transaction) pass through. */
export function classifyDatabaseError(error: unknown): unknown {
  if (error instanceof LadderError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  if (sqlState !== undefined && (sqlState.startsWith('22') || sqlState.startsWith('23'))) return new DatabaseRejectedError(sqlState, { cause: error });
  return new DatabaseUnavailableError(sqlState, { cause: error });
}
