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
 * and OT are each team's average seconds in game per player, as in the team-rank write-up's
 * worked example. New ranks are rounded to the cent, half up.
 */
import { defineSystem } from './descriptor.js';
import { roundForDisplay } from './display.js';
import { InvalidInputError } from './errors.js';
import { teamPlacements } from './match.js';
import { choiceOption, defaultsOf, numberOption, type OptionsOf, resolveOptions, type ResolvedOptionsOf } from './options.js';
import { latest, type PlayerState, type RatingSystem, stateOf } from './rating-system.js';

/** Team rank's options: what each means, its default and range. */
export const TEAM_RANK_OPTIONS = {
  /** Rank of a new player: the team-rank write-up's "starting value". @default 1 */
  initialRank: numberOption({ default: 1, min: 0, exclusiveMin: true, description: 'rank of a new player (the team-rank write-up\'s "starting value"); at least the floor' }),
  /** The share of the rank at stake is 1/stakeDivisor. @default 20 */
  stakeDivisor: numberOption({ default: 20, min: 0, exclusiveMin: true, description: 'the share of the rank at stake is 1/stakeDivisor' }),
  /** Lowest possible rank. @default 1 */
  floor: numberOption({ default: 1, min: 0, exclusiveMin: true, description: 'lowest possible rank' }),
  /**
   * How the quitter modifier measures a team's presence. `'time'` is the team-rank
   * write-up's design (seconds in game); `'headcount'` counts the players still
   * in at the end, the exploitable variant the team-rank write-up warns against, kept for
   * comparison. @default 'time'
   */
  quitterModifier: choiceOption(['time', 'headcount'], 'time', "how the quitter modifier measures a team's presence: seconds in game, or players still in at the end"),
  /**
   * YT and OT as the average seconds per player (the team-rank write-up's worked example)
   * or the team's total seconds (the team-rank write-up's definitions). They differ only for
   * teams of unequal size. @default 'average'
   */
  timeBasis: choiceOption(['average', 'total'], 'average', "YT and OT as the average seconds per player or the team's total seconds"),
  /** Decimal places a rank is held at. @default 2 */
  decimals: numberOption({ default: 2, min: 0, max: 8, integer: true, description: 'decimal places a rank is held at' }),
};

export type TeamRankOptions = OptionsOf<typeof TEAM_RANK_OPTIONS>;
export type ResolvedTeamRankOptions = ResolvedOptionsOf<typeof TEAM_RANK_OPTIONS>;

export const TEAM_RANK_DEFAULTS: Readonly<ResolvedTeamRankOptions> = defaultsOf(TEAM_RANK_OPTIONS);

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
  const o = resolveOptions(TEAM_RANK_OPTIONS, options);
  checkTeamRankOptions(o);
  return o;
}

