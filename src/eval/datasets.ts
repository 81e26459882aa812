/**
 * Fast loaders that turn each evaluation data set of the data folder (see
 * dataRoot) into core matches, sorted by time (stably: file order is kept
 * within a time). The data stay where they are: these read them by path and
 * never copy them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { InvalidInputError, LadderError } from 'ladder-core/core/errors.js';
import type { EvalMatch } from './contenders.js';

/** The project's root: this module is src/eval/datasets.ts or, built, dist/eval/datasets.js. */
const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The ATP file of the KDD 2019 protocol (and of the rating benchmarks), inside the data folder. */
export const TENNIS_KDD19_FILE = 'tennis_atp/kdd19_atp_all_levels_1991_2017.csv.gz';

/**
 * Where the data sets live: `$LADDER_DATA`, else `../shared/data` beside the
 * project (the data are shared between checkouts and never copied in).
 */
export function dataRoot(): string {
  return process.env.LADDER_DATA || join(PROJECT_ROOT, '..', 'shared', 'data');
}

/** An evaluation data set (or the whole data folder) is not where it is looked for. */
export class MissingDataError extends LadderError {
  override name = 'MissingDataError';
  /** The folder or file that was looked for. */
  readonly path: string;
  constructor(path: string, kind: 'folder' | 'file') {
    const from = process.env.LADDER_DATA ? 'LADDER_DATA' : 'the default, ../shared/data beside the project';
    super(`data ${kind} ${path} not found (data folder from ${from}); set LADDER_DATA to the folder that holds the evaluation data sets`);
    this.path = path;
  }
}

/** The data folder, checked first so a missing one is one clear error rather than a missing file per data set. */
export function requireDataRoot(): string {
  const root = dataRoot();
  if (!existsSync(root)) throw new MissingDataError(root, 'folder');
  return root;
}

