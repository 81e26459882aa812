/**
 * The rating systems as the service offers them, all read from the core
 * registry: which ones a ladder may use, each one's options as a zod schema
 * (derived from the option schema the core describes, so the request
 * schema, /openapi.json and the core's own checks agree), and the public
 * description `GET /v1/systems` answers.
 */
import { z } from 'zod';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Match } from 'ladder-core/core/match.js';
import { type OptionSpec, optionProblem } from 'ladder-core/core/options.js';
import { allSystems, describeSystem, type RegisteredDescriptor, type SystemName } from 'ladder-core/core/registry.js';

/**
 * Whether a ladder may use the system: every registered one. Most are rated
 * from the players' stored states; a whole-history system
 * (`capabilities.wholeHistory`) through the ladder's history, which the
 * writer derives from the match log and keeps in memory (whole-history.ts).
 */
export function hostedByService(_descriptor: RegisteredDescriptor): boolean {
  return true;
}

/** The systems a ladder may use, in registry order. */
export const HOSTED_SYSTEMS: readonly RegisteredDescriptor[] = Object.freeze(allSystems().filter(hostedByService));

/** Bound for options the schema leaves unbounded: a request carries no rating option beyond it. */
const OPTION_LIMIT = 1e9;

/** One option's zod schema, its messages the core's (optionProblem). */
export function zodOfOption(spec: OptionSpec): z.ZodType {
  const error = (issue: { input?: unknown }) => optionProblem(spec, issue.input);
  const described = (schema: z.ZodType) => schema.describe(`${spec.description}. Default ${JSON.stringify(spec.default)}.`);
  switch (spec.type) {
    case 'number': {
      let schema = z.number({ error });
      if (spec.integer) schema = schema.int({ error });
      const min = spec.min ?? -OPTION_LIMIT;
      schema = spec.exclusiveMin ? schema.gt(min, { error }) : schema.min(min, { error });
      schema = schema.max(spec.max ?? OPTION_LIMIT, { error });
      return described(schema);
    }
    case 'choice':
      return described(z.enum(spec.values as [string, ...string[]], { error }));
    case 'boolean':
      return described(z.boolean({ error }));
  }
}

/** A system's options as a strict zod object, every option optional. */
export function optionsSchemaOf(descriptor: RegisteredDescriptor): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, spec] of Object.entries(descriptor.options)) shape[name] = zodOfOption(spec).optional();
  return z.object(shape).strict().describe(`Options of ${descriptor.label} (see docs/RATING.md and GET /v1/systems); unknown names are rejected.`);
}

const optionJson = (name: string, spec: OptionSpec) => ({ name, ...spec });

/** The bounds on one match of any ladder: the request schema's (schemas.ts, `matchSchema`). */
export const SERVICE_MATCH_LIMITS = Object.freeze({ teams: 64, playersPerTeam: 64, players: 64 * 64 });

export interface MatchLimits {
  teams: number;
  playersPerTeam: number;
  players: number;
}

/** The bounds on one match of a ladder of this system: the system's own (descriptor `ladder.matchLimits`) within the service's. */
export function matchLimitsOf(descriptor: RegisteredDescriptor): MatchLimits {
  const own = descriptor.ladder.matchLimits ?? {};
  return {
    teams: Math.min(own.teams ?? Infinity, SERVICE_MATCH_LIMITS.teams),
    playersPerTeam: Math.min(own.playersPerTeam ?? Infinity, SERVICE_MATCH_LIMITS.playersPerTeam),
    players: Math.min(own.players ?? Infinity, SERVICE_MATCH_LIMITS.players),
  };
}

/** Refuses a match beyond its ladder's system's bounds: a 400 naming `teams`, `teams[i].players` or `teams` (all players). */
export function checkMatchLimits(system: string, match: Match): void {
  const descriptor = describeSystem(system);
  checkLimits(match, matchLimitsOf(descriptor), descriptor.label);
}

/** Refuses a match beyond `limits` (see checkMatchLimits). */
export function checkLimits(match: Match, limits: MatchLimits, label: string): void {
  if (match.teams.length > limits.teams)
    throw new InvalidInputError(`${label} ladders take at most ${limits.teams} teams per match, got ${match.teams.length}`, { field: 'teams' });
  let players = 0;
  for (let i = 0; i < match.teams.length; i++) {
    const size = match.teams[i]!.players.length;
    if (size > limits.playersPerTeam)
      throw new InvalidInputError(`${label} ladders take at most ${limits.playersPerTeam} players per team, got ${size}`, { field: `teams[${i}].players` });
    players += size;
  }
  if (players > limits.players) throw new InvalidInputError(`${label} ladders take at most ${limits.players} players per match, got ${players}`, { field: 'teams' });
}

/** One system as `GET /v1/systems` describes it. */
export function systemJson(descriptor: RegisteredDescriptor) {
  return {
    name: descriptor.name as SystemName,
    label: descriptor.label,
    summary: descriptor.summary,
    ladders: hostedByService(descriptor),
    options: Object.entries(descriptor.options).map(([name, spec]) => optionJson(name, spec)),
    capabilities: { ...descriptor.capabilities },
    display: { ...descriptor.display },
    fit: { parameters: descriptor.fit.parameters.map((p) => ({ ...p })), byDefault: [...descriptor.fit.byDefault] },
    dashboard: {
      terms: descriptor.dashboard.terms.map((t) => ({ ...t })),
      explanation: descriptor.dashboard.explanation,
      ...(descriptor.dashboard.mixedResult ? { mixedResult: { ...descriptor.dashboard.mixedResult } } : {}),
      performanceRuns: descriptor.dashboard.performanceRuns,
    },
    ladder: { teamSize: descriptor.ladder.teamSize },
    limits: matchLimitsOf(descriptor),
  };
}

/** Every registered system, as `GET /v1/systems` answers. */
export function systemsJson(): { systems: Array<ReturnType<typeof systemJson>> } {
  return { systems: allSystems().map(systemJson) };
}
