/**
 * The multiplicative team rank of `team-rank-system.txt`.
 *
 * Win:  R1 = R0 + R0/20 * (OA/YA) * (OT/YT)
 * Loss: R1 = max(1.00, R0 - R0/20 * (YA/OA) * (YT/OT))
 * Draw: the team with the lower average rank ranks up as if it had won; the
 *       other team, and both teams when the averages are equal, stay.
 * A player who quit takes the automatic loss: the lower of R0 - R0/20 and the
 * standard loss, never below the floor. When every player of the other team
 * quit, each player who stayed gets R0 + R0/20 (modifiers of 1).
 *
 * YA and OA are the teams' average ranks before the match (not rounded); YT
 * and OT are each team's average seconds in game per player, as in the seed's
 * worked example. New ranks are rounded to the cent, half up.
 */
import { InvalidInputError } from './errors.js';

export interface TeamRankOptions {
  /** Rank of a new player: the seed's "starting value". @default 1 */
  initialRank?: number;
  /** The share of the rank at stake is 1/stakeDivisor. @default 20 */
  stakeDivisor?: number;
  /** Lowest possible rank. @default 1 */
  floor?: number;
  /**
   * How the quitter modifier measures a team's presence. `'time'` is the
   * seed's design (seconds in game); `'headcount'` counts the players still
   * in at the end, the exploitable variant the seed warns against, kept for
   * comparison. @default 'time'
   */
  quitterModifier?: 'time' | 'headcount';
  /**
   * YT and OT as the average seconds per player (the seed's worked example)
   * or the team's total seconds (the seed's definitions). They differ only for
   * teams of unequal size. @default 'average'
   */
  timeBasis?: 'average' | 'total';
  /** Decimal places a rank is held at. @default 2 */
  decimals?: number;
}

export interface ResolvedTeamRankOptions {
  initialRank: number;
  stakeDivisor: number;
  floor: number;
  quitterModifier: 'time' | 'headcount';
  timeBasis: 'average' | 'total';
  decimals: number;
}

export const TEAM_RANK_DEFAULTS: ResolvedTeamRankOptions = Object.freeze({
  initialRank: 1,
  stakeDivisor: 20,
  floor: 1,
  quitterModifier: 'time',
  timeBasis: 'average',
  decimals: 2,
});

export interface TeamRankPlayer {
  id: string;
  rank: number;
  /** Seconds in game; a player without it is taken to have played the whole match (the longest time reported). */
  seconds?: number;
  quit?: boolean;
}

/** Result of the match for team 0; team 1 has the opposite. */
export type TeamRankResult = 'win' | 'loss' | 'draw';

export type TeamRankOutcome = 'win' | 'loss' | 'draw' | 'quit' | 'walkover';

export interface TeamRankChange {
  id: string;
  team: 0 | 1;
  before: number;
  after: number;
  /** Which rule applied to this player. */
  outcome: TeamRankOutcome;
  /** OA/YA on a win, YA/OA on a loss, from this player's side. 1 where the rule uses no modifier. */
  averageModifier: number;
  /** OT/YT on a win, YT/OT on a loss, from this player's side. 1 where the rule uses no modifier. */
  quitterModifier: number;
}

