/**
 * `ladder fit`: chooses a system's parameters by minimising the online
 * log-loss on the training part of a match log (the matches before
 * `--split`), and reports them. The test part is never read for the fit;
 * `--evaluate` then scores the fitted parameters on it, once.
 */
import type { Command } from 'commander';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { HOME_ADVANTAGE_FIT } from 'ladder-core/core/descriptor.js';
import { describeSystem, isSystemName, type RegisteredDescriptor, SYSTEM_NAMES } from 'ladder-core/core/registry.js';
import type { CoreContenderOptions, EvalMatch } from '../eval/contenders.js';
import { systemContender } from '../eval/contenders.js';
import { splitAtDate } from '../eval/engine.js';
import type { PairedDifference } from '../eval/paired.js';
import { type FitResult, fitParameters, type ParameterSpec, parseCandidates, selectCandidate, trainingPart } from '../eval/fit.js';
import { action, numberOption } from './errors.js';
import {
  checkSystem,
  type EvaluateCommandOptions,
  evaluateLog,
  formatResult,
  invalidLineReporter,
  jsonOf,
  neweyWestText,
  pairedText,
  protocolOptions,
  readEvalMatches,
  splitOf,
  systemOptionsOf,
  withLines,
} from './evaluate.js';
import { inputName, noProgress, type ProgressBar, type ProgressStarter, startProgress } from './stderr.js';

/** The parameters `--fit` may name for a system, with their search ranges: the system's own (its descriptor's `fit`), and home advantage where its ratings are additive. */
export function fitRangesFor(descriptor: RegisteredDescriptor): Record<string, ParameterSpec> {
  const specs: ParameterSpec[] = [...descriptor.fit.parameters];
  if (descriptor.capabilities.homeAdvantage) specs.push(HOME_ADVANTAGE_FIT);
  return Object.fromEntries(specs.map((spec) => [spec.name, { ...spec }]));
}

/** What `ladder fit` fits by default: the system's own defaults (Glicko-2 tau and starting RD, Elo K, WHR's Wiener variance per day and prior variance, …); home advantage too where matches have a home side and the system's ratings are additive. */
export function defaultFitFor(descriptor: RegisteredDescriptor, hasHome: boolean): string[] {
  const base = [...descriptor.fit.byDefault];
  return hasHome && descriptor.capabilities.homeAdvantage ? [...base, HOME_ADVANTAGE_FIT.name] : base;
}

interface FitCommandOptions extends EvaluateCommandOptions {
  fit?: string;
  burnIn?: number;
  rounds?: number;
  tolerance?: number;
  candidates?: string;
  evaluate?: boolean;
}

export interface FitOutput {
  system: string;
  parameters: Record<string, number | string>;
  fitted: Record<string, number>;
  training: { n: number; scored: number; logLoss: number; burnIn: number };
  evaluations: number;
  /** Points the search visited (the progress bar's count); revisits reuse a run. */
  steps: number;
  /** With `--candidates`: each candidate's options, fitted parameters and validation log-loss, and the one chosen. */
  selection?: {
    candidates: Array<{ options: Record<string, number | string>; fitted: Record<string, number>; logLoss: number; againstChosen: PairedDifference }>;
    chosen: number;
  };
}

