/**
 * `ladder matchmake`: one matchmaking pass over a JSON Lines file of tickets
 * and backfill requests.
 *
 *   ladder matchmake --mode 6v6 --now SECONDS [--widen 2,5,10,20,50,100] [--widen-every 30] [--json] TICKETS
 *   ladder matchmake --rule-set FILE --now SECONDS [--json [--why]] TICKETS   (src/cli/matchmake-rule-set.ts)
 *
 * TICKETS is a file or `-` for standard input, one ticket a line:
 *   {"id":"t1","at":0,"players":[{"id":"p1","percentile":42,"pings":{"eu":35,"na":120},"filter":{"within":2,"strict":false,"maxPing":80}}]}
 * or one backfill request a line (a match in progress with open slots,
 * filled before new matches form):
 *   {"backfill":{"id":"b1","match":"m7","region":"eu","at":0,"teams":[["p1","p2"],["p3"]],"teamSize":2,"players":{"p1":{"percentile":40},"p2":{"percentile":44},"p3":{"percentile":41}}}}
 * Every line is checked before anything is printed; a bad ticket or request
 * exits 2 with a message naming its line and field.
 */
import type { Command } from 'commander';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { type BackfillInput, type FormedMatch, Matchmaker, parseMode, type PassResult, type TicketInput } from 'ladder-core/matchmaking';
import { atLine, readJsonLines } from '../io/jsonl.js';
import { action, numberOption } from './errors.js';
import { warnIfEmpty } from './stderr.js';
import { ruleSetMatchmakeJson, ruleSetMatchmakeTable, runRuleSetMatchmake } from './matchmake-rule-set.js';

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
  /** A FlexMatch rule set (JSON, comments allowed): the pass runs it instead of the team-rank queue. */
  ruleSet?: string;
  /** With --rule-set and --json: add "why" (waiting ticket → the rule that held it). */
  why?: boolean;
}

function parseWiden(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  return parts.map((part, index) => {
    const value = Number(part);
    if (part === '' || !Number.isFinite(value))
      throw new InvalidInputError(`must be a comma-separated list of numbers, got ${JSON.stringify(text)}`, { field: `--widen[${index}]` });
    return value;
  });
}

/** A pass of the command: the pass's result and, when the input held backfill requests, the ids of those still open. */
export interface MatchmakeRun extends PassResult {
  waitingBackfills?: string[];
}

/** Reads, validates and matches the tickets and backfill requests of `source`; throws before producing any output. */
export function runMatchmake(source: string, options: MatchmakeCommandOptions): MatchmakeRun {
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
  // Backfills are opened after every ticket is queued, so a match player who also waits in a ticket is caught whatever the line order.
  const backfills: Array<{ line: number; value: unknown }> = [];
  for (const { line, value } of readJsonLines(source)) {
    if (typeof value === 'object' && value !== null && 'backfill' in value) {
      backfills.push({ line, value: (value as { backfill: unknown }).backfill });
      continue;
    }
    tickets++;
    atLine(line, () => {
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === 'string' || typeof id === 'number') {
        const seen = firstLine.get(String(id));
        if (seen !== undefined) throw new InvalidInputError(`duplicate ticket id ${JSON.stringify(String(id))} (first on line ${seen})`, { field: 'id' });
        firstLine.set(String(id), line);
      }
      // Validated at run time by the matchmaker.
      matchmaker.add(value as TicketInput);
    });
  }
  warnIfEmpty(tickets + backfills.length, source, 'tickets');
  for (const { line, value } of backfills) atLine(line, () => matchmaker.addBackfill(value as BackfillInput));
  const result: MatchmakeRun = matchmaker.pass(options.now);
  if (backfills.length > 0) result.waitingBackfills = matchmaker.backfills().map((b) => b.id);
  return result;
}

/**
 * The `--json` document: exactly {"matches":[{"region","teams"}],"waiting":[...]},
 * plus "backfills" (requests that gained players: id, match, region, added,
 * players, open, filled) and "waitingBackfills" (ids still open) when the
 * input held backfill requests.
 */
