/**
 * How every command reports failure: a typed input error exits 2 with its
 * message (which names the line and the field); anything else exits 1.
 */
import { LadderError } from '../core/errors.js';

export const EXIT_INPUT = 2;

export function fail(error: unknown): never {
  if (error instanceof LadderError) {
    process.stderr.write(`ladder: ${error.message}\n`);
    process.exit(EXIT_INPUT);
  }
  process.stderr.write(`ladder: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}

/** Runs a command action, turning errors into exit codes. */
export function action<A extends unknown[]>(run: (...args: A) => void | Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await run(...args);
    } catch (error) {
      fail(error);
    }
  };
}

/** Parses a numeric option, naming it on failure. */
export function numberOption(name: string): (value: string) => number {
  return (value: string) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) {
      process.stderr.write(`ladder: option --${name} must be a number, got ${JSON.stringify(value)}\n`);
      process.exit(EXIT_INPUT);
    }
    return parsed;
  };
}
