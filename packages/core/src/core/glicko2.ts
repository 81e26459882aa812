/**
 * Glicko-2, exactly as in Mark Glickman's "Example of the Glicko-2 system"
 * (glicko.net, revised 2022-11-30): steps 1 to 8, the Illinois algorithm for
 * the volatility with the 2022 `<=` revision, convergence tolerance 1e-6.
 */
import { defineSystem, progressEveryStep, SURPRISE_EXPLANATION, SURPRISE_TERMS } from './descriptor.js';
import { InvalidInputError } from './errors.js';
import { type Match, pairScore, teamPlacements } from './match.js';
import { defaultsOf, numberOption, type OptionsOf, resolveOptions, type ResolvedOptionsOf } from './options.js';
import type { PairwiseLog, PairwiseRatings } from './pairwise.js';
import { type ContextOffset, contextOf, emptyRatings, type MatchRating, type PlayerState, predictFromPairs, type RatingSystem, stateOf, withContext } from './rating-system.js';
import type { SystemName } from './registry.js';

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

/** Glicko-2's options: what each means, its default and range. */
export const GLICKO2_OPTIONS = {
  /** Starting rating. @default 1500 */
  rating: numberOption({ default: 1500, description: 'starting rating' }),
  /** Starting rating deviation, also the ceiling RD never grows past. @default 350 */
  rd: numberOption({ default: 350, min: 0, exclusiveMin: true, description: "starting RD, and the ceiling an idle player's RD never grows past" }),
  /** Starting volatility. @default 0.06 */
  volatility: numberOption({ default: 0.06, min: 0, exclusiveMin: true, description: 'starting volatility' }),
  /** System constant tau: how fast volatility may change. @default 0.5 */
  tau: numberOption({ default: 0.5, min: 0, exclusiveMin: true, description: 'system constant tau: how fast volatility may change' }),
  /** Convergence tolerance of the volatility iteration. @default 1e-6 */
  epsilon: numberOption({ default: 1e-6, min: 0, exclusiveMin: true, description: 'convergence tolerance of the volatility iteration' }),
  /**
   * Multiplier on the rating step (the World-vs-World ratings post's "k"); 1 is
   * standard Glicko-2. @default 1
   */
  k: numberOption({ default: 1, min: 0, description: 'multiplier on the rating step; 1 is standard Glicko-2' }),
  /**
   * Length of one rating period in milliseconds for continuous time: an idle
   * player's RD grows by one step 6 per period elapsed. @default 86_400_000 (one day)
   */
  periodMs: numberOption({ default: 86_400_000, min: 0, exclusiveMin: true, description: "length of a rating period in ms: an idle player's RD grows by one step 6 per period" }),
  /**
   * Starting RD of a player's per-context offset: a match with a `context`
   * is played at rating + offset[context], with deviation
   * sqrt(RD² + offset RD²), and the step splits between rating and offset in
   * proportion to their variances; 0 leaves contexts out (plain Glicko-2). @default 0
   */
  contextRd: numberOption({ default: 0, min: 0, description: "starting RD of a player's per-context offset (skill in a context = rating + offset); 0 leaves contexts out" }),
};

export type Glicko2Options = OptionsOf<typeof GLICKO2_OPTIONS>;

/** One game of a rating period, from the rated player's side. */
export interface Glicko2Game {
  opponent: Pick<Glicko2Rating, 'rating' | 'rd'>;
  /** Score in [0, 1]: 1 win, 0.5 draw, 0 loss; any value between is allowed. */
  score: number;
}

export type ResolvedGlicko2Options = ResolvedOptionsOf<typeof GLICKO2_OPTIONS>;

export const GLICKO2_DEFAULTS: Readonly<ResolvedGlicko2Options> = defaultsOf(GLICKO2_OPTIONS);

export function resolveGlicko2Options(options: Glicko2Options = {}): ResolvedGlicko2Options {
  return resolveOptions(GLICKO2_OPTIONS, options);
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
  sums[0] += glicko2VInverseTerm(g, e);
  sums[1] += glicko2ImprovementTerm(g, e, score);
  return e;
}

