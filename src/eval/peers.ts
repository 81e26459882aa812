/**
 * The peer npm libraries, openskill and ts-trueskill, as contenders under the
 * same protocol. They are development dependencies: import this module only
 * where they are installed (the report, `ladder evaluate --peers`).
 */
import { predictWin as openskillPredictWin, rate as openskillRate, rating as openskillRating } from 'openskill';
import type { Options as OpenSkillOptions, Rating as OpenSkillRating } from 'openskill';
import { type Rating as TrueSkillRating, TrueSkill } from 'ts-trueskill';
import { type Match, teamPlacements } from 'ladder-core/core/match.js';
import { type Contender, type ParameterValue, requireTwoTeams } from './contenders.js';

/** Ranks for the peers: placements (1 best, equal for a draw). */
function ranksOf(match: Match): number[] {
  return teamPlacements(match);
}

export interface OpenSkillContenderOptions extends OpenSkillOptions {
  /** Label suffix naming the model. @default 'PlackettLuce' */
  modelName?: string;
}

/** The npm package openskill (Weng-Lin), rate and predictWin, its defaults unless given. */
export function openSkillContender(options: OpenSkillContenderOptions = {}): Contender {
  const { modelName = 'PlackettLuce', ...skill } = options;
  const ratings = new Map<string, OpenSkillRating>();
  const fresh = openskillRating(undefined, skill);
  const teamOf = (players: readonly { id: string }[]) => players.map((p) => ratings.get(p.id) ?? fresh);
  const parameters: Record<string, ParameterValue> = { model: modelName };
  for (const [key, value] of Object.entries(skill)) if (typeof value === 'number' || typeof value === 'boolean') parameters[key] = value;
  return {
    label: 'openskill',
    parameters,
    predict(match) {
      requireTwoTeams(match);
      return openskillPredictWin(
        match.teams.map((t) => teamOf(t.players)),
        skill,
      )[0]!;
    },
    update(match) {
      const teams = match.teams.map((t) => teamOf(t.players));
      const next = openskillRate(teams, { ...skill, rank: ranksOf(match) });
      match.teams.forEach((team, t) => team.players.forEach((p, i) => ratings.set(p.id, next[t]![i]!)));
    },
    known: (id) => ratings.has(id),
  };
}

export interface TrueSkillContenderOptions {
  /** @default 25 */
  mu?: number;
  /** @default mu / 3 */
  sigma?: number;
  /** @default sigma / 2 */
  beta?: number;
  /** @default sigma / 100 */
  tau?: number;
  /** The draw probability TrueSkill's update assumes. @default 0.1 */
  drawProbability?: number;
}

/** The npm package ts-trueskill: TrueSkill.rate and TrueSkill.winProbability. */
export function trueSkillContender(options: TrueSkillContenderOptions = {}): Contender {
  const mu = options.mu ?? 25;
  const sigma = options.sigma ?? mu / 3;
  const beta = options.beta ?? sigma / 2;
  const tau = options.tau ?? sigma / 100;
  const drawProbability = options.drawProbability ?? 0.1;
  const env = new TrueSkill(mu, sigma, beta, tau, drawProbability);
  const ratings = new Map<string, TrueSkillRating>();
  const fresh = env.createRating();
  const teamOf = (players: readonly { id: string }[]) => players.map((p) => ratings.get(p.id) ?? fresh);
  return {
    label: 'ts-trueskill',
    parameters: { mu, sigma, beta, tau, drawProbability },
    predict(match) {
      requireTwoTeams(match);
      return env.winProbability(teamOf(match.teams[0]!.players), teamOf(match.teams[1]!.players));
    },
    update(match) {
      const teams = match.teams.map((t) => teamOf(t.players));
      // TrueSkill's ranks: lower is better, equal is a draw.
      const next = env.rate(teams, ranksOf(match)) as TrueSkillRating[][];
      match.teams.forEach((team, t) => team.players.forEach((p, i) => ratings.set(p.id, next[t]![i]!)));
    },
    known: (id) => ratings.has(id),
  };
}
