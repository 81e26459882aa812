/**
 * `ladder matchmake`: one matchmaking pass over a JSON Lines file of tickets.
 *
 *   ladder matchmake --mode 6v6 --now SECONDS [--widen 2,5,10,20,50,100] [--widen-every 30] [--json] TICKETS
 *
 * TICKETS is a file or `-` for standard input, one ticket a line:
 *   {"id":"t1","at":0,"players":[{"id":"p1","percentile":42,"pings":{"eu":35,"na":120},"filter":{"within":2,"strict":false,"maxPing":80}}]}
 * Every line is checked before anything is printed; a bad ticket exits 2
 * with a message naming its line and field.
 */
import type { Command } from 'commander';
import { InvalidInputError } from '../core/errors.js';
import { type FormedMatch, Matchmaker, parseMode, type PassResult } from '../matchmaking/index.js';
import { atLine, readJsonLines } from '../io/jsonl.js';
import { action, numberOption } from './errors.js';
import { warnIfEmpty } from './stderr.js';

export interface MatchmakeCommandOptions {
  /** Team mode like "6v6". @default '6v6' */
  mode?: string;
  /** The pass's clock, seconds (same clock as tickets' `at`). Required. */
  now: number;
  /** Comma-separated widening steps in percentiles. @default '5,10,20,50,100' */
  widen?: string;
  /** Seconds between widening steps. @default 30 */
  widenEvery?: number;
  json?: boolean;
}

function parseWiden(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  return parts.map((part, index) => {
    const value = Number(part);
    if (part === '' || !Number.isFinite(value)) throw new InvalidInputError(`must be a comma-separated list of numbers, got ${JSON.stringify(text)}`, { field: `--widen[${index}]` });
    return value;
  });
}

/** Reads, validates and matches the tickets of `source`; throws before producing any output. */
export function runMatchmake(source: string, options: MatchmakeCommandOptions): PassResult {
  const teamSize = parseMode(options.mode ?? '6v6');
  if (typeof options.now !== 'number' || !Number.isFinite(options.now)) throw new InvalidInputError('is required: the pass time in seconds', { field: '--now' });
  const matchmaker = new Matchmaker({
    teamSize,
    widening: {
      ...(options.widen === undefined ? {} : { steps: parseWiden(options.widen) }),
      ...(options.widenEvery === undefined ? {} : { everySeconds: options.widenEvery }),
    },
  });
  const firstLine = new Map<string, number>();
  let tickets = 0;
  for (const { line, value } of readJsonLines(source)) {
    tickets++;
    atLine(line, () => {
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === 'string' || typeof id === 'number') {
        const seen = firstLine.get(String(id));
        if (seen !== undefined) throw new InvalidInputError(`duplicate ticket id ${JSON.stringify(String(id))} (first on line ${seen})`, { field: 'id' });
        firstLine.set(String(id), line);
      }
      matchmaker.add(value);
    });
  }
  warnIfEmpty(tickets, source, 'tickets');
  return matchmaker.pass(options.now);
}

/** The `--json` document: exactly {"matches":[{"region","teams"}],"waiting":[...]}. */
export function matchmakeJson(result: PassResult): string {
  return JSON.stringify({ matches: result.matches.map((m) => ({ region: m.region, teams: m.teams })), waiting: result.waiting });
}

/** A readable table, one match a row. */
export function matchmakeTable(result: PassResult): string {
  const rows: string[][] = [['match', 'region', 'team 1', 'team 2', 'OA/YA', 'spread', 'worst ping', 'step']];
  result.matches.forEach((match: FormedMatch, index) => {
    rows.push([
      String(index + 1),
      match.region,
      match.teams[0].join(' '),
      match.teams[1].join(' '),
      match.quality.balance.toFixed(3),
      match.quality.percentileSpread.toFixed(0),
      `${match.quality.worstPing} ms`,
      String(match.quality.wideningStep),
    ]);
  });
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  lines.push('', `${result.matches.length} match(es); waiting (${result.waiting.length}): ${result.waiting.join(' ') || '-'}`);
  return `${lines.join('\n')}\n`;
}

export function register(program: Command): void {
  program
    .command('matchmake')
    .description('run one matchmaking pass over a JSON Lines file of tickets (or - for stdin)')
    .argument('<tickets>', 'JSON Lines file of tickets, or - for standard input')
    .option('--mode <mode>', 'teams, e.g. 6v6, 3v3, 1v1', '6v6')
    .requiredOption('--now <seconds>', 'time of the pass, seconds on the tickets\' clock', numberOption('now'))
    .option('--widen <steps>', 'loose-filter widening steps in percentiles, comma-separated (default 5,10,20,50,100)')
    .option('--widen-every <seconds>', 'seconds between widening steps (default 30)', numberOption('widen-every'))
    .option('--json', 'print {"matches":[{"region","teams"}],"waiting":[...]}')
    .action(
      action((source: string, options: MatchmakeCommandOptions) => {
        const result = runMatchmake(source, options);
        process.stdout.write(options.json ? `${matchmakeJson(result)}\n` : matchmakeTable(result));
      }),
    );
}
