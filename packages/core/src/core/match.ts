/**
 * The match record every rating system reads, and its validation.
 *
 * A match is two or more teams; a team is one or more players. The outcome
 * comes from each team's `rank` (1 is best, equal ranks tie) or, where no team
 * has a rank, from its `score` (higher is better).
 */
import { InvalidInputError } from './errors.js';
import { identifierProblem } from './ids.js';

export interface MatchPlayer {
  id: string;
  /** Seconds this player spent in the game (team rank's time-in-game modifier). */
  seconds?: number;
  /** The player left before the end (team rank's automatic loss). */
  quit?: boolean;
}

export interface MatchTeam {
  players: MatchPlayer[];
  /** Placement, 1 is best; equal ranks tie. */
  rank?: number;
  /** Raw score, higher is better (World-vs-World needs it). */
  score?: number;
}

export interface Match {
  id?: string;
  /** Epoch milliseconds. */
  at?: number;
  /** Consecutive matches with the same period form one Glicko-2 rating period. */
  period?: string;
  teams: MatchTeam[];
  /** Relative weight of the game (Elo's per-game weight); 1 when absent. */
  weight?: number;
  /**
   * Index of the team that played at home; absent at a neutral venue. The
   * rating systems ignore it; evaluation and fitting use it for home advantage.
   */
  home?: number;
  /**
   * Where or how the match was played (a map, a mode, a surface, a
   * tournament level). Systems with per-context offsets switched on rate a
   * player's skill in it as their rating plus an offset for the context;
   * every other system ignores it.
   */
  context?: string;
}

/** The longest `context` a match may carry. */
export const MAX_CONTEXT_LENGTH = 64;

/**
 * Why `value` is not a valid context, or undefined: an identifier (no
 * control characters, well-formed Unicode) of at most MAX_CONTEXT_LENGTH
 * characters, without leading or trailing spaces (so `"Ilios"` and
 * `"Ilios "` never name two contexts).
 */
export function contextProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `must be a string (a map, mode or level), got ${describe(value)}`;
  const problem = identifierProblem(value, MAX_CONTEXT_LENGTH);
  if (problem !== undefined) return problem;
  if (value.trim() !== value) return 'must not start or end with spaces';
  return undefined;
}

/** Returns `value` as a context, or throws an InvalidInputError naming `field`. */
export function parseContext(value: unknown, field = 'context'): string {
  const problem = contextProblem(value);
  if (problem !== undefined) fail(field, problem);
  return value as string;
}

