/**
 * Tickets for a rule-set queue: a party of players, each with attributes
 * (checked against the rule set's declarations, defaults applied), pings by
 * region, and the roles they accept (for role slots).
 */
import { InvalidInputError } from '../../core/errors.js';
import { attributeTypeError } from './parse.js';
import type { AttributeValue, RuleSet } from './types.js';

export interface RuleSetPlayerInput {
  id: string;
  attributes?: Record<string, unknown>;
  pings?: Record<string, number>;
  roles?: string[];
}
export interface RuleSetTicketInput {
  id: string;
  /** Seconds on the pass clock when the ticket was made. */
  at: number;
  players: RuleSetPlayerInput[];
}
export interface RuleSetPlayer {
  id: string;
  attributes: Record<string, AttributeValue>;
  pings?: Readonly<Record<string, number>>;
  roles: readonly string[];
}
export interface RuleSetTicket {
  id: string;
  at: number;
  players: readonly RuleSetPlayer[];
}

/** Attributes the queue takes from elsewhere (the ladder's rating or percentile), not from the client. */
export type AttributeSource = Record<string, (playerId: string) => number | undefined>;

const fail = (field: string, message: string): never => {
  throw new InvalidInputError(message, { field });
};

/** What every ticket is checked against, worked out once per rule set. */
const shapes = new WeakMap<RuleSet, { needsPings: boolean; roleNames: Set<string>; largestTeam: number; declared: Map<string, RuleSet['playerAttributes'][number]> }>();
function shapeOf(ruleSet: RuleSet) {
  let shape = shapes.get(ruleSet);
  if (!shape) {
    shape = {
      needsPings: ruleSet.rules.some((r) => r.type === 'latency'),
      roleNames: new Set(ruleSet.teams.flatMap((team) => Object.keys(team.roles ?? {}))),
      largestTeam: Math.max(...ruleSet.teams.map((team) => team.maxPlayers)),
      declared: new Map(ruleSet.playerAttributes.map((d) => [d.name, d])),
    };
    shapes.set(ruleSet, shape);
  }
  return shape;
}

export function parseRuleSetTicket(input: unknown, ruleSet: RuleSet, source: AttributeSource = {}): RuleSetTicket {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail('ticket', 'must be an object');
  const t = input as Record<string, unknown>;
  for (const key of Object.keys(t)) if (!['id', 'at', 'players'].includes(key)) fail(key, 'unknown field; a ticket has id, at and players');
  if (typeof t.id !== 'string' || t.id === '') fail('id', 'must be a non-empty string');
  if (typeof t.at !== 'number' || !Number.isFinite(t.at)) fail('at', 'must be a number of seconds');
  if (!Array.isArray(t.players) || t.players.length === 0) fail('players', 'must be a non-empty list');
  const { needsPings, roleNames, largestTeam, declared } = shapeOf(ruleSet);
  if ((t.players as unknown[]).length > largestTeam) fail('players', `a party of ${(t.players as unknown[]).length} does not fit any team (largest holds ${largestTeam})`);
  const seen = new Set<string>();
  const players = (t.players as unknown[]).map((p, k): RuleSetPlayer => {
    const field = `players[${k}]`;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return fail(field, 'must be an object');
    const o = p as Record<string, unknown>;
    for (const key of Object.keys(o))
      if (!['id', 'attributes', 'pings', 'roles'].includes(key)) fail(`${field}.${key}`, 'unknown field; a player has id, attributes, pings and roles');
    if (typeof o.id !== 'string' || o.id === '') fail(`${field}.id`, 'must be a non-empty string');
    const id = o.id as string;
    if (seen.has(id)) fail(`${field}.id`, `player ${JSON.stringify(id)} appears twice in the ticket`);
    seen.add(id);
    const given = o.attributes ?? {};
    if (typeof given !== 'object' || given === null || Array.isArray(given)) fail(`${field}.attributes`, 'must be an object');
    const attributes: Record<string, AttributeValue> = {};
    for (const name of Object.keys(given as object)) {
      const def = declared.get(name);
      // An undeclared attribute is refused: a typo would otherwise fall back to the default unseen.
      if (!def) fail(`${field}.attributes.${name}`, `is not declared by the rule set; declared: ${ruleSet.playerAttributes.map((d) => d.name).join(', ') || 'none'}`);
      if (source[name]) fail(`${field}.attributes.${name}`, 'comes from the ladder, not from the ticket');
      const problem = attributeTypeError(def!.type, (given as Record<string, unknown>)[name]);
      if (problem) fail(`${field}.attributes.${name}`, problem);
    }
    for (const def of ruleSet.playerAttributes) {
      const fromSource = source[def.name];
      if (fromSource) {
        const v = fromSource(id);
        if (v !== undefined) attributes[def.name] = v;
        else if (def.default !== undefined) attributes[def.name] = def.default;
        else fail(`${field}.attributes.${def.name}`, `the ladder has no ${def.name} for player ${JSON.stringify(id)} and the rule set gives no default`);
        continue;
      }
      const v = (given as Record<string, unknown>)[def.name];
      if (v !== undefined) attributes[def.name] = v as AttributeValue;
      else if (def.default !== undefined) attributes[def.name] = def.default;
      else fail(`${field}.attributes.${def.name}`, 'is required: the rule set gives it no default');
    }
    let pings: Record<string, number> | undefined;
    if (o.pings !== undefined) {
      if (typeof o.pings !== 'object' || o.pings === null || Array.isArray(o.pings)) fail(`${field}.pings`, 'must be an object of region → milliseconds');
      for (const [region, ms] of Object.entries(o.pings as object))
        if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) fail(`${field}.pings.${region}`, `must be milliseconds ≥ 0, got ${JSON.stringify(ms)}`);
      pings = o.pings as Record<string, number>;
    }
    // FlexMatch rejects a request without latencies when the rule set judges latency.
    if (needsPings && (pings === undefined || Object.keys(pings).length === 0)) fail(`${field}.pings`, 'is required: the rule set has a latency rule');
    let roles: string[] = [];
    if (o.roles !== undefined) {
      if (!Array.isArray(o.roles) || !o.roles.every((r) => typeof r === 'string')) fail(`${field}.roles`, 'must be a list of role names');
      for (const [j, r] of (o.roles as string[]).entries())
        if (!roleNames.has(r)) fail(`${field}.roles[${j}]`, `unknown role ${JSON.stringify(r)}; the rule set's roles: ${[...roleNames].join(', ') || 'none'}`);
      roles = o.roles as string[];
    }
    return { id, attributes, ...(pings ? { pings } : {}), roles };
  });
  return { id: t.id as string, at: t.at as number, players };
}
