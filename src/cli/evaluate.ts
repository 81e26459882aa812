/**
 * `ladder evaluate`: how well a rating system predicts a match log, online:
 * the training part (before `--split`) only teaches; each test match is
 * predicted from the current ratings, scored, then learnt. `--dataset`
 * runs one of the built-in evaluation data sets with its published protocol.
 */
import { loadPeers, PEER_PACKAGES, peersAvailable } from '../eval/load-peers.js';
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { parseTime } from 'ladder-core/core/match.js';
import { allSystems } from 'ladder-core/core/registry.js';
import { SYSTEM_NAMES, type SystemName } from 'ladder-core/core/systems.js';
import { type Contender, type CoreContenderOptions, type EvalMatch, fiveThirtyEightEloContender, systemContender } from '../eval/contenders.js';
import { type DrawHandling, evaluate, type EvaluationOptions, type EvaluationResult, type ScoredMatches, splitAtDate } from '../eval/engine.js';
import { type PairedDifference, pairedDifference } from '../eval/paired.js';
import { reliabilitySvg } from '../eval/plot.js';
import { findPreset, PRESETS } from '../eval/presets.js';
import { type PresetRow, runPreset } from '../eval/run.js';
import { formatOf, type MatchLogFormat, parseColumnMap, parseMatchLog } from '../io/matches.js';
import { readInputText } from '../io/jsonl.js';
import { action, numberOption } from './errors.js';
import { noProgress, type ProgressStarter, report, reportSkipped, startProgress, warnIfEmpty, writeStderr } from './stderr.js';

/** Systems `--system` accepts: Ladder's, FiveThirtyEight-style Elo, and the two peers. */
export const EVALUATION_SYSTEMS = [...SYSTEM_NAMES, 'elo-538', 'openskill', 'trueskill'] as const;

export interface EvaluateCommandOptions {
  system?: string;
  split?: string;
  k?: number;
  tau?: number;
  rd?: number;
  rating?: number;
  scale?: number;
  homeAdvantage?: number;
  param?: string[];
  continuousTime?: boolean;
  scored?: string;
  draws?: string;
  format?: MatchLogFormat;
  map?: string;
  plot?: string;
  json?: boolean;
  dataset?: string;
  row?: number[];
  peers?: boolean;
  skipInvalid?: boolean;
  paired?: boolean;
  /** More systems scored on the same log, each `name` or `name:key=value,…` (`--against`). */
  against?: string[];
}

/** A result of `ladder evaluate`, and with `--paired` its log-loss difference against the first result. */
export type EvaluateResult = EvaluationResult & { label?: string; paired?: PairedDifference & { against: string } };

/** With --skip-invalid: collects the skipped lines' errors and reports them on stderr once read. */
export function invalidLineReporter(skip: boolean | undefined): { onInvalid?: (error: InvalidInputError) => void; report: () => void } {
  if (!skip) return { report: () => {} };
  const errors: InvalidInputError[] = [];
  return {
    onInvalid: (error) => errors.push(error),
    report: () => reportSkipped(errors),
  };
}

/** Collects `key=value` pairs of `--param`, numbers where they parse. */
export function parseParams(pairs: readonly string[] = []): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InvalidInputError(`expected key=value, got ${JSON.stringify(pair)}`, { field: 'param' });
    const raw = pair.slice(eq + 1).trim();
    const value = Number(raw);
    out[pair.slice(0, eq).trim()] = raw !== '' && Number.isFinite(value) ? value : raw;
  }
  return out;
}

/** The system's options from the command line flags (`--param` last, so it wins). */
export function systemOptionsOf(options: EvaluateCommandOptions): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const key of ['k', 'tau', 'rd', 'rating', 'scale'] as const) if (options[key] !== undefined) out[key] = options[key]!;
  return { ...out, ...parseParams(options.param) };
}

export function checkSystem(name: string | undefined): (typeof EVALUATION_SYSTEMS)[number] {
  if (name === undefined) throw new InvalidInputError('--system is required (or --dataset)', { field: 'system' });
  if (!(EVALUATION_SYSTEMS as readonly string[]).includes(name)) {
    throw new InvalidInputError(`unknown system ${JSON.stringify(name)}; expected one of ${EVALUATION_SYSTEMS.join(', ')}`, { field: 'system' });
  }
  return name as (typeof EVALUATION_SYSTEMS)[number];
}

