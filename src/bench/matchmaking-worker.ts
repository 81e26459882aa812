/**
 * Where the service's matchmakers live, measured from the main thread: the
 * synthetic 6v6 queue (as in the matchmaking benchmark) queued into one
 * matchmaker of each host (in process, worker thread) in batches of 10,000
 * tickets (as a rebuild sends them; the main thread keeps none of them), then one pass, with the main thread's
 * event loop delay watched (monitorEventLoopDelay, 10 ms resolution) through
 * the queueing and through the pass. Reports the longest stall of each
 * phase, the pass as the library measured it where it ran, and the pass as
 * the main thread waited for it (answer decoded included).
 *
 *   npm run build && node dist/bench/matchmaking-worker.js [--sizes 100000,1000000]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isEntry, numberListOption, type ScriptSpec, scriptArgs } from '../cli/script-args.js';
import { inProcessMatchmakers, type MatchmakerHost, workerMatchmakers } from '../service/matchmaking-worker/host.js';
import { syntheticQueue } from 'ladder-core/matchmaking/synthetic-queue.js';

export interface WorkerBenchRow {
  host: 'in process' | 'worker';
  tickets: number;
  /** Longest main-thread stall while queueing, ms. */
  addStallMs: number;
  /** Longest main-thread stall during the pass, ms. */
  passStallMs: number;
  /** The library's pass where it ran, ms. */
  passMs: number;
  /** From sending the pass to holding its matches on the main thread, ms. */
  passRoundTripMs: number;
  formed: number;
}

async function watched<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number; ms: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  // Lets the histogram's timer start before the work.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  // A stall that ends with the work is recorded at the timer's next run.
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  return { value, stallMs: histogram.max / 1e6, ms };
}

export async function benchMatchmakingWorker(sizes: readonly number[]): Promise<WorkerBenchRow[]> {
  const rows: WorkerBenchRow[] = [];
  for (const tickets of sizes) {
    for (const kind of ['in process', 'worker'] as const) {
      // Given away batch by batch, so the main thread's heap holds only what the host keeps there (as in a rebuild).
      const queue = syntheticQueue({ tickets, seed: 42, spanSeconds: 300, teamSize: 6 });
      const host: MatchmakerHost = kind === 'worker' ? workerMatchmakers() : inProcessMatchmakers();
      try {
        // Both warmed as `ladder serve` warms them, so neither pass runs on cold code.
        await host.warmUp();
        const matchmaker = await host.create({ teamSize: 6 });
        const added = await watched(async () => {
          while (queue.length > 0) {
            await matchmaker.apply(queue.splice(0, 10_000).map((ticket) => ({ op: 'add', ticket })));
            // A rebuild awaits the store's next batch between these.
            await new Promise((resolve) => setImmediate(resolve));
          }
        });
        const pass = await watched(() => matchmaker.pass(300));
        rows.push({
          host: kind,
          tickets,
          addStallMs: added.stallMs,
          passStallMs: pass.stallMs,
          passMs: pass.value.ms,
          passRoundTripMs: pass.ms,
          formed: pass.value.matches.length,
        });
      } finally {
        await host.close();
      }
    }
  }
  return rows;
}

const USAGE: ScriptSpec = {
  command: 'node dist/bench/matchmaking-worker.js',
  name: 'matchmaking-worker',
  summary: "The synthetic 6v6 queue queued into a matchmaker in process and in a worker thread, then one pass: the main thread's longest stalls.",
  options: { sizes: { type: 'string', value: 'N,...', description: 'queue sizes in tickets (default 100000,1000000)' } },
};

if (isEntry(import.meta.url)) {
  const sizes = numberListOption(USAGE, scriptArgs(USAGE), 'sizes') ?? [100_000, 1_000_000];
  const f = (n: number) => n.toFixed(1);
  for (const r of await benchMatchmakingWorker(sizes)) {
    console.log(
      `${r.host.padEnd(10)} ${String(r.tickets).padStart(8)} tickets: longest main-thread stall queueing ${f(r.addStallMs)} ms, during the pass ${f(r.passStallMs)} ms; pass ${f(r.passMs)} ms where it ran, ${f(r.passRoundTripMs)} ms as awaited (${r.formed} matches)`,
    );
  }
}
