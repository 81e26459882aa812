/**
 * How every command reports failure, always as one `ladder: <message>` line
 * on standard error: bad input (a typed input error, or a usage error such as
 * a missing or unknown option) exits 2; anything else exits 1.
 */
import { type Command, CommanderError, InvalidArgumentError } from 'commander';
import { LadderError } from 'ladder-core/core/errors.js';
import { finishProgress, report } from './stderr.js';

export const EXIT_INPUT = 2;

export function fail(error: unknown): never {
  if (error instanceof LadderError) {
    report(error.message);
    process.exit(EXIT_INPUT);
  }
  report(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
}

/**
 * The exit for an error commander raised while reading the command line
 * (with `exitOverride`): help and version exit 0; a usage error prints its
 * message in the `ladder:` format and a pointer to the command's help, and
 * exits 2 like any other bad input.
 */
export function failUsage(error: CommanderError, command: string | undefined): never {
  finishProgress();
  if (error.exitCode === 0) process.exit(0);
  // Commander has already printed the help (e.g. `ladder` with no command).
  if (error.code === 'commander.help') process.exit(EXIT_INPUT);
  // One line: commander puts its suggestion ("Did you mean …?") on a line of its own.
  const message = error.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ');
  report(`${message} (see ladder ${command !== undefined ? `${command} ` : ''}--help)`);
  process.exit(EXIT_INPUT);
}

/**
 * The usage error to report: commander checks the required options before
 * the unknown ones, so `ladder fit --sytem elo log` would say that --system
 * is missing. An unknown option among the command's arguments is reported
 * first instead, by its name, since it is the likelier typo.
 */
export function unknownOptionFirst(error: CommanderError, program: Command, command: string | undefined, args: readonly string[]): CommanderError {
  if (error.code !== 'commander.missingMandatoryOptionValue' || command === undefined) return error;
  const sub = program.commands.find((c) => c.name() === command);
  const first = sub?.parseOptions([...args]).unknown[0];
  if (first === undefined || !first.startsWith('-') || first === '-') return error;
  return new CommanderError(EXIT_INPUT, 'commander.unknownOption', `error: unknown option '${first.split('=')[0]}'`);
}

/** Runs a command action, turning errors into exit codes. */
export function action<A extends unknown[]>(run: (...args: A) => void | Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await run(...args);
    } catch (error) {
      fail(error);
    } finally {
      finishProgress();
    }
  };
}

/**
 * The parser of a numeric option: commander reports a value that is not a
 * number as a usage error naming the option (exit 2, like all bad input).
 */
export function numberOption(name: string): (value: string) => number {
  return (value: string) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError(`--${name} takes a number, got ${JSON.stringify(value)}`);
    return parsed;
  };
}