/**
 * One `--against` system: `elo`, or `elo:k=40,scale=400` (its own options;
 * the home advantage and `--no-continuous-time` are the command's).
 */
export function parseAgainst(spec: string): { name: (typeof EVALUATION_SYSTEMS)[number]; options: Record<string, number | string> } {
  const colon = spec.indexOf(':');
  const name = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  const pairs =
    colon < 0
      ? []
      : spec
          .slice(colon + 1)
          .split(',')
          .filter((pair) => pair.trim() !== '');
  try {
    return { name: checkSystem(name), options: parseParams(pairs) };
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(`--against ${JSON.stringify(spec)}: ${error.detail}`, { field: 'against' });
    throw error;
  }
}

/** Builds the contender for `--system` (peers are imported only when asked for). */
export async function contenderOf(
  name: (typeof EVALUATION_SYSTEMS)[number],
  systemOptions: Record<string, number | string>,
  contenderOptions: CoreContenderOptions,
): Promise<Contender> {
  if (name === 'elo-538') return fiveThirtyEightEloContender(systemOptions as Record<string, number>);
  if (name === 'openskill' || name === 'trueskill') {
    const peers = await loadPeers();
    return name === 'openskill' ? peers.openSkillContender(systemOptions as Record<string, number>) : peers.trueSkillContender(systemOptions as Record<string, number>);
  }
  return systemContender(name as SystemName, systemOptions, contenderOptions);
}

/** Input line of each match read from a file, for error messages. */
const lineOfMatch = new WeakMap<EvalMatch, number>();

/** Reads a match log fully (so a bad line fails before any output), each error naming its line. */
export function readEvalMatches(source: string, format?: MatchLogFormat, map?: string, onInvalid?: (error: InvalidInputError) => void): EvalMatch[] {
  const text = readInputText(source);
  const matches: EvalMatch[] = [];
  for (const { line, match } of parseMatchLog(text, formatOf(source, format), { map: map ? parseColumnMap(map) : undefined, onInvalid })) {
    lineOfMatch.set(match, line);
    matches.push(match);
  }
  return matches;
}

/** The contender, with any input error it raises placed on the match's line. */
export function withLines(contender: Contender): Contender {
  const placed = <T>(match: EvalMatch, run: () => T): T => {
    try {
      return run();
    } catch (error) {
      const line = lineOfMatch.get(match);
      if (error instanceof InvalidInputError && line !== undefined) throw error.atLine(line);
      throw error;
    }
  };
  return {
    label: contender.label,
    parameters: contender.parameters,
    predict: (match) => placed(match, () => contender.predict(match)),
    update: (match) => placed(match, () => contender.update(match)),
    known: (id) => contender.known(id),
  };
}

export function splitOf(split: string | undefined): number {
  if (split === undefined) throw new InvalidInputError('--split DATE is required: matches from that date on are the test part', { field: 'split' });
  return parseTime(split, 'split');
}

export function protocolOptions(options: EvaluateCommandOptions, isTest: EvaluationOptions['isTest']): EvaluationOptions {
  const protocol: EvaluationOptions = { isTest };
  if (options.scored !== undefined) {
    if (!['all', 'any-seen', 'all-seen'].includes(options.scored))
      throw new InvalidInputError(`must be all, any-seen or all-seen, got ${JSON.stringify(options.scored)}`, { field: 'scored' });
    protocol.scored = options.scored as ScoredMatches;
  }
  if (options.draws !== undefined) {
    if (!['auto', 'davidson', 'none'].includes(options.draws))
      throw new InvalidInputError(`must be auto, davidson or none, got ${JSON.stringify(options.draws)}`, { field: 'draws' });
    protocol.draws = options.draws as DrawHandling;
  }
  return protocol;
}

/**
 * Evaluates a log read by readEvalMatches: a match the system rejects is
 * reported with its line number; a progress bar counts the matches on a terminal.
 */
