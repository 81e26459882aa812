/**
 * Davidson's draw model (R. R. Davidson, "On extending the Bradley-Terry
 * model to accommodate ties in paired comparison experiments", JASA 65, 1970):
 * with p the two-outcome chance of team 0 and r = sqrt(p (1 − p)),
 *
 *   P(win) = p / (1 + ν r),  P(loss) = (1 − p) / (1 + ν r),  P(draw) = ν r / (1 + ν r).
 *
 * Why Davidson: it turns any system's two-outcome prediction into three
 * outcomes with one parameter ν, draws are likeliest between equals (as in
 * chess and football), and ν = 0 is the system unchanged. The same model is
 * applied to every system and peer, so three-outcome scores compare like for
 * like. ν is fitted by maximum likelihood on earlier matches only.
 */
import type { OutcomeProbabilities } from './metrics.js';

export function davidsonOutcome(p: number, nu: number, out: OutcomeProbabilities = { win: 0, draw: 0, loss: 0 }): OutcomeProbabilities {
  const r = nu * Math.sqrt(p * (1 - p));
  const denominator = 1 + r;
  out.win = p / denominator;
  out.loss = (1 - p) / denominator;
  out.draw = r / denominator;
  return out;
}

/** Largest ν searched: ν = 20 gives an even match a 91% draw chance. */
const NU_MAX = 20;

/**
 * Maximum-likelihood ν for the given two-outcome predictions and results
 * (score 1, 0.5 or 0), by golden-section search on [0, 20] (the
 * log-likelihood is concave in ν: each term is a log of a ratio of linear
 * functions of ν, concave on this range for the outcomes that occur).
 */
export function fitDavidsonNu(expected: ArrayLike<number>, scores: ArrayLike<number>, count = expected.length): number {
  let draws = 0;
  for (let i = 0; i < count; i++) if (scores[i] === 0.5) draws++;
  if (draws === 0 || count === 0) return 0;
  const logLikelihood = (nu: number): number => {
    let sum = 0;
    for (let i = 0; i < count; i++) {
      const p = expected[i]!;
      const r = nu * Math.sqrt(p * (1 - p));
      const s = scores[i]!;
      const numerator = s === 1 ? p : s === 0 ? 1 - p : r;
      sum += Math.log(Math.max(numerator, 1e-300)) - Math.log1p(r);
    }
    return sum;
  };
  let low = 0;
  let high = NU_MAX;
  const ratio = (Math.sqrt(5) - 1) / 2;
  let x1 = high - ratio * (high - low);
  let x2 = low + ratio * (high - low);
  let f1 = logLikelihood(x1);
  let f2 = logLikelihood(x2);
  while (high - low > 1e-6) {
    if (f1 < f2) {
      low = x1;
      x1 = x2;
      f1 = f2;
      x2 = low + ratio * (high - low);
      f2 = logLikelihood(x2);
    } else {
      high = x2;
      x2 = x1;
      f2 = f1;
      x1 = high - ratio * (high - low);
      f1 = logLikelihood(x1);
    }
  }
  return (low + high) / 2;
}
