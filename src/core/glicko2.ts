/**
 * Glicko-2, exactly as in Mark Glickman's "Example of the Glicko-2 system"
 * (glicko.net, revised 2022-11-30): steps 1 to 8, the Illinois algorithm for
 * the volatility with the 2022 `<=` revision, convergence tolerance 1e-6.
 */
import { InvalidInputError } from './errors.js';

/** Glickman's conversion between the Glicko and Glicko-2 scales: 400 / ln 10. */
export const GLICKO2_SCALE = 173.7178;

export interface Glicko2Rating {
  /** Glicko scale rating (1500 centred). */
  rating: number;
  /** Rating deviation on the Glicko scale. */
  rd: number;
  /** Volatility sigma. */
  volatility: number;
}

export interface Glicko2Options {
  /** Starting rating. @default 1500 */
  rating?: number;
  /** Starting rating deviation, also the ceiling RD never grows past. @default 350 */
  rd?: number;
  /** Starting volatility. @default 0.06 */
  volatility?: number;
  /** System constant tau: how fast volatility may change. @default 0.5 */
  tau?: number;
  /** Convergence tolerance of the volatility iteration. @default 1e-6 */
  epsilon?: number;
  /**
   * Multiplier on the rating step (the World-vs-World seed's "k"); 1 is
   * standard Glicko-2. @default 1
   */
  k?: number;
  /**
   * Length of one rating period in milliseconds for continuous time: an idle
   * player's RD grows by one step 6 per period elapsed. @default 86_400_000 (one day)
   */
  periodMs?: number;
}

/** One game of a rating period, from the rated player's side. */
export interface Glicko2Game {
  opponent: Pick<Glicko2Rating, 'rating' | 'rd'>;
  /** Score in [0, 1]: 1 win, 0.5 draw, 0 loss; any value between is allowed. */
  score: number;
}

export interface ResolvedGlicko2Options {
  rating: number;
  rd: number;
  volatility: number;
  tau: number;
  epsilon: number;
  k: number;
  periodMs: number;
}

export const GLICKO2_DEFAULTS: ResolvedGlicko2Options = Object.freeze({
  rating: 1500,
  rd: 350,
  volatility: 0.06,
  tau: 0.5,
  epsilon: 1e-6,
  k: 1,
  periodMs: 86_400_000,
});

export function resolveGlicko2Options(options: Glicko2Options = {}): ResolvedGlicko2Options {
  const resolved = { ...GLICKO2_DEFAULTS };
  for (const key of Object.keys(GLICKO2_DEFAULTS) as Array<keyof ResolvedGlicko2Options>) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new InvalidInputError(`must be a finite number, got ${String(value)}`, { field: key });
    }
    resolved[key] = value;
  }
  for (const key of ['rd', 'volatility', 'tau', 'epsilon', 'periodMs'] as const) {
    if (!(resolved[key] > 0)) throw new InvalidInputError(`must be positive, got ${resolved[key]}`, { field: key });
  }
  if (resolved.k < 0) throw new InvalidInputError(`must not be negative, got ${resolved.k}`, { field: 'k' });
  return resolved;
}

/** A new player's rating. */
export function glicko2Initial(options: Glicko2Options = {}): Glicko2Rating {
  const o = resolveGlicko2Options(options);
  return { rating: o.rating, rd: o.rd, volatility: o.volatility };
}

/** g(phi) of step 3. */
export function glicko2G(phi: number): number {
  return 1 / Math.sqrt(1 + (3 * phi * phi) / (Math.PI * Math.PI));
}

/** E(mu, mu_j, phi_j) of step 3, with g = g(phi_j) already taken: 1 / (1 + exp(-g (mu - mu_j))). */
export function glicko2Expected(mu: number, muJ: number, g: number): number {
  return 1 / (1 + Math.exp(-g * (mu - muJ)));
}

/**
 * Steps 3 and 4 for one game on the Glicko-2 scale: adds g^2 E (1 - E) to
 * `sums[0]` (v's inverse) and g (s - E) to `sums[1]` (the improvement
 * whose v-multiple is Delta), and returns E. `muJ` and `phiJ` are the
 * opponent's; `score` is the rated player's score in [0, 1].
 */
