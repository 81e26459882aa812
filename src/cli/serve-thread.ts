/**
 * The thread `ladder serve` runs the service on when it sizes the young
 * generation (serve.ts). Its messages: `stop` in, as the main thread turns
 * SIGINT and SIGTERM into, to close the service (at once, or as soon as it
 * has started); `failed` out when the start failed, with what to report
 * and the exit code. The thread then ends, and the process with its exit
 * code.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LadderError } from 'ladder-core/core/errors.js';
import { EXIT_INPUT } from './errors.js';
import { closeWhenStarted, runServe, type ServeSettings } from './serve-run.js';

/** From the service's thread to the main one. */
export interface ServeThreadMessage {
  kind: 'failed';
  /** The line (or stack) to report after `ladder: `. */
  report: string;
  exitCode: number;
}

/** From the main thread to the service's. */
export interface ServeThreadStop {
  kind: 'stop';
}

const port = parentPort;
if (port === null) throw new Error('serve-thread.ts runs as a worker thread of `ladder serve`');
const settings = (workerData as { data: ServeSettings }).data;

const close = closeWhenStarted();
port.on('message', (message: ServeThreadStop) => {
  if (message.kind === 'stop') close.ask();
});

try {
  close.started(await runServe(settings));
} catch (error) {
  const failure: ServeThreadMessage =
    error instanceof LadderError
      ? { kind: 'failed', report: error.message, exitCode: EXIT_INPUT }
      : { kind: 'failed', report: error instanceof Error ? (error.stack ?? error.message) : String(error), exitCode: 1 };
  port.postMessage(failure);
  process.exit(failure.exitCode);
}
