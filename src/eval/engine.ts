/**
 * The online evaluation protocol.
 *
 * Matches are taken in the order given (loaders sort by time, stably). For a
 * match of the training part the contender only learns. For a match of the
 * test part it first predicts from what it learnt so far, the prediction is
 * scored, and then it learns from the match. Nothing about a test match is
 * seen before it is predicted, and nothing of the test part is used to pick
 * parameters (see fit.ts) or the draw model.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { teamPlacements } from 'ladder-core/core/match.js';
import type { Contender, EvalMatch, ParameterValue } from './contenders.js';
import { davidsonOutcome, fitDavidsonNu } from './draws.js';
import { type CalibrationBin, type Metrics, MetricsAccumulator, type OutcomeProbabilities } from './metrics.js';
import type { PerMatchLosses } from './paired.js';

/**
 * Which test matches are scored (all are learnt from):
 * - `all`: every test match;
 * - `any-seen`: at least one player has played before (the openskill.js Halo 2 benchmark);
 * - `all-seen`: every player has played before.
 */
export type ScoredMatches = 'all' | 'any-seen' | 'all-seen';

/**
 * How draws are scored: `davidson` fits Davidson's ν on the training
 * predictions and scores three outcomes; `none` scores the two-outcome
 * prediction, a draw counting as half a win and half a loss; `auto` is
 * `davidson` when the training part has a draw, else `none`.
 */
export type DrawHandling = 'auto' | 'davidson' | 'none';

export interface EvaluationOptions {
  /**
   * Whether the match at `index` is in the test part. The test part must be
   * a suffix: once a match is in it, every later one is too (checked).
   */
  isTest: (match: EvalMatch, index: number) => boolean;
  /** @default 'all' */
  scored?: ScoredMatches;
  /**
   * Narrows the scored test matches further (e.g. one tournament, completed
   * matches only). A test match it rejects is still learnt from.
   */
  isScored?: (match: EvalMatch, index: number) => boolean;
  /** @default 'auto' */
  draws?: DrawHandling;
  /**
   * With no training part (an all-test protocol) and `draws: 'davidson'`, ν
   * starts at `initialNu` and is refitted on every earlier prediction each
   * `refitEvery` matches. @default 500
   */
  refitEvery?: number;
  /** ν before the first refit of an all-test protocol: 1 gives an even match a draw chance of 1/3. @default 1 */
  initialNu?: number;
  /** Keep each scored match's log-loss in the result (`losses`), for a paired comparison of contenders. */
  keepLosses?: boolean;
  /** Called with each scored match's prediction, e.g. to list them. */
  onPrediction?: (match: EvalMatch, expected: number, score: number, index: number) => void;
  /** Called with the number of matches done, every {@link PROGRESS_EVERY} matches (a progress bar). */
  onProgress?: (done: number) => void;
}

/** How many matches pass between two `onProgress` calls: often enough for a bar, rare enough to cost nothing. */
export const PROGRESS_EVERY = 4096;

export interface EvaluationResult {
  system: string;
  parameters: Readonly<Record<string, ParameterValue>>;
  train: { n: number };
  test: Metrics & { skipped: number };
  /** Davidson's ν in use at the end, when draws were scored with it. */
  drawNu?: number;
  /** With `keepLosses`: each scored match's log-loss, as the mean counts it. */
  losses?: PerMatchLosses;
  calibration: CalibrationBin[];
  seconds: number;
}

/** Team 0's score: 1 win, 0.5 draw, 0 loss. */
export function scoreOf(match: EvalMatch): number {
  const placements = teamPlacements(match);
  return placements[0]! < placements[1]! ? 1 : placements[0]! > placements[1]! ? 0 : 0.5;
}

class GrowableArray {
  values = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.length++] = value;
  }
}

