/**
 * `ladder serve`: the rating and matchmaking service. DATABASE_URL selects a
 * PostgreSQL server (else embedded PGlite in --data), REDIS_URL shares state
 * between instances, LADDER_ADMIN_KEY sets the first admin key. The
 * service starts in serve-run.ts: on the main thread, or with
 * `--young-generation` on a thread of its own (below). Both collector
 * settings are V8's own by default: the small young generation an instance
 * with a fixed budget takes cost about a third more server CPU per request
 * on the ordinary load of `load.js`, and the old generation held to 25 %
 * about as much again (docs/BENCHMARKS.md, "The service on a thread of its
 * own"), a price only that instance should pay. `--memory-limit` is the
 * budget that costs only near it (src/service/memory-limit.ts): by default
 * nine tenths of the container's limit, when one is set.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { siblingModule, workerStart } from '../store/worker-start.js';
import { action, numberOption } from './errors.js';
import { isHeapGrowingPercent } from './heap.js';
import type { ServeSettings } from './serve-run.js';
import type { ServeThreadMessage, ServeThreadStop } from './serve-thread.js';
import { report } from './stderr.js';

export function register(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP rating and matchmaking service (env: DATABASE_URL, REDIS_URL, LADDER_ADMIN_KEY)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', numberOption('port'), 8080)
    .option('--data <dir>', 'embedded database directory (when DATABASE_URL is not set)', './ladder-data')
    .option('--demo', 'seed public demo ladders on first start (npm start)', false)
    .option('--rate-limit <perSecond>', 'requests per second per API key (burst twice that)', numberOption('rate-limit'), 5000)
    .option('--log', 'log every request (JSON lines on stdout)', false)
    .option('--cors-origin <origin...>', 'allow browsers on these origins to call the API (env LADDER_CORS_ORIGINS, comma-separated); CORS is off without it')
    .option('--metrics-key', 'answer /metrics only to callers with a read key (by default it is open but leaves out private ladders)', false)
    .option(
      '--job-threads <n>',
      'worker threads for heavy requests (balance, large predictions, the integrity report); 0 runs them on the event loop (default: CPUs - 1, at least 1)',
      (value: string) => {
        const parsed = Number(value);
        if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(parsed))
          throw new InvalidArgumentError(`--job-threads takes a whole number of threads (0 or more), got ${JSON.stringify(value)}`);
        return parsed;
      },
    )
    .addOption(
      new Option(
        '--corrections <mode>',
        'how voids and corrections are written: phased (short steps, the ladder refusing writes meanwhile) or one transaction (default: phased on the embedded database, transaction on PostgreSQL)',
      ).choices(['phased', 'transaction']),
    )
    .option('--no-pglite-thread', 'run the embedded database on the event loop instead of its own worker thread (for comparison; a long statement then stalls every request)')
    .option(
      '--pglite-shared-buffers <mb>',
      "the embedded database's buffer cache in MB, 1 to 1024 (env LADDER_PGLITE_SHARED_BUFFERS_MB; default PGlite's 128): less resident memory, for an instance with a budget",
      numberOption('pglite-shared-buffers'),
    )
    .addOption(
      new Option(
        '--matchmaking-warm-up <when>',
        "when to warm the matchmaker's code (about a second of CPU that makes the first pass after a failover run at full speed): before listening, when a matchmaking turn first finds a queue (an instance that serves none then never starts the matchmaking worker), or never",
      )
        .choices(['start', 'first-queue', 'off'])
        .default('first-queue'),
    )
    .option('--no-matchmaking-warm-up', 'never warm the matchmaker (--matchmaking-warm-up off)')
    .addOption(
      new Option(
        '--heap-growing-percent <percent>',
        "how far the JavaScript heap may grow past what a full collection left live, 0 to 1000 (default 0: V8's own choice, up to 300 on a busy instance): lower holds less resident memory for more collection time, all the time (--memory-limit does it only near a limit)",
      )
        .env('LADDER_HEAP_GROWING_PERCENT')
        .default(0)
        .argParser((value: string) => {
          const parsed = Number(value);
          if (value.trim() === '' || !isHeapGrowingPercent(parsed))
            throw new InvalidArgumentError(`--heap-growing-percent takes a whole number from 0 to 1000, got ${JSON.stringify(value)}`);
          return parsed;
        }),
    )
    .addOption(
      new Option(
        '--young-generation <mb>',
        "the JavaScript heap's young generation in MB, where short-lived objects are made, 3 to 1024 (three times V8's semi-space): the service then runs on a thread whose heap is made with it (default 0: V8's own sizing, up to 48 MB on 64 bits, with the service on the main thread); smaller holds less resident memory for more collection time (with --memory-limit: 16)",
      )
        .env('LADDER_YOUNG_GENERATION_MB')
        .default(0)
        .argParser((value: string) => {
          const parsed = Number(value);
          if (value.trim() === '' || !isYoungGenerationMb(parsed))
            throw new InvalidArgumentError(`--young-generation takes 0 or a whole number of MB from 3 to 1024, got ${JSON.stringify(value)}`);
          return parsed;
        }),
    )
    .addOption(
      new Option(
        '--memory-limit <mb>',
        'a soft limit on the process\'s resident set in MB (0: none), or auto: nine tenths of the container\'s memory limit when one is set: near it the service collects its garbage sooner (docs/SERVICE.md, "Memory"); live data is never dropped, so an instance whose live data needs more goes past it',
      )
        .env('LADDER_MEMORY_LIMIT_MB')
        .default('auto' as number | 'auto')
        .argParser((value: string): number | 'auto' => {
          if (value.trim() === 'auto') return 'auto';
          const parsed = Number(value);
          if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(parsed) || (parsed > 0 && parsed < 64))
            throw new InvalidArgumentError(`--memory-limit takes auto, 0 (none) or a whole number of MB from 64, got ${JSON.stringify(value)}`);
          return parsed;
        }),
    )
    .action(
      action(async (opts: ServeSettings) => {
        if (opts.youngGeneration === 0) {
          // Loaded here only: on a thread of its own the service is loaded there, and the main thread stays small.
          const { closeWhenStarted, runServe } = await import('./serve-run.js');
          const close = closeWhenStarted();
          onStopSignal(() => close.ask());
          close.started(await runServe(opts));
        } else await serveOnThread(opts);
      }),
    );
}

/** Whether `mb` is a young generation `--young-generation` takes: 0 (V8's own), or 3 to 1024 MB. */
export function isYoungGenerationMb(mb: number): boolean {
  return mb === 0 || (Number.isInteger(mb) && mb >= 3 && mb <= 1024);
}