/** Runs `ladder fit`; `progress` draws bars (the command passes startProgress, which draws on a terminal only). */
export function runFit(source: string, options: FitCommandOptions, progress: ProgressStarter = noProgress) {
  const checked = checkSystem(options.system);
  if (!isSystemName(checked)) throw new InvalidInputError(`ladder fit fits Ladder's systems (${SYSTEM_NAMES.join(', ')}), not ${checked}`, { field: 'system' });
  const descriptor = describeSystem(checked);
  const name = descriptor.name;
  const splitAt = splitOf(options.split);
  const fixed = systemOptionsOf(options);
  const invalid = invalidLineReporter(options.skipInvalid);
  const matches = readEvalMatches(source, options.format, options.map, invalid.onInvalid);
  invalid.report();
  if (matches.length === 0) throw new InvalidInputError(`no matches in ${inputName(source)}: nothing to fit`, { field: 'matches' });
  const isTest = splitAtDate(splitAt);
  const training = trainingPart(matches, isTest);
  const hasHome = training.some((m: EvalMatch) => m.home !== undefined);
  const ranges = fitRangesFor(descriptor);
  const names =
    options.fit === 'none'
      ? []
      : options.fit
        ? options.fit
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : defaultFitFor(descriptor, hasHome);
  const specs = names.map((n) => {
    const spec = ranges[n];
    if (!spec) throw new InvalidInputError(`cannot fit ${JSON.stringify(n)} for ${name}; expected some of ${Object.keys(ranges).join(', ')}`, { field: 'fit' });
    return spec;
  });
  const contenderOptions = (fitted: Record<string, number>): [Record<string, number | string>, CoreContenderOptions] => {
    const { homeAdvantage, ...rest } = { ...fixed, ...fitted } as Record<string, number | string>;
    const contender: CoreContenderOptions = {};
    const home = homeAdvantage ?? options.homeAdvantage;
    if (home !== undefined) contender.homeAdvantage = Number(home);
    if (options.continuousTime === false) contender.continuousTime = false;
    return [rest, contender];
  };
  const burnIn = options.burnIn ?? 0.7;
  const protocol = protocolOptions(options, isTest);
  let bar: ProgressBar | undefined;
  const onProgress = (done: number, planned: number) => {
    bar ??= progress(`fit ${name}`, planned, 'steps');
    bar?.update(done);
  };
  const fitOptions = { burnIn, rounds: options.rounds ?? 2, tolerance: options.tolerance ?? 0.02, draws: protocol.draws ?? 'auto', onProgress };
  const candidates = options.candidates === undefined ? undefined : parseCandidates(options.candidates);
  // Bad candidate options fail before any run.
  for (const candidate of candidates ?? []) {
    const [systemOptions, contender] = contenderOptions({ ...candidate } as Record<string, number>);
    systemContender(name, systemOptions, contender);
  }
  let fit: FitResult;
  let chosenOptions: Record<string, number | string> = {};
  let selection: FitOutput['selection'];
  if (candidates) {
    // Model selection on the training part only: each candidate fitted on it, the lowest validation log-loss chosen.
    const selected = selectCandidate(
      (candidate, parameters) => {
        const [systemOptions, contender] = contenderOptions({ ...candidate, ...parameters } as Record<string, number>);
        return withLines(systemContender(name, systemOptions, contender));
      },
      training,
      candidates,
      specs,
      {
        ...fitOptions,
        onProgress: (done, planned) => {
          bar ??= progress(`fit ${name}`, planned * candidates.length, 'steps');
          bar?.update(done);
        },
        onCandidate: (index, result) => {
          bar?.finish();
          bar = undefined;
          // Each candidate as it is done (the command only): a long selection shows its results so far.
          if (progress !== noProgress && !options.json)
            process.stderr.write(
              `ladder fit: candidate ${index + 1}/${candidates.length} ${candidateText(result.options)}: validation log-loss ${result.fit.trainingLogLoss.toFixed(4)}\n`,
            );
        },
      },
    );
    fit = selected.candidates[selected.chosen]!.fit;
    chosenOptions = selected.candidates[selected.chosen]!.options;
    selection = {
      candidates: selected.candidates.map((c) => ({ options: c.options, fitted: c.fit.parameters, logLoss: c.fit.trainingLogLoss, againstChosen: c.againstChosen! })),
      chosen: selected.chosen,
    };
  } else {
    fit = fitParameters(
      (parameters) => {
        const [systemOptions, contender] = contenderOptions(parameters);
        return withLines(systemContender(name, systemOptions, contender));
      },
      training,
      specs,
      fitOptions,
    );
  }
  bar?.finish();
  const output: FitOutput = {
    system: name,
    parameters: { ...fixed, ...chosenOptions, ...fit.parameters },
    fitted: fit.parameters,
    training: { n: training.length, scored: fit.scoredMatches, logLoss: fit.trainingLogLoss, burnIn },
    evaluations: fit.evaluations,
    steps: fit.steps,
  };
  if (selection) output.selection = selection;
  let test: ReturnType<typeof evaluateLog> | undefined;
  if (options.evaluate) {
    const [systemOptions, contender] = contenderOptions({ ...chosenOptions, ...fit.parameters } as Record<string, number>);
    test = evaluateLog(systemContender(name, systemOptions, contender), matches, protocol, progress);
  }
  return { output, test };
}

