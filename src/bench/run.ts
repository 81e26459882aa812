/**
 * `npm run bench [-- NAME...]`: runs the named benchmarks (all by default)
 * and prints their results. Numbers go to docs/BENCHMARKS.md by hand, with
 * this command.
 */
import { benchRating } from './rating.js';
import { benchBackfill, benchMatchmaking } from './matchmaking.js';
import { benchStandings } from './standings.js';
import { benchEvaluate } from './evaluate.js';
import { runServiceLoadBenchmarks } from './load.js';
import { benchCorrections } from './corrections.js';
import { benchBalance } from './balance.js';
import { benchIntegrity } from './integrity.js';
import { benchServiceMatchmaking } from './service-matchmaking.js';
import { benchWhr } from './whr.js';
import { benchAvailability } from './availability.js';
import { benchWhrMatches } from './whr-matches.js';
import { benchRuleSet } from './ruleset.js';

const benchmarks: Record<string, () => Promise<unknown>> = {
  rating: () => benchRating(),
  matchmaking: () => benchMatchmaking(),
  backfill: () => benchBackfill(),
  standings: () => benchStandings(),
  evaluate: () => benchEvaluate(),
  load: () => runServiceLoadBenchmarks({ memory: true }),
  corrections: () => benchCorrections(),
  balance: () => benchBalance(),
  integrity: () => benchIntegrity(),
  'service-matchmaking': () => benchServiceMatchmaking(),
  whr: () => benchWhr(),
  availability: () => benchAvailability(),
  'whr-matches': () => benchWhrMatches(),
  ruleset: () => benchRuleSet(),
};

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!benchmarks[name]) {
    console.error(`unknown benchmark ${JSON.stringify(name)}; choose from ${Object.keys(benchmarks).join(', ')}`);
    process.exit(2);
  }
}
// `service-matchmaking` and `availability` take several minutes each: run them by name.
const byNameOnly = new Set(['service-matchmaking', 'availability']);
for (const name of wanted.length > 0 ? wanted : Object.keys(benchmarks).filter((n) => !byNameOnly.has(n))) {
  console.log(`\n## ${name}`);
  await benchmarks[name]!();
}