export function glicko2Game(mu: number, muJ: number, phiJ: number, score: number, sums: Float64Array | number[]): number {
  const g = glicko2G(phiJ);
  const e = glicko2Expected(mu, muJ, g);
  sums[0] += g * g * e * (1 - e);
  sums[1] += g * (score - e);
  return e;
}

/**
 * Step 5, the new volatility, as the log variance A = ln(sigma'^2): the
 * Illinois algorithm on f(x) with the 2022 revision (`f(C) f(B) <= 0`).
 * `a` is ln(sigma^2), `sigma2` is sigma^2 (so f(a) costs no exp), `phi2` is
 * phi^2, `v` and `delta2` are v and Delta^2 of steps 3 and 4.
 */
export function glicko2VolatilityLog(a: number, sigma2: number, phi2: number, v: number, delta2: number, tau: number, epsilon: number): number {
  const tau2 = tau * tau;
  const pv = phi2 + v;
  const excess = delta2 - pv;
  let A = a;
  let B: number;
  let ex: number;
  let d: number;
  if (excess > 0) {
    B = Math.log(excess);
  } else {
    let j = 1;
    for (;;) {
      const x = a - j * tau;
      ex = Math.exp(x);
      d = pv + ex;
      // `!(f < 0)`, not `f >= 0`: a NaN must end the search as it does in the paper's `while f < 0`.
      if (!((ex * (excess - ex)) / (2 * d * d) - (x - a) / tau2 < 0)) break;
      j++;
    }
    B = a - j * tau;
  }
  d = pv + sigma2;
  let fA = (sigma2 * (excess - sigma2)) / (2 * d * d);
  ex = Math.exp(B);
  d = pv + ex;
  let fB = (ex * (excess - ex)) / (2 * d * d) - (B - a) / tau2;
  // Bounded for safety: the Illinois iteration converges in well under 100 steps.
  for (let iteration = 0; Math.abs(B - A) > epsilon && iteration < 200; iteration++) {
    const C = A + ((A - B) * fA) / (fB - fA);
    ex = Math.exp(C);
    d = pv + ex;
    const fC = (ex * (excess - ex)) / (2 * d * d) - (C - a) / tau2;
    if (fC * fB <= 0) {
      A = B;
      fA = fB;
    } else {
      fA /= 2;
    }
    B = C;
    fB = fC;
  }
  return A;
}

/**
 * Steps 5 to 7 on the Glicko-2 scale: the new volatility by the Illinois
 * algorithm, then the new phi and mu. `vInverse` is sum g^2 E (1 - E) and
 * `improvement` is sum g (s - E) over the period's games. Writes
 * [mu', phi', sigma'] into `out` so hot loops allocate nothing.
 */
export function glicko2Step(
  mu: number,
  phi: number,
  sigma: number,
  vInverse: number,
  improvement: number,
  tau: number,
  epsilon: number,
  k: number,
  out: Float64Array | number[],
): void {
  const phi2 = phi * phi;
  const sigma2 = sigma * sigma;
  const newSigma = Math.exp(glicko2StepVolatility(Math.log(sigma2), sigma2, phi2, vInverse, improvement, tau, epsilon) / 2);
  glicko2StepRating(mu, phi2, newSigma * newSigma, vInverse, improvement, k, out);
  out[2] = newSigma;
}

/**
 * Steps 3 to 5 from the period's sums: v = 1 / vInverse, Delta = v *
 * improvement, and the new volatility as ln(sigma'^2) (Illinois algorithm).
 * `a` is ln(sigma^2) and `sigma2` is sigma^2 (a caller that carries ln sigma^2
 * from period to period passes it, saving a log).
 */
export function glicko2StepVolatility(a: number, sigma2: number, phi2: number, vInverse: number, improvement: number, tau: number, epsilon: number): number {
  const v = 1 / vInverse;
  const delta = v * improvement;
  return glicko2VolatilityLog(a, sigma2, phi2, v, delta * delta, tau, epsilon);
}

/**
 * Steps 6 and 7: phi' = 1 / sqrt(1 / (phi^2 + sigma'^2) + 1 / v) and mu' =
 * mu + k phi'^2 improvement. Writes [mu', phi'] into `out`.
 */
export function glicko2StepRating(mu: number, phi2: number, newSigma2: number, vInverse: number, improvement: number, k: number, out: Float64Array | number[]): void {
  const newPhi = 1 / Math.sqrt(1 / (phi2 + newSigma2) + vInverse);
  out[0] = mu + k * newPhi * newPhi * improvement;
  out[1] = newPhi;
}

