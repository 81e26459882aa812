/**
 * Parameter fitting on the training part alone.
 *
 * The training matches are replayed online; the first `burnIn` share only
 * teaches the ratings and the rest is scored, as the test part will be. The
 * log-loss of that scored tail is minimised one parameter at a time by
 * golden-section search (on a log scale for positive parameters), cycling
 * over the parameters `rounds` times. The test part is never read: callers
 * pass only the training matches, and `fitOnTraining` cuts them itself.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Contender, EvalMatch } from './contenders.js';
import { type DrawHandling, evaluate, type EvaluationOptions } from './engine.js';
import { type PairedDifference, type PerMatchLosses, pairedDifference } from './paired.js';

export interface ParameterSpec {
  name: string;
  min: number;
  max: number;
  /** `log` searches ln(value): for positive scale-like parameters. @default 'log' */
  scale?: 'log' | 'linear';
  /** Where the search starts for the other parameters' first round. @default the geometric (log) or arithmetic mean of min and max */
  initial?: number;
}

export interface FitOptions {
  /** Share of the training matches that only teach before scoring starts. @default 0.7 */
  burnIn?: number;
  /** Cycles over the parameters. @default 2 */
  rounds?: number;
  /** Search stops when the bracket is this narrow (in ln units for `log`, value units for `linear`). @default 0.02 */
  tolerance?: number;
  /** @default 'auto' */
  draws?: DrawHandling;
  /** Progress: each objective evaluation. */
  onEvaluation?: (parameters: Record<string, number>, logLoss: number) => void;
  /**
   * Progress for a bar: called after each of the search's steps with the
   * steps done and the steps the search will take (known in advance: each
   * golden-section search narrows its bracket by the same ratio each step).
   */
  onProgress?: (done: number, planned: number) => void;
}

const GOLDEN_RATIO = (Math.sqrt(5) - 1) / 2;

/** The bracket of a parameter's search: ln of the range for `log`, the range itself for `linear`. */
function bracketOf(spec: ParameterSpec): [low: number, high: number] {
  return (spec.scale ?? 'log') === 'log' ? [Math.log(spec.min), Math.log(spec.max)] : [spec.min, spec.max];
}

/** Steps (objective calls, cached or not) of a fit: two per search, one per narrowing, one at the end. */
export function plannedFitSteps(specs: readonly ParameterSpec[], rounds: number, tolerance: number): number {
  let perRound = 0;
  for (const spec of specs) {
    const [low, high] = bracketOf(spec);
    let width = high - low;
    let narrowings = 0;
    for (; width > tolerance; narrowings++) width *= GOLDEN_RATIO;
    perRound += 2 + narrowings;
  }
  return rounds * perRound + 1;
}

export interface FitResult {
  parameters: Record<string, number>;
  /** Log-loss of the scored tail of the training part at the chosen parameters. */
  trainingLogLoss: number;
  /** Runs over the training part (a point the search visits again is answered from a cache, not run). */
  evaluations: number;
  /** Points the search visited, the progress bar's count: `evaluations` plus the ones answered from the cache. */
  steps: number;
  /** Matches the objective scored (the training part after the burn-in). */
  scoredMatches: number;
  /** Each scored validation match's log-loss at the chosen parameters: what a paired comparison of candidates reads. */
  validationLosses: PerMatchLosses;
}

/**
 * Chooses the parameters named in `specs` for the contender built by `make`
 * by minimising the training log-loss. `fixed` are passed through unchanged.
 */