/**
 * Runs `stop` at the first SIGINT or SIGTERM; a second one exits at once.
 * Set before the service starts, so that a signal sent as soon as the
 * service says it listens (as scripts and tests do) finds the handler, and
 * a signal during the start closes the service once it has started.
 */
function onStopSignal(stop: () => void): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(signal === 'SIGINT' ? 130 : 143);
    signalled = true;
    stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/**
 * Runs the service on a thread of its own, whose heap V8 makes with the
 * young generation asked for: the young generation is fixed when a heap
 * is made, so the main thread's cannot be changed once Node runs, but a
 * worker thread's can (`resourceLimits`). The main thread only relays the
 * thread's output, passes SIGINT and SIGTERM on as a stop, and exits with
 * the thread's code once its output is written. A SIGKILL ends both, as
 * one process.
 */
async function serveOnThread(opts: ServeSettings): Promise<void> {
  const start = workerStart(siblingModule('serve-thread', import.meta.url));
  const thread = new Worker(start.target, {
    eval: start.eval,
    workerData: { ...start.workerData, data: opts },
    resourceLimits: { maxYoungGenerationSizeMb: opts.youngGeneration },
    stdout: true,
    stderr: true,
  });
  // Piped by hand, so that the exit can wait for the last of it (piped by Node, the tail is lost when the process exits).
  thread.stdout.pipe(process.stdout);
  thread.stderr.pipe(process.stderr);
  const written = Promise.all([once(thread.stdout, 'end'), once(thread.stderr, 'end')]);
  let failure: { report: string; exitCode: number } | undefined;
  thread.on('message', (message: ServeThreadMessage) => {
    if (message.kind === 'failed') failure = message;
  });
  // From the start, since the thread may listen (and say so on standard output) before any message of its own comes.
  onStopSignal(() => thread.postMessage({ kind: 'stop' } satisfies ServeThreadStop));
  // An exception the thread did not catch: reported as on the main thread, with its stack.
  thread.on('error', (error) => (failure = { report: error.stack ?? error.message, exitCode: 1 }));
  const [exitCode] = (await once(thread, 'exit')) as [number];
  await written;
  if (failure !== undefined) {
    report(failure.report);
    process.exit(failure.exitCode);
  }
  process.exit(exitCode);
}
