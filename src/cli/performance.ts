/**
 * `ladder performance`: the performance rating of a game record read from a
 * JSON Lines file, one game a line: {"opponent":1500,"result":"win","weight":1}.
 */
import type { Command } from 'commander';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { displayTier } from 'ladder-core/core/display.js';
import {
  PERFORMANCE_METHODS,
  REPLAY_RULES,
  replayRuleNamed,
  parsePerformanceGame,
  performanceRating,
  type PerformanceGame,
  type PerformanceMethod,
  type PerformanceOptions,
  type UnboundedPolicy,
} from 'ladder-core/core/performance.js';
import { atLine, readJsonLines } from '../io/jsonl.js';
import { action, numberOption } from './errors.js';
import { inputName } from './stderr.js';

export interface PerformanceCommandOptions {
  /** @default 'algo400' */
  method?: string;
  /** Elo K of the netzero replays. @default 32 */
  k?: number;
  /** Update rule replayed by netzero: 'elo' or 'glicko2'. @default 'elo' */
  update?: string;
  /** Glicko-2 replay: RD of opponents whose line has none. @default 50 */
  opponentRd?: number;
  /** Glicko-2 replay: the rated player's starting RD. @default 350 */
  rd?: number;
  /** Glicko-2 replay: the rated player's starting volatility. @default 0.06 */
  volatility?: number;
  /** 'clamp' or 'throw' for all-wins / all-losses records. @default 'clamp' */
  unbounded?: string;
  /** Clamp margin beyond the extreme opponent. @default 800 */
  margin?: number;
}

export interface PerformanceResult {
  method: PerformanceMethod;
  rating: number;
  games: number;
}

function checkMethod(method: string): PerformanceMethod {
  if (!(PERFORMANCE_METHODS as readonly string[]).includes(method)) {
    throw new InvalidInputError(`unknown method ${JSON.stringify(method)}; use one of ${PERFORMANCE_METHODS.join(', ')}`, { field: '--method' });
  }
  return method as PerformanceMethod;
}

function ratingOptions(options: PerformanceCommandOptions): PerformanceOptions {
  const update = options.update ?? 'elo';
  const unbounded = options.unbounded ?? 'clamp';
  if (unbounded !== 'clamp' && unbounded !== 'throw') {
    throw new InvalidInputError(`must be clamp or throw, got ${JSON.stringify(unbounded)}`, { field: '--unbounded' });
  }
  const resolved: PerformanceOptions = { unbounded: unbounded as UnboundedPolicy };
  if (options.margin !== undefined) resolved.unboundedMargin = options.margin;
  resolved.update = replayRuleNamed(update, { k: options.k, opponentRd: options.opponentRd, rd: options.rd, volatility: options.volatility }, '--update');
  return resolved;
}

/**
 * Reads the record and rates it. Throws InvalidInputError naming the line and
 * field on bad input; prints nothing, so the caller decides what is shown.
 */
export function computePerformance(source: string, options: PerformanceCommandOptions = {}): PerformanceResult {
  const method = checkMethod(options.method ?? 'algo400');
  const resolved = ratingOptions(options);
  const games: PerformanceGame[] = [];
  for (const { line, value } of readJsonLines(source)) {
    games.push(atLine(line, () => parsePerformanceGame(value)));
  }
  if (games.length === 0) throw new InvalidInputError(`no games in ${inputName(source)}`, { field: 'games' });
  return { method, rating: performanceRating(method, games, resolved), games: games.length };
}

/** The readable line: method, rating to two decimals, tier display, game count. */
export function formatPerformance(result: PerformanceResult): string {
  const shown = displayTier(result.rating);
  return `${result.method} performance rating: ${result.rating.toFixed(2)} (${shown.label}) over ${result.games} game${result.games === 1 ? '' : 's'}`;
}

export function register(program: Command): void {
  program
    .command('performance')
    .description('performance rating of a game record (JSON Lines: {"opponent":1500,"result":"win","weight":1})')
    .argument('<games>', 'JSON Lines file of games, or - for standard input')
    .option('--method <method>', `one of ${PERFORMANCE_METHODS.join(', ')}`, 'algo400')
    .option('--k <number>', 'Elo K of the netzero replays', numberOption('k'), 32)
    .option('--update <rule>', `rating update netzero replays: ${Object.keys(REPLAY_RULES).join(' or ')}`, 'elo')
    .option('--opponent-rd <number>', 'glicko2 replay: RD of opponents whose line has no opponentRd', numberOption('opponent-rd'))
    .option('--rd <number>', 'glicko2 replay: starting RD of the rated player (default 350)', numberOption('rd'))
    .option('--volatility <number>', 'glicko2 replay: starting volatility (default 0.06)', numberOption('volatility'))
    .option('--unbounded <policy>', 'all wins / all losses: clamp or throw', 'clamp')
    .option('--margin <number>', 'clamp margin beyond the extreme opponent', numberOption('margin'))
    .option('--json', 'print {"method":...,"rating":...}')
    .action(
      action((games: string, options: PerformanceCommandOptions & { json?: boolean }) => {
        const result = computePerformance(games, options);
        // Everything is computed before anything is printed: bad input leaves stdout empty.
        process.stdout.write(options.json ? `${JSON.stringify({ method: result.method, rating: result.rating })}\n` : `${formatPerformance(result)}\n`);
      }),
    );
}