export function fitParameters(
  make: (parameters: Record<string, number>) => Contender,
  training: readonly EvalMatch[],
  specs: readonly ParameterSpec[],
  options: FitOptions = {},
): FitResult {
  if (training.length < 10) throw new InvalidInputError(`fitting needs a training part; it has ${training.length} matches`, { field: 'split' });
  if (specs.length === 0) throw new InvalidInputError('nothing to fit', { field: 'fit' });
  const burnIn = options.burnIn ?? 0.7;
  if (!(burnIn >= 0 && burnIn < 1)) throw new InvalidInputError(`must be in [0, 1), got ${burnIn}`, { field: 'burnIn' });
  const rounds = options.rounds ?? 2;
  const tolerance = options.tolerance ?? 0.02;
  const firstScored = Math.floor(training.length * burnIn);
  const protocol: EvaluationOptions = { isTest: (_, index) => index >= firstScored, draws: options.draws ?? 'auto', keepLosses: true };

  const cache = new Map<string, number>();
  // The per-match losses of the best point so far: almost always the point the search ends on.
  let best: { key: string; loss: number; losses: PerMatchLosses } | undefined;
  const keyOf = (parameters: Record<string, number>) => specs.map((s) => parameters[s.name]!.toPrecision(12)).join(',');
  let evaluations = 0;
  let scoredMatches = 0;
  let steps = 0;
  const planned = options.onProgress ? plannedFitSteps(specs, rounds, tolerance) : 0;
  const cachedObjective = (parameters: Record<string, number>): number => {
    const key = keyOf(parameters);
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const result = evaluate(make(parameters), training, protocol);
    evaluations++;
    scoredMatches = result.test.n;
    const loss = Number.isFinite(result.test.logLoss) ? result.test.logLoss : Infinity;
    cache.set(key, loss);
    if (best === undefined || loss < best.loss) best = { key, loss, losses: result.losses! };
    options.onEvaluation?.({ ...parameters }, loss);
    return loss;
  };
  const objective = (parameters: Record<string, number>): number => {
    const loss = cachedObjective(parameters);
    options.onProgress?.(++steps, planned);
    return loss;
  };

  const current: Record<string, number> = {};
  for (const spec of specs) {
    if (!(spec.max > spec.min)) throw new InvalidInputError(`max must exceed min for ${spec.name}`, { field: spec.name });
    if ((spec.scale ?? 'log') === 'log' && !(spec.min > 0)) throw new InvalidInputError(`a log-scale search needs min > 0 for ${spec.name}`, { field: spec.name });
    current[spec.name] = spec.initial ?? ((spec.scale ?? 'log') === 'log' ? Math.sqrt(spec.min * spec.max) : (spec.min + spec.max) / 2);
  }

  const ratio = GOLDEN_RATIO;
  for (let round = 0; round < rounds; round++) {
    for (const spec of specs) {
      const log = (spec.scale ?? 'log') === 'log';
      const toValue = (x: number) => (log ? Math.exp(x) : x);
      const at = (x: number) => objective({ ...current, [spec.name]: toValue(x) });
      let [low, high] = bracketOf(spec);
      let x1 = high - ratio * (high - low);
      let x2 = low + ratio * (high - low);
      let f1 = at(x1);
      let f2 = at(x2);
      while (high - low > tolerance) {
        if (f1 <= f2) {
          high = x2;
          x2 = x1;
          f2 = f1;
          x1 = high - ratio * (high - low);
          f1 = at(x1);
        } else {
          low = x1;
          x1 = x2;
          f1 = f2;
          x2 = low + ratio * (high - low);
          f2 = at(x2);
        }
      }
      current[spec.name] = toValue(f1 <= f2 ? x1 : x2);
    }
  }
  const trainingLogLoss = objective(current);
  // The search ends on its best point, but a later round can leave it for a point no better: then run the end point once more.
  let validationLosses: PerMatchLosses;
  if (best?.key === keyOf(current)) validationLosses = best.losses;
  else {
    validationLosses = evaluate(make(current), training, protocol).losses!;
    evaluations++;
  }
  return { parameters: { ...current }, trainingLogLoss, evaluations, steps, scoredMatches, validationLosses };
}

/** The training part of a protocol: the matches before the first test match. */
export function trainingPart(matches: readonly EvalMatch[], isTest: EvaluationOptions['isTest']): EvalMatch[] {
  const training: EvalMatch[] = [];
  for (let i = 0; i < matches.length; i++) {
    if (isTest(matches[i]!, i)) break;
    training.push(matches[i]!);
  }
  return training;
}

