/**
 * `ladder simulate`: runs the matchmaking simulator with team rank and
 * Glicko-2 (or the systems named) and prints the match-quality report.
 *
 *   ladder simulate [--players 2000] [--days 2] [--mode 6v6] [--systems teamrank,glicko2] [--seed 1] [--json] [--plot FILE.svg]
 *
 * With `--rule-set FILE`: a stream of tickets arrives at that FlexMatch rule
 * set's queue instead (src/sim/rule-set.ts), and the report gives the share
 * matched, the waits and the rules that held waiting tickets.
 *
 *   ladder simulate --rule-set FILE [--seconds 600] [--arrivals 5] [--seed 1] [--json]
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { parseMode } from 'ladder-core/matchmaking';
import { errorCurveSvg, type RuleSetSimulationReport, simulate, simulatedSystem, simulateRuleSet, type SimulationReport } from '../sim/index.js';
import { action, numberOption } from './errors.js';
import { readRuleSet } from './matchmake-rule-set.js';
import { noProgress, type ProgressBar, type ProgressStarter, startProgress } from './stderr.js';

export interface SimulateCommandOptions {
  /** @default 2000 */
  players?: number;
  /** @default 2 */
  days?: number;
  /** @default '6v6' */
  mode?: string;
  /** @default 'teamrank,glicko2' */
  systems?: string;
  /** @default 1 */
  seed?: number;
  json?: boolean;
  plot?: string;
  /** A FlexMatch rule set file: simulate its queue instead. */
  ruleSet?: string;
  /** Rule-set run: simulated seconds of arrivals. @default 600 */
  seconds?: number;
  /** Rule-set run: mean tickets per second. @default 5 */
  arrivals?: number;
}

export function runRuleSetSimulate(options: SimulateCommandOptions & { ruleSet: string }): RuleSetSimulationReport {
  try {
    return simulateRuleSet({
      ruleSet: readRuleSet(options.ruleSet),
      ...(options.seconds !== undefined ? { seconds: options.seconds } : {}),
      ...(options.arrivals !== undefined ? { arrivalsPerSecond: options.arrivals } : {}),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
    });
  } catch (error) {
    // The simulator's own option names, as the command line spells them.
    if (error instanceof InvalidInputError && (error.field === 'seconds' || error.field === 'arrivalsPerSecond'))
      throw new InvalidInputError(error.detail, { field: error.field === 'seconds' ? '--seconds' : '--arrivals' });
    throw error;
  }
}

export function ruleSetSimulateText(r: RuleSetSimulationReport): string {
  const seconds = (x: number) => figure(x, (v) => v.toFixed(1));
  const lines = [
    `== rule set ${r.ruleSet}: ${r.tickets} tickets over ${r.options.seconds} s (${r.options.arrivalsPerSecond}/s), ${r.matches} matches`,
    `matched: ${pct(r.matchedShare)} (${r.matched} matched, ${r.timedOut} gave up after ${r.options.maxWaitSeconds} s, ${r.leftWaiting} still waiting at the end)`,
    `wait (s) of matched tickets: p50 ${seconds(r.wait.p50)} p90 ${seconds(r.wait.p90)} max ${seconds(r.wait.max)}`,
    'held waiting tickets (ticket-passes, by the rule that kept each out most often):',
    ...(Object.keys(r.heldBy).length > 0 ? Object.entries(r.heldBy).map(([rule, n]) => `  ${rule}: ${n}`) : [`  ${NO_DATA}`]),
    '',
  ];
  return lines.join('\n');
}

/** Runs `ladder simulate`; `progress` draws a bar per system (the command passes startProgress, which draws on a terminal only). */
export function runSimulate(options: SimulateCommandOptions, progress: ProgressStarter = noProgress): SimulationReport[] {
  const systems = (options.systems ?? 'teamrank,glicko2').split(',').map((name, index) => simulatedSystem(name.trim(), `--systems[${index}]`));
  const players = options.players ?? 2000;
  const days = options.days ?? 2;
  if (!Number.isInteger(players) || players < 2) throw new InvalidInputError(`must be an integer of at least 2, got ${players}`, { field: '--players' });
  if (!(days > 0)) throw new InvalidInputError(`must be positive, got ${days}`, { field: '--days' });
  const teamSize = parseMode(options.mode ?? '6v6');
  return systems.map((system) => {
    let bar: ProgressBar | undefined;
    const report = simulate(
      { players, days, teamSize, system, seed: options.seed ?? 1 },
      {
        onProgress: (done, total) => {
          bar ??= progress(`simulate ${system}`, total, 'ticks');
          bar?.update(done);
        },
      },
    );
    bar?.finish();
    return report;
  });
}

/** Shown where a figure has no data: a quantile or share of an empty sample. */
export const NO_DATA = '–';

const figure = (value: number | undefined, format: (x: number) => string = String) => (value !== undefined && Number.isFinite(value) ? format(value) : NO_DATA);
const pct = (x: number | undefined) => figure(x, (v) => `${(100 * v).toFixed(1)}%`);

