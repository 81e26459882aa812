/**
 * Judging comparison, distance, collection and compound rules on a match (or
 * a forming one). Batch distance and latency are judged by the pass from
 * running figures, and the two sort rules only order candidates.
 * `param(rule, property, base)` gives a rule property under the expansions in
 * force.
 */
import { evaluate, type MatchView, measuredValues, type Value } from './expression.js';
import type { CollectionRule, ComparisonRule, CompoundStatement, DistanceRule, Reference, Rule } from './types.js';

export type Param = (rule: Rule, property: string, base: number | undefined) => number | undefined;

function referenceOf(ref: Reference | undefined, match: MatchView): Value | undefined {
  if (ref === undefined) return undefined;
  return ref.kind === 'literal' ? (ref.value as Value) : evaluate(ref.expression, match);
}
/** A reference used as one value: a one-element list is its element. */
function scalar(v: Value | undefined): Value | undefined {
  if (Array.isArray(v)) return v.length === 1 ? v[0] : v.length === 0 ? null : v;
  return v;
}

/** A comparison rule's operation on two values (numbers ordered, anything compared for equality). */
export function compare(a: Value, op: ComparisonRule['operation'], b: Value): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return (a as number) < (b as number);
    case '<=':
      return (a as number) <= (b as number);
    case '>':
      return (a as number) > (b as number);
    case '>=':
      return (a as number) >= (b as number);
  }
}

function comparison(rule: ComparisonRule, match: MatchView): boolean {
  const values = rule.measurements.flatMap((m) => measuredValues(evaluate(m, match)));
  if (rule.referenceValue === undefined) {
    // No reference: all measured values equal (=) or all different (!=).
    if (rule.operation === '=') return values.every((v) => v === values[0]);
    return new Set(values).size === values.length;
  }
  const ref = scalar(referenceOf(rule.referenceValue, match));
  if (ref === null || ref === undefined) return true;
  return values.every((v) => compare(v, rule.operation, ref));
}

function distance(rule: DistanceRule, match: MatchView, param: Param): boolean {
  const values = rule.measurements.flatMap((m) => measuredValues(evaluate(m, match))).filter((v): v is number => typeof v === 'number');
  const maxD = param(rule, 'maxDistance', rule.maxDistance);
  const minD = param(rule, 'minDistance', rule.minDistance);
  const within = (d: number): boolean => (maxD === undefined || d <= maxD) && (minD === undefined || d >= minD);
  const ref = scalar(referenceOf(rule.referenceValue, match));
  if (rule.referenceValue === undefined) {
    // No reference: the spread of the measurements.
    if (values.length === 0) return true;
    return within(Math.max(...values) - Math.min(...values));
  }
  if (typeof ref !== 'number') return true;
  return values.every((v) => within(Math.abs(v - ref)));
}

function asStrings(v: Value): Value[] {
  return Array.isArray(v) ? v : v === null ? [] : [v];
}

function collection(rule: CollectionRule, match: MatchView, param: Param): boolean {
  const minC = param(rule, 'minCount', rule.minCount);
  const maxC = param(rule, 'maxCount', rule.maxCount);
  const within = (n: number): boolean => (minC === undefined || n >= minC) && (maxC === undefined || n <= maxC);
  // Each measurement yields a collection: a list of the players' lists (or of single values).
  const lists = rule.measurements.flatMap((m) => measuredValues(evaluate(m, match)).map(asStrings));
  switch (rule.operation) {
    case 'intersection': {
      if (lists.length === 0) return true;
      let common = new Set(lists[0]);
      for (const list of lists.slice(1)) {
        const next = new Set(list);
        common = new Set([...common].filter((x) => next.has(x)));
      }
      return within(common.size);
    }
    case 'contains': {
      const ref = scalar(referenceOf(rule.referenceValue, match));
      let n = 0;
      for (const list of lists) for (const x of list) if (x === ref) n++;
      return within(n);
    }
    case 'reference_intersection_count': {
      const ref = new Set(asStrings(referenceOf(rule.referenceValue, match) ?? null).flatMap((x) => (Array.isArray(x) ? x : [x])));
      return lists.every((list) => within(list.filter((x) => ref.has(x)).length));
    }
  }
}

export function holds(rule: Rule, match: MatchView, param: Param, byName: ReadonlyMap<string, Rule>): boolean {
  switch (rule.type) {
    case 'comparison':
      return comparison(rule, match);
    case 'distance':
      return distance(rule, match, param);
    case 'collection':
      return collection(rule, match, param);
    case 'compound': {
      const run = (s: CompoundStatement): boolean => {
        if ('rule' in s) return holds(byName.get(s.rule)!, match, param, byName);
        const results = s.args.map(run);
        if (s.op === 'and') return results.every(Boolean);
        if (s.op === 'or') return results.some(Boolean);
        if (s.op === 'not') return !results[0];
        return results.filter(Boolean).length === 1;
      };
      return run(rule.statement);
    }
    default:
      return true;
  }
}