/** Splits one CSV line; quotes ("a, b" and "" escapes) only cost time where present. */
export function splitCsvLine(line: string): string[] {
  if (!line.includes('"')) return line.split(',');
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"') {
        if (line[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

function readText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new MissingDataError(path, 'file');
    throw error;
  }
  return (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
}

/** Lines without the trailing empty one and without CR. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1);
  return lines;
}

function columnIndex(header: string[], name: string, file: string): number {
  const index = header.indexOf(name);
  if (index < 0) throw new InvalidInputError(`${file}: no column ${JSON.stringify(name)}`, { field: name, line: 1 });
  return index;
}

/** YYYYMMDD to epoch ms (UTC midnight), without Date parsing on the hot path. */
function compactDate(value: string, file: string, line: number): number {
  const n = Number(value);
  if (value.length !== 8 || !Number.isInteger(n)) throw new InvalidInputError(`${file}: not a YYYYMMDD date: ${JSON.stringify(value)}`, { field: 'tourney_date', line });
  return Date.UTC(Math.floor(n / 10000), (Math.floor(n / 100) % 100) - 1, n % 100);
}

function byTimeStable(matches: EvalMatch[]): EvalMatch[] {
  // Array.prototype.sort is stable (ES2019), so equal times keep file order.
  return matches.sort((a, b) => a.at! - b.at!);
}

function duel(a: string, b: string, at: number): EvalMatch {
  return {
    at,
    teams: [
      { players: [{ id: a }], rank: 1 },
      { players: [{ id: b }], rank: 2 },
    ],
  };
}

/**
 * ATP, all levels 1991–2017, as in Maystre et al. KDD 2019: one match per
 * row, winner first, players keyed by name (as the paper did); the level of
 * play (`level_file`: tour, qual_chall, futures) as the match's context.
 */
export function loadTennisKdd19(path = join(dataRoot(), TENNIS_KDD19_FILE)): EvalMatch[] {
  const lines = linesOf(readText(path));
  const header = splitCsvLine(lines[0]!);
  const date = columnIndex(header, 'tourney_date', path);
  const winner = columnIndex(header, 'winner_name', path);
  const loser = columnIndex(header, 'loser_name', path);
  const level = columnIndex(header, 'level_file', path);
  const matches: EvalMatch[] = new Array(lines.length - 1);
  let lastDate = '';
  let lastAt = 0;
  for (let i = 1; i < lines.length; i++) {
    const cells = splitCsvLine(lines[i]!);
    const day = cells[date]!;
    if (day !== lastDate) {
      lastAt = compactDate(day, path, i + 1);
      lastDate = day;
    }
    const match = duel(cells[winner]!, cells[loser]!, lastAt);
    if (cells[level]) match.context = cells[level];
    matches[i - 1] = match;
  }
  return byTimeStable(matches);
}

/** Sackmann's round codes in playing order within an event. */
const ROUND_ORDER: Record<string, number> = { Q1: 1, Q2: 2, Q3: 3, Q4: 4, R128: 10, R64: 11, R32: 12, R16: 13, RR: 14, QF: 15, SF: 16, BR: 17, F: 18 };

export interface TourMatch extends EvalMatch {
  tourneyId: string;
  /** The score says RET, W/O or DEF. */
  incomplete: boolean;
}

/**
 * ATP tour-level main draws of the given years (Sackmann's `tour` files),
 * players keyed by id, walkovers dropped, ordered by event start, then
 * event, then round, then match number.
 */
export function loadTennisTour(fromYear: number, toYear: number, folder = join(dataRoot(), 'tennis_atp/tour')): TourMatch[] {
  const rows: Array<{ match: TourMatch; order: number; number: number }> = [];
  for (let year = fromYear; year <= toYear; year++) {
    const path = join(folder, `atp_matches_${year}.csv.gz`);
    const lines = linesOf(readText(path));
    const header = splitCsvLine(lines[0]!);
    const at = columnIndex(header, 'tourney_date', path);
    const id = columnIndex(header, 'tourney_id', path);
    const winner = columnIndex(header, 'winner_id', path);
    const loser = columnIndex(header, 'loser_id', path);
    const score = columnIndex(header, 'score', path);
    const round = columnIndex(header, 'round', path);
    const number = columnIndex(header, 'match_num', path);
    for (let i = 1; i < lines.length; i++) {
      const cells = splitCsvLine(lines[i]!);
      const result = cells[score]!;
      if (result.includes('W/O')) continue;
      const match = duel(cells[winner]!, cells[loser]!, compactDate(cells[at]!, path, i + 1)) as TourMatch;
      match.tourneyId = cells[id]!;
      match.incomplete = result.includes('RET') || result.includes('DEF');
      rows.push({ match, order: ROUND_ORDER[cells[round]!] ?? 9, number: Number(cells[number]) || 0 });
    }
  }
  rows.sort(
    (a, b) => a.match.at! - b.match.at! || (a.match.tourneyId < b.match.tourneyId ? -1 : a.match.tourneyId > b.match.tourneyId ? 1 : 0) || a.order - b.order || a.number - b.number,
  );
  return rows.map((row) => row.match);
}

/** Length of a Kaggle chess "month": the 100 timestamps are 30.4 days apart. */
export const CHESS_MONTH_MS = 30.4 * 86_400_000;

/**
 * Kaggle chess 2010 training games (months 1–100), white as team 0 and
 * marked as the "home" side so a first-move advantage can be fitted. Times
 * are month starts counted from the epoch: the real origin is unknown (the
 * data are shifted), but the spacing is the real one. No `period` is set:
 * games are rated one at a time in file order within a month (continuous
 * time), so every system, peers included, learns game by game.
 */
export function loadChess(path = join(dataRoot(), 'chess_kaggle2010/games.csv')): EvalMatch[] {
  const lines = linesOf(readText(path));
  const header = splitCsvLine(lines[0]!);
  const month = columnIndex(header, 'month', path);
  const white = columnIndex(header, 'white', path);
  const black = columnIndex(header, 'black', path);
  const result = columnIndex(header, 'score_white', path);
  const matches: EvalMatch[] = [];
  for (let i = 1; i < lines.length; i++) {
    const cells = splitCsvLine(lines[i]!);
    const score = Number(cells[result]);
    if (score !== 0 && score !== 0.5 && score !== 1) throw new InvalidInputError(`${path}: score_white must be 0, 0.5 or 1`, { field: 'score_white', line: i + 1 });
    const m = Number(cells[month]);
    matches.push({
      at: (m - 1) * CHESS_MONTH_MS,
      home: 0,
      teams: [
        { players: [{ id: cells[white]! }], rank: score === 1 ? 1 : score === 0 ? 2 : 1 },
        { players: [{ id: cells[black]! }], rank: score === 0 ? 1 : score === 1 ? 2 : 1 },
      ],
    });
  }
  return byTimeStable(matches);
}

/** Month number of a chess match (1–100). */
export function chessMonth(match: EvalMatch): number {
  return Math.round(match.at! / CHESS_MONTH_MS) + 1;
}

/**
 * International football (martj42): home team first, goals as scores, and
 * `home: 0` unless the venue was neutral; the match's context is `friendly`
 * for a friendly and `competitive` for every other tournament (a side's
 * strength in friendlies, with their changed line-ups, may not be its
 * strength when it counts).
 */
export function loadFootball(path = join(dataRoot(), 'international_football/results.csv')): EvalMatch[] {
  const lines = linesOf(readText(path));
  const header = splitCsvLine(lines[0]!);
  const date = columnIndex(header, 'date', path);
  const home = columnIndex(header, 'home_team', path);
  const away = columnIndex(header, 'away_team', path);
  const homeScore = columnIndex(header, 'home_score', path);
  const awayScore = columnIndex(header, 'away_score', path);
  const neutral = columnIndex(header, 'neutral', path);
  const tournament = columnIndex(header, 'tournament', path);
  const matches: EvalMatch[] = [];
  for (let i = 1; i < lines.length; i++) {
    const cells = splitCsvLine(lines[i]!);
    const a = Number(cells[homeScore]);
    const b = Number(cells[awayScore]);
    if (!Number.isFinite(a) || !Number.isFinite(b) || cells[homeScore] === '' || cells[awayScore] === '') continue; // unplayed fixture
    const at = Date.parse(`${cells[date]}T00:00:00Z`);
    if (!Number.isFinite(at)) throw new InvalidInputError(`${path}: not a date: ${JSON.stringify(cells[date])}`, { field: 'date', line: i + 1 });
    const match: EvalMatch = {
      at,
      teams: [
        { players: [{ id: cells[home]! }], score: a },
        { players: [{ id: cells[away]! }], score: b },
      ],
      context: cells[tournament] === 'Friendly' ? 'friendly' : 'competitive',
    };
    if (cells[neutral] !== 'TRUE') match.home = 0;
    matches.push(match);
  }
  return byTimeStable(matches);
}

const MONTHS: Record<string, number> = { January: 0, February: 1, March: 2, April: 3, May: 4, June: 5, July: 6, August: 7, September: 8, October: 9, November: 10, December: 11 };

/** "06 August 2004 18:13:50" (PST in the data; read as UTC, only the order matters). */
function haloTime(value: string, path: string, line: number): number {
  const m = /^(\d{1,2}) (\w+) (\d{4}) (\d{1,2}):(\d{2}):(\d{2})$/.exec(value);
  const month = m ? MONTHS[m[2]!] : undefined;
  if (!m || month === undefined) throw new InvalidInputError(`${path}: not a date: ${JSON.stringify(value)}`, { field: 'date_time', line });
  return Date.UTC(+m[3]!, month, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
}

/** Halo 2 beta game variants (SOURCE.md), a game's context. */
const HALO_VARIANTS: Record<string, string> = { '1': 'ctf', '2': 'slayer', '9': 'assault' };

/**
 * Halo 2 beta, one row per player per game (no header): a team's score is
 * its players' summed score; equal team scores are a draw. The game variant
 * (CTF, Slayer, Assault) is the match's context.
 */
export function loadHalo2(file: 'HeadToHead' | 'LargeTeam', path = join(dataRoot(), `halo2_beta/${file}.csv`)): EvalMatch[] {
  const lines = linesOf(readText(path));
  const matches: EvalMatch[] = [];
  let current: { id: string; at: number; variant: string; teams: Map<string, { ids: string[]; score: number }> } | undefined;
  const close = () => {
    if (!current) return;
    const teams = [...current.teams.values()];
    if (teams.length === 2) {
      const match: EvalMatch = { id: current.id, at: current.at, teams: teams.map((t) => ({ players: t.ids.map((id) => ({ id })), score: t.score })) };
      const context = HALO_VARIANTS[current.variant] ?? (current.variant === '' ? undefined : `variant${current.variant}`);
      if (context !== undefined) match.context = context;
      matches.push(match);
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const cells = lines[i]!.split(',');
    if (cells.length < 7) throw new InvalidInputError(`${path}: expected 7 columns, got ${cells.length}`, { line: i + 1 });
    const game = cells[1]!;
    if (!current || current.id !== game) {
      close();
      current = { id: game, at: haloTime(cells[0]!, path, i + 1), variant: cells[2]!.trim(), teams: new Map() };
    }
    let team = current.teams.get(cells[5]!);
    if (!team) current.teams.set(cells[5]!, (team = { ids: [], score: 0 }));
    team.ids.push(cells[4]!);
    team.score += Number(cells[6]);
  }
  close();
  return byTimeStable(matches);
}

/**
 * Overwatch League maps, 2018 and 2019, with the six-player lineup that
 * played each map; map scores as team scores (equal is a drawn map); the
 * map (`map_name`) as the match's context.
 */
export function loadOverwatch(folder = join(dataRoot(), 'overwatch_league_rosters')): EvalMatch[] {
  const matches: EvalMatch[] = [];
  for (const file of ['owl_2018_maps.csv', 'owl_2019_maps.csv']) {
    const path = join(folder, file);
    const lines = linesOf(readText(path));
    const header = splitCsvLine(lines[0]!);
    const time = columnIndex(header, 'start_time', path);
    const game = columnIndex(header, 'game_id', path);
    const score1 = columnIndex(header, 'score1', path);
    const score2 = columnIndex(header, 'score2', path);
    const roster1 = columnIndex(header, 'roster1', path);
    const roster2 = columnIndex(header, 'roster2', path);
    const map = columnIndex(header, 'map_name', path);
    for (let i = 1; i < lines.length; i++) {
      const cells = splitCsvLine(lines[i]!);
      if (cells[score1] === '' || cells[score2] === '' || cells[roster1] === '' || cells[roster2] === '') continue; // not played
      const at = Date.parse(`${cells[time]!.replace(' ', 'T')}Z`);
      if (!Number.isFinite(at)) throw new InvalidInputError(`${path}: not a time: ${JSON.stringify(cells[time])}`, { field: 'start_time', line: i + 1 });
      const lineup = (cell: string) => cell.split('|').map((id) => ({ id }));
      matches.push({
        id: cells[game]!,
        at,
        teams: [
          { players: lineup(cells[roster1]!), score: Number(cells[score1]) },
          { players: lineup(cells[roster2]!), score: Number(cells[score2]) },
        ],
        ...(cells[map] ? { context: cells[map] } : {}),
      });
    }
  }
  return byTimeStable(matches);
}