/** One candidate configuration of a selection: its fixed options, and its fit on the training part. */
export interface CandidateResult {
  /** The candidate's fixed options, as given. */
  options: Record<string, number | string>;
  fit: FitResult;
  /** Its validation log-loss against the chosen candidate's, match by match (the chosen one's is 0 ± 0). */
  againstChosen?: PairedDifference;
}

export interface SelectionResult {
  candidates: CandidateResult[];
  /** The index of the candidate with the lowest validation log-loss (the first of equals). */
  chosen: number;
}

/**
 * Model selection on the training part alone: for each candidate (a set of
 * fixed options, e.g. an inference, a window and a cycle), fits `specs` as
 * `fitParameters` does, the first `burnIn` share of `training` only
 * teaching and the rest the validation part, and chooses the candidate whose
 * fitted validation log-loss is lowest. Like `fitParameters`, it is given
 * the training matches only: the test part cannot sway the choice.
 */
export function selectCandidate(
  make: (candidate: Record<string, number | string>, parameters: Record<string, number>) => Contender,
  training: readonly EvalMatch[],
  candidates: readonly Record<string, number | string>[],
  specs: readonly ParameterSpec[],
  options: FitOptions & { onCandidate?: (index: number, result: CandidateResult) => void } = {},
): SelectionResult {
  if (candidates.length === 0) throw new InvalidInputError('no candidate to select from', { field: 'candidates' });
  const results: CandidateResult[] = [];
  let chosen = 0;
  for (let i = 0; i < candidates.length; i++) {
    const candidate = candidates[i]!;
    const fit = specs.length > 0 ? fitParameters((parameters) => make(candidate, parameters), training, specs, options) : scoreOnly(make(candidate, {}), training, options);
    const result = { options: { ...candidate }, fit };
    results.push(result);
    options.onCandidate?.(i, result);
    if (fit.trainingLogLoss < results[chosen]!.fit.trainingLogLoss) chosen = i;
  }
  // How far each candidate is behind the chosen one, and whether that is more than the validation part's noise.
  for (const result of results) result.againstChosen = pairedDifference(result.fit.validationLosses, results[chosen]!.fit.validationLosses);
  return { candidates: results, chosen };
}

/** A candidate with nothing to fit: its validation log-loss alone. */
function scoreOnly(contender: Contender, training: readonly EvalMatch[], options: FitOptions): FitResult {
  if (training.length < 10) throw new InvalidInputError(`fitting needs a training part; it has ${training.length} matches`, { field: 'split' });
  const firstScored = Math.floor(training.length * (options.burnIn ?? 0.7));
  const result = evaluate(contender, training, { isTest: (_, index) => index >= firstScored, draws: options.draws ?? 'auto', keepLosses: true });
  const loss = Number.isFinite(result.test.logLoss) ? result.test.logLoss : Infinity;
  return { parameters: {}, trainingLogLoss: loss, evaluations: 1, steps: 1, scoredMatches: result.test.n, validationLosses: result.losses! };
}

/**
 * Parses `--candidates`: candidates separated by `;`, each a comma-separated
 * list of `key=value` options (numbers where they parse), e.g.
 * `inference=map;inference=ep,cycle=8`.
 */
export function parseCandidates(text: string): Record<string, number | string>[] {
  const candidates = text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  if (candidates.length === 0) throw new InvalidInputError('expected candidates such as inference=map;inference=ep,cycle=8', { field: 'candidates' });
  return candidates.map((candidate) => {
    const out: Record<string, number | string> = {};
    for (const pair of candidate.split(',').map((s) => s.trim())) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new InvalidInputError(`expected key=value in candidate ${JSON.stringify(candidate)}, got ${JSON.stringify(pair)}`, { field: 'candidates' });
      const value = pair.slice(eq + 1).trim();
      out[pair.slice(0, eq).trim()] = value !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    }
    return out;
  });
}
