/**
 * `ladder serve`: the rating and matchmaking service. DATABASE_URL selects a
 * PostgreSQL server (else embedded PGlite in --data), REDIS_URL shares state
 * between instances, LADDER_ADMIN_KEY sets the first admin key.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { seedDemo } from '../service/demo.js';
import { startService } from '../service/index.js';
import type { WarmUpReport } from '../service/matchmaking-warm-up.js';
import { registerWeb } from '../web/index.js';
import { action, numberOption } from './errors.js';
import { isHeapGrowingPercent, setHeapGrowingPercent } from './heap.js';

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
        "how far the JavaScript heap may grow past what a full collection left live, 1 to 1000 (default: V8's own choice, up to 300 on a busy instance): lower holds less resident memory for more collection time",
      )
        .env('LADDER_HEAP_GROWING_PERCENT')
        .argParser((value: string) => {
          const parsed = Number(value);
          if (value.trim() === '' || !isHeapGrowingPercent(parsed))
            throw new InvalidArgumentError(`--heap-growing-percent takes a whole number from 1 to 1000, got ${JSON.stringify(value)}`);
          return parsed;
        }),
    )
    .action(
      action(
        async (opts: {
          host: string;
          port: number;
          data: string;
          demo: boolean;
          rateLimit: number;
          log: boolean;
          corsOrigin?: string[];
          metricsKey: boolean;
          matchmakingWarmUp: 'start' | 'first-queue' | 'off' | false;
          pgliteThread: boolean;
          pgliteSharedBuffers?: number;
          jobThreads?: number;
          corrections?: 'phased' | 'transaction';
          heapGrowingPercent?: number;
        }) => {
          // First, so that every collection from here on follows it (a whole-history ladder's derivation at its first write among them).
          if (opts.heapGrowingPercent !== undefined) setHeapGrowingPercent(opts.heapGrowingPercent);
          const corsOrigins =
            opts.corsOrigin ??
            (process.env.LADDER_CORS_ORIGINS ?? '')
              .split(',')
              .map((o) => o.trim())
              .filter((o) => o !== '');
          // Reported once the service listens: a start that fails says only why.
          let warmUp: WarmUpReport | undefined;
          let listening = false;
          const service = await startService({
            host: opts.host,
            port: opts.port,
            dataDir: opts.data,
            databaseUrl: process.env.DATABASE_URL || undefined,
            databaseSchema: process.env.DATABASE_SCHEMA || undefined,
            redisUrl: process.env.REDIS_URL || undefined,
            redisPrefix: process.env.REDIS_PREFIX || undefined,
            adminKey: process.env.LADDER_ADMIN_KEY || undefined,
            rateLimit: { perSecond: opts.rateLimit },
            logger: opts.log,
            cors: corsOrigins.length > 0 ? { origins: corsOrigins } : undefined,
            metricsAccess: opts.metricsKey ? 'key' : 'public',
            matchmakingWarmUp: opts.matchmakingWarmUp === 'off' ? false : opts.matchmakingWarmUp,
            pgliteThread: opts.pgliteThread,
            ...(opts.pgliteSharedBuffers !== undefined ? { pgliteSharedBuffersMb: opts.pgliteSharedBuffers } : {}),
            ...(opts.corrections !== undefined ? { corrections: opts.corrections } : {}),
            ...(opts.jobThreads !== undefined ? { jobs: { threads: opts.jobThreads } } : {}),
            onWarmUp: (report) => {
              // Before listening it is reported with the start; at the first queue, when it happens.
              if (!listening) warmUp = report;
              else process.stderr.write(`ladder: matchmaker warmed up at the first queue (${report.passes} passes over synthetic queues, ${Math.round(report.ms)} ms)\n`);
            },
            plugins: [(app) => registerWeb(app, {})],
            onAdminKey: (event) => {
              if (event.kind === 'generated') process.stderr.write(`ladder: first admin key (shown once, store it now): ${event.key}\n`);
              else if (event.kind === 'registered') process.stderr.write('ladder: admin key from LADDER_ADMIN_KEY registered\n');
              else
                process.stderr.write(
                  'ladder: an admin key exists already; add another with POST /v1/keys (admin scope), or start with LADDER_ADMIN_KEY set to a new key of 16+ characters\n',
                );
            },
          });
          if (opts.demo && (await seedDemo(service))) process.stderr.write('ladder: seeded demo ladders ranked-6v6, duel-1v1, wvw-eu\n');
          const store = process.env.DATABASE_URL ? 'PostgreSQL' : `PGlite in ${opts.data}`;
          listening = true;
          if (warmUp) process.stderr.write(`ladder: matchmaker warmed up before listening (${warmUp.passes} passes over synthetic queues, ${Math.round(warmUp.ms)} ms)\n`);
          process.stderr.write(`ladder: serving on ${service.url} (${store}${process.env.REDIS_URL ? ', Redis' : ''}); dashboard ${service.url}/ , API docs ${service.url}/docs\n`);
          // Machine-readable line for scripts and tests that start the server on port 0.
          process.stdout.write(`${JSON.stringify({ listening: service.url })}\n`);
          let stopping = false;
          const stop = async () => {
            if (stopping) return;
            stopping = true;
            await service.close();
            process.exit(0);
          };
          process.on('SIGINT', () => void stop());
          process.on('SIGTERM', () => void stop());
        },
      ),
    );
}
