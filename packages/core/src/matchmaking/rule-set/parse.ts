/**
 * parseRuleSet: reads and checks a FlexMatch rule set (ruleLanguageVersion
 * "1.0"), the way FlexMatch reads it, plus Ladder's role slots. Every
 * mistake is an InvalidInputError whose field is the JSON path, e.g.
 * `rules[2].measurements[0]` with "unknown function 'mean'".
 */
import { InvalidInputError } from '../../core/errors.js';
import { type Expression, parseExpression, pathsOf, usesFunction } from './expression.js';
import { parseTolerantJson } from './tolerant-json.js';
import type { Algorithm, AttributeType, AttributeValue, CompoundStatement, Expansion, PlayerAttributeDef, Reference, Rule, RuleSet, TeamDef } from './types.js';

/** FlexMatch's limit for one match; above 40 in total is a large match. */
export const MAX_PLAYERS = 200;
export const LARGE_MATCH_ABOVE = 40;

type Obj = Record<string, unknown>;
const fail = (field: string, message: string): never => {
  throw new InvalidInputError(message, { field });
};
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function obj(v: unknown, field: string): Obj {
  if (!isObj(v)) fail(field, 'must be an object');
  return v as Obj;
}
function str(o: Obj, key: string, field: string, required = true): string | undefined {
  const v = o[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v === '') return fail(`${field}.${key}`, v === undefined ? 'is required' : 'must be a non-empty string');
  return v;
}
/** FlexMatch accepts numbers written as strings ("maxDistance":"500" in its own rule-type page). */
function num(o: Obj, key: string, field: string, required = false): number | undefined {
  const v = o[key];
  if (v === undefined) return required ? fail(`${field}.${key}`, 'is required') : undefined;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) return fail(`${field}.${key}`, `must be a number, got ${JSON.stringify(v)}`);
  return n;
}
function oneOf<T extends string>(o: Obj, key: string, field: string, choices: readonly T[], fallback?: T): T {
  const v = o[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string' || !(choices as readonly string[]).includes(v)) return fail(`${field}.${key}`, `must be one of ${choices.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}
function known(o: Obj, field: string, keys: readonly string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) fail(`${field}.${k}`, `unknown property; expected one of ${keys.join(', ')}`);
}

const ATTRIBUTE_TYPES: readonly AttributeType[] = ['string', 'number', 'string_list', 'string_number_map'];

/** Checks a value against an attribute type; returns a message or undefined. */
export function attributeTypeError(type: AttributeType, v: unknown): string | undefined {
  switch (type) {
    case 'string':
      return typeof v === 'string' ? undefined : `must be a string, got ${JSON.stringify(v)}`;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? undefined : `must be a number, got ${JSON.stringify(v)}`;
    case 'string_list':
      return Array.isArray(v) && v.every((x) => typeof x === 'string') ? undefined : `must be a list of strings, got ${JSON.stringify(v)}`;
    case 'string_number_map':
      return isObj(v) && Object.values(v).every((x) => typeof x === 'number' && Number.isFinite(x)) ? undefined : `must be an object of numbers, got ${JSON.stringify(v)}`;
  }
}

/** Parses a rule set from text (comments and trailing commas allowed) or from an already-parsed object. */
export function parseRuleSet(input: unknown): RuleSet {
  const root = obj(typeof input === 'string' ? parseTolerantJson(input) : input, 'rule set');
  known(root, 'rule set', ['name', 'ruleLanguageVersion', 'playerAttributes', 'algorithm', 'teams', 'rules', 'expansions']);
  if (root.ruleLanguageVersion !== '1.0') fail('ruleLanguageVersion', `must be "1.0", got ${JSON.stringify(root.ruleLanguageVersion)}`);
  if (root.name !== undefined && typeof root.name !== 'string') fail('name', 'must be a string');

  const playerAttributes: PlayerAttributeDef[] = [];
  const attrs = root.playerAttributes ?? [];
  if (!Array.isArray(attrs)) fail('playerAttributes', 'must be a list');
  (attrs as unknown[]).forEach((a, k) => {
    const field = `playerAttributes[${k}]`;
    const o = obj(a, field);
    known(o, field, ['name', 'type', 'default']);
    const name = str(o, 'name', field)!;
    if (playerAttributes.some((p) => p.name === name)) fail(`${field}.name`, `duplicate attribute ${JSON.stringify(name)}`);
    const type = oneOf(o, 'type', field, ATTRIBUTE_TYPES);
    const def: PlayerAttributeDef = { name, type };
    if (o.default !== undefined) {
      const problem = attributeTypeError(type, o.default);
      if (problem) fail(`${field}.default`, problem);
      def.default = o.default as AttributeValue;
    }
    playerAttributes.push(def);
  });
  const attribute = (name: string, field: string, types?: readonly AttributeType[]): PlayerAttributeDef => {
    const def = playerAttributes.find((p) => p.name === name);
    if (!def) return fail(field, `unknown attribute ${JSON.stringify(name)}; declare it in playerAttributes`);
    if (types && !types.includes(def.type)) fail(field, `attribute ${JSON.stringify(name)} is ${def.type}; expected ${types.join(' or ')}`);
    return def;
  };

  // Teams.
  if (!Array.isArray(root.teams) || root.teams.length === 0) fail('teams', 'must be a non-empty list');
  const teams: TeamDef[] = [];
  (root.teams as unknown[]).forEach((t, k) => {
    const field = `teams[${k}]`;
    const o = obj(t, field);
    known(o, field, ['name', 'minPlayers', 'maxPlayers', 'quantity', 'roles']);
    const name = str(o, 'name', field)!;
    if (teams.some((x) => x.name === name)) fail(`${field}.name`, `duplicate team ${JSON.stringify(name)}`);
    const minPlayers = num(o, 'minPlayers', field, true)!;
    const maxPlayers = num(o, 'maxPlayers', field, true)!;
    const quantity = num(o, 'quantity', field) ?? 1;
    if (!Number.isInteger(minPlayers) || minPlayers < 0) fail(`${field}.minPlayers`, 'must be a whole number ≥ 0');
    if (!Number.isInteger(maxPlayers) || maxPlayers < 1) fail(`${field}.maxPlayers`, 'must be a whole number ≥ 1');
    if (minPlayers > maxPlayers) fail(`${field}.minPlayers`, `must not exceed maxPlayers (${maxPlayers})`);
    if (!Number.isInteger(quantity) || quantity < 1) fail(`${field}.quantity`, 'must be a whole number ≥ 1');
    const team: TeamDef = { name, minPlayers, maxPlayers, quantity };
    if (o.roles !== undefined) {
      const roles = obj(o.roles, `${field}.roles`);
      let slots = 0;
      for (const [role, count] of Object.entries(roles)) {
        if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) fail(`${field}.roles.${role}`, 'must be a whole number of slots ≥ 0');
        slots += count as number;
      }
      if (slots < minPlayers) fail(`${field}.roles`, `holds ${slots} slots, fewer than minPlayers (${minPlayers})`);
      team.roles = roles as Record<string, number>;
    }
    teams.push(team);
  });
  const total = teams.reduce((sum, t) => sum + t.maxPlayers * t.quantity, 0);
  if (total > MAX_PLAYERS) fail('teams', `allow ${total} players in a match; FlexMatch's limit is ${MAX_PLAYERS}`);
  const teamNames = new Set<string>();
  for (const t of teams) {
    teamNames.add(t.name);
    if (t.quantity > 1) for (let q = 1; q <= t.quantity; q++) teamNames.add(`${t.name}_${q}`);
  }

  const expression = (source: unknown, field: string): Expression => {
    if (typeof source !== 'string') return fail(field, 'must be a property expression string');
    const e = parseExpression(source, field);
    pathsOf(e, (p) => {
      if (p.team !== null && p.team !== '*' && !teamNames.has(p.team)) fail(field, `unknown team ${JSON.stringify(p.team)} in ${JSON.stringify(source)}`);
      if (p.attribute !== undefined) attribute(p.attribute, field);
    });
    return e;
  };
  const measurements = (o: Obj, field: string): Expression[] => {
    // AWS's block-list example gives one expression as a plain string.
    const m = typeof o.measurements === 'string' ? [o.measurements] : o.measurements;
    if (!Array.isArray(m) || m.length === 0) return fail(`${field}.measurements`, 'must be a non-empty list of property expressions');
    return m.map((source, k) => expression(source, `${field}.measurements${typeof o.measurements === 'string' ? '' : `[${k}]`}`));
  };
  const reference = (o: Obj, field: string): Reference | undefined => {
    const v = o.referenceValue;
    if (v === undefined) return undefined;
    if (typeof v === 'number' || Array.isArray(v)) return { kind: 'literal', value: v as AttributeValue };
    if (typeof v === 'string') {
      // A string is an expression when it reads as one; otherwise a literal ("medic").
      if (/[[(]/.test(v) || v === 'players') return { kind: 'expression', expression: expression(v, `${field}.referenceValue`), source: v };
      return { kind: 'literal', value: v };
    }
    return fail(`${field}.referenceValue`, 'must be a number, a string, a list or a property expression');
  };

  // Rules.
  const rulesIn = root.rules ?? [];
  if (!Array.isArray(rulesIn)) fail('rules', 'must be a list');
  const rules: Rule[] = [];
  const RULE_TYPES = ['batchDistance', 'comparison', 'collection', 'distance', 'latency', 'absoluteSort', 'distanceSort', 'compound'] as const;
  const AGG = ['min', 'max', 'avg'] as const;
  (rulesIn as unknown[]).forEach((r, index) => {
    const field = `rules[${index}]`;
    const o = obj(r, field);
    const name = str(o, 'name', field)!;
    if (rules.some((x) => x.name === name)) fail(`${field}.name`, `duplicate rule ${JSON.stringify(name)}`);
    const description = typeof o.description === 'string' ? o.description : undefined;
    const type = oneOf(o, 'type', field, RULE_TYPES);
    const base = { name, description, index };
    const allowed = (...keys: string[]): void => known(o, field, ['name', 'description', 'type', ...keys]);
    switch (type) {
      case 'batchDistance': {
        allowed('batchAttribute', 'maxDistance', 'partyAggregation');
        const batchAttribute = str(o, 'batchAttribute', field)!;
        const def = attribute(batchAttribute, `${field}.batchAttribute`, ['number', 'string']);
        const maxDistance = num(o, 'maxDistance', field);
        if (def.type === 'number' && maxDistance === undefined) fail(`${field}.maxDistance`, `is required for the number attribute ${JSON.stringify(batchAttribute)}`);
        rules.push({ ...base, type, batchAttribute, maxDistance, partyAggregation: oneOf(o, 'partyAggregation', field, AGG, 'avg') });
        break;
      }
      case 'comparison': {
        allowed('measurements', 'referenceValue', 'operation', 'partyAggregation');
        const operation = oneOf(o, 'operation', field, ['=', '!=', '<', '<=', '>', '>='] as const);
        const referenceValue = reference(o, field);
        if (referenceValue === undefined && operation !== '=' && operation !== '!=')
          fail(`${field}.referenceValue`, `is required for operation ${JSON.stringify(operation)}; without it only = and != compare the measurements with each other`);
        rules.push({ ...base, type, measurements: measurements(o, field), referenceValue, operation, partyAggregation: oneOf(o, 'partyAggregation', field, AGG, 'avg') });
        break;
      }
      case 'distance': {
        allowed('measurements', 'referenceValue', 'minDistance', 'maxDistance', 'partyAggregation');
        const minDistance = num(o, 'minDistance', field);
        const maxDistance = num(o, 'maxDistance', field);
        if (minDistance === undefined && maxDistance === undefined) fail(`${field}.maxDistance`, 'a distance rule needs maxDistance or minDistance');
        rules.push({
          ...base,
          type,
          measurements: measurements(o, field),
          referenceValue: reference(o, field),
          minDistance,
          maxDistance,
          partyAggregation: oneOf(o, 'partyAggregation', field, AGG, 'avg'),
        });
        break;
      }
      case 'collection': {
        allowed('measurements', 'referenceValue', 'operation', 'minCount', 'maxCount', 'partyAggregation');
        const operation = oneOf(o, 'operation', field, ['intersection', 'contains', 'reference_intersection_count'] as const);
        const referenceValue = reference(o, field);
        if (operation !== 'intersection' && referenceValue === undefined) fail(`${field}.referenceValue`, `is required for operation ${operation}`);
        const minCount = num(o, 'minCount', field);
        const maxCount = num(o, 'maxCount', field);
        if (minCount === undefined && maxCount === undefined) fail(`${field}.maxCount`, 'a collection rule needs minCount or maxCount');
        rules.push({
          ...base,
          type,
          measurements: measurements(o, field),
          referenceValue,
          operation,
          minCount,
          maxCount,
          partyAggregation: oneOf(o, 'partyAggregation', field, ['union', 'intersection'] as const, 'union'),
        });
        break;
      }
      case 'latency': {
        allowed('maxLatency', 'maxDistance', 'distanceReference', 'partyAggregation');
        const maxLatency = num(o, 'maxLatency', field, true)!;
        const maxDistance = num(o, 'maxDistance', field);
        const distanceReference = o.distanceReference === undefined ? undefined : oneOf(o, 'distanceReference', field, ['avg', 'min'] as const);
        if (rules.some((x) => x.type === 'latency')) fail(field, 'a rule set has at most one latency rule');
        rules.push({ ...base, type, maxLatency, maxDistance, distanceReference });
        break;
      }
      case 'absoluteSort':
      case 'distanceSort': {
        allowed('sortDirection', 'sortAttribute', 'mapKey', 'partyAggregation');
        const sortAttribute = str(o, 'sortAttribute', field)!;
        const def = attribute(sortAttribute, `${field}.sortAttribute`, ['number', 'string_number_map']);
        const mapKey = o.mapKey === undefined ? undefined : oneOf(o, 'mapKey', field, ['minValue', 'maxValue'] as const);
        if (def.type === 'string_number_map' && mapKey === undefined) fail(`${field}.mapKey`, `is required for the map attribute ${JSON.stringify(sortAttribute)}`);
        rules.push({
          ...base,
          type,
          sortDirection: oneOf(o, 'sortDirection', field, ['ascending', 'descending'] as const, 'ascending'),
          sortAttribute,
          mapKey,
          partyAggregation: oneOf(o, 'partyAggregation', field, AGG, 'avg'),
        });
        break;
      }
      case 'compound': {
        allowed('statement');
        const source = str(o, 'statement', field)!;
        rules.push({ ...base, type, statement: parseStatement(source, `${field}.statement`) });
        break;
      }
    }
  });
  // Compound statements name rules that exist, are not themselves compound, and decide a match.
  for (const rule of rules) {
    if (rule.type !== 'compound') continue;
    const visit = (s: CompoundStatement): void => {
      if ('rule' in s) {
        const target = rules.find((x) => x.name === s.rule);
        if (!target) fail(`rules[${rule.index}].statement`, `unknown rule ${JSON.stringify(s.rule)}`);
        if (target!.type === 'compound' || target!.type === 'absoluteSort' || target!.type === 'distanceSort' || target!.type === 'latency' || target!.type === 'batchDistance')
          fail(
            `rules[${rule.index}].statement`,
            `rule ${JSON.stringify(s.rule)} is a ${target!.type} rule; a compound statement combines comparison, distance and collection rules`,
          );
      } else s.args.forEach(visit);
    };
    visit(rule.statement);
  }

  // Algorithm.
  const algorithmIn = root.algorithm === undefined ? {} : obj(root.algorithm, 'algorithm');
  known(algorithmIn, 'algorithm', ['strategy', 'batchingPreference', 'sortByAttributes', 'balancedAttribute', 'expansionAgeSelection', 'backfillPriority']);
  const strategy = oneOf(algorithmIn, 'strategy', 'algorithm', ['exhaustiveSearch', 'balanced'] as const, 'exhaustiveSearch');
  const algorithm: Algorithm = {
    strategy,
    batchingPreference: oneOf(
      algorithmIn,
      'batchingPreference',
      'algorithm',
      ['random', 'sorted', 'largestPopulation', 'fastestRegion'] as const,
      strategy === 'balanced' ? 'largestPopulation' : 'random',
    ),
    sortByAttributes: [],
    expansionAgeSelection: oneOf(algorithmIn, 'expansionAgeSelection', 'algorithm', ['newest', 'oldest'] as const, 'newest'),
    backfillPriority: oneOf(algorithmIn, 'backfillPriority', 'algorithm', ['normal', 'low', 'high'] as const, 'normal'),
  };
  if (strategy === 'balanced') {
    const b = str(algorithmIn, 'balancedAttribute', 'algorithm')!;
    attribute(b, 'algorithm.balancedAttribute', ['number']);
    algorithm.balancedAttribute = b;
  } else if (algorithmIn.balancedAttribute !== undefined) fail('algorithm.balancedAttribute', 'applies only to strategy "balanced"');
  if (algorithmIn.sortByAttributes !== undefined) {
    if (!Array.isArray(algorithmIn.sortByAttributes) || !algorithmIn.sortByAttributes.every((x) => typeof x === 'string'))
      fail('algorithm.sortByAttributes', 'must be a list of attribute names');
    (algorithmIn.sortByAttributes as string[]).forEach((a, k) => attribute(a, `algorithm.sortByAttributes[${k}]`, ['number', 'string']));
    algorithm.sortByAttributes = algorithmIn.sortByAttributes as string[];
  }
  if (algorithm.batchingPreference === 'sorted' && algorithm.sortByAttributes.length === 0) fail('algorithm.sortByAttributes', 'is required for batchingPreference "sorted"');

  // Expansions.
  const expansionsIn = root.expansions ?? [];
  if (!Array.isArray(expansionsIn)) fail('expansions', 'must be a list');
  const expansions: Expansion[] = (expansionsIn as unknown[]).map((x, k) => {
    const field = `expansions[${k}]`;
    const o = obj(x, field);
    known(o, field, ['target', 'steps']);
    const target = str(o, 'target', field)!;
    const m = /^(rules|teams)\[([^\]]+)\]\.([A-Za-z]+)$/.exec(target);
    if (!m) return fail(`${field}.target`, `must be rules[NAME].PROPERTY or teams[NAME].minPlayers|maxPlayers, got ${JSON.stringify(target)}`);
    const [, kind, name, property] = m;
    if (kind === 'rules') {
      const rule = rules.find((r) => r.name === name);
      if (!rule) fail(`${field}.target`, `unknown rule ${JSON.stringify(name)}`);
      if (!['maxDistance', 'minDistance', 'maxLatency', 'minCount', 'maxCount', 'referenceValue'].includes(property) || !(property in rule!))
        fail(`${field}.target`, `rule ${JSON.stringify(name)} (${rule!.type}) has no numeric property ${JSON.stringify(property)} to expand`);
    } else {
      if (!teams.some((t) => t.name === name)) fail(`${field}.target`, `unknown team ${JSON.stringify(name)}`);
      if (property !== 'minPlayers' && property !== 'maxPlayers') fail(`${field}.target`, `a team expansion targets minPlayers or maxPlayers, got ${JSON.stringify(property)}`);
    }
    if (!Array.isArray(o.steps) || o.steps.length === 0) fail(`${field}.steps`, 'must be a non-empty list');
    const steps = (o.steps as unknown[]).map((s, j) => {
      const so = obj(s, `${field}.steps[${j}]`);
      known(so, `${field}.steps[${j}]`, ['waitTimeSeconds', 'value']);
      const waitTimeSeconds = num(so, 'waitTimeSeconds', `${field}.steps[${j}]`, true)!;
      if (waitTimeSeconds < 0) fail(`${field}.steps[${j}].waitTimeSeconds`, 'must be ≥ 0');
      return { waitTimeSeconds, value: num(so, 'value', `${field}.steps[${j}]`, true)! };
    });
    steps.sort((a, b) => a.waitTimeSeconds - b.waitTimeSeconds);
    return { target, kind: kind === 'rules' ? 'rule' : 'team', name, property, steps };
  });

  const large = total > LARGE_MATCH_ABOVE;
  return { ...(typeof root.name === 'string' ? { name: root.name } : {}), ruleLanguageVersion: '1.0', playerAttributes, algorithm, teams, rules, expansions, large };
}

function parseStatement(source: string, field: string): CompoundStatement {
  let i = 0;
  const text = source;
  const ws = (): void => {
    while (text[i] === ' ' || text[i] === '\n' || text[i] === '\t') i++;
  };
  const node = (): CompoundStatement => {
    ws();
    const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i));
    if (!m) return fail(field, `expected a rule name or and/or/xor/not at position ${i + 1} of ${JSON.stringify(source)}`);
    i += m[0].length;
    ws();
    if (text[i] !== '(') return { rule: m[0] };
    const op = m[0];
    if (op !== 'and' && op !== 'or' && op !== 'xor' && op !== 'not') return fail(field, `unknown operator '${op}'; expected and, or, xor, not`);
    i++;
    const args: CompoundStatement[] = [node()];
    ws();
    while (text[i] === ',') {
      i++;
      args.push(node());
      ws();
    }
    if (text[i] !== ')') fail(field, `expected ')' at position ${i + 1} of ${JSON.stringify(source)}`);
    i++;
    if (op === 'not' && args.length !== 1) fail(field, 'not takes one argument');
    if (op !== 'not' && args.length < 2) fail(field, `${op} takes two or more arguments`);
    return { op, args };
  };
  const out = node();
  ws();
  if (i < text.length) fail(field, `unexpected ${JSON.stringify(text.slice(i))}`);
  return out;
}

/** Whether a rule's verdict on a forming match can change as players join, so it is judged only on a full-sized one. */
export function judgedWhenComplete(rule: Rule, rules: readonly Rule[]): boolean {
  switch (rule.type) {
    case 'comparison':
    case 'distance':
      return [...rule.measurements, ...(rule.referenceValue?.kind === 'expression' ? [rule.referenceValue.expression] : [])].some((e) => usesFunction(e, 'count'));
    case 'collection':
      // More players only add to `contains` and only shrink an intersection.
      return (
        (rule.operation === 'contains' && rule.minCount !== undefined) ||
        (rule.operation === 'intersection' && rule.maxCount !== undefined) ||
        rule.measurements.some((e) => usesFunction(e, 'count'))
      );
    case 'compound': {
      const names = new Set<string>();
      const visit = (s: CompoundStatement): void => ('rule' in s ? void names.add(s.rule) : s.args.forEach(visit));
      visit(rule.statement);
      // not/xor can turn a failing part into a pass, so the whole statement waits for completion.
      const negates = JSON.stringify(rule.statement).match(/"op":"(not|xor)"/) !== null;
      return negates || rules.some((r) => names.has(r.name) && judgedWhenComplete(r, rules));
    }
    default:
      return false;
  }
}