/** Step 6 for `periods` idle periods (fractional allowed): sqrt(phi^2 + periods sigma^2), uncapped. */
export function glicko2GrowPhi(phi: number, sigma: number, periods: number): number {
  return Math.sqrt(phi * phi + periods * sigma * sigma);
}

function checkScore(score: number, index: number): void {
  if (!(score >= 0 && score <= 1)) {
    throw new InvalidInputError(`must be in [0, 1], got ${score}`, { field: `games[${index}].score` });
  }
}

/**
 * Rates one player over one rating period: every game is rated from the
 * ratings at the period's start. A period with no games is step 6 alone: RD
 * grows by the volatility, rating and volatility stay (never past the
 * starting RD of the options).
 */
export function glicko2Update(player: Glicko2Rating, games: readonly Glicko2Game[], options: Glicko2Options = {}): Glicko2Rating {
  const o = resolveGlicko2Options(options);
  const mu = (player.rating - 1500) / GLICKO2_SCALE;
  const phi = player.rd / GLICKO2_SCALE;
  if (games.length === 0) return glicko2Idle(player, 1, options);
  const sums = [0, 0];
  games.forEach((game, index) => {
    checkScore(game.score, index);
    glicko2Game(mu, (game.opponent.rating - 1500) / GLICKO2_SCALE, game.opponent.rd / GLICKO2_SCALE, game.score, sums);
  });
  const out = [0, 0, 0];
  glicko2Step(mu, phi, player.volatility, sums[0]!, sums[1]!, o.tau, o.epsilon, o.k, out);
  return { rating: out[0]! * GLICKO2_SCALE + 1500, rd: out[1]! * GLICKO2_SCALE, volatility: out[2]! };
}

/**
 * Step 6 for an idle stretch: phi^2 grows by sigma^2 per period, so `periods`
 * may be fractional (continuous time). RD never grows past the starting RD.
 */
export function glicko2Idle(player: Glicko2Rating, periods: number, options: Glicko2Options = {}): Glicko2Rating {
  const o = resolveGlicko2Options(options);
  if (!(periods > 0)) return { ...player };
  return { rating: player.rating, rd: glicko2IdleRd(player.rd, player.volatility, periods, o.rd), volatility: player.volatility };
}

/** The RD after `periods` of step 6, capped at `maxRd` (an RD already above it stays). */
export function glicko2IdleRd(rd: number, volatility: number, periods: number, maxRd: number): number {
  const grown = glicko2GrowPhi(rd / GLICKO2_SCALE, volatility, periods) * GLICKO2_SCALE;
  return Math.min(Math.max(grown, rd), Math.max(maxRd, rd));
}

/**
 * Expected score of `a` against `b` (the probability that a wins, draws
 * counting half), with both players' uncertainty: g is taken of the combined
 * deviation sqrt(phi_a^2 + phi_b^2), as Glickman recommends for predictions.
 */
export function glicko2WinProbability(a: Pick<Glicko2Rating, 'rating' | 'rd'>, b: Pick<Glicko2Rating, 'rating' | 'rd'>): number {
  return glicko2PairProbability(a.rating, a.rd / GLICKO2_SCALE, b.rating, b.rd / GLICKO2_SCALE);
}

/** glicko2WinProbability on plain numbers: ratings on the Glicko scale, deviations phi on the Glicko-2 scale. */
export function glicko2PairProbability(ratingA: number, phiA: number, ratingB: number, phiB: number): number {
  const g = glicko2G(Math.sqrt(phiA * phiA + phiB * phiB));
  return 1 / (1 + Math.exp((-g * (ratingA - ratingB)) / GLICKO2_SCALE));
}

/**
 * A team as one composite opponent: the mean rating and the root mean square
 * RD of its players. Each player of the other team plays one game against it.
 */
export function glicko2Composite(players: ReadonlyArray<Pick<Glicko2Rating, 'rating' | 'rd'>>): { rating: number; rd: number } {
  let rating = 0;
  let rd2 = 0;
  for (const p of players) {
    rating += p.rating;
    rd2 += p.rd * p.rd;
  }
  return { rating: rating / players.length, rd: Math.sqrt(rd2 / players.length) };
}