/** The wire form accepted from users: a player may be a bare id, `at` an ISO string. */
export interface MatchInput {
  id?: string | number;
  at?: string | number;
  period?: string | number;
  teams: Array<{
    players: Array<string | number | { id: string | number; seconds?: number; quit?: boolean }>;
    rank?: number;
    score?: number;
  }>;
  weight?: number;
  home?: number;
  context?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(field: string, message: string): never {
  throw new InvalidInputError(message, { field });
}

function parseId(value: unknown, field: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') fail(field, `must be a string id, got ${describe(value)}`);
  const problem = identifierProblem(value);
  if (problem !== undefined) fail(field, problem);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return typeof value;
}

function parseFiniteNumber(value: unknown, field: string, { min }: { min?: number } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(field, `must be a finite number, got ${describe(value)}`);
  if (min !== undefined && value < min) fail(field, `must be at least ${min}, got ${value}`);
  return value;
}

/** Whether the fields name a real moment of the proleptic Gregorian calendar (24:00 not included). */
function isCalendarDate(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/**
 * Parses a date as epoch milliseconds: a number is taken as epoch
 * milliseconds; a string may be ISO 8601 or a compact `YYYYMMDD` (as in
 * tennis and chess data).
 */
export function parseTime(value: unknown, field = 'at'): number {
  if (typeof value === 'number') return parseFiniteNumber(value, field);
  if (typeof value !== 'string') fail(field, `must be an ISO date string, got ${describe(value)}`);
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  let ms: number;
  if (compact) {
    const [year, month, day] = [+compact[1]!, +compact[2]!, +compact[3]!];
    ms = Date.UTC(year, month - 1, day);
    // Date.UTC rolls 20230230 over into March: such a string is not a date.
    const back = new Date(ms);
    if (back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) ms = NaN;
  } else {
    ms = Date.parse(value);
    // Date.parse rolls an impossible ISO date over (2024-02-30 becomes March 1): such a string is not a date.
    const iso = /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(value);
    if (iso && !isCalendarDate(+iso[1]!, +iso[2]!, +iso[3]!, iso[4] === undefined ? 0 : +iso[4], iso[5] === undefined ? 0 : +iso[5], iso[6] === undefined ? 0 : +iso[6])) ms = NaN;
  }
  if (!Number.isFinite(ms)) fail(field, `is not a date: ${JSON.stringify(value.slice(0, 40))}`);
  return ms;
}

/**
 * Validates a match from its wire form and returns the normalised record.
 * Throws InvalidInputError naming the field for: no teams, a team without
 * players, a player on two teams, a non-finite or negative score or seconds,
 * and teams with neither rank nor score.
 */
export function parseMatch(raw: unknown): Match {
  if (!isRecord(raw)) fail('match', `must be a JSON object, got ${describe(raw)}`);
  const match: Match = { teams: [] };
  if (raw.id !== undefined) match.id = parseId(raw.id, 'id');
  if (raw.at !== undefined && raw.at !== null) match.at = parseTime(raw.at, 'at');
  if (raw.period !== undefined && raw.period !== null) match.period = parseId(raw.period, 'period');
  if (raw.weight !== undefined) match.weight = parseFiniteNumber(raw.weight, 'weight', { min: 0 });
  if (raw.context !== undefined && raw.context !== null) match.context = parseContext(raw.context, 'context');
  if (!Array.isArray(raw.teams)) fail('teams', `must be an array of teams, got ${describe(raw.teams)}`);
  if (raw.teams.length < 2) fail('teams', `needs at least two teams, got ${raw.teams.length}`);

  const seen = new Map<string, number>();
  raw.teams.forEach((rawTeam: unknown, t: number) => {
    const at = `teams[${t}]`;
    if (!isRecord(rawTeam)) fail(at, `must be an object, got ${describe(rawTeam)}`);
    if (!Array.isArray(rawTeam.players)) fail(`${at}.players`, `must be an array, got ${describe(rawTeam.players)}`);
    if (rawTeam.players.length === 0) fail(`${at}.players`, 'a team needs at least one player');
    const team: MatchTeam = { players: [] };
    if (rawTeam.rank !== undefined && rawTeam.rank !== null) team.rank = parseFiniteNumber(rawTeam.rank, `${at}.rank`, { min: 0 });
    if (rawTeam.score !== undefined && rawTeam.score !== null) team.score = parseFiniteNumber(rawTeam.score, `${at}.score`, { min: 0 });
    rawTeam.players.forEach((rawPlayer: unknown, p: number) => {
      const pat = `${at}.players[${p}]`;
      let player: MatchPlayer;
      if (typeof rawPlayer === 'string' || typeof rawPlayer === 'number') {
        player = { id: parseId(rawPlayer, pat) };
      } else if (isRecord(rawPlayer)) {
        player = { id: parseId(rawPlayer.id, `${pat}.id`) };
        if (rawPlayer.seconds !== undefined && rawPlayer.seconds !== null) player.seconds = parseFiniteNumber(rawPlayer.seconds, `${pat}.seconds`, { min: 0 });
        if (rawPlayer.quit !== undefined && rawPlayer.quit !== null) {
          if (typeof rawPlayer.quit !== 'boolean') fail(`${pat}.quit`, `must be true or false, got ${describe(rawPlayer.quit)}`);
          player.quit = rawPlayer.quit;
        }
      } else {
        fail(pat, `must be a player id or an object with an id, got ${describe(rawPlayer)}`);
      }
      const other = seen.get(player.id);
      if (other !== undefined) {
        fail(
          `${pat}.id`,
          other === t
            ? `player ${JSON.stringify(player.id)} appears twice in the same team`
            : `player ${JSON.stringify(player.id)} is on two teams (teams[${other}] and teams[${t}])`,
        );
      }
      seen.set(player.id, t);
      team.players.push(player);
    });
    match.teams.push(team);
  });

  if (raw.home !== undefined && raw.home !== null) {
    const home = raw.home;
    if (typeof home !== 'number' || !Number.isInteger(home) || home < 0 || home >= match.teams.length) {
      fail('home', `must be the index of a team (0 to ${match.teams.length - 1}), got ${describe(home)}`);
    }
    match.home = home;
  }

  const ranked = match.teams.filter((team) => team.rank !== undefined).length;
  const scored = match.teams.filter((team) => team.score !== undefined).length;
  if (ranked !== 0 && ranked !== match.teams.length) {
    const missing = match.teams.findIndex((team) => team.rank === undefined);
    fail(`teams[${missing}].rank`, 'every team needs a rank when one has one');
  }
  if (ranked === 0 && scored !== match.teams.length) {
    const missing = match.teams.findIndex((team) => team.score === undefined);
    fail(`teams[${missing}]`, 'needs a rank or a score');
  }
  return match;
}

/**
 * Placement of each team, 1 best, equal values tying: from `rank` when the
 * teams have ranks, else from `score` (higher is better).
 */
export function teamPlacements(match: Match): number[] {
  const teams = match.teams;
  if (teams[0]!.rank !== undefined) return teams.map((team) => team.rank!);
  return teams.map((team) => 1 + teams.filter((other) => other.score! > team.score!).length);
}

/**
 * The Glicko/Elo score of team `a` against team `b`: 1 win, 0.5 draw, 0 loss.
 */
export function pairScore(placements: readonly number[], a: number, b: number): number {
  const pa = placements[a]!;
  const pb = placements[b]!;
  return pa < pb ? 1 : pa > pb ? 0 : 0.5;
}
