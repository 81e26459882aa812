/**
 * `npm run bench [-- NAME...]`: runs the named benchmarks (all by default)
 * and prints their results. Numbers go to docs/BENCHMARKS.md by hand, with
 * this command.
 */
import { type ScriptSpec, scriptArgs, usageError } from '../cli/script-args.js';
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
import { benchWhrHorizon } from './whr-horizon.js';
import { benchWhrMatches } from './whr-matches.js';
import { benchWhrStart } from './whr-start.js';
import { benchWhrInstance } from './whr-instance.js';
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
  'whr-horizon': () => benchWhrHorizon(),
  'whr-start': () => benchWhrStart(),
  'whr-instance': () => benchWhrInstance(),
  ruleset: () => benchRuleSet(),
};

// `service-matchmaking`, `availability`, `whr-horizon`, `whr-start` and `whr-instance` take several minutes each: run them by name.
const byNameOnly = new Set(['service-matchmaking', 'availability', 'whr-horizon', 'whr-start', 'whr-instance']);
const usage: ScriptSpec = {
  command: 'npm run bench --',
  name: 'bench',
  operands: '[NAME ...]',
  summary: `Runs the named benchmarks and prints their results; without a name, all but ${[...byNameOnly].join(' and ')}.
Names: ${Object.keys(benchmarks).join(', ')}.`,
  options: {},
  notes: 'Several benchmarks also run on their own with options of their own: node dist/bench/<name>.js --help.',
};
const wanted = scriptArgs(usage).operands;
for (const name of wanted) {
  if (!Object.hasOwn(benchmarks, name)) usageError(usage, `unknown benchmark ${JSON.stringify(name)}; choose from ${Object.keys(benchmarks).join(', ')}`);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(benchmarks).filter((n) => !byNameOnly.has(n))) {
  console.log(`\n## ${name}`);
  await benchmarks[name]!();
}