export function evaluateLog(contender: Contender, matches: EvalMatch[], protocol: EvaluationOptions, progress: ProgressStarter = noProgress): EvaluationResult {
  const bar = progress(`evaluate ${contender.label}`, matches.length, 'matches');
  const result = evaluate(withLines(contender), matches, bar ? { ...protocol, onProgress: (done) => bar.update(done) } : protocol);
  bar?.update(matches.length);
  bar?.finish();
  return result;
}

const f4 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(4));

/**
 * A paired difference and its standard error, `+0.00012 ± 0.00442`: five
 * places, or as many as show two digits of a smaller error (up to eight), so
 * that a tiny but sure difference is not printed as ± 0.00000.
 */
export function pairedText({ difference, standardError }: { difference: number; standardError: number }): string {
  const places = placesFor(standardError);
  return `${difference >= 0 ? '+' : '−'}${Math.abs(difference).toFixed(places)} ± ${standardError.toFixed(places)}`;
}

/** The Newey–West error beside it, to the same places: `Newey–West 0.00466 over 7 lags`. */
export function neweyWestText({ standardError, neweyWest, lags }: { standardError: number; neweyWest: number; lags: number }): string {
  return `Newey–West ${neweyWest.toFixed(placesFor(standardError))} over ${lags} lags`;
}

function placesFor(standardError: number): number {
  return standardError > 0 ? Math.min(8, Math.max(5, 1 - Math.floor(Math.log10(standardError)))) : 5;
}

