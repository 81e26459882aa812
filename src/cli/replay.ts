/**
 * `ladder replay`: rates a match log and prints the standings.
 */
import type { Command } from 'commander';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { Replay, type StartingState } from 'ladder-core/core/replay.js';
import type { Match } from 'ladder-core/core/match.js';
import { allSystems, describeSystem, type RegisteredDescriptor, systemsWhere } from 'ladder-core/core/registry.js';
import { createSystem, type PlayerState, SYSTEM_NAMES, type SystemName } from 'ladder-core/core/systems.js';
import { wvwGroups } from 'ladder-core/core/wvw.js';
import { readInputText } from '../io/jsonl.js';
import { formatOf, type MatchLogFormat, parseColumnMap, parseMatchLog, parsePairwiseCsv } from '../io/matches.js';
import { DAY_MS, standingsAt } from 'ladder-core/standings';
import { action, numberOption } from './errors.js';
import { lazyProgress, type ReportStream, reportSkipped, warnIfEmpty } from './stderr.js';

export interface ReplayCommandOptions {
  system: string;
  tau?: number;
  k?: number;
  rd?: number;
  players?: string;
  json?: boolean;
  format?: MatchLogFormat;
  map?: string;
  groupRule?: 'sorted' | 'randomized';
  seed?: number;
  skipInvalid?: boolean;
  /** Activity window for percentiles, in days. @default 30 */
  window?: number;
  /** Placement matches before a percentile is shown. @default 10 */
  placement?: number;
}

export interface ReplayOutput {
  system: SystemName;
  players: Array<{
    id: string;
    rating: number;
    rd?: number;
    volatility?: number;
    matches: number;
    /** 1–100 over players active at the time of the last match; null in placement or inactive. */
    percentile: number | null;
    division: string | null;
  }>;
  groups?: string[][];
}

/** The system options `--tau`, `--k` and `--rd` set: each flag sets the option of its name, and only a system that has one takes it. */
function systemOptions(descriptor: RegisteredDescriptor, options: ReplayCommandOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const flag of ['tau', 'k', 'rd'] as const) {
    if (options[flag] === undefined) continue;
    if (!Object.hasOwn(descriptor.options, flag)) {
      const takers = systemsWhere((d) => Object.hasOwn(d.options, flag)).map((d) => d.name);
      throw new InvalidInputError(`--${flag} applies to ${takers.join(', ')}, not ${descriptor.name}`, { field: flag });
    }
    out[flag] = options[flag];
  }
  return out;
}

