/**
 * `ladder matchmake --rule-set FILE`: one pass of a FlexMatch rule set (with
 * Ladder's role slots) over a JSON Lines file of tickets, one a line:
 *   {"id":"t1","at":0,"players":[{"id":"p1","attributes":{"skill":23},"pings":{"us-east-1":60},"roles":["tank"]}]}
 * or one backfill request a line (a match in progress asking for players
 * under the rule set):
 *   {"backfill":{"id":"b1","at":0,"teams":[["p7"],[]],"players":{"p7":{"attributes":{"skill":20}}}}}
 * The rule set and every line are checked before anything is printed; a
 * mistake exits 2 naming the JSON path of the rule set, or the line and field
 * of the ticket.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { parseRuleSet, type RuleSet, RuleSetMatchmaker, type RuleSetPassResult } from 'ladder-core/matchmaking';
import { atLine, readInputText, readJsonLines } from '../io/jsonl.js';
import { warnIfEmpty } from './stderr.js';

export function readRuleSet(file: string): RuleSet {
  const text = readInputText(file);
  try {
    return parseRuleSet(text);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(`${error.detail} (rule set ${file})`, { field: error.field });
    throw error;
  }
}

/** A pass of the command: the pass's result and, when the input held backfill requests, the ids of those still open. */
export interface RuleSetMatchmakeRun extends RuleSetPassResult {
  waitingBackfills?: string[];
}

export function runRuleSetMatchmake(source: string, options: { ruleSet: string; now: number }): RuleSetMatchmakeRun {
  if (typeof options.now !== 'number' || !Number.isFinite(options.now)) throw new InvalidInputError('is required: the pass time in seconds', { field: '--now' });
  const matchmaker = new RuleSetMatchmaker(readRuleSet(options.ruleSet));
  let tickets = 0;
  // Backfills are opened after every ticket is queued, so a match player who also waits in a ticket is caught whatever the line order.
  const backfills: Array<{ line: number; value: unknown }> = [];
  for (const { line, value } of readJsonLines(source)) {
    if (typeof value === 'object' && value !== null && 'backfill' in value) {
      backfills.push({ line, value: (value as { backfill: unknown }).backfill });
      continue;
    }
    tickets++;
    atLine(line, () => matchmaker.add(value));
  }
  warnIfEmpty(tickets + backfills.length, source, 'tickets');
  for (const { line, value } of backfills) atLine(line, () => matchmaker.addBackfill(value));
  const result: RuleSetMatchmakeRun = matchmaker.pass(options.now);
  if (backfills.length > 0) result.waitingBackfills = matchmaker.backfills().map((b) => b.id);
  return result;
}

/**
 * {"matches":[{"region","teams","teamNames","players"(,"roles")}],"waiting":[…]}, plus "why" (waiting ticket → rule) when asked,
 * and "backfills" (requests that gained players) and "waitingBackfills" (ids still open) when the input held backfill requests.
 */
export function ruleSetMatchmakeJson(result: RuleSetMatchmakeRun, why = false): string {
  return JSON.stringify({
    matches: result.matches.map((m) => ({ region: m.region, teams: m.teams, teamNames: m.teamNames, players: m.players, ...(m.roles ? { roles: m.roles } : {}) })),
    waiting: result.waiting,
    ...(why ? { why: result.why } : {}),
    ...(result.waitingBackfills === undefined ? {} : { backfills: result.backfills, waitingBackfills: result.waitingBackfills }),
  });
}

export function ruleSetMatchmakeTable(result: RuleSetMatchmakeRun): string {
  const lines: string[] = [];
  result.matches.forEach((m, index) => {
    lines.push(`match ${index + 1}${m.region === null ? '' : ` (${m.region})`}`);
    m.teamNames.forEach((name, t) => {
      const players = m.players[t].map((p) => (m.roles?.[p] ? `${p}:${m.roles[p]}` : p)).join(' ');
      lines.push(`  ${name}: ${players || '-'}`);
    });
  });
  if (lines.length > 0) lines.push('');
  lines.push(`${result.matches.length} match(es); waiting (${result.waiting.length}):${result.waiting.length === 0 ? ' -' : ''}`);
  for (const id of result.waiting) lines.push(`  ${id}  held by ${result.why[id]}`);
  if (result.waitingBackfills !== undefined) {
    for (const b of result.backfills) {
      const teams = b.added
        .map((tickets, t) => `${b.teamNames[t]}: ${tickets.length === 0 ? 'none added' : tickets.map((id) => `+${id}`).join(' ')} (${b.open[t]} open)`)
        .join(', ');
      lines.push(`backfill ${b.id} (match ${b.match}${b.region === null ? '' : `, ${b.region}`}): ${teams}${b.filled ? ', filled' : ''}`);
    }
    lines.push(`backfills still open (${result.waitingBackfills.length}): ${result.waitingBackfills.join(' ') || '-'}`);
  }
  return `${lines.join('\n')}\n`;
}
