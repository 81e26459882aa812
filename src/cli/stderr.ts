/**
 * Everything the command line writes to standard error goes through here, so
 * a progress bar is finished before any other line appears: a message written
 * while a bar is drawn lands on the bar's own line. Bars are drawn only when
 * standard error is a terminal; piped or redirected, it gets the messages alone.
 */
import { SingleBar } from 'cli-progress';

/** The stream the command line reports on; tests pass their own. */
export interface ReportStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface ProgressBar {
  /** Moves the bar to `done` of its total. */
  update(done: number): void;
  /** Draws the final state and moves to the next line (also done by any other message). */
  finish(): void;
}

let drawn: { bar: SingleBar; stream: ReportStream } | undefined;

/** Ends the bar on screen, if one is drawn, so the next write starts on a line of its own. */
export function finishProgress(): void {
  if (!drawn) return;
  const { bar } = drawn;
  drawn = undefined;
  bar.stop();
}

/** Writes a message to standard error, after finishing any progress bar. */
export function writeStderr(text: string, stream: ReportStream = process.stderr): void {
  finishProgress();
  stream.write(text);
}

/** `ladder: <message>` on its own line: the one format of every message the command line prints. */
export function report(message: string, stream: ReportStream = process.stderr): void {
  writeStderr(`ladder: ${message}\n`, stream);
}

/**
 * A progress bar of `total` steps counted in `unit`, drawn on a terminal
 * only: undefined when the stream is not one, so callers skip the counting.
 */
export function startProgress(label: string, total: number, unit: string, stream: ReportStream = process.stderr): ProgressBar | undefined {
  if (!stream.isTTY) return undefined;
  finishProgress();
  const bar = new SingleBar({
    stream: stream as NodeJS.WritableStream,
    format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit}`,
    hideCursor: false,
  });
  bar.start(total, 0);
  const own = { bar, stream };
  drawn = own;
  return {
    update: (done) => {
      if (drawn === own) bar.update(Math.min(done, total));
    },
    finish: () => {
      if (drawn === own) finishProgress();
    },
  };
}

/**
 * A bar that appears only once work is under way (the first update), so a
 * run that ends sooner draws nothing.
 */
export function lazyProgress(label: string, unit: string, stream: ReportStream = process.stderr): ((done: number, total: number) => void) | undefined {
  if (!stream.isTTY) return undefined;
  let bar: ProgressBar | undefined;
  return (done, total) => {
    bar ??= startProgress(label, total, unit, stream);
    bar?.update(done);
  };
}

/** The lines `--skip-invalid` passed over: how many, and the first ten with their line and field. */
export function reportSkipped(errors: readonly Error[], stream: ReportStream = process.stderr): void {
  if (errors.length === 0) return;
  report(
    `skipped ${errors.length} invalid line(s):\n${errors
      .slice(0, 10)
      .map((error) => `  ${error.message}`)
      .join('\n')}`,
    stream,
  );
}

/** The input as messages name it: the file, or standard input for `-`. */
export function inputName(source: string): string {
  return source === '-' ? 'standard input' : source;
}

/**
 * Input that holds nothing to work on is not an error (the output is simply
 * empty), but saying so spares the reader a puzzle over a blank table.
 */
export function warnIfEmpty(count: number, source: string, what: string, stream: ReportStream = process.stderr): void {
  if (count === 0) report(`warning: no ${what} in ${inputName(source)}`, stream);
}

/** Starts a bar, or returns undefined where none is drawn: {@link startProgress}, or {@link noProgress}. */
export type ProgressStarter = (label: string, total: number, unit: string) => ProgressBar | undefined;

/** For callers with no terminal to draw on (library use, tests). */
export const noProgress: ProgressStarter = () => undefined;
