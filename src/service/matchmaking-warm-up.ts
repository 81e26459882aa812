/**
 * Warms the matchmaker's compiled code before this instance can take a
 * queue's lock. V8 optimises a function only after it has run for a while,
 * and a fresh process's first passes over a large queue run on unoptimised
 * code: the first pass of a new instance over 100,000 waiting tickets took
 * 220–390 ms on the benchmark machine, the same pass 50–70 ms once the code
 * was warm (docs/BENCHMARKS.md, "Matchmaking in the service"). That first
 * pass is the one that matters most: it is the new lock holder's, after a
 * failover, over everything that queued meanwhile.
 *
 * So `ladder serve` runs a few passes over synthetic queues before it
 * listens, alternating team sizes (6v6 and 1v1: both shapes of the code
 * get compiled); several small passes warm the code better than one big one
 * for the same work. Nothing of them is kept.
 */
import { Matchmaker } from 'ladder-core/matchmaking';
import { syntheticQueue } from 'ladder-core/matchmaking/synthetic-queue.js';

export interface WarmUpOptions {
  /** Passes to run. @default 8 */
  passes?: number;
  /** Tickets in each synthetic queue. @default 10000 */
  tickets?: number;
}

export interface WarmUpReport {
  passes: number;
  /** Matches the passes formed (they are thrown away). */
  matches: number;
  ms: number;
}

export function warmUpMatchmaker(options: WarmUpOptions = {}): WarmUpReport {
  const passes = options.passes ?? 8;
  const tickets = options.tickets ?? 10_000;
  const started = performance.now();
  let matches = 0;
  for (let k = 0; k < passes; k++) {
    const teamSize = k % 2 === 0 ? 6 : 1;
    const matchmaker = new Matchmaker({ teamSize });
    for (const ticket of syntheticQueue({ tickets, seed: 1 + k, spanSeconds: 300, teamSize })) matchmaker.add(ticket);
    matches += matchmaker.pass(300).matches.length;
  }
  return { passes, matches, ms: performance.now() - started };
}
