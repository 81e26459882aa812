/**
 * Runs a data set's whole comparison: each of our systems (fitting its
 * parameters on the training part first where the preset says so) and the
 * peers, all under the same protocol, on the same matches.
 */
import { loadPeers } from './load-peers.js';
import type { Contender, EvalMatch } from './contenders.js';
import { requireDataRoot } from './datasets.js';
import { evaluate, type EvaluationOptions, type EvaluationResult } from './engine.js';
import { fitParameters, trainingPart } from './fit.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { createRunContender, type DatasetPreset, type PeerConfig, type SystemRun, trainingDrawRate } from './presets.js';

export interface PresetRow extends EvaluationResult {
  label: string;
  kind: 'ladder' | 'peer';
  /** Row number for `--row`. */
  row: number;
  /** The parameters fitted on the training part, when any. */
  fitted?: Record<string, number>;
  fitSeconds?: number;
}

export interface PresetRunOptions {
  /** Run the peers (needs the devDependencies openskill and ts-trueskill). @default true */
  peers?: boolean;
  /** Only these rows, 1-based: the preset's runs first, then the peers in order. */
  rows?: readonly number[];
  /**
   * Options laid over each Ladder row's own (`ladder evaluate --dataset … --row N --param k=v`): the
   * row as published with one thing changed. A parameter the row fits cannot be given (the fit
   * would set it); the peers' rows take none.
   */
  params?: Readonly<Record<string, number | string>>;
  /** Keep each row's per-match log-losses (`losses`), for a paired comparison of rows. */
  keepLosses?: boolean;
  onRow?: (row: PresetRow) => void;
  onLog?: (message: string) => void;
  /**
   * Starts a progress bar of `total` steps counted in `unit` for each fit
   * and each evaluation, or returns undefined where none is drawn.
   */
  progress?: (label: string, total: number, unit: string) => { update(done: number): void; finish(): void } | undefined;
  /**
   * A row measured before, to take as it is instead of running it again
   * (the report's `--keep`): looked up by kind and label. Its row number is
   * set anew.
   */
  reuse?: (kind: PresetRow['kind'], label: string) => PresetRow | undefined;
}

export function protocolOf(preset: DatasetPreset): EvaluationOptions {
  const options: EvaluationOptions = { isTest: preset.isTest };
  if (preset.isScored) options.isScored = preset.isScored;
  if (preset.scored) options.scored = preset.scored;
  if (preset.draws) options.draws = preset.draws;
  return options;
}

async function peerContenders(configs: readonly PeerConfig[], training: readonly EvalMatch[]): Promise<Contender[]> {
  const { openSkillContender, trueSkillContender } = await loadPeers();
  const contenders: Contender[] = [];
  for (const config of configs) {
    if (config.openskill) contenders.push(openSkillContender(config.openskill));
    if (config.trueskill) {
      const trueskill = { ...config.trueskill };
      // Where the data has draws, TrueSkill's assumed draw rate is the training part's.
      if (trueskill.drawProbability === undefined && training.length > 0) trueskill.drawProbability = trainingDrawRate(training);
      contenders.push(trueSkillContender(trueskill));
    }
  }
  return contenders;
}

function labelOf(contender: Contender, config?: PeerConfig): string {
  // The parameters have their own column; the label only names the configuration.
  return config?.label ? `${contender.label} (${config.label})` : contender.label;
}

export async function runPreset(preset: DatasetPreset, options: PresetRunOptions = {}): Promise<{ matches: number; rows: PresetRow[] }> {
  const log = options.onLog ?? (() => {});
  const started = performance.now();
  requireDataRoot();
  const matches = preset.load();
  log(`${preset.name}: ${matches.length} matches loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const protocol = { ...protocolOf(preset), ...(options.keepLosses ? { keepLosses: true } : {}) };
  const training = trainingPart(matches, preset.isTest);
  const rows: PresetRow[] = [];
  const evaluateWithBar = (contender: Contender, label: string): EvaluationResult => {
    const bar = options.progress?.(`evaluate ${label}`, matches.length, 'matches');
    const result = evaluate(contender, matches, bar ? { ...protocol, onProgress: (done) => bar.update(done) } : protocol);
    bar?.update(matches.length);
    bar?.finish();
    return result;
  };
  const add = (row: PresetRow) => {
    rows.push(row);
    options.onRow?.(row);
  };

  let rowNumber = 0;
  const wanted = () => {
    rowNumber++;
    return !options.rows || options.rows.includes(rowNumber);
  };
  const reused = (kind: PresetRow['kind'], label: string): boolean => {
    const row = options.reuse?.(kind, label);
    if (!row) return false;
    add({ ...row, row: rowNumber });
    return true;
  };
  const params = options.params ?? {};
  const changed = Object.keys(params);
  for (const given of preset.runs) {
    if (!wanted()) continue;
    for (const name of changed) {
      if (given.fit?.some((p) => p.name === name)) {
        throw new InvalidInputError(`row ${rowNumber} (${given.label}) fits ${name} on its training part; leave it out of --param`, { field: 'param' });
      }
    }
    const run: SystemRun =
      changed.length === 0
        ? given
        : { ...given, label: `${given.label}, with ${changed.map((k) => `${k} ${String(params[k])}`).join(', ')}`, options: { ...given.options, ...params } };
    if (reused('ladder', run.label)) continue;
    let fitted: Record<string, number> | undefined;
    let fitSeconds: number | undefined;
    if (run.fit) {
      const fitStart = performance.now();
      let fitBar: ReturnType<NonNullable<PresetRunOptions['progress']>>;
      const fit = fitParameters((parameters) => createRunContender(run, parameters), training, run.fit, {
        draws: preset.draws ?? 'auto',
        ...(options.progress && {
          onProgress: (done: number, planned: number) => {
            fitBar ??= options.progress!(`fit ${run.label}`, planned, 'steps');
            fitBar?.update(done);
          },
        }),
      });
      fitBar?.finish();
      fitted = fit.parameters;
      fitSeconds = (performance.now() - fitStart) / 1000;
      log(`  fitted ${run.label}: ${JSON.stringify(fitted)} (training log-loss ${fit.trainingLogLoss.toFixed(4)}, ${fit.evaluations} runs, ${fitSeconds.toFixed(0)} s)`);
    }
    const result = evaluateWithBar(createRunContender(run, fitted), run.label);
    const row: PresetRow = { ...result, label: run.label, kind: 'ladder', row: rowNumber };
    if (fitted) row.fitted = fitted;
    if (fitSeconds !== undefined) row.fitSeconds = fitSeconds;
    add(row);
  }
  if (options.peers ?? true) {
    for (const config of preset.peers) {
      if (!wanted()) continue;
      for (const contender of await peerContenders([config], training)) {
        if (reused('peer', labelOf(contender, config))) continue;
        add({ ...evaluateWithBar(contender, labelOf(contender, config)), label: labelOf(contender, config), kind: 'peer', row: rowNumber });
      }
    }
  }
  return { matches: matches.length, rows };
}
