/**
 * The game model's links: P(side A wins) = σ(d) (logistic, Bradley–Terry)
 * or Φ(d) (probit), with the normal cdf and inverse Mills ratio they need,
 * and one game's gradient and curvature in d.
 */
import type { WhrLink } from './options.js';

const SQRT2PI = Math.sqrt(2 * Math.PI);

/**
 * λ(z) = φ(z)/Φ(z), stable for very negative z: Φ(z) = ½ erfc(−z/√2) with
 * the Numerical Recipes erfc (relative error < 1.2e-7), whose exp(−x²)
 * factor cancels φ's.
 */
export function inverseMillsRatio(z: number): number {
  const x = -z / Math.SQRT2;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.5 * ax);
  const poly =
    -1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  if (x >= 0) {
    // Φ(z) = ½ t exp(−x² + poly), φ(z) = exp(−x²)/√(2π)
    return 2 / (SQRT2PI * t * Math.exp(poly));
  }
  const phi = Math.exp((-z * z) / 2) / SQRT2PI;
  const Phi = 1 - 0.5 * t * Math.exp(-ax * ax + poly);
  return phi / Phi;
}

/** Standard normal cdf Φ(z). */
export function normalCdf(z: number): number {
  const x = -z / Math.SQRT2;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.5 * ax);
  const erfc =
    t *
    Math.exp(
      -ax * ax -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 0.5 * erfc : 1 - 0.5 * erfc;
}

const logistic = (d: number): number => 1 / (1 + Math.exp(-d));

/**
 * P(side A wins) for a skill difference d with variance v (both sides'
 * uncertainty): logistic σ(d/√(1 + πv/8)) (MacKay's approximation), probit
 * Φ(d/√(1 + v)) (exact). v = 0 gives σ(d) and Φ(d).
 */
export function whrWinProbability(d: number, v: number, link: WhrLink): number {
  return link === 'probit' ? normalCdf(d / Math.sqrt(1 + v)) : logistic(d / Math.sqrt(1 + (Math.PI * v) / 8));
}

/** The probit link's gradient and curvature of ln P(score | d), into out[0], out[1]. */
export function probitTerms(d: number, s: number, out: Float64Array): void {
  let grad = 0;
  let curv = 0;
  if (s > 0) {
    const l = inverseMillsRatio(d);
    grad += s * l;
    curv += s * l * (l + d);
  }
  if (s < 1) {
    const l = inverseMillsRatio(-d);
    grad -= (1 - s) * l;
    curv += (1 - s) * l * (l - d);
  }
  out[0] = grad;
  out[1] = curv;
}

/**
 * The gradient and curvature (minus the second derivative) of one game's
 * log-likelihood in d, into out[0], out[1]: side A is nodes[start, split),
 * side B nodes[split, end), skills read from r.
 */
export function gameTermsOf(start: number, split: number, end: number, s: number, offset: number, nodes: Int32Array, r: Float64Array, probit: boolean, out: Float64Array): void {
  let sa = 0;
  for (let i = start; i < split; i++) sa += r[nodes[i]!]!;
  let sb = 0;
  for (let i = split; i < end; i++) sb += r[nodes[i]!]!;
  const d = sa / (split - start) - sb / (end - split) + offset;
  if (probit) {
    probitTerms(d, s, out);
    return;
  }
  const p = 1 / (1 + Math.exp(-d));
  out[0] = s - p;
  out[1] = p * (1 - p);
}
