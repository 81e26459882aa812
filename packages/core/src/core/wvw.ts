/**
 * Glicko-2 as ArenaNet used it for Guild Wars 2 World-vs-World
 * (`gw2-wvw-glicko2.txt`): a match of three worlds is two battles per world,
 * all computed from the ratings before the match; a battle's Glicko score is
 * (sin((p - 0.5) * pi) + 1) / 2 with p = A / (A + B) of the raw scores; tau
 * 0.6; after each round the worlds are re-sorted by rating and grouped in
 * threes, top tier first.
 */
import { defineSystem, SURPRISE_TERMS } from './descriptor.js';
import { InvalidInputError } from './errors.js';
import { mulberry32 } from './random.js';
import {
  GLICKO2,
  GLICKO2_OPTIONS,
  GLICKO2_SCALE,
  type Glicko2Battles,
  type Glicko2Rating,
  glicko2Game,
  glicko2RatingSystem,
  glicko2Step,
  glicko2WinProbability,
  type ResolvedGlicko2Options,
} from './glicko2.js';
import type { Match } from './match.js';
import { defaultsOf, numberOption, type OptionsOf, resolveOptions } from './options.js';
import type { RatingSystem } from './rating-system.js';

/**
 * Glicko-2 options with the World-vs-World ratings post's values as defaults.
 *
 * The World-vs-World ratings post says "a k of 1.0" without defining k. Ladder reads it as a
 * multiplier on the rating step (mu' = mu + k * phi'^2 * sum g (s - E)): at
 * 1.0 that is standard Glicko-2, which is why the World-vs-World ratings post can name it in passing
 * without changing the algorithm. Other values damp (< 1) or amplify (> 1)
 * rating movement without touching RD or volatility.
 */
export const WVW_OPTIONS = {
  ...GLICKO2_OPTIONS,
  /** System constant tau. @default 0.6 (the World-vs-World ratings post) */
  tau: numberOption({ ...GLICKO2_OPTIONS.tau, default: 0.6 }),
  /** Multiplier on the rating step. @default 1 (the World-vs-World ratings post) */
  k: numberOption({ ...GLICKO2_OPTIONS.k, default: 1 }),
};

export type WvwOptions = OptionsOf<typeof WVW_OPTIONS>;

export const WVW_DEFAULTS: Readonly<ResolvedGlicko2Options> = defaultsOf(WVW_OPTIONS);

export function resolveWvwOptions(options: WvwOptions = {}): ResolvedGlicko2Options {
  return resolveOptions(WVW_OPTIONS, options);
}

/**
 * The World-vs-World ratings post's score transform. `0 + 0` (neither world scored) is taken as a
 * draw, 0.5: p is undefined there, and no evidence favours either world.
 */
export function wvwGlickoScore(scoreA: number, scoreB: number): number {
  const total = scoreA + scoreB;
  if (total === 0) return 0.5;
  const p = scoreA / total;
  return (Math.sin((p - 0.5) * Math.PI) + 1) * 0.5;
}

/**
 * Rates one match of worlds (three in the game; any number from two works):
 * each world plays one battle against each other world, all from the ratings
 * before the match. Returns the new ratings in input order.
 */
export function wvwRateMatch(worlds: readonly Glicko2Rating[], scores: readonly number[], options: WvwOptions = {}): Glicko2Rating[] {
  const o = resolveWvwOptions(options);
  if (worlds.length < 2) throw new InvalidInputError(`a match needs at least two worlds, got ${worlds.length}`, { field: 'worlds' });
  if (scores.length !== worlds.length) throw new InvalidInputError(`needs one score per world (${worlds.length}), got ${scores.length}`, { field: 'scores' });
  scores.forEach((s, i) => {
    if (!(Number.isFinite(s) && s >= 0)) throw new InvalidInputError(`must be a finite, non-negative score, got ${s}`, { field: `scores[${i}]` });
  });
  const out = [0, 0, 0];
  return worlds.map((world, i) => {
    const mu = (world.rating - 1500) / GLICKO2_SCALE;
    const sums = [0, 0];
    worlds.forEach((opponent, j) => {
      if (j === i) return;
      glicko2Game(mu, (opponent.rating - 1500) / GLICKO2_SCALE, opponent.rd / GLICKO2_SCALE, wvwGlickoScore(scores[i]!, scores[j]!), sums);
    });
    glicko2Step(mu, world.rd / GLICKO2_SCALE, world.volatility, sums[0]!, sums[1]!, o.tau, o.epsilon, o.k, out);
    return { rating: out[0]! * GLICKO2_SCALE + 1500, rd: out[1]! * GLICKO2_SCALE, volatility: out[2]! };
  });
}

