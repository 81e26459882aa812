/**
 * Rules compiled to plain loops over the match's players, for the shapes
 * rule sets use most: distance and comparison rules whose measurements and
 * reference are count, sum, avg, min or max of a number attribute, per team
 * (`avg(teams[*].players.attributes[skill])`), over one team
 * (`count(teams[red].players)`) or over all players
 * (`avg(flatten(teams[*].players.attributes[skill]))`), or a literal.
 *
 * A pass judges the forming match after every candidate, so the general
 * evaluator's lists and per-team wrappers would be built and dropped millions
 * of times; these loops allocate nothing. They give exactly what `holds`
 * gives: the same values summed in the same order, nulls for aggregates of
 * empty teams skipped the same way. Any other shape is left to `holds`.
 */
import type { Expression, MatchView, Value } from './expression.js';
import { compare, type Param } from './evaluate.js';
import type { ComparisonRule, DistanceRule, Rule, RuleSet } from './types.js';

export type CompiledRule = (match: MatchView, param: Param) => boolean;

type Aggregate = 'count' | 'sum' | 'avg' | 'min' | 'max';
const AGGREGATES: ReadonlySet<string> = new Set(['count', 'sum', 'avg', 'min', 'max']);

/** A measurement: one value over some players, or one value per team. */
interface Measure {
  perTeam: boolean;
  /** Teams read (indexes into the match's teams); all when null. */
  teams: number[] | null;
  fn: Aggregate;
  attribute: string | undefined;
}

type Players = MatchView['teams'][number]['players'];

/** The aggregate of the attribute over players, as the general evaluator computes it (null for an empty list, except count and sum). */
function aggregateOf(players: Players, fn: Aggregate, attribute: string | undefined): number | null {
  const n = players.length;
  if (fn === 'count') return n;
  if (n === 0) return fn === 'sum' ? 0 : null;
  const name = attribute!;
  if (fn === 'min' || fn === 'max') {
    let m = players[0].attributes[name] as number;
    for (let k = 1; k < n; k++) m = fn === 'min' ? Math.min(m, players[k].attributes[name] as number) : Math.max(m, players[k].attributes[name] as number);
    return m;
  }
  let s = 0;
  for (let k = 0; k < n; k++) s += players[k].attributes[name] as number;
  return fn === 'sum' ? s : s / n;
}

/** The same over several teams' players taken in order, as if flattened into one list. */
function aggregateOver(match: MatchView, teams: number[] | null, fn: Aggregate, attribute: string | undefined): number | null {
  const count = teams === null ? match.teams.length : teams.length;
  if (count === 1) return aggregateOf(match.teams[teams === null ? 0 : teams[0]].players, fn, attribute);
  let n = 0;
  let s = 0;
  let m = NaN;
  for (let t = 0; t < count; t++) {
    const players = match.teams[teams === null ? t : teams[t]].players;
    if (fn === 'count') {
      n += players.length;
      continue;
    }
    for (let k = 0; k < players.length; k++) {
      const v = players[k].attributes[attribute!] as number;
      if (fn === 'sum' || fn === 'avg') s += v;
      else m = n === 0 ? v : fn === 'min' ? Math.min(m, v) : Math.max(m, v);
      n++;
    }
  }
  if (fn === 'count') return n;
  if (fn === 'sum') return s;
  if (n === 0) return null;
  return fn === 'avg' ? s / n : m;
}

function compileMeasure(e: Expression, ruleSet: RuleSet, teamNames: readonly string[], teamDefs: readonly string[]): Measure | undefined {
  if (e.kind !== 'call' || !AGGREGATES.has(e.fn)) return undefined;
  const fn = e.fn as Aggregate;
  let arg = e.arg;
  let flattened = false;
  if (arg.kind === 'call' && arg.fn === 'flatten') {
    flattened = true;
    arg = arg.arg;
  }
  if (arg.kind !== 'path' || !arg.players) return undefined;
  if (arg.attribute !== undefined) {
    // Only number attributes: every player then has a number (declared defaults are filled in on add).
    const declared = ruleSet.playerAttributes.find((a) => a.name === arg.attribute);
    if (declared?.type !== 'number') return undefined;
  } else if (fn !== 'count') return undefined;
  const attribute = arg.attribute;
  if (arg.team === null) return { perTeam: false, teams: null, fn, attribute };
  if (arg.team === '*') return { perTeam: !flattened, teams: null, fn, attribute };
  const exact = teamNames.indexOf(arg.team);
  if (exact >= 0) return { perTeam: false, teams: [exact], fn, attribute };
  const teams = teamDefs.flatMap((d, k) => (d === arg.team ? [k] : []));
  if (teams.length === 0) return undefined;
  return { perTeam: !flattened, teams, fn, attribute };
}