/** The check the schema cannot express: a new player starts at or above the floor. */
function checkTeamRankOptions(o: ResolvedTeamRankOptions): void {
  if (o.initialRank < o.floor) throw new InvalidInputError(`must be at least the floor ${o.floor}`, { field: 'initialRank' });
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
export function teamRankMatch(teams: readonly [readonly TeamRankPlayer[], readonly TeamRankPlayer[]], result: TeamRankResult, options: TeamRankOptions = {}): TeamRankChange[] {
  return rateTeams(teams, result, resolveTeamRankOptions(options));
}

/** teamRankMatch with options already resolved (the RatingSystem rates every match with the same ones). */
function rateTeams(teams: readonly [readonly TeamRankPlayer[], readonly TeamRankPlayer[]], result: TeamRankResult, o: ResolvedTeamRankOptions): TeamRankChange[] {
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
        throw new InvalidInputError(`team ${yt > 0 ? other : t} has no time in game; give seconds, or mark its players as quit`, { field: `teams[${yt > 0 ? other : t}].players` });
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
 * Probability that team A beats team B. The team-rank write-up defines none; Ladder reads
 * the average-rank modifier as odds, P(A) = YA / (YA + OA) (Bradley–Terry on
 * average ranks), which matches the team-rank write-up's "Team B is theoretically more
 * likely to win" when OA > YA and is 1/2 for equal averages.
 */
export function teamRankWinProbability(teamA: readonly number[], teamB: readonly number[]): number {
  const ya = average(teamA);
  const oa = average(teamB);
  return ya / (ya + oa);
}

/** Team rank behind the RatingSystem interface: two teams, matches rated in order. */
function teamRankSystem(o: ResolvedTeamRankOptions): RatingSystem {
  const initial = (): PlayerState => ({ rating: o.initialRank, matches: 0 });
  const rateMatch: RatingSystem['rateMatch'] = (match, states) => {
    if (match.teams.length !== 2) {
      throw new InvalidInputError(`team rank rates matches of two teams, got ${match.teams.length}`, { field: 'teams' });
    }
    const placements = teamPlacements(match);
    const result: TeamRankResult = placements[0]! < placements[1]! ? 'win' : placements[0]! > placements[1]! ? 'loss' : 'draw';
    const befores = match.teams.map((team) => team.players.map((p) => stateOf(states, p.id, initial)));
    const toPlayers = (t: number): TeamRankPlayer[] => match.teams[t]!.players.map((p, i) => ({ id: p.id, rank: befores[t]![i]!.rating, seconds: p.seconds, quit: p.quit }));
    const changes = rateTeams([toPlayers(0), toPlayers(1)], result, o);
    const flatBefore = befores.flat();
    return {
      ...(match.id !== undefined ? { matchId: match.id } : {}),
      players: changes.map((change, i) => {
        const before = flatBefore[i]!;
        const after: PlayerState = { rating: change.after, matches: before.matches + 1 };
        const lastAt = latest(match.at, before.lastAt);
        if (lastAt !== undefined) after.lastAt = lastAt;
        return {
          id: change.id,
          team: change.team,
          before,
          after,
          // Rounded for reading: quotients of equal averages come out as 0.9999999999999998; the ranks stay exact.
          terms: { outcome: change.outcome, averageModifier: roundForDisplay(change.averageModifier), quitterModifier: roundForDisplay(change.quitterModifier) },
        };
      }),
    };
  };
  return {
    name: 'teamrank',
    options: o,
    initial,
    // Team rank has no rating periods: matches are applied in order, each
    // seeing the changes before it through a small overlay (never a copy of
    // the whole population).
    ratePeriod: (matches, states) => {
      if (matches.length === 1) return [rateMatch(matches[0]!, states)];
      const changed = new Map<string, PlayerState>();
      const view: ReadonlyMap<string, PlayerState> = { get: (id: string) => changed.get(id) ?? states.get(id) } as ReadonlyMap<string, PlayerState>;
      return matches.map((match) => {
        const rating = rateMatch(match, view);
        for (const change of rating.players) changed.set(change.id, change.after);
        return rating;
      });
    },
    rateMatch,
    predict: (teams) => {
      if (teams.length !== 2) throw new InvalidInputError(`team rank predicts matches of two teams, got ${teams.length}`, { field: 'teams' });
      const p = teamRankWinProbability(
        teams[0]!.map((s) => s.rating),
        teams[1]!.map((s) => s.rating),
      );
      return [p, 1 - p];
    },
    idle: (state) => state,
    holdRating: (rating) => Math.max(o.floor, roundHalfUp(rating, o.decimals)),
  };
}

/** Team rank in the registry. */
export const TEAM_RANK = defineSystem({
  name: 'teamrank',
  label: 'Team rank',
  summary: "The multiplicative team rank: a twentieth of the rank at stake, scaled by the teams' average ranks and time in game; quitters take the loss.",
  options: TEAM_RANK_OPTIONS,
  check: checkTeamRankOptions,
  capabilities: {
    teams: true,
    draws: true,
    multiTeam: false,
    ratingPeriods: false,
    idleGrowth: false,
    homeAdvantage: false,
    fastPath: false,
    needsScores: false,
    rounds: false,
    wholeHistory: false,
    deviation: false,
  },
  display: { quantity: 'rating', decimals: 2, scale: 'multiplicative' },
  fit: { parameters: [{ name: 'stakeDivisor', min: 2, max: 200, initial: 20 }], byDefault: ['stakeDivisor'] },
  dashboard: {
    terms: [
      { key: 'outcome', label: 'Outcome', format: 'text' },
      { key: 'averageModifier', label: 'Avg-rank modifier', format: 'number', digits: 3 },
      { key: 'quitterModifier', label: 'Quitter modifier', format: 'number', digits: 3 },
    ],
    explanation:
      'Each match stakes a twentieth of the rank. The change is R₀/20 × average-rank modifier × quitter modifier: the average-rank modifier is above 1 when the other team was ranked higher (on a win) or lower (on a loss); the quitter modifier is above 1 when your team played fewer seconds on a win, or the other team did on a loss. A player who quits takes a loss whatever the team did (“win · quit: counted as a loss”).',
    performanceRuns: false,
  },
  ladder: { teamSize: 6 },
  create: teamRankSystem,
});
