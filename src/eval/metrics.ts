/**
 * Prediction metrics of the evaluation protocol, accumulated one match at a
 * time so a 600k-match file needs no per-match storage.
 *
 * Every match is seen from team 0's side: `expected` is the predicted
 * expected score of team 0 (its win chance, draws counting half), `score` is
 * what team 0 got (1 win, 0.5 draw, 0 loss). Where the data has draws, a
 * three-outcome prediction (win, draw, loss) comes from the draw model.
 */

/** Probabilities kept away from 0 and 1 so one confident miss cannot make the mean infinite. */
export const PROBABILITY_FLOOR = 1e-15;

export interface OutcomeProbabilities {
  win: number;
  draw: number;
  loss: number;
}

export interface CalibrationBin {
  /** Lower edge of the bin on the favourite's predicted chance (0.5 to 1). */
  from: number;
  to: number;
  n: number;
  /** Mean predicted chance of the favourite. */
  predicted: number;
  /** Share of the favourite's results that were wins, draws counting half. */
  observed: number;
}

export interface Metrics {
  /** Matches scored. */
  n: number;
  /** Drawn matches among them. */
  draws: number;
  /**
   * Mean log-loss, natural log. Two-outcome (−ln p of the winner) when the
   * evaluation has no draw model; three-outcome (−ln P of what happened:
   * win, draw or loss) when it has one.
   */
  logLoss: number;
  /**
   * Share of matches the favourite won. An exact 0.5 is wrong, and so is a
   * draw (the favourite did not win).
   */
  accuracy: number;
  /** Mean (expected − score)², score 1, 0.5 or 0. */
  brier: number;
  /** Three-outcome only: share of matches whose most likely outcome happened (ties wrong). */
  accuracy3?: number;
  /** The same metrics on decisive matches only, two-outcome: what a system with no draw model is judged on. */
  decisive?: { n: number; logLoss: number; accuracy: number };
}

const BIN_COUNT = 10;

/** Accumulates the metrics over a stream of predictions. */
export class MetricsAccumulator {
  private n = 0;
  private draws = 0;
  private logLossSum = 0;
  private correct = 0;
  private correct3 = 0;
  private brierSum = 0;
  private decisiveN = 0;
  private decisiveLogLoss = 0;
  private decisiveCorrect = 0;
  private readonly binN = new Float64Array(BIN_COUNT);
  private readonly binPredicted = new Float64Array(BIN_COUNT);
  private readonly binObserved = new Float64Array(BIN_COUNT);
  /** True once a three-outcome prediction was added. */
  private threeOutcome = false;

  /**
   * Adds one match. `expected` is team 0's expected score; `outcome`, when
   * given, is the three-outcome prediction used for the log-loss. Returns
   * the match's own log-loss (its share of the mean).
   */
  add(expected: number, score: number, outcome?: OutcomeProbabilities): number {
    this.n++;
    const draw = score === 0.5;
    if (draw) this.draws++;
    const favouriteChance = expected >= 0.5 ? expected : 1 - expected;
    const favouriteScore = expected >= 0.5 ? score : 1 - score;
    if (expected !== 0.5 && favouriteScore === 1) this.correct++;
    const miss = expected - score;
    this.brierSum += miss * miss;

    if (!draw) {
      const p = score === 1 ? expected : 1 - expected;
      this.decisiveN++;
      this.decisiveLogLoss -= Math.log(Math.max(p, PROBABILITY_FLOOR));
      if (p > 0.5) this.decisiveCorrect++;
    }
    let loss: number;
    if (outcome) {
      this.threeOutcome = true;
      const happened = score === 1 ? outcome.win : score === 0 ? outcome.loss : outcome.draw;
      loss = -Math.log(Math.max(happened, PROBABILITY_FLOOR));
      if (happened > Math.max(score === 1 ? 0 : outcome.win, score === 0.5 ? 0 : outcome.draw, score === 0 ? 0 : outcome.loss)) this.correct3++;
    } else {
      // Two-outcome: a draw is scored as half a win and half a loss.
      const p = Math.max(expected, PROBABILITY_FLOOR);
      const q = Math.max(1 - expected, PROBABILITY_FLOOR);
      loss = -(score * Math.log(p) + (1 - score) * Math.log(q));
    }
    this.logLossSum += loss;

    let bin = Math.floor((favouriteChance - 0.5) * 2 * BIN_COUNT);
    if (bin >= BIN_COUNT) bin = BIN_COUNT - 1;
    this.binN[bin]!++;
    this.binPredicted[bin]! += favouriteChance;
    this.binObserved[bin]! += favouriteScore;
    return loss;
  }

  result(): Metrics {
    const n = this.n;
    const metrics: Metrics = {
      n,
      draws: this.draws,
      logLoss: n ? this.logLossSum / n : NaN,
      accuracy: n ? this.correct / n : NaN,
      brier: n ? this.brierSum / n : NaN,
    };
    if (this.threeOutcome) metrics.accuracy3 = n ? this.correct3 / n : NaN;
    if (this.draws > 0) {
      const d = this.decisiveN;
      metrics.decisive = { n: d, logLoss: d ? this.decisiveLogLoss / d : NaN, accuracy: d ? this.decisiveCorrect / d : NaN };
    }
    return metrics;
  }

  /** Reliability table: the favourite's predicted chance against how often it scored, in bins of 0.05. */
  calibration(): CalibrationBin[] {
    const bins: CalibrationBin[] = [];
    for (let i = 0; i < BIN_COUNT; i++) {
      const count = this.binN[i]!;
      bins.push({
        from: 0.5 + i / (2 * BIN_COUNT),
        to: 0.5 + (i + 1) / (2 * BIN_COUNT),
        n: count,
        predicted: count ? this.binPredicted[i]! / count : NaN,
        observed: count ? this.binObserved[i]! / count : NaN,
      });
    }
    return bins;
  }
}
