/**
 * FlexMatch property expressions: `avg(teams[*].players.attributes[skill])`,
 * `flatten(teams[*].players[playerId])`, `count(teams[red].players)`.
 *
 * A value taken per team (`teams[*]`, or a definition with quantity > 1)
 * stays a PerTeam list so that an aggregate applies inside each team:
 * `avg(teams[*]…)` is one average per team, `avg(flatten(teams[*]…))` one
 * average over all players. Aggregates of an empty list are null; rules skip
 * nulls, so a team still empty in a forming match does not fail a rule.
 */
import { InvalidInputError } from '../../core/errors.js';

export type Path = { kind: 'path'; team: string | null; players: boolean; attribute?: string; playerId?: boolean };
export type Expression = Path | { kind: 'call'; fn: FunctionName; arg: Expression } | { kind: 'number'; value: number } | { kind: 'string'; value: string };

export const FUNCTIONS = ['avg', 'min', 'max', 'sum', 'count', 'median', 'stddev', 'flatten', 'set_intersection'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

/** Values per team, kept apart from a plain list so aggregates map over teams. */
export class PerTeam {
  constructor(readonly items: Value[]) {}
}
export type Value = number | string | null | Value[] | PerTeam | Record<string, number>;

/** Parses one expression; `field` is its JSON path for messages. */
export function parseExpression(source: string, field: string): Expression {
  let i = 0;
  const text = source.trim();
  const fail = (message: string): never => {
    throw new InvalidInputError(message, { field });
  };
  const bracket = (): string => {
    if (text[i] !== '[') fail(`expected '[' at position ${i + 1} of ${JSON.stringify(source)}`);
    const end = text.indexOf(']', i);
    if (end < 0) fail(`missing ']' in ${JSON.stringify(source)}`);
    const inner = text.slice(i + 1, end).trim();
    if (inner === '') fail(`empty [] in ${JSON.stringify(source)}`);
    i = end + 1;
    return inner;
  };
  const expr = (): Expression => {
    while (text[i] === ' ') i++;
    const rest = text.slice(i);
    const num = /^-?\d+(\.\d+)?/.exec(rest);
    if (num) {
      i += num[0].length;
      return { kind: 'number', value: Number(num[0]) };
    }
    if (rest[0] === "'" || rest[0] === '"') {
      const end = text.indexOf(rest[0], i + 1);
      if (end < 0) fail(`unterminated string in ${JSON.stringify(source)}`);
      const value = text.slice(i + 1, end);
      i = end + 1;
      return { kind: 'string', value };
    }
    const call = /^([A-Za-z_]+)\s*\(/.exec(rest);
    if (call) {
      const fn = call[1];
      if (!(FUNCTIONS as readonly string[]).includes(fn)) fail(`unknown function '${fn}'; expected one of ${FUNCTIONS.join(', ')}`);
      i += call[0].length;
      const arg = expr();
      while (text[i] === ' ') i++;
      if (text[i] === ',') fail(`function '${fn}' takes one argument`);
      if (text[i] !== ')') fail(`expected ')' at position ${i + 1} of ${JSON.stringify(source)}`);
      i++;
      return { kind: 'call', fn: fn as FunctionName, arg };
    }
    return path();
  };
  const path = (): Path => {
    const out: Path = { kind: 'path', team: null, players: false };
    let first = true;
    for (;;) {
      const name = /^[A-Za-z]+/.exec(text.slice(i))?.[0];
      if (name === undefined) return fail(`expected teams, players or attributes at position ${i + 1} of ${JSON.stringify(source)}`);
      i += name.length;
      if (name === 'teams' && first) out.team = bracket();
      else if (name === 'players' && !out.players && out.attribute === undefined) {
        out.players = true;
        if (text[i] === '[') {
          const inner = bracket();
          if (inner !== 'playerId') fail(`expected players[playerId], got players[${inner}]`);
          out.playerId = true;
        }
      } else if (name === 'attributes' && out.attribute === undefined && !out.playerId) out.attribute = bracket();
      else if (name === 'playerId' && out.players && out.attribute === undefined) out.playerId = true;
      else fail(`unexpected '${name}' in ${JSON.stringify(source)}`);
      first = false;
      if (text[i] !== '.') break;
      i++;
    }
    if (out.team !== null && !out.players && (out.attribute !== undefined || out.playerId)) fail(`expected teams[…].players before attributes in ${JSON.stringify(source)}`);
    return out;
  };
  const result = expr();
  while (text[i] === ' ') i++;
  if (i < text.length) fail(`unexpected ${JSON.stringify(text.slice(i))} in ${JSON.stringify(source)}`);
  return result;
}

/** Calls `visit` on every path of an expression (for validation). */
export function pathsOf(e: Expression, visit: (p: Path) => void): void {
  if (e.kind === 'path') visit(e);
  else if (e.kind === 'call') pathsOf(e.arg, visit);
}
export function usesFunction(e: Expression, fn: FunctionName): boolean {
  return e.kind === 'call' && (e.fn === fn || usesFunction(e.arg, fn));
}

/** What an expression reads: the match's teams, their players, their attributes. */
export interface MatchView {
  teams: ReadonlyArray<{ name: string; definition: string; players: ReadonlyArray<{ id: string; attributes: Record<string, unknown> }> }>;
}

export function evaluate(e: Expression, match: MatchView): Value {
  switch (e.kind) {
    case 'number':
    case 'string':
      return e.value;
    case 'call':
      return apply(e.fn, evaluate(e.arg, match));
    case 'path': {
      const project = (players: MatchView['teams'][number]['players']): Value[] =>
        e.attribute !== undefined ? players.map((p) => (p.attributes[e.attribute!] ?? null) as Value) : e.playerId ? players.map((p) => p.id) : players.map((p) => p.id);
      if (e.team === null) return project(match.teams.flatMap((t) => t.players));
      if (e.team === '*') return new PerTeam(match.teams.map((t) => project(t.players)));
      const exact = match.teams.find((t) => t.name === e.team);
      if (exact) return project(exact.players);
      return new PerTeam(match.teams.filter((t) => t.definition === e.team).map((t) => project(t.players)));
    }
  }
}

const numbersOf = (list: Value[]): number[] => list.filter((v): v is number => typeof v === 'number');
const AGGREGATES: Record<string, (list: Value[]) => Value> = {
  count: (l) => l.length,
  sum: (l) => numbersOf(l).reduce((a, b) => a + b, 0),
  avg: (l) => {
    const n = numbersOf(l);
    return n.length === 0 ? null : n.reduce((a, b) => a + b, 0) / n.length;
  },
  min: (l) => {
    const n = numbersOf(l);
    return n.length === 0 ? null : Math.min(...n);
  },
  max: (l) => {
    const n = numbersOf(l);
    return n.length === 0 ? null : Math.max(...n);
  },
  median: (l) => {
    const n = numbersOf(l).sort((a, b) => a - b);
    if (n.length === 0) return null;
    const h = n.length >> 1;
    return n.length % 2 ? n[h] : (n[h - 1] + n[h]) / 2;
  },
  stddev: (l) => {
    const n = numbersOf(l);
    if (n.length === 0) return null;
    const mean = n.reduce((a, b) => a + b, 0) / n.length;
    return Math.sqrt(n.reduce((a, b) => a + (b - mean) ** 2, 0) / n.length);
  },
};

function asList(v: Value): Value[] {
  if (v instanceof PerTeam) return v.items;
  if (Array.isArray(v)) return v;
  return v === null ? [] : [v];
}

function intersect(lists: Value[]): Value[] {
  if (lists.length === 0) return [];
  let common = new Set(asList(lists[0]));
  for (let k = 1; k < lists.length; k++) {
    const next = new Set(asList(lists[k]));
    common = new Set([...common].filter((x) => next.has(x)));
  }
  return [...common];
}

function apply(fn: FunctionName, v: Value): Value {
  if (fn === 'flatten') {
    const out: Value[] = [];
    for (const item of asList(v)) {
      if (Array.isArray(item)) out.push(...item);
      else if (item instanceof PerTeam) out.push(...item.items);
      else out.push(item);
    }
    return out;
  }
  if (fn === 'set_intersection') {
    if (v instanceof PerTeam && v.items.every((item) => Array.isArray(item) && item.every((x) => Array.isArray(x))))
      return new PerTeam(v.items.map((item) => intersect(item as Value[])));
    return intersect(asList(v));
  }
  const aggregate = AGGREGATES[fn];
  if (v instanceof PerTeam) {
    if (v.items.every((item) => Array.isArray(item))) return new PerTeam(v.items.map((item) => aggregate(item as Value[])));
    return aggregate(v.items);
  }
  return aggregate(asList(v));
}

/** The values a measurement yields: a per-team or plain list gives its elements, a single value itself, null nothing. */
export function measuredValues(v: Value): Value[] {
  return asList(v).filter((x) => x !== null);
}