export function resolveTeamRankOptions(options: TeamRankOptions = {}): ResolvedTeamRankOptions {
  const o = { ...TEAM_RANK_DEFAULTS, ...stripUndefined(options) } as ResolvedTeamRankOptions;
  for (const key of ['initialRank', 'stakeDivisor', 'floor'] as const) {
    if (!(typeof o[key] === 'number' && Number.isFinite(o[key]) && o[key] > 0)) {
      throw new InvalidInputError(`must be a positive number, got ${String(o[key])}`, { field: key });
    }
  }
  if (o.initialRank < o.floor) throw new InvalidInputError(`must be at least the floor ${o.floor}`, { field: 'initialRank' });
  if (o.quitterModifier !== 'time' && o.quitterModifier !== 'headcount') {
    throw new InvalidInputError(`must be 'time' or 'headcount', got ${String(o.quitterModifier)}`, { field: 'quitterModifier' });
  }
  if (o.timeBasis !== 'average' && o.timeBasis !== 'total') {
    throw new InvalidInputError(`must be 'average' or 'total', got ${String(o.timeBasis)}`, { field: 'timeBasis' });
  }
  if (!Number.isInteger(o.decimals) || o.decimals < 0 || o.decimals > 8) {
    throw new InvalidInputError(`must be a whole number from 0 to 8, got ${String(o.decimals)}`, { field: 'decimals' });
  }
  return o;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Rounds half up at `decimals` places, on the decimal value as written:
 * 23.005 becomes 23.01 although its binary double is 23.00499999…
 */
export function roundHalfUp(value: number, decimals = 2): number {
  const factor = 10 ** decimals;
  const scaled = Number((value * factor).toPrecision(15));
  return Math.floor(scaled + 0.5) / factor;
}

function average(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

function teamPresence(team: readonly TeamRankPlayer[], fullGame: number, o: ResolvedTeamRankOptions): number {
  if (o.quitterModifier === 'headcount') return team.filter((p) => !p.quit).length;
  const seconds = team.map((p) => p.seconds ?? fullGame);
  return o.timeBasis === 'average' ? average(seconds) : seconds.reduce((a, b) => a + b, 0);
}

/**
 * Rates a two-team match. `result` is team 0's result. Returns one change per
 * player, team 0 first, in input order.
 */
export function teamRankMatch(
  teams: readonly [readonly TeamRankPlayer[], readonly TeamRankPlayer[]],
  result: TeamRankResult,
  options: TeamRankOptions = {},
): TeamRankChange[] {
  const o = resolveTeamRankOptions(options);
  if (teams.length !== 2) throw new InvalidInputError(`team rank rates two teams, got ${teams.length}`, { field: 'teams' });
  teams.forEach((team, t) => {
    if (team.length === 0) throw new InvalidInputError('a team needs at least one player', { field: `teams[${t}].players` });
    team.forEach((p, i) => {
      if (!(Number.isFinite(p.rank) && p.rank >= o.floor)) {
        throw new InvalidInputError(`must be a finite rank of at least ${o.floor}, got ${p.rank}`, { field: `teams[${t}].players[${i}].rank` });
      }
      if (p.seconds !== undefined && !(Number.isFinite(p.seconds) && p.seconds >= 0)) {
        throw new InvalidInputError(`must be a finite, non-negative number, got ${p.seconds}`, { field: `teams[${t}].players[${i}].seconds` });
      }
    });
  });

  // Without any reported seconds every player counts as present the whole game (modifier 1).
  const reported = teams.flat().filter((p) => p.seconds !== undefined);
  const fullGame = reported.length === 0 ? 1 : Math.max(...reported.map((p) => p.seconds!));
  const averages = teams.map((team) => average(team.map((p) => p.rank)));
  const allQuit = teams.map((team) => team.every((p) => p.quit === true));
  const presence = teams.map((team) => teamPresence(team, fullGame, o));
  const stakeOf = (rank: number) => rank / o.stakeDivisor;
  const clamp = (rank: number) => Math.max(o.floor, roundHalfUp(rank, o.decimals));

  const changes: TeamRankChange[] = [];
  for (const t of [0, 1] as const) {
    const other = (1 - t) as 0 | 1;
    const ya = averages[t]!;
    const oa = averages[other]!;
    const yt = presence[t]!;
    const ot = presence[other]!;
    const teamResult: TeamRankResult = t === 0 ? result : result === 'win' ? 'loss' : result === 'loss' ? 'win' : 'draw';
    // Modifiers are only needed (and only defined) when both teams were present.
    const modifiersDefined = yt > 0 && ot > 0;
    const winModifiers = () => ({ averageModifier: oa / ya, quitterModifier: ot / yt });
    const lossModifiers = () => ({ averageModifier: ya / oa, quitterModifier: yt / ot });
    const needModifiers = () => {
      if (!modifiersDefined) {
        throw new InvalidInputError(
          `team ${yt > 0 ? other : t} has no time in game; give seconds, or mark its players as quit`,
          { field: `teams[${yt > 0 ? other : t}].players` },
        );
      }
    };

    for (const player of teams[t]!) {
      const r0 = player.rank;
      // One literal per change, not spreads of partial objects: a spread is a
      // slow generic copy, and this runs for every player of every match.
      const change = (after: number, outcome: TeamRankOutcome, averageModifier: number, quitterModifier: number): TeamRankChange => ({
        id: player.id,
        team: t,
        before: r0,
        after,
        outcome,
        averageModifier,
        quitterModifier,
      });
      if (player.quit) {
        let standardLoss = r0 - stakeOf(r0);
        let mods = { averageModifier: 1, quitterModifier: 1 };
        if (modifiersDefined) {
          mods = lossModifiers();
          standardLoss = r0 - stakeOf(r0) * mods.averageModifier * mods.quitterModifier;
        }
        const automatic = r0 - stakeOf(r0);
        const useStandard = standardLoss < automatic;
        const after = clamp(Math.min(automatic, standardLoss));
        changes.push(useStandard ? change(after, 'quit', mods.averageModifier, mods.quitterModifier) : change(after, 'quit', 1, 1));
        continue;
      }
      if (allQuit[other]) {
        changes.push(change(clamp(r0 + stakeOf(r0)), 'walkover', 1, 1));
        continue;
      }
      const rankUp = teamResult === 'win' || (teamResult === 'draw' && ya < oa);
      if (rankUp) {
        needModifiers();
        const mods = winModifiers();
        changes.push(change(clamp(r0 + stakeOf(r0) * mods.averageModifier * mods.quitterModifier), teamResult, mods.averageModifier, mods.quitterModifier));
      } else if (teamResult === 'loss') {
        needModifiers();
        const mods = lossModifiers();
        changes.push(change(clamp(r0 - stakeOf(r0) * mods.averageModifier * mods.quitterModifier), 'loss', mods.averageModifier, mods.quitterModifier));
      } else {
        changes.push(change(r0, 'draw', 1, 1));
      }
    }
  }
  return changes;
}

/**
 * Probability that team A beats team B. The seed defines none; Ladder reads
 * the average-rank modifier as odds, P(A) = YA / (YA + OA) (Bradley–Terry on
 * average ranks), which matches the seed's "Team B is theoretically more
 * likely to win" when OA > YA and is 1/2 for equal averages.
 */
export function teamRankWinProbability(teamA: readonly number[], teamB: readonly number[]): number {
  const ya = average(teamA);
  const oa = average(teamB);
  return ya / (ya + oa);
}
