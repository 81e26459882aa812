/**
 * The compiled rule checks against the general evaluator: for every shape
 * compileRule takes, on random forming matches (empty teams included), both
 * give the same verdict; shapes it does not take are left to holds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRule } from './compile.js';
import { holds, type Param } from './evaluate.js';
import type { MatchView } from './expression.js';
import { parseRuleSet } from './parse.js';
import type { Rule } from './types.js';

const MEASURES = [
  'avg(teams[*].players.attributes[skill])',
  'min(teams[*].players.attributes[skill])',
  'max(teams[red].players.attributes[skill])',
  'sum(teams[side].players.attributes[level])',
  'count(teams[side].players)',
  'count(teams[red].players)',
  'avg(flatten(teams[*].players.attributes[skill]))',
  'max(flatten(teams[side].players.attributes[level]))',
  'sum(teams[side_2].players.attributes[skill])',
  'min(flatten(teams[*].players.attributes[level]))',
];
const REFERENCES: unknown[] = [
  undefined,
  25.5,
  'avg(flatten(teams[*].players.attributes[skill]))',
  'count(teams[red].players)',
  'min(teams[side_1].players.attributes[level])',
  'avg(teams[*].players.attributes[skill])',
];

const ruleSetWith = (rule: Record<string, unknown>) =>
  parseRuleSet({
    name: 'compiled',
    ruleLanguageVersion: '1.0',
    playerAttributes: [
      { name: 'skill', type: 'number' },
      { name: 'level', type: 'number' },
    ],
    teams: [
      { name: 'red', minPlayers: 0, maxPlayers: 4 },
      { name: 'side', minPlayers: 0, maxPlayers: 4, quantity: 2 },
    ],
    rules: [rule],
  });

const view = (teams: Array<Array<{ skill: number; level: number }>>): MatchView => ({
  teams: ['red', 'side_1', 'side_2'].map((name, k) => ({
    name,
    definition: k === 0 ? 'red' : 'side',
    players: teams[k].map((attributes, j) => ({ id: `${name}-${j}`, attributes })),
  })),
});

const number = fc.oneof(
  fc.integer({ min: 0, max: 100 }),
  fc.double({ min: 0, max: 100, noNaN: true }).map((x) => Math.round(x * 1000) / 1000),
);
const team = fc.array(fc.record({ skill: number, level: number }), { maxLength: 4 });

describe('compiled rule checks', () => {
  it('give the verdict holds gives, for distance and comparison rules over every compiled shape', () => {
    const rule = fc.record({
      type: fc.constantFrom('distance', 'comparison'),
      measurements: fc.uniqueArray(fc.constantFrom(...MEASURES), { minLength: 1, maxLength: 3 }),
      reference: fc.constantFrom(...REFERENCES),
      operation: fc.constantFrom('=', '!=', '<', '<=', '>', '>='),
      maxDistance: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
      minDistance: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
    });
    let compiled = 0;
    fc.assert(
      fc.property(rule, fc.tuple(team, team, team), fc.integer({ min: 0, max: 30 }), (r, teams, widen) => {
        const input: Record<string, unknown> = { name: 'R', type: r.type, measurements: r.measurements };
        if (r.reference !== undefined) input.referenceValue = r.reference;
        // Without a reference only = and != are allowed (they compare the measurements with each other).
        if (r.type === 'comparison') input.operation = r.reference === undefined ? (r.operation === '=' ? '=' : '!=') : r.operation;
        else {
          input.maxDistance = r.maxDistance ?? 40;
          if (r.minDistance !== undefined) input.minDistance = r.minDistance;
        }
        const ruleSet = ruleSetWith(input);
        const parsed = ruleSet.rules[0];
        const check = compileRule(parsed, ruleSet, ['red', 'side_1', 'side_2'], ['red', 'side', 'side']);
        // A per-team reference is the one shape in these lists left to holds.
        expect(check === undefined).toBe(r.reference === 'avg(teams[*].players.attributes[skill])');
        if (!check) return;
        compiled++;
        const param: Param = (_rule, property, base) => (property === 'maxDistance' && base !== undefined ? base + widen : base);
        const match = view(teams);
        expect(check(match, param)).toBe(holds(parsed, match, param, new Map<string, Rule>([[parsed.name, parsed]])));
      }),
      { numRuns: 400 },
    );
    expect(compiled).toBeGreaterThan(200);
  });

  it('leave other shapes to holds', () => {
    const ruleSet = ruleSetWith({ name: 'M', type: 'distance', measurements: ['median(teams[*].players.attributes[skill])'], maxDistance: 5 });
    expect(compileRule(ruleSet.rules[0], ruleSet, ['red', 'side_1', 'side_2'], ['red', 'side', 'side'])).toBeUndefined();
  });
});