/** Matches after which the text report shows the mean percentile error. */
const ERROR_CURVE_POINTS = [1, 10, 20, 40] as const;

/** Why a report has figures without data, one reason per kind of gap. */
function gapsOf(r: SimulationReport): string[] {
  const reasons: string[] = [];
  if (r.matches === 0) {
    const { players, days, teamSize } = r.options;
    reasons.push(`no match formed: ${players} players in ${days} day(s) never filled two teams of ${teamSize} in one region within their ranges; try more --players or --days`);
    return reasons;
  }
  if (r.matchesToSettle.settled === 0) reasons.push(`no player's percentile settled within ±${r.options.settleTolerance} of the true one`);
  const unreached = ERROR_CURVE_POINTS.find((k) => !Number.isFinite(r.errorCurve[k - 1] ?? NaN));
  if (unreached !== undefined) reasons.push(`no player reached ${unreached} match(es), so the error curve stops before it`);
  return reasons;
}

export function simulateText(reports: readonly SimulationReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const quantiles = (q: { p50: number; p90: number; p99?: number }) => `p50 ${figure(q.p50)} p90 ${figure(q.p90)}${q.p99 === undefined ? '' : ` p99 ${figure(q.p99)}`}`;
    lines.push(`== ${r.system}: ${r.options.players} players, ${r.options.days} day(s), ${r.options.teamSize}v${r.options.teamSize}, ${r.matches} matches`);
    lines.push(`wait (s) all: ${quantiles(r.waitAll)}`);
    for (const [title, table] of [
      ['percentile band', r.waitByPercentileBand],
      ['region', r.waitByRegion],
      ['party size', r.waitByPartySize],
    ] as const) {
      for (const [key, q] of Object.entries(table)) lines.push(`wait (s) ${title} ${key}: ${quantiles(q)} (${q.count} tickets)`);
    }
    lines.push(`predicted win prob 45–55%: ${pct(r.predictedClose)}, below 40%: ${pct(r.predictedLopsided)}`);
    lines.push(`true win prob 45–55%: ${pct(r.trueClose)}, below 40%: ${pct(r.trueLopsided)}`);
    lines.push(`percentile spread per match: ${quantiles({ p50: r.percentileSpread.p50, p90: r.percentileSpread.p90 })}`);
    const steps = Object.entries(r.wideningSteps);
    lines.push(`formed at widening step: ${steps.length > 0 ? steps.map(([k, v]) => `${k}: ${pct(v)}`).join(', ') : NO_DATA}`);
    lines.push(`worst ping in a match, p95: ${figure(r.worstPingP95, (v) => `${v} ms`)}`);
    lines.push(
      `matches to settle within ±${r.options.settleTolerance} percentiles: ${quantiles(r.matchesToSettle)} (${r.matchesToSettle.settled} settled, ${r.matchesToSettle.notSettled} not yet)`,
    );
    lines.push(
      `mean |percentile error| after ${ERROR_CURVE_POINTS.join('/')} matches: ${ERROR_CURVE_POINTS.map((k) => figure(r.errorCurve[k - 1], (v) => v.toFixed(1))).join(' / ')}`,
    );
    for (const reason of gapsOf(r)) lines.push(`${NO_DATA} ${reason}`);
    lines.push('');
  }
  return lines.join('\n');
}

export function register(program: Command): void {
  program
    .command('simulate')
    .description('simulate a population through the matchmaker and report match quality')
    .option('--players <n>', 'population size (default 2000)', numberOption('players'))
    .option('--days <n>', 'simulated days (default 2)', numberOption('days'))
    .option('--mode <mode>', 'teams, e.g. 6v6', '6v6')
    .option('--systems <names>', 'rating systems to compare, comma-separated', 'teamrank,glicko2')
    .option('--seed <n>', 'random seed (default 1)', numberOption('seed'))
    .option('--json', 'print the reports as JSON')
    .option('--plot <file>', 'write an SVG of the rating-error curves')
    .option('--rule-set <file>', 'simulate a FlexMatch rule set queue instead: share matched, waits, rules that held tickets')
    .option('--seconds <n>', 'with --rule-set: simulated seconds of arrivals (default 600)', numberOption('seconds'))
    .option('--arrivals <n>', 'with --rule-set: mean tickets arriving per second (default 5)', numberOption('arrivals'))
    .action(
      action((options: SimulateCommandOptions) => {
        if (options.ruleSet !== undefined) {
          const report = runRuleSetSimulate({ ...options, ruleSet: options.ruleSet });
          process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : ruleSetSimulateText(report));
          return;
        }
        const reports = runSimulate(options, startProgress);
        if (options.plot) writeFileSync(options.plot, errorCurveSvg(reports));
        process.stdout.write(options.json ? `${JSON.stringify(reports, null, 2)}\n` : simulateText(reports));
      }),
    );
}
