/**
 * Exact tail probabilities for the integrity tests, in log space so that
 * very small p-values (a pair that met 30 times where 0.1 was expected)
 * keep their digits.
 */

const logFactorials: number[] = [0];

/** ln n! (a table, grown on demand). */
export function logFactorial(n: number): number {
  for (let k = logFactorials.length; k <= n; k++) logFactorials.push(logFactorials[k - 1] + Math.log(k));
  return logFactorials[n];
}

/** ln C(n, k); −Infinity outside 0 ≤ k ≤ n. */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return -Infinity;
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

/** ln(e^a + e^b) without overflow. */
function logAdd(a: number, b: number): number {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const high = Math.max(a, b);
  return high + Math.log1p(Math.exp(Math.min(a, b) - high));
}

/** P(X ≥ x) for X ~ Poisson(mean). */
export function poissonUpper(x: number, mean: number): number {
  if (x <= 0) return 1;
  if (mean <= 0) return 0;
  const logTerm = (k: number) => -mean + k * Math.log(mean) - logFactorial(k);
  if (x <= mean) {
    // 1 − P(X < x): the lower tail has few terms and no cancellation trouble here.
    let lower = -Infinity;
    for (let k = 0; k < x; k++) lower = logAdd(lower, logTerm(k));
    return Math.max(0, 1 - Math.exp(lower));
  }
  // Terms fall from k = x on (x > mean); stop once they no longer change the sum.
  let sum = -Infinity;
  for (let k = x; k < x + 10_000; k++) {
    const term = logTerm(k);
    sum = logAdd(sum, term);
    if (term < sum - 40) break;
  }
  return Math.min(1, Math.exp(sum));
}

/** P(X ≥ k) (upper) or P(X ≤ k) (lower) for X ~ Binomial(n, p). */
export function binomialTail(n: number, k: number, p: number, upper: boolean): number {
  if (upper ? k <= 0 : k >= n) return 1;
  if (upper ? k > n : k < 0) return 0;
  if (p <= 0) return upper ? 0 : 1;
  if (p >= 1) return upper ? 1 : 0;
  const lp = Math.log(p);
  const lq = Math.log1p(-p);
  let sum = -Infinity;
  const from = upper ? k : 0;
  const to = upper ? n : k;
  for (let j = from; j <= to; j++) sum = logAdd(sum, logChoose(n, j) + j * lp + (n - j) * lq);
  return Math.min(1, Math.exp(sum));
}

/**
 * Exact runs test (Wald–Wolfowitz) conditional on the counts: the
 * probability that a random order of `a` wins and `b` losses has at least
 * `runs` runs. Many runs = results that alternate more than chance.
 */
export function runsUpper(a: number, b: number, runs: number): number {
  if (a === 0 || b === 0) return 1;
  const total = logChoose(a + b, a);
  let sum = -Infinity;
  for (let r = Math.max(2, runs); r <= a + b; r++) {
    let count: number;
    if (r % 2 === 0) {
      const k = r / 2;
      count = Math.log(2) + logChoose(a - 1, k - 1) + logChoose(b - 1, k - 1);
    } else {
      const k = (r - 1) / 2;
      count = logAdd(logChoose(a - 1, k - 1) + logChoose(b - 1, k), logChoose(a - 1, k) + logChoose(b - 1, k - 1));
    }
    sum = logAdd(sum, count);
  }
  return Math.min(1, Math.exp(sum - total));
}

/** Mean and variance of the number of runs of `a` and `b` items in random order. */
export function runsMoments(a: number, b: number): { mean: number; variance: number } {
  const n = a + b;
  if (a === 0 || b === 0) return { mean: n === 0 ? 0 : 1, variance: 0 };
  const mean = 1 + (2 * a * b) / n;
  const variance = (2 * a * b * (2 * a * b - n)) / (n * n * (n - 1));
  return { mean, variance };
}

/**
 * Benjamini–Hochberg adjusted p-values (q-values) of a family of tests:
 * flagging every test with q ≤ α keeps the expected share of false flags
 * among the flags at most α (for independent or positively dependent
 * tests), and the chance of any flag at most α when every null holds.
 */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((_, i) => i).sort((a, b) => pValues[a] - pValues[b]);
  const q = new Array<number>(m);
  let running = 1;
  for (let rank = m; rank >= 1; rank--) {
    const i = order[rank - 1];
    running = Math.min(running, (pValues[i] * m) / rank);
    q[i] = running;
  }
  return q;
}
