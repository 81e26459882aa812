/**
 * The rating systems as the service offers them, all read from the core
 * registry: which ones a ladder may use, each one's options as a zod schema
 * (derived from the option schema the core describes, so the request
 * schema, /openapi.json and the core's own checks agree), and the public
 * description `GET /v1/systems` answers.
 */
import { z } from 'zod';
import { type OptionSpec, optionProblem } from '../core/options.js';
import { allSystems, type RegisteredDescriptor, type SystemName } from '../core/registry.js';

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
    ladder: { ...descriptor.ladder },
  };
}

/** Every registered system, as `GET /v1/systems` answers. */
export function systemsJson(): { systems: Array<ReturnType<typeof systemJson>> } {
  return { systems: allSystems().map(systemJson) };
}