/**
 * One game's term of v's inverse (step 3), g^2 E (1 - E). This and the
 * helpers below return one number each, so that the fast path
 * (`glicko2RatePairwise`) keeps every intermediate in a local: written
 * through a scratch array, the same arithmetic ran 10 % slower in the
 * rating benchmark's three passes and 2–3 % slower once fully warm
 * (docs/BENCHMARKS.md, "Method").
 */
export function glicko2VInverseTerm(g: number, e: number): number {
  return g * g * e * (1 - e);
}

/** One game's term of the improvement (step 4; Delta is its v-multiple), g (s - E). */
export function glicko2ImprovementTerm(g: number, e: number, score: number): number {
  return g * (score - e);
}

/** Step 6 and 7's phi' = 1 / sqrt(1 / (phi^2 + sigma'^2) + 1 / v). */
export function glicko2NewPhi(phi2: number, newSigma2: number, vInverse: number): number {
  return 1 / Math.sqrt(1 / (phi2 + newSigma2) + vInverse);
}

/** Step 7's mu' = mu + k phi'^2 improvement. */
export function glicko2NewMu(mu: number, newPhi: number, improvement: number, k: number): number {
  return mu + k * newPhi * newPhi * improvement;
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
  const newPhi = glicko2NewPhi(phi2, newSigma2, vInverse);
  out[0] = glicko2NewMu(mu, newPhi, improvement, k);
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
 * RD of its players (a player without an RD counts as `fallbackRd`). Each
 * player of the other team plays one game against it.
 */
export function glicko2Composite(players: ReadonlyArray<{ rating: number; rd?: number }>, fallbackRd = Number.NaN): { rating: number; rd: number } {
  let rating = 0;
  let rd2 = 0;
  for (const p of players) {
    rating += p.rating;
    const rd = p.rd ?? fallbackRd;
    rd2 += rd * rd;
  }
  return { rating: rating / players.length, rd: Math.sqrt(rd2 / players.length) };
}

/** How a Glicko-2 variant scores the battle of team t against team u. */
export interface Glicko2Battles {
  /** Refuses a match the variant cannot rate, naming the field. */
  check?(match: Match): void;
  /** The Glicko score in [0, 1] of team t against team u. */
  score(match: Match, placements: readonly number[], t: number, u: number): number;
}

/** Standard Glicko-2: a battle is scored by placement (1 win, ½ tie, 0 loss). */
export const PLACEMENT_BATTLES: Glicko2Battles = Object.freeze({ score: (_match: Match, placements: readonly number[], t: number, u: number) => pairScore(placements, t, u) });

interface Participant {
  id: string;
  /** The match's context, when per-context offsets are on. */
  context: string | undefined;
  match: number;
  team: number;
  start: PlayerState;
  vInverse: number;
  improvement: number;
  score: number;
  expected: number;
  battles: number;
}

/**
 * Glicko-2 behind the RatingSystem interface, for Glicko-2 itself and for
 * variants that score battles otherwise (World vs World). Each player plays
 * one battle against each other team, taken as a composite opponent.
 */
export function glicko2RatingSystem(name: SystemName, o: ResolvedGlicko2Options, battles: Glicko2Battles = PLACEMENT_BATTLES): RatingSystem {
  const initial = (): PlayerState => ({ rating: o.rating, rd: o.rd, volatility: o.volatility, matches: 0 });
  const idle = (state: PlayerState, periods: number): PlayerState => {
    if (!(periods > 0)) return state;
    return { ...state, rd: glicko2IdleRd(state.rd ?? o.rd, state.volatility ?? o.volatility, periods, o.rd) };
  };
  const composite = (team: readonly PlayerState[]) => glicko2Composite(team, o.rd);
  // Per-context offsets only when switched on: otherwise a context is ignored and every step is plain Glicko-2's.
  const contextual = o.contextRd > 0;
  /** A player's offset in a context, a context they have not played starting at 0 with the starting offset RD. */
  const offsetOf = (state: PlayerState, context: string): ContextOffset => contextOf(state, context) ?? { offset: 0, rd: o.contextRd, matches: 0 };
  /** A player as they play in `context`: rating + offset, deviation sqrt(RD² + offset RD²). */
  const inContext = (state: PlayerState, context: string | undefined): { rating: number; rd: number } => {
    const rd = state.rd ?? o.rd;
    if (context === undefined) return { rating: state.rating, rd };
    const offset = offsetOf(state, context);
    const offsetRd = offset.rd ?? o.contextRd;
    return { rating: state.rating + offset.offset, rd: Math.sqrt(rd * rd + offsetRd * offsetRd) };
  };

  const ratePeriod: RatingSystem['ratePeriod'] = (matches, states, rateOptions = {}) => {
    const timeIdle = rateOptions.timeIdle ?? true;
    const starts = new Map<string, PlayerState>();
    const idlePeriods = new Map<string, number>();
    const startOf = (id: string, at: number | undefined): PlayerState => {
      let start = starts.get(id);
      if (start) return start;
      start = stateOf(states, id, initial);
      let periods = 0;
      if (timeIdle && at !== undefined && start.lastAt !== undefined && at > start.lastAt) {
        periods = (at - start.lastAt) / o.periodMs;
        start = idle(start, periods);
      }
      idlePeriods.set(id, periods);
      starts.set(id, start);
      return start;
    };

    const participants: Participant[] = [];
    const byPlayer = new Map<string, Participant[]>();
    matches.forEach((match, m) => {
      battles.check?.(match);
      const placements = teamPlacements(match);
      const teamStates = match.teams.map((team) => team.players.map((p) => startOf(p.id, match.at)));
      const context = contextual ? match.context : undefined;
      const opponents = context === undefined ? teamStates.map(composite) : teamStates.map((team) => composite(team.map((state) => inContext(state, context) as PlayerState)));
      match.teams.forEach((team, t) => {
        team.players.forEach((player, i) => {
          const start = teamStates[t]![i]!;
          const mu = ((context === undefined ? start.rating : inContext(start, context).rating) - 1500) / GLICKO2_SCALE;
          const participant: Participant = { id: player.id, context, match: m, team: t, start, vInverse: 0, improvement: 0, score: 0, expected: 0, battles: 0 };
          const sums = [0, 0];
          match.teams.forEach((_, u) => {
            if (u === t) return;
            const opponent = opponents[u]!;
            const s = battles.score(match, placements, t, u);
            const e = glicko2Game(mu, (opponent.rating - 1500) / GLICKO2_SCALE, opponent.rd / GLICKO2_SCALE, s, sums);
            participant.score += s;
            participant.expected += e;
            participant.battles += 1;
          });
          participant.vInverse = sums[0]!;
          participant.improvement = sums[1]!;
          participants.push(participant);
          const list = byPlayer.get(player.id);
          if (list) list.push(participant);
          else byPlayer.set(player.id, [participant]);
        });
      });
    });

    const after = new Map<string, PlayerState>();
    const out = [0, 0, 0];
    /**
     * Steps 5 to 7 with per-context offsets, writing [mu', phi', sigma'] into
     * `out` and returning the player's new offsets. The volatility is step 5
     * from all the period's games, as without contexts. Then the player's
     * games are taken group by group (no context first, then each context in
     * the order met): skill in the group is x = mu + delta, a sum of two
     * independent Gaussians of variances phi*² (phi² + sigma'², step 6) and
     * phi_c² (0 without a context), and the group's games are one linearised
     * observation of x with information vInverse and gradient improvement.
     * Its Kalman update moves x by phi'² improvement (step 7 with P = phi*² +
     * phi_c² in place of phi*²) and gives each part the share of its
     * variance: mu by k phi*² improvement / (1 + P vInverse), delta by
     * k phi_c² improvement / (1 + P vInverse); each variance shrinks by its
     * square times vInverse / (1 + P vInverse). With phi_c = 0 this is steps 6
     * and 7 exactly. The covariance the update creates between mu and delta
     * is dropped (each part keeps its own deviation), and a group after the
     * first starts from the deviations the group before left.
     */
    const contextStep = (
      start: PlayerState,
      list: readonly Participant[],
      mu: number,
      vInverse: number,
      improvement: number,
      result: number[],
    ): Record<string, ContextOffset> | undefined => {
      const phi = (start.rd ?? o.rd) / GLICKO2_SCALE;
      const sigma = start.volatility ?? o.volatility;
      const sigma2 = sigma * sigma;
      const phi2 = phi * phi;
      const newSigma = Math.exp(glicko2StepVolatility(Math.log(sigma2), sigma2, phi2, vInverse, improvement, o.tau, o.epsilon) / 2);
      let general = phi2 + newSigma * newSigma;
      let newMu = mu;
      const groups = new Map<string | undefined, { vInverse: number; improvement: number; count: number }>();
      if (list.some((p) => p.context === undefined)) groups.set(undefined, { vInverse: 0, improvement: 0, count: 0 });
      for (const p of list) {
        const group = groups.get(p.context) ?? { vInverse: 0, improvement: 0, count: 0 };
        group.vInverse += p.vInverse;
        group.improvement += p.improvement;
        group.count += 1;
        groups.set(p.context, group);
      }
      let contexts = start.contexts;
      for (const [context, group] of groups) {
        const offset = context === undefined ? undefined : offsetOf(start, context);
        const delta = offset === undefined ? 0 : offset.offset / GLICKO2_SCALE;
        const offsetPhi = offset === undefined ? 0 : (offset.rd ?? o.contextRd) / GLICKO2_SCALE;
        const offsetPhi2 = offsetPhi * offsetPhi;
        const denominator = 1 + (general + offsetPhi2) * group.vInverse;
        newMu += (o.k * general * group.improvement) / denominator;
        const newDelta = delta + (o.k * offsetPhi2 * group.improvement) / denominator;
        general -= (general * general * group.vInverse) / denominator;
        const newOffsetPhi2 = offsetPhi2 - (offsetPhi2 * offsetPhi2 * group.vInverse) / denominator;
        if (context !== undefined)
          contexts = withContext(contexts, context, { offset: newDelta * GLICKO2_SCALE, rd: Math.sqrt(newOffsetPhi2) * GLICKO2_SCALE, matches: offset!.matches + group.count });
      }
      result[0] = newMu;
      result[1] = Math.sqrt(general);
      result[2] = newSigma;
      return contexts;
    };
    for (const [id, list] of byPlayer) {
      const start = list[0]!.start;
      let vInverse = 0;
      let improvement = 0;
      for (const p of list) {
        vInverse += p.vInverse;
        improvement += p.improvement;
      }
      const mu = (start.rating - 1500) / GLICKO2_SCALE;
      let contexts = start.contexts;
      if (list.some((p) => p.context !== undefined)) contexts = contextStep(start, list, mu, vInverse, improvement, out);
      else glicko2Step(mu, (start.rd ?? o.rd) / GLICKO2_SCALE, start.volatility ?? o.volatility, vInverse, improvement, o.tau, o.epsilon, o.k, out);
      const lastAt = list.reduce<number | undefined>((latest, p) => {
        const at = matches[p.match]!.at;
        return at !== undefined && (latest === undefined || at > latest) ? at : latest;
      }, start.lastAt);
      const state: PlayerState = {
        rating: out[0]! * GLICKO2_SCALE + 1500,
        rd: out[1]! * GLICKO2_SCALE,
        volatility: out[2]!,
        matches: start.matches + list.length,
      };
      if (lastAt !== undefined) state.lastAt = lastAt;
      if (contexts !== undefined) state.contexts = contexts;
      after.set(id, state);
    }

    const ratings: MatchRating[] = emptyRatings(matches);
    for (const p of participants) {
      ratings[p.match]!.players.push({
        id: p.id,
        team: p.team,
        before: stateOf(states, p.id, initial),
        after: after.get(p.id)!,
        terms: {
          score: p.score / p.battles,
          expected: p.expected / p.battles,
          surprise: (p.score - p.expected) / p.battles,
          idlePeriods: idlePeriods.get(p.id) ?? 0,
          rdBeforeMatch: p.start.rd ?? o.rd,
        },
      });
    }
    return ratings;
  };

  return {
    name,
    options: o,
    initial,
    ratePeriod,
    rateMatch: (match, states, rateOptions) => ratePeriod([match], states, rateOptions)[0]!,
    predict: (teams, context) => {
      const composites = contextual && context !== undefined ? teams.map((team) => composite(team.map((state) => inContext(state, context) as PlayerState))) : teams.map(composite);
      return predictFromPairs(teams.length, (a, b) => glicko2WinProbability(composites[a]!, composites[b]!));
    },
    idle,
  };
}

/** Starting ratings for a log's players: everyone at the options' defaults. */
export function initialGlicko2Ratings(players: number, options: Glicko2Options = {}): Required<PairwiseRatings> {
  const o = resolveGlicko2Options(options);
  return {
    rating: new Float64Array(players).fill(o.rating),
    rd: new Float64Array(players).fill(o.rd),
    volatility: new Float64Array(players).fill(o.volatility),
    matches: new Int32Array(players),
    lastAt: new Float64Array(players).fill(NaN),
  };
}

/**
 * The fast path: rates games `from` to `to` (exclusive) of a log of
 * one-against-one games into `state`, in place, each game its own rating
 * period with RD growing for idle time, as `Replay` does with
 * `createSystem('glicko2')`. It carries ln(sigma^2) from game to game
 * instead of recomputing it from sigma, which saves a log and an exp per
 * player per game and moves results by rounding only. `onGame`, when
 * given, sees each game's prediction (the probability that the first
 * player wins, as glicko2WinProbability gives it) before the game is rated.
 */
export function glicko2RatePairwise(
  log: PairwiseLog,
  state: Required<PairwiseRatings>,
  options: Glicko2Options = {},
  from = 0,
  to = log.count,
  onGame?: (game: number, probabilityA: number) => void,
): void {
  const o = resolveGlicko2Options(options);
  const { rating, rd, volatility, matches, lastAt } = state;
  const { tau, epsilon, k, periodMs } = o;
  // ln(sigma^2) carried from game to game instead of recomputed: the fast
  // path's one liberty with the order of floating-point operations.
  const logVariance = new Float64Array(volatility.length);
  for (let p = 0; p < volatility.length; p++) logVariance[p] = Math.log(volatility[p]! * volatility[p]!);
  const maxPhi = o.rd / GLICKO2_SCALE;
  for (let game = from; game < to; game++) {
    const i = log.a[game]!;
    const j = log.b[game]!;
    const at = log.at[game]!;
    let phiI = rd[i]! / GLICKO2_SCALE;
    let phiJ = rd[j]! / GLICKO2_SCALE;
    // Continuous time: step 6 for the idle time, never past the starting RD.
    if (at > lastAt[i]!) phiI = Math.min(glicko2GrowPhi(phiI, volatility[i]!, (at - lastAt[i]!) / periodMs), Math.max(maxPhi, phiI));
    if (at > lastAt[j]!) phiJ = Math.min(glicko2GrowPhi(phiJ, volatility[j]!, (at - lastAt[j]!) / periodMs), Math.max(maxPhi, phiJ));
    const muI = (rating[i]! - 1500) / GLICKO2_SCALE;
    const muJ = (rating[j]! - 1500) / GLICKO2_SCALE;
    if (onGame) onGame(game, glicko2PairProbability(rating[i]!, phiI, rating[j]!, phiJ));
    const s = log.score[game]!;
    // Steps 3 to 8 for each player, both from the ratings before the game (glicko2Game and glicko2StepRating's
    // arithmetic, in locals).
    const gJ = glicko2G(phiJ);
    const eI = glicko2Expected(muI, muJ, gJ);
    const vInverseI = glicko2VInverseTerm(gJ, eI);
    const improvementI = glicko2ImprovementTerm(gJ, eI, s);
    const gI = glicko2G(phiI);
    const eJ = glicko2Expected(muJ, muI, gI);
    const vInverseJ = glicko2VInverseTerm(gI, eJ);
    const improvementJ = glicko2ImprovementTerm(gI, eJ, 1 - s);
    const phiI2 = phiI * phiI;
    const sigmaI2 = volatility[i]! * volatility[i]!;
    const logI = glicko2StepVolatility(logVariance[i]!, sigmaI2, phiI2, vInverseI, improvementI, tau, epsilon);
    const newSigmaI2 = Math.exp(logI);
    const newPhiI = glicko2NewPhi(phiI2, newSigmaI2, vInverseI);
    const phiJ2 = phiJ * phiJ;
    const sigmaJ2 = volatility[j]! * volatility[j]!;
    const logJ = glicko2StepVolatility(logVariance[j]!, sigmaJ2, phiJ2, vInverseJ, improvementJ, tau, epsilon);
    const newSigmaJ2 = Math.exp(logJ);
    const newPhiJ = glicko2NewPhi(phiJ2, newSigmaJ2, vInverseJ);
    rating[i] = glicko2NewMu(muI, newPhiI, improvementI, k) * GLICKO2_SCALE + 1500;
    rd[i] = newPhiI * GLICKO2_SCALE;
    volatility[i] = Math.sqrt(newSigmaI2);
    logVariance[i] = logI;
    rating[j] = glicko2NewMu(muJ, newPhiJ, improvementJ, k) * GLICKO2_SCALE + 1500;
    rd[j] = newPhiJ * GLICKO2_SCALE;
    volatility[j] = Math.sqrt(newSigmaJ2);
    logVariance[j] = logJ;
    matches[i]!++;
    matches[j]!++;
    // A game without a time (NaN) leaves lastAt alone, as Replay does.
    if (at === at && !(lastAt[i]! >= at)) lastAt[i] = at;
    if (at === at && !(lastAt[j]! >= at)) lastAt[j] = at;
  }
}

/** Rates the whole log with Glicko-2 from default starting ratings (the fast path). */
export function glicko2ReplayPairwise(log: PairwiseLog, options: Glicko2Options = {}): Required<PairwiseRatings> {
  const state = initialGlicko2Ratings(log.ids.length, options);
  glicko2RatePairwise(log, state, options);
  return state;
}

/** Glicko-2 in the registry. */
export const GLICKO2 = defineSystem({
  name: 'glicko2',
  label: 'Glicko-2',
  summary: "Glickman's Glicko-2 (2022 revision): rating, RD and volatility; RD grows with time away.",
  options: GLICKO2_OPTIONS,
  capabilities: {
    teams: true,
    draws: true,
    multiTeam: true,
    ratingPeriods: true,
    idleGrowth: true,
    homeAdvantage: true,
    fastPath: true,
    needsScores: false,
    rounds: false,
    wholeHistory: false,
    deviation: true,
  },
  display: { quantity: 'rating', decimals: 1, scale: 'glicko' },
  fit: {
    parameters: [
      { name: 'tau', min: 0.05, max: 2, initial: 0.5 },
      { name: 'rd', min: 50, max: 600, initial: 350 },
      { name: 'contextRd', min: 0, max: 300, scale: 'linear', initial: 50 },
    ],
    byDefault: ['tau', 'rd'],
  },
  dashboard: {
    terms: SURPRISE_TERMS,
    explanation: SURPRISE_EXPLANATION,
    performanceRuns: true,
  },
  ladder: { teamSize: 1 },
  create: (options): RatingSystem => glicko2RatingSystem('glicko2', options),
  fastPath: {
    replay: (log, options, onProgress) => {
      const onGame = progressEveryStep(onProgress);
      if (!onGame) return glicko2ReplayPairwise(log, options);
      // One pass with a per-game hook: rating the log in chunks would recompute each player's carried ln(σ²) and move the last digits.
      const state = initialGlicko2Ratings(log.ids.length, options);
      glicko2RatePairwise(log, state, options, 0, log.count, onGame);
      return state;
    },
  },
});