/** A candidate's options as given: `inference=ep,cycle=8`. */
function candidateText(options: Record<string, number | string>): string {
  return Object.entries(options)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Each system's fit parameters for the help text: `glicko2 tau,rd; elo k; …`. */
function fitDefaultsHelp(): string {
  return SYSTEM_NAMES.map((name) => `${name} ${describeSystem(name).fit.byDefault.join(',')}`).join('; ');
}

export function register(program: Command): void {
  program
    .command('fit')
    .description("choose a system's parameters by minimising log-loss on the training part (before --split) only")
    .requiredOption('--system <name>', SYSTEM_NAMES.join('|'))
    .requiredOption('--split <date>', 'first date of the test part; only matches before it are used')
    .option(
      '--fit <names>',
      `comma-separated parameters to fit (default: ${fitDefaultsHelp()}; plus homeAdvantage when matches have a home side; none: with --candidates, compare them as given)`,
    )
    .option('--burn-in <share>', 'share of the training part that only teaches before scoring starts', numberOption('burn-in'), 0.7)
    .option('--rounds <n>', 'cycles of one-parameter searches', numberOption('rounds'), 2)
    .option('--tolerance <x>', 'a search stops when its bracket is this narrow (in ln units for scale parameters)', numberOption('tolerance'), 0.02)
    .option(
      '--candidates <list>',
      'model selection on the training part: candidates separated by ";", each key=value options joined by ","; each is fitted, and the lowest log-loss on the last share of the training part (after --burn-in) is chosen',
    )
    .option('--k <x>', 'fixed Elo K (when not fitted)', numberOption('k'))
    .option('--tau <x>', 'fixed Glicko-2 tau (when not fitted)', numberOption('tau'))
    .option('--rd <x>', 'fixed starting RD (when not fitted)', numberOption('rd'))
    .option('--rating <x>', 'starting rating', numberOption('rating'))
    .option('--param <key=value...>', 'any other fixed system option')
    .option('--home-advantage <points>', 'fixed home advantage (when not fitted)', numberOption('home-advantage'))
    .option('--no-continuous-time', 'Glicko-2/WvW: no RD growth between matches')
    .option('--draws <how>', 'auto, davidson or none (see ladder evaluate)', 'auto')
    .option('--format <format>', 'jsonl or csv (default: from the file name)')
    .option('--map <mapping>', 'CSV column mapping')
    .option('--skip-invalid', 'skip invalid lines (reported on stderr) instead of stopping at the first')
    .option('--evaluate', 'then score the fitted parameters on the test part')
    .option('--json', 'print JSON')
    .argument('<matches>', 'match log file, or - for standard input')
    .action(
      action((source: string, options: FitCommandOptions) => {
        const { output, test } = runFit(source, options, startProgress);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(test ? { ...output, test: jsonOf(test) } : output)}\n`);
          return;
        }
        for (const [i, c] of (output.selection?.candidates ?? []).entries()) {
          const fitted = Object.entries(c.fitted).map(([k, v]) => `${k} ${+v.toPrecision(5)}`);
          const chosen = i === output.selection!.chosen;
          // Behind the chosen one by how much, against the noise of the validation part (paired standard error).
          const behind = chosen ? '' : `, ${pairedText(c.againstChosen)} against the chosen (${neweyWestText(c.againstChosen)})`;
          process.stdout.write(
            `${chosen ? '* ' : '  '}${candidateText(c.options)}: validation log-loss ${c.logLoss.toFixed(4)}${behind}${fitted.length ? ` (${fitted.join(', ')})` : ''}\n`,
          );
        }
        const shown = Object.entries(output.fitted)
          .map(([k, v]) => `${k} ${+v.toPrecision(5)}`)
          .join(', ');
        process.stdout.write(
          `${output.system}: fitted ${shown}\n  training part: ${output.training.n} matches, the last ${output.training.scored} scored after a ${Math.round(output.training.burnIn * 100)}% burn-in; log-loss ${output.training.logLoss.toFixed(4)} (${output.evaluations} runs over ${output.steps} search steps; a step that revisits a point reuses its run)\n`,
        );
        if (test) process.stdout.write(`\ntest part with the fitted parameters:\n${formatResult(test)}`);
      }),
    );
}