/** Parses the `--players` file: a JSON array of starting states. */
export function parseStartingStates(text: string): StartingState[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`malformed JSON: ${(error as Error).message}`, { field: 'players' });
  }
  if (!Array.isArray(value)) throw new InvalidInputError('must be a JSON array of {"id","rating","rd"?,"volatility"?}', { field: 'players' });
  const seen = new Set<string>();
  return value.map((entry: unknown, i) => {
    const field = `players[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new InvalidInputError('must be an object', { field });
    const record = entry as Record<string, unknown>;
    const id = typeof record.id === 'number' ? String(record.id) : record.id;
    if (typeof id !== 'string' || id === '') throw new InvalidInputError('must be a non-empty string', { field: `${field}.id` });
    if (seen.has(id)) throw new InvalidInputError(`player ${JSON.stringify(id)} is listed twice`, { field: `${field}.id` });
    seen.add(id);
    const state: StartingState = { id, rating: 0 };
    for (const key of ['rating', 'rd', 'volatility'] as const) {
      const v = record[key];
      if (v === undefined && key !== 'rating') continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || (key !== 'rating' && v <= 0)) {
        throw new InvalidInputError(`must be a finite${key === 'rating' ? '' : ', positive'} number, got ${JSON.stringify(v)}`, { field: `${field}.${key}` });
      }
      state[key] = v;
    }
    return state;
  });
}

/**
 * The parts of a replay a progress bar shows: `lines` read and rated as they
 * are read (match by match), or `reading` the whole log first and then
 * `rating` it (the one-against-one CSV fast path, whole-history systems).
 */
export type ReplayPhase = 'lines' | 'reading' | 'rating';

/** A log shorter than this many lines or matches reports no progress: it is done before a bar would help. */
export const PROGRESS_STEP = 10_000;

/** What a replay tells its caller while it runs. */
export interface ReplayHooks {
  /**
   * Progress of a long log: `done` of `total` lines (`lines`, `reading`)
   * every 10 000 lines, or matches (`rating`). Only logs of 10 000 lines or
   * matches or more report any.
   */
  onProgress?: (done: number, total: number, phase: ReplayPhase) => void;
  /** With `skipInvalid`: the errors of the lines skipped, once the log is read. */
  onSkipped?: (errors: InvalidInputError[]) => void;
  /** The number of matches rated, once the log is read. */
  onRead?: (matches: number) => void;
}

/** Runs a replay and returns the standings; throws InvalidInputError on bad input. */
export function runReplay(source: string, options: ReplayCommandOptions, hooks: ReplayHooks = {}): ReplayOutput {
  const { onProgress, onSkipped, onRead } = hooks;
  const descriptor = describeSystem(options.system);
  const name = descriptor.name;
  const system = createSystem(name, systemOptions(descriptor, options));
  const starting = options.players ? parseStartingStates(readInputText(options.players)) : [];
  const text = readInputText(source);
  const format = formatOf(source, options.format);
  const map = options.map ? parseColumnMap(options.map) : undefined;
  const onInvalid = options.skipInvalid ? (error: InvalidInputError) => skipped.push(error) : undefined;
  const skipped: InvalidInputError[] = [];
  const report = () => {
    if (skipped.length > 0) onSkipped?.(skipped);
  };
  // One-against-one CSV from new players: the system's typed-array fast path, where it has one.
  const total = onProgress ? countLines(text) : 0;
  if (format === 'csv' && starting.length === 0 && descriptor.fastPath) {
    const log = parsePairwiseCsv(text, map, onInvalid, onProgress && ((line) => onProgress(line, total, 'reading')));
    if (log) {
      report();
      onRead?.(log.count);
      const ratings = descriptor.fastPath.replay(log, system.options, onProgress && ((done) => onProgress(done, log.count, 'rating')));
      const players = new Map<string, PlayerState>();
      log.ids.forEach((id, i) => {
        const state: PlayerState = { rating: ratings.rating[i]!, matches: ratings.matches[i]! };
        if (!Number.isNaN(ratings.lastAt[i]!)) state.lastAt = ratings.lastAt[i]!;
        if (ratings.rd) state.rd = ratings.rd[i]!;
        if (ratings.volatility) state.volatility = ratings.volatility[i]!;
        players.set(id, state);
      });
      return standings(name, players, undefined, standingOptions(options, maxLastAt(players)));
    }
    skipped.length = 0;
  }
  if (descriptor.rateLog) return wholeLogReplay(descriptor, system.options, starting, text, format, map, onInvalid, report, options, hooks, total);
  const run = new Replay(system, starting);
  let done = 0;
  for (const { line, match } of parseMatchLog(text, format, { map, onInvalid })) {
    try {
      run.push(match);
    } catch (error) {
      if (error instanceof InvalidInputError) throw error.atLine(line);
      throw error;
    }
    if (onProgress && ++done % PROGRESS_STEP === 0) onProgress(line, total, 'lines');
  }
  const players = run.finish();
  report();
  onRead?.(run.matches);
  return standings(name, players, descriptor.capabilities.rounds ? { rule: options.groupRule, seed: options.seed } : undefined, standingOptions(options, run.lastAt));
}

/**
 * A system that rates a whole log at once (Whole-History Rating: every
 * match added to the history, then all timelines smoothed to the MAP); the
 * standings show each player's state on their last day.
 */
function wholeLogReplay(
  descriptor: RegisteredDescriptor,
  systemOptions: object,
  starting: readonly StartingState[],
  text: string,
  format: MatchLogFormat,
  map: ReturnType<typeof parseColumnMap> | undefined,
  onInvalid: ((error: InvalidInputError) => void) | undefined,
  report: () => void,
  options: ReplayCommandOptions,
  hooks: ReplayHooks,
  total: number,
): ReplayOutput {
  if (starting.length > 0) throw new InvalidInputError(`${descriptor.name} rates whole histories and takes no starting states`, { field: 'players' });
  const { onProgress } = hooks;
  const matches: Match[] = [];
  let lastAt: number | undefined;
  for (const { line, match } of parseMatchLog(text, format, { map, onInvalid })) {
    matches.push(match);
    if (match.at !== undefined && (lastAt === undefined || match.at > lastAt)) lastAt = match.at;
    if (onProgress && matches.length % PROGRESS_STEP === 0) onProgress(line, total, 'reading');
  }
  // The system rates the log in one call with no progress hook: the bar shows that rating is under way, and its end.
  const rating = matches.length >= PROGRESS_STEP ? onProgress : undefined;
  rating?.(0, matches.length, 'rating');
  const players = descriptor.rateLog!(matches, systemOptions);
  rating?.(matches.length, matches.length, 'rating');
  report();
  hooks.onRead?.(matches.length);
  return standings(descriptor.name, players, undefined, standingOptions(options, lastAt));
}

function countLines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count + 1;
}

function maxLastAt(players: ReadonlyMap<string, PlayerState>): number | undefined {
  let latest: number | undefined;
  for (const state of players.values()) if (state.lastAt !== undefined && (latest === undefined || state.lastAt > latest)) latest = state.lastAt;
  return latest;
}

interface StandingOptions {
  now: number;
  windowMs: number;
  placementMatches: number;
}

function standingOptions(options: ReplayCommandOptions, lastAt: number | undefined): StandingOptions {
  const window = options.window ?? 30;
  const placement = options.placement ?? 10;
  if (!(window > 0)) throw new InvalidInputError(`must be a positive number of days, got ${window}`, { field: 'window' });
  if (!(Number.isInteger(placement) && placement >= 0)) throw new InvalidInputError(`must be a whole number of matches, got ${placement}`, { field: 'placement' });
  return { now: lastAt ?? 0, windowMs: window * DAY_MS, placementMatches: placement };
}

/**
 * Sorts players best first (ties by id) into the output record, with each
 * player's percentile and division at the time of the last match. Players of
 * a log without times are all taken as active.
 */
export function standings(
  system: SystemName,
  players: ReadonlyMap<string, PlayerState>,
  groups?: { rule?: 'sorted' | 'randomized'; seed?: number },
  standing: StandingOptions = { now: 0, windowMs: 30 * DAY_MS, placementMatches: 10 },
): ReplayOutput {
  const placed = standingsAt(
    [...players].map(([id, state]) => ({ id, rating: state.rating, matches: state.matches, lastActiveAt: state.lastAt ?? standing.now })),
    standing.now,
    { windowMs: standing.windowMs, placementMatches: standing.placementMatches },
  );
  const list = [...players].map(([id, state]) => {
    const entry: ReplayOutput['players'][number] = { id, rating: state.rating, matches: state.matches, percentile: null, division: null };
    if (state.rd !== undefined) entry.rd = state.rd;
    if (state.volatility !== undefined) entry.volatility = state.volatility;
    const place = placed.get(id);
    entry.percentile = place?.percentile ?? null;
    entry.division = place?.division ?? null;
    return entry;
  });
  list.sort((a, b) => b.rating - a.rating || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const output: ReplayOutput = { system, players: list };
  if (groups)
    output.groups = wvwGroups(
      list.map((p) => ({ id: p.id, rating: p.rating, rd: p.rd ?? 0 })),
      groups,
    );
  return output;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

export function formatTable(output: ReplayOutput): string {
  const hasRd = output.players.some((p) => p.rd !== undefined);
  const { decimals, quantity } = describeSystem(output.system).display;
  const idWidth = Math.max(6, ...output.players.map((p) => p.id.length));
  const rows = [
    [
      pad('#', 6, true),
      pad('player', idWidth),
      pad(quantity, 10, true),
      ...(hasRd ? [pad('RD', 7, true), pad('vol', 8, true)] : []),
      pad('matches', 8, true),
      pad('pct', 5, true),
      'division',
    ].join('  '),
  ];
  output.players.forEach((p, i) => {
    rows.push(
      [
        pad(String(i + 1), 6, true),
        pad(p.id, idWidth),
        pad(p.rating.toFixed(decimals), 10, true),
        ...(hasRd ? [pad(p.rd?.toFixed(1) ?? '', 7, true), pad(p.volatility?.toFixed(5) ?? '', 8, true)] : []),
        pad(String(p.matches), 8, true),
        pad(p.percentile === null ? '-' : String(p.percentile), 5, true),
        p.division ?? '',
      ].join('  '),
    );
  });
  let text = `${output.system}: ${output.players.length} players\n${rows.join('\n')}\n`;
  if (output.groups) text += `\nnext round, top tier first:\n${output.groups.map((g, i) => `  tier ${i + 1}: ${g.join(', ')}`).join('\n')}\n`;
  return text;
}

/** Each system's default for the option a flag sets, for the help text: `glicko2 0.5, wvw 0.6`. */
function flagDefaults(option: string): string {
  return allSystems()
    .filter((d) => Object.hasOwn(d.options, option))
    .map((d) => `${d.name} ${d.options[option]!.default}`)
    .join(', ');
}

/**
 * The bars of `ladder replay` on `stream`, one per phase, each drawn from
 * its first report on (so a short log draws none); undefined off a
 * terminal, so the replay skips counting.
 */
export function replayProgress(stream: ReportStream = process.stderr): ReplayHooks['onProgress'] {
  const bars = {
    lines: lazyProgress('replay', 'lines', stream),
    reading: lazyProgress('replay: reading', 'lines', stream),
    rating: lazyProgress('replay: rating', 'matches', stream),
  };
  if (!bars.lines) return undefined;
  return (done, total, phase) => bars[phase]?.(done, total);
}

export function register(program: Command): void {
  program
    .command('replay')
    .description('rate a match log (JSON Lines or CSV) and print the standings')
    .requiredOption('--system <name>', `rating system: ${SYSTEM_NAMES.join('|')}`)
    .option('--tau <x>', `the system's tau (${flagDefaults('tau')})`, numberOption('tau'))
    .option('--k <x>', `the system's k: Elo's K factor, the Glicko-2 step multiplier (${flagDefaults('k')})`, numberOption('k'))
    .option('--rd <x>', `the starting and maximum RD (${flagDefaults('rd')})`, numberOption('rd'))
    .option('--players <file>', 'JSON array of starting states {"id","rating","rd"?,"volatility"?}')
    .option('--format <format>', 'jsonl or csv (default: from the file name)')
    .option('--map <mapping>', 'CSV column mapping, e.g. winner=winner_id,loser=loser_id,at=tourney_date')
    .option('--group-rule <rule>', "wvw grouping: sorted (as in ArenaNet's World-vs-World ratings post) or randomized (ArenaNet's later rule)", 'sorted')
    .option('--seed <n>', 'seed of the randomized wvw grouping', numberOption('seed'))
    .option('--window <days>', 'percentiles count players active within this many days of the last match', numberOption('window'), 30)
    .option('--placement <n>', 'matches before a player gets a percentile', numberOption('placement'), 10)
    .option('--skip-invalid', 'skip invalid lines (reported on stderr) instead of stopping at the first')
    .option('--json', 'print one JSON object instead of a table')
    .argument('<matches>', 'match log file, or - for standard input')
    .action(
      action((source: string, options: ReplayCommandOptions) => {
        if (options.format !== undefined && options.format !== 'jsonl' && options.format !== 'csv') {
          throw new InvalidInputError(`must be jsonl or csv, got ${JSON.stringify(options.format)}`, { field: 'format' });
        }
        const output = runReplay(source, options, {
          onProgress: replayProgress(),
          onSkipped: reportSkipped,
          onRead: (matches) => warnIfEmpty(matches, source, 'matches'),
        });
        process.stdout.write(options.json ? `${JSON.stringify(output)}\n` : formatTable(output));
      }),
    );
}