/** Runs the protocol over `matches` for one contender. */
export function evaluate(contender: Contender, matches: Iterable<EvalMatch>, options: EvaluationOptions): EvaluationResult {
  const started = performance.now();
  const scored = options.scored ?? 'all';
  const draws = options.draws ?? 'auto';
  const refitEvery = options.refitEvery ?? 500;
  const metrics = new MetricsAccumulator();
  // Predictions on the training part (and, without one, on earlier test matches): what ν is fitted on.
  const pastExpected = new GrowableArray();
  const pastScores = new GrowableArray();
  let trainDraws = 0;
  let nu: number | undefined;
  let inTest = false;
  let trainCount = 0;
  let skipped = 0;
  let testCount = 0;
  let index = 0;
  const outcome: OutcomeProbabilities = { win: 0, draw: 0, loss: 0 };
  const kept = options.keepLosses ? { indices: new GrowableArray(), losses: new GrowableArray() } : undefined;

  for (const match of matches) {
    const test = options.isTest(match, index);
    if (!test && inTest) {
      throw new InvalidInputError(`match ${index + 1} is in the training part after the test part began; sort the matches by time`, { field: 'at' });
    }
    const score = scoreOf(match);
    if (!test) {
      if (draws !== 'none') {
        // Predicting training matches costs time; needed only to fit ν.
        pastExpected.push(contender.predict(match));
        pastScores.push(score);
        if (score === 0.5) trainDraws++;
      }
      contender.update(match);
      trainCount++;
      index++;
      if (options.onProgress && index % PROGRESS_EVERY === 0) options.onProgress(index);
      continue;
    }
    if (!inTest) {
      inTest = true;
      if (trainCount === 0) {
        // No training part: `auto` scores two outcomes; `davidson` starts from a stated ν.
        if (draws === 'davidson') nu = options.initialNu ?? 1;
      } else if (draws === 'davidson' || (draws === 'auto' && trainDraws > 0)) {
        nu = fitDavidsonNu(pastExpected.values, pastScores.values, pastExpected.length);
      }
    }
    const expected = contender.predict(match);
    let counted = options.isScored ? options.isScored(match, index) : true;
    if (counted && scored !== 'all') {
      let seen = 0;
      let players = 0;
      for (const team of match.teams) {
        for (const p of team.players) {
          players++;
          if (contender.known(p.id)) seen++;
        }
      }
      counted = scored === 'any-seen' ? seen > 0 : seen === players;
    }
    if (counted) {
      const loss = nu !== undefined ? metrics.add(expected, score, davidsonOutcome(expected, nu, outcome)) : metrics.add(expected, score);
      kept?.indices.push(index);
      kept?.losses.push(loss);
      options.onPrediction?.(match, expected, score, index);
    } else {
      skipped++;
    }
    // An all-test protocol with draws: ν comes from earlier matches only, refitted as they accumulate.
    if (nu !== undefined && trainCount === 0) {
      pastExpected.push(expected);
      pastScores.push(score);
      testCount++;
      if (testCount % refitEvery === 0) nu = fitDavidsonNu(pastExpected.values, pastScores.values, pastExpected.length);
    }
    contender.update(match);
    index++;
    if (options.onProgress && index % PROGRESS_EVERY === 0) options.onProgress(index);
  }

  const result: EvaluationResult = {
    system: contender.label,
    parameters: contender.parameters,
    train: { n: trainCount },
    test: { ...metrics.result(), skipped },
    calibration: metrics.calibration(),
    seconds: (performance.now() - started) / 1000,
  };
  if (nu !== undefined) result.drawNu = nu;
  if (kept) result.losses = { indices: Int32Array.from(kept.indices.values.subarray(0, kept.indices.length)), losses: kept.losses.values.slice(0, kept.losses.length) };
  return result;
}

/** A split at a date: matches at or after `splitAt` (epoch ms) are the test part. Every match needs `at`. */
export function splitAtDate(splitAt: number): EvaluationOptions['isTest'] {
  return (match, index) => {
    if (match.at === undefined) throw new InvalidInputError(`match ${index + 1} has no time; a date split needs one on every match`, { field: 'at' });
    return match.at >= splitAt;
  };
}