export function formatResult(result: EvaluateResult): string {
  const t = result.test;
  const parameters = Object.entries(result.parameters)
    .map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(6) : v}`)
    .join(' ');
  const lines = [
    `${result.label ?? result.system}${parameters ? `  (${parameters})` : ''}`,
    `  train ${result.train.n} matches; test ${t.n} scored${t.skipped ? `, ${t.skipped} not scored` : ''}${t.draws ? `, ${t.draws} draws` : ''}`,
    `  log-loss ${f4(t.logLoss)}${result.drawNu !== undefined ? ` (three outcomes, Davidson ν ${result.drawNu.toFixed(3)})` : ''}  accuracy ${f4(t.accuracy)}  Brier ${f4(t.brier)}`,
  ];
  if (t.accuracy3 !== undefined) lines.push(`  three-outcome accuracy ${f4(t.accuracy3)}`);
  if (t.decisive) lines.push(`  decisive matches: ${t.decisive.n}, log-loss ${f4(t.decisive.logLoss)}, accuracy ${f4(t.decisive.accuracy)}`);
  if (result.paired) {
    const { against, n } = result.paired;
    lines.push(`  against ${against}: log-loss ${pairedText(result.paired)} (paired standard error over the ${n} matches both scored; ${neweyWestText(result.paired)})`);
  }
  lines.push("  calibration (favourite's predicted chance → observed score):");
  for (const bin of result.calibration) {
    if (bin.n === 0) continue;
    lines.push(`    ${bin.from.toFixed(2)}–${bin.to.toFixed(2)}  n ${String(bin.n).padStart(7)}  predicted ${bin.predicted.toFixed(3)}  observed ${bin.observed.toFixed(3)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The `--json` shape: {system, parameters, train, test: {n, logLoss, accuracy, brier, …}, calibration, paired?}; the per-match losses stay out. */
export function jsonOf(result: EvaluateResult & { fitted?: Record<string, number> }): Record<string, unknown> {
  const { seconds: _seconds, losses: _losses, ...rest } = result;
  return rest;
}

function pairedNeedsTwo(): InvalidInputError {
  return new InvalidInputError('--paired compares two results or more: give --dataset with two rows or more, or a match log with --against or --peers', {
    field: 'paired',
  });
}

/**
 * `--paired`: each result after the first gets its paired log-loss
 * difference against the first (which needs two results or more, each
 * scoring the same matches, as every row of one protocol does).
 */
export function withPairedDifferences(results: EvaluateResult[]): EvaluateResult[] {
  if (results.length < 2) throw pairedNeedsTwo();
  const first = results[0]!;
  const against = first.label ?? first.system;
  return results.map((result, i) => (i === 0 ? result : { ...result, paired: { against, ...pairedDifference(result.losses!, first.losses!) } }));
}

/** Runs `ladder evaluate`; `progress` draws bars (the command passes startProgress, which draws on a terminal only). */
export async function runEvaluate(source: string | undefined, options: EvaluateCommandOptions, progress: ProgressStarter = noProgress): Promise<EvaluateResult[]> {
  // Refused before anything runs: a paired comparison needs a second result.
  if (options.paired && (options.dataset !== undefined ? options.row !== undefined && options.row.length < 2 : !options.peers && !options.against?.length)) throw pairedNeedsTwo();
  const results = await evaluateResults(source, options, progress);
  return options.paired ? withPairedDifferences(results) : results;
}

async function evaluateResults(source: string | undefined, options: EvaluateCommandOptions, progress: ProgressStarter): Promise<EvaluateResult[]> {
  if (options.dataset !== undefined) {
    const preset = findPreset(options.dataset);
    if (!preset) throw new InvalidInputError(`unknown data set ${JSON.stringify(options.dataset)}; expected one of ${PRESETS.map((p) => p.name).join(', ')}`, { field: 'dataset' });
    if (source !== undefined) throw new InvalidInputError('give either --dataset or a match log, not both', { field: 'dataset' });
    if (options.against?.length) throw new InvalidInputError('--against is for a match log; a data set has its own rows (--row)', { field: 'against' });
    // A data set's rows include the peers by default; an installed Ladder has no peers, so they are left out with a warning unless asked for.
    let peers = options.peers ?? true;
    if (options.peers === undefined && !(await peersAvailable())) {
      writeStderr(`ladder: the peer rows (${PEER_PACKAGES.join(', ')}) are left out: those packages are not installed (npm install ${PEER_PACKAGES.join(' ')})\n`);
      peers = false;
    }
    const params = parseParams(options.param);
    const { rows } = await runPreset(preset, {
      peers,
      ...(options.row ? { rows: options.row } : {}),
      ...(Object.keys(params).length > 0 ? { params } : {}),
      ...(options.paired ? { keepLosses: true } : {}),
      onLog: (m) => writeStderr(`${m}\n`),
      progress,
    });
    return rows.map((row: PresetRow) => ({ ...row, label: `${row.row}. ${row.label}` }));
  }
  if (source === undefined) throw new InvalidInputError('a match log (file or -) is required, or --dataset', { field: 'matches' });
  const name = checkSystem(options.system);
  const splitAt = splitOf(options.split);
  const contenderOptions: CoreContenderOptions = {};
  if (options.homeAdvantage !== undefined) contenderOptions.homeAdvantage = options.homeAdvantage;
  if (options.continuousTime === false) contenderOptions.continuousTime = false;
  const systemOptions = systemOptionsOf(options);
  // Build the contender first so bad parameters fail before the file is read.
  const contender = await contenderOf(name, systemOptions, contenderOptions);
  const against: Array<{ label: string; contender: Contender }> = [];
  for (const spec of options.against ?? []) {
    const parsed = parseAgainst(spec);
    against.push({ label: spec.trim(), contender: await contenderOf(parsed.name, parsed.options, contenderOptions) });
  }
  const invalid = invalidLineReporter(options.skipInvalid);
  const matches = readEvalMatches(source, options.format, options.map, invalid.onInvalid);
  invalid.report();
  warnIfEmpty(matches.length, source, 'matches');
  const protocol = { ...protocolOptions(options, splitAtDate(splitAt)), ...(options.paired ? { keepLosses: true } : {}) };
  const results: EvaluateResult[] = [evaluateLog(contender, matches, protocol, progress)];
  // An empty test part scores nothing: every figure would be NaN, so say why instead of printing them silently.
  if (matches.length > 0 && results[0]!.test.n === 0)
    report(`warning: no test match was scored: the test part (from --split ${options.split ?? ''}) is empty or every match in it was left unscored; the figures are empty`);
  for (const other of against) results.push({ ...evaluateLog(other.contender, matches, protocol, progress), label: other.label });
  if (options.peers) {
    const peers = await loadPeers();
    for (const peer of [peers.openSkillContender(), peers.trueSkillContender()]) results.push(evaluateLog(peer, matches, protocol, progress));
  }
  return results;
}

/** Each system's options for the help text, from the registry: `glicko2: rating, rd, …; elo: rating, k, scale; …`. */
function optionsHelp(): string {
  return allSystems()
    .map((d) => `${d.name}: ${Object.keys(d.options).join(', ')}`)
    .join('; ');
}

export function register(program: Command): void {
  program
    .command('evaluate')
    .description("score a rating system's predictions on a match log: train before --split, predict-then-learn after it")
    .option('--system <name>', `${EVALUATION_SYSTEMS.join('|')}`)
    .option('--split <date>', 'first date of the test part (ISO or YYYYMMDD)')
    .option('--k <x>', 'Elo K factor (default 32) or the WvW step multiplier', numberOption('k'))
    .option('--tau <x>', 'Glicko-2 system constant (default 0.5; wvw 0.6)', numberOption('tau'))
    .option('--rd <x>', 'Glicko-2 starting and maximum RD (default 350)', numberOption('rd'))
    .option('--rating <x>', 'starting rating', numberOption('rating'))
    .option('--scale <x>', 'Elo scale (default 400)', numberOption('scale'))
    .option('--param <key=value...>', `any other system option, e.g. --param stakeDivisor=10 (${optionsHelp()}; openskill/trueskill: mu, sigma, beta, tau, drawProbability)`)
    .option('--home-advantage <points>', 'rating points added to the home team of matches that have one', numberOption('home-advantage'))
    .option('--no-continuous-time', 'Glicko-2/WvW: no RD growth between matches (one period per match)')
    .option('--scored <which>', 'test matches scored: all, any-seen or all-seen (a player seen before)', 'all')
    .option('--draws <how>', 'auto, davidson (three outcomes, ν fitted on the training part) or none (a draw = half a win)', 'auto')
    .option('--format <format>', 'jsonl or csv (default: from the file name)')
    .option('--map <mapping>', 'CSV column mapping, e.g. winner=winner_name,loser=loser_name,at=tourney_date')
    .option('--skip-invalid', 'skip invalid lines (reported on stderr) instead of stopping at the first')
    .option('--plot <file.svg>', 'write a reliability plot')
    .option('--peers', 'also run the npm peers openskill and ts-trueskill (development dependencies) on the same protocol')
    .option('--no-peers', 'leave the peers out of a --dataset run (it includes them when they are installed)')
    .option('--dataset <name>', `a built-in evaluation data set with its protocol: ${PRESETS.map((p) => p.name).join(', ')}`)
    .option('--row <n...>', 'with --dataset: only these rows of its table (with --param: each Ladder row with those options changed)', (value: string, previous: number[] = []) => [
      ...previous,
      numberOption('row')(value),
    ])
    .option(
      '--against <system...>',
      'also score these systems on the same log, each a name or name:key=value,… (e.g. --against elo:k=40 whr)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--paired', "each result after the first: its log-loss difference from the first's, with the paired standard error over the matches both scored")
    .option('--json', 'print JSON instead of text')
    .argument('[matches]', 'match log file, or - for standard input')
    .action(
      action(async (source: string | undefined, options: EvaluateCommandOptions) => {
        if (options.format !== undefined && options.format !== 'jsonl' && options.format !== 'csv') {
          throw new InvalidInputError(`must be jsonl or csv, got ${JSON.stringify(options.format)}`, { field: 'format' });
        }
        const results = await runEvaluate(source, options, startProgress);
        if (options.plot) {
          writeFileSync(
            options.plot,
            reliabilitySvg(
              options.dataset ?? source ?? 'evaluation',
              results.map((r) => ({ label: r.label ?? r.system, bins: r.calibration })),
            ),
          );
        }
        if (options.json) {
          const out = results.map(jsonOf);
          process.stdout.write(`${JSON.stringify(out.length === 1 ? out[0] : out)}\n`);
        } else {
          process.stdout.write(results.map(formatResult).join('\n'));
        }
      }),
    );
}