/** Writes the measurement's non-null values from position n on, as measuredValues gives them; returns the new count. */
function measureInto(m: Measure, match: MatchView, out: number[], n: number): number {
  if (!m.perTeam) {
    const v = aggregateOver(match, m.teams, m.fn, m.attribute);
    if (v !== null) out[n++] = v;
    return n;
  }
  const count = m.teams === null ? match.teams.length : m.teams.length;
  for (let t = 0; t < count; t++) {
    const v = aggregateOf(match.teams[m.teams === null ? t : m.teams[t]].players, m.fn, m.attribute);
    if (v !== null) out[n++] = v;
  }
  return n;
}

/**
 * The compiled check for a rule, or undefined when its shape is not one of
 * these (`holds` judges it then). Team names and definitions are those of the
 * match's teams, in order.
 */
export function compileRule(rule: Rule, ruleSet: RuleSet, teamNames: readonly string[], teamDefs: readonly string[]): CompiledRule | undefined {
  if (rule.type !== 'distance' && rule.type !== 'comparison') return undefined;
  const measures: Measure[] = [];
  for (const e of rule.measurements) {
    const m = compileMeasure(e, ruleSet, teamNames, teamDefs);
    if (!m) return undefined;
    measures.push(m);
  }
  // The reference: absent, a literal, or one value (a per-team reference never reads as one number, so it is left to holds).
  const ref = rule.referenceValue;
  let refMeasure: Measure | undefined;
  if (ref?.kind === 'expression') {
    refMeasure = compileMeasure(ref.expression, ruleSet, teamNames, teamDefs);
    if (!refMeasure || refMeasure.perTeam) return undefined;
  }
  const literal = ref?.kind === 'literal' ? (ref.value as Value) : undefined;
  if (literal !== undefined && typeof literal === 'object') return undefined;
  // The measured values are written into one array kept for the rule, values[0 .. n): shortening an array
  // (values.length = 0) is a call into the runtime, and this runs for every candidate of a pass.
  const values: number[] = [];
  let n = 0;
  const measure = (match: MatchView): void => {
    n = 0;
    for (let k = 0; k < measures.length; k++) n = measureInto(measures[k], match, values, n);
  };
  const reference = (match: MatchView): Value => (refMeasure ? aggregateOver(match, refMeasure.teams, refMeasure.fn, refMeasure.attribute) : (literal as Value));

  if (rule.type === 'distance') {
    const r: DistanceRule = rule;
    return (match, param) => {
      measure(match);
      const maxD = param(r, 'maxDistance', r.maxDistance);
      const minD = param(r, 'minDistance', r.minDistance);
      if (r.referenceValue === undefined) {
        if (n === 0) return true;
        let lo = values[0];
        let hi = values[0];
        for (let k = 1; k < n; k++) {
          lo = Math.min(lo, values[k]);
          hi = Math.max(hi, values[k]);
        }
        const d = hi - lo;
        return (maxD === undefined || d <= maxD) && (minD === undefined || d >= minD);
      }
      const refValue = reference(match);
      if (typeof refValue !== 'number') return true;
      for (let k = 0; k < n; k++) {
        const d = Math.abs(values[k] - refValue);
        if (!((maxD === undefined || d <= maxD) && (minD === undefined || d >= minD))) return false;
      }
      return true;
    };
  }
  const r: ComparisonRule = rule;
  return (match) => {
    measure(match);
    if (r.referenceValue === undefined) {
      if (r.operation === '=') {
        for (let k = 1; k < n; k++) if (values[k] !== values[0]) return false;
        return true;
      }
      return new Set(values.slice(0, n)).size === n;
    }
    const refValue = reference(match);
    if (refValue === null || refValue === undefined) return true;
    for (let k = 0; k < n; k++) if (!compare(values[k], r.operation, refValue)) return false;
    return true;
  };
}
