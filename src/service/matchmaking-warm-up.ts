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
 *
 * The rule-set engine is warmed too, the way a rule-set queue runs it:
 * small passes one after another over a queue that keeps filling (a cold
 * engine took 5–25× the CPU of a warm one for its first few dozen passes
 * over 600 tickets), over two rule sets of different shapes (the 6v6 queue
 * written as a rule set: numeric batch, latency, expansions; a duel by a
 * string batch and a distance rule over team skill).
 */
import { Matchmaker } from 'ladder-core/matchmaking';
import { RuleSetMatchmaker, type RuleSetTicketInput } from 'ladder-core/matchmaking/rule-set/index.js';
import { syntheticQueue } from 'ladder-core/matchmaking/synthetic-queue.js';

export interface WarmUpOptions {
  /** Passes to run. @default 8 */
  passes?: number;
  /** Tickets in each synthetic queue. @default 10000 */
  tickets?: number;
  /** Rule-set passes to run (each after 300 more tickets arrive). @default 30 */
  ruleSetPasses?: number;
}

export interface WarmUpReport {
  passes: number;
  /** Matches the passes formed (they are thrown away). */
  matches: number;
  /** Rule-set passes run, and the matches they formed. */
  ruleSetPasses: number;
  ruleSetMatches: number;
  ms: number;
}

/** The two rule sets the warm-up runs (plain JSON, as a ladder's `matchmaking.ruleSet`). */
const WARM_UP_RULE_SETS = [
  {
    name: 'warm-up-6v6',
    ruleLanguageVersion: '1.0',
    playerAttributes: [{ name: 'percentile', type: 'number' }],
    teams: [{ name: 'team', minPlayers: 6, maxPlayers: 6, quantity: 2 }],
    rules: [
      { name: 'CloseRank', type: 'batchDistance', batchAttribute: 'percentile', maxDistance: 5 },
      { name: 'Ping', type: 'latency', maxLatency: 150 },
    ],
    expansions: [{ target: 'rules[CloseRank].maxDistance', steps: [{ waitTimeSeconds: 30, value: 20 }] }],
  },
  {
    name: 'warm-up-duel',
    ruleLanguageVersion: '1.0',
    playerAttributes: [
      { name: 'skill', type: 'number', default: 50 },
      { name: 'mode', type: 'string', default: 'ctf' },
    ],
    teams: [
      { name: 'red', minPlayers: 1, maxPlayers: 2 },
      { name: 'blue', minPlayers: 1, maxPlayers: 2 },
    ],
    rules: [
      { name: 'SameMode', type: 'batchDistance', batchAttribute: 'mode' },
      {
        name: 'FairTeams',
        type: 'distance',
        measurements: ['avg(teams[*].players.attributes[skill])'],
        referenceValue: 'avg(flatten(teams[*].players.attributes[skill]))',
        maxDistance: 10,
      },
    ],
  },
];

/** Passes of a rule-set queue that keeps filling, alternating the warm-up rule sets; resolves to the matches formed. */
function warmUpRuleSets(passes: number): number {
  const engines = WARM_UP_RULE_SETS.map((ruleSet) => new RuleSetMatchmaker(ruleSet));
  const pool = syntheticQueue({ tickets: 300 * passes, seed: 7, spanSeconds: 300, teamSize: 2 });
  let matches = 0;
  for (let k = 0; k < passes; k++) {
    const duel = k % 2 === 1;
    const engine = engines[k % engines.length]!;
    const now = 1000 + k;
    for (let i = k * 300; i < (k + 1) * 300; i++) {
      const ticket = pool[i]!;
      const input: RuleSetTicketInput = {
        id: `w${i}`,
        at: now,
        players: ticket.players.map((p) => ({
          id: p.id,
          pings: p.pings,
          attributes: duel ? { skill: p.percentile, mode: i % 3 === 0 ? 'dm' : 'ctf' } : { percentile: p.percentile },
        })),
      };
      engine.add(input);
    }
    matches += engine.pass(now).matches.length;
  }
  return matches;
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
  const ruleSetPasses = options.ruleSetPasses ?? 30;
  const ruleSetMatches = warmUpRuleSets(ruleSetPasses);
  return { passes, matches, ruleSetPasses, ruleSetMatches, ms: performance.now() - started };
}
