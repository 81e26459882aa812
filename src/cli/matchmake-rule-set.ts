/**
 * `ladder matchmake --rule-set FILE`: one pass of a FlexMatch rule set (with
 * Ladder's role slots) over a JSON Lines file of tickets, one a line:
 *   {"id":"t1","at":0,"players":[{"id":"p1","attributes":{"skill":23},"pings":{"us-east-1":60},"roles":["tank"]}]}
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

export function runRuleSetMatchmake(source: string, options: { ruleSet: string; now: number }): RuleSetPassResult {
  if (typeof options.now !== 'number' || !Number.isFinite(options.now)) throw new InvalidInputError('is required: the pass time in seconds', { field: '--now' });
  const matchmaker = new RuleSetMatchmaker(readRuleSet(options.ruleSet));
  let tickets = 0;
  for (const { line, value } of readJsonLines(source)) {
    tickets++;
    atLine(line, () => matchmaker.add(value));
  }
  warnIfEmpty(tickets, source, 'tickets');
  return matchmaker.pass(options.now);
}

/** {"matches":[{"region","teams","teamNames","players"(,"roles")}],"waiting":[…]}, plus "why" (waiting ticket → rule) when asked. */
export function ruleSetMatchmakeJson(result: RuleSetPassResult, why = false): string {
  return JSON.stringify({
    matches: result.matches.map((m) => ({ region: m.region, teams: m.teams, teamNames: m.teamNames, players: m.players, ...(m.roles ? { roles: m.roles } : {}) })),
    waiting: result.waiting,
    ...(why ? { why: result.why } : {}),
  });
}

export function ruleSetMatchmakeTable(result: RuleSetPassResult): string {
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
  return `${lines.join('\n')}\n`;
}