/**
 * Expected Glicko score of each pair (`matrix[i][j]` for world i against j)
 * and each world's expected share of the battles it fights.
 */
export function wvwExpectedScores(worlds: ReadonlyArray<Pick<Glicko2Rating, 'rating' | 'rd'>>): { pairwise: number[][]; share: number[] } {
  const pairwise = worlds.map((a, i) => worlds.map((b, j) => (i === j ? 0.5 : glicko2WinProbability(a, b))));
  const share = pairwise.map((row, i) => row.reduce((sum, p, j) => (j === i ? sum : sum + p), 0) / (worlds.length - 1));
  return { pairwise, share };
}

export interface WvwWorld {
  id: string;
  rating: number;
  rd: number;
}

export interface WvwGroupOptions {
  /**
   * `'sorted'`: the World-vs-World ratings post's rule, by rating. `'randomized'`: ArenaNet's later
   * published rule, each world placed by rating + U(-1, 1) * min(0.45 * RD + 10, 100).
   * @default 'sorted'
   */
  rule?: 'sorted' | 'randomized';
  /** Worlds per tier. @default 3 */
  size?: number;
  /** Random numbers in [0, 1) for the randomized rule. @default mulberry32(seed) */
  random?: () => number;
  /** Seed of the default generator for the randomized rule. @default 1 */
  seed?: number;
}

/**
 * Groups worlds into tiers, top tier first. Ties on the sort key are broken by
 * id so the grouping is deterministic. When the count is not a multiple of the
 * tier size the last (bottom) tier holds the remainder.
 */
export function wvwGroups(worlds: readonly WvwWorld[], options: WvwGroupOptions = {}): string[][] {
  const size = options.size ?? 3;
  if (!(Number.isInteger(size) && size >= 2)) throw new InvalidInputError(`must be a whole number of at least 2, got ${size}`, { field: 'size' });
  const rule = options.rule ?? 'sorted';
  if (rule !== 'sorted' && rule !== 'randomized') throw new InvalidInputError(`must be 'sorted' or 'randomized', got ${String(rule)}`, { field: 'rule' });
  const random = options.random ?? mulberry32(options.seed ?? 1);
  // Keys are drawn in id order so the same seed gives the same draw whatever the input order.
  const byId = [...worlds].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const keyed = byId.map((world) => ({
    id: world.id,
    key: rule === 'sorted' ? world.rating : world.rating + (random() * 2 - 1) * Math.min(0.45 * world.rd + 10, 100),
  }));
  keyed.sort((a, b) => b.key - a.key || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const groups: string[][] = [];
  for (let i = 0; i < keyed.length; i += size) groups.push(keyed.slice(i, i + size).map((w) => w.id));
  return groups;
}

/** World-vs-World battles: scored by the raw scores' share, so every team needs a score. */
const SCORE_SHARE_BATTLES: Glicko2Battles = Object.freeze({
  check(match: Match) {
    const missing = match.teams.findIndex((team) => team.score === undefined);
    if (missing >= 0) throw new InvalidInputError('World-vs-World needs raw scores', { field: `teams[${missing}].score` });
  },
  score: (match: Match, _placements: readonly number[], t: number, u: number) => wvwGlickoScore(match.teams[t]!.score!, match.teams[u]!.score!),
});

/** World vs World in the registry. */
export const WVW = defineSystem({
  name: 'wvw',
  label: 'World vs World',
  summary: "Glicko-2 as Guild Wars 2 World vs World used it: battles scored by the raw scores' share, rounds of three worlds regrouped by rating.",
  options: WVW_OPTIONS,
  capabilities: { ...GLICKO2.capabilities, fastPath: false, needsScores: true, rounds: true },
  display: GLICKO2.display,
  fit: GLICKO2.fit,
  dashboard: {
    terms: SURPRISE_TERMS,
    explanation:
      'Expected is the chance of winning the ratings gave before the match; score is what happened (1 win, ½ draw, 0 loss, or the score share transformed for World vs World). Surprise = score − expected: the further from 0, the more the rating moved. The rating follows the score share, not the placing: a world can top its match and still lose rating (“win · lost rating”) when its share was below what the ratings expected.',
    mixedResult: { win: 'lost rating: score share below expected', loss: 'gained rating: score share above expected' },
    performanceRuns: false,
  },
  ladder: { teamSize: 1 },
  create: (options): RatingSystem => glicko2RatingSystem('wvw', options, SCORE_SHARE_BATTLES),
});