export function matchmakeJson(result: MatchmakeRun): string {
  return JSON.stringify({
    matches: result.matches.map((m) => ({ region: m.region, teams: m.teams })),
    waiting: result.waiting,
    ...(result.waitingBackfills === undefined
      ? {}
      : {
          backfills: result.backfills.map((b) => ({ id: b.id, match: b.match, region: b.region, added: b.added, players: b.players, open: b.open, filled: b.filled })),
          waitingBackfills: result.waitingBackfills,
        }),
  });
}

/** A readable table, one match a row. */
export function matchmakeTable(result: MatchmakeRun): string {
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
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  lines.push('', `${result.matches.length} match(es); waiting (${result.waiting.length}): ${result.waiting.join(' ') || '-'}`);
  if (result.waitingBackfills !== undefined) {
    for (const b of result.backfills) {
      const teams = b.added.map((tickets, t) => `team ${t + 1}: ${tickets.length === 0 ? 'none added' : tickets.map((id) => `+${id}`).join(' ')} (${b.open[t]} open)`).join(', ');
      lines.push(`backfill ${b.id} (match ${b.match}, ${b.region}): ${teams}${b.filled ? ', filled' : ''}`);
    }
    lines.push(`backfills still open (${result.waitingBackfills.length}): ${result.waitingBackfills.join(' ') || '-'}`);
  }
  return `${lines.join('\n')}\n`;
}

export function register(program: Command): void {
  program
    .command('matchmake')
    .description('run one matchmaking pass over a JSON Lines file of tickets and backfill requests (or - for stdin)')
    .argument('<tickets>', 'JSON Lines file of tickets, or - for standard input; a line {"backfill":{...}} is a backfill request')
    .option('--mode <mode>', 'teams, e.g. 6v6, 3v3, 1v1', '6v6')
    .requiredOption('--now <seconds>', "time of the pass, seconds on the tickets' clock", numberOption('now'))
    .option('--widen <steps>', 'loose-filter widening steps in percentiles, comma-separated (default 5,10,20,50,100)')
    .option('--widen-every <seconds>', 'seconds between widening steps (default 30)', numberOption('widen-every'))
    .option('--json', 'print {"matches":[{"region","teams"}],"waiting":[...]} (and "backfills", "waitingBackfills" when the input has backfill requests)')
    .option('--rule-set <file>', 'run a FlexMatch rule set (docs/MATCHMAKING.md) instead of the team-rank queue; tickets carry players[].attributes, pings and roles')
    .option('--why', 'with --rule-set --json: add "why", the rule that held each waiting ticket')
    .addHelpText(
      'after',
      `
Backfill requests fill open slots of matches in progress before new matches form, under the
same skill, region, ping and party rules (docs/MATCHMAKING.md):
  {"backfill":{"id":"b1","match":"m7","region":"eu","at":0,"teams":[["p1","p2"],["p3"]],"teamSize":2,
               "players":{"p1":{"percentile":40},"p2":{"percentile":44},"p3":{"percentile":41}},
               "filter":{"within":10,"strict":false,"maxPing":100}}}`,
    )
    .action(
      action((source: string, options: MatchmakeCommandOptions) => {
        if (options.ruleSet !== undefined) {
          if (options.widen !== undefined || options.widenEvery !== undefined)
            throw new InvalidInputError('applies to the team-rank queue; a rule set widens by its own expansions', {
              field: options.widen !== undefined ? '--widen' : '--widen-every',
            });
          const ruleSetResult = runRuleSetMatchmake(source, { ruleSet: options.ruleSet, now: options.now });
          process.stdout.write(options.json ? `${ruleSetMatchmakeJson(ruleSetResult, options.why === true)}\n` : ruleSetMatchmakeTable(ruleSetResult));
          return;
        }
        const result = runMatchmake(source, options);
        process.stdout.write(options.json ? `${matchmakeJson(result)}\n` : matchmakeTable(result));
      }),
    );
}
