/**
 * Option schemas: how a rating system describes its options as plain data
 * (type, default, range, allowed values, meaning), so that one description
 * gives the library's option types, the core's validation, the command
 * line's flags and the service's request schema (which derives its zod
 * schema from it: the core itself stays free of any dependency).
 */
import { InvalidInputError } from './errors.js';

/** A number option; `min`/`max` bound it, `integer` asks for a whole number. */
export interface NumberOptionSpec {
  readonly type: 'number';
  readonly default: number;
  /** Lowest value allowed (`exclusiveMin`: values must be above it). */
  readonly min?: number;
  /** `min` itself is refused: `min: 0, exclusiveMin: true` is "positive". */
  readonly exclusiveMin?: boolean;
  /** Highest value allowed. */
  readonly max?: number;
  /** Whole numbers only. */
  readonly integer?: boolean;
  /** What it means, one sentence, for help texts and the systems endpoint. */
  readonly description: string;
}

/** One of a fixed set of strings. */
export interface ChoiceOptionSpec<V extends string = string> {
  readonly type: 'choice';
  readonly values: readonly V[];
  readonly default: V;
  readonly description: string;
}

export interface BooleanOptionSpec {
  readonly type: 'boolean';
  readonly default: boolean;
  readonly description: string;
}

export type OptionSpec = NumberOptionSpec | ChoiceOptionSpec | BooleanOptionSpec;

/** A system's options by name, in the order they are listed to users. */
export type OptionsSchema = { readonly [name: string]: OptionSpec };

/** The value type of one option: its choices' union, number or boolean. */
export type OptionValue<S> = S extends ChoiceOptionSpec<infer V> ? V : S extends NumberOptionSpec ? number : S extends BooleanOptionSpec ? boolean : never;

/** The options a caller gives: every one optional (the schema's comments carry over to the properties). */
export type OptionsOf<Schema> = { -readonly [K in keyof Schema]?: OptionValue<Schema[K]> };

/** The options after defaults are filled in. */
export type ResolvedOptionsOf<Schema> = { -readonly [K in keyof Schema]: OptionValue<Schema[K]> };

/** A number option (see NumberOptionSpec). */
export function numberOption(spec: Omit<NumberOptionSpec, 'type'>): NumberOptionSpec {
  return Object.freeze({ type: 'number', ...spec });
}

/** An option taking one of `values`. */
export function choiceOption<const V extends string>(values: readonly V[], defaultValue: NoInfer<V>, description: string): ChoiceOptionSpec<V> {
  return Object.freeze({ type: 'choice', values: Object.freeze([...values]), default: defaultValue, description });
}

export function booleanOption(defaultValue: boolean, description: string): BooleanOptionSpec {
  return Object.freeze({ type: 'boolean', default: defaultValue, description });
}

/** Every option at its default, frozen. */
export function defaultsOf<Schema extends OptionsSchema>(schema: Schema): Readonly<ResolvedOptionsOf<Schema>> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) out[name] = spec.default;
  return Object.freeze(out) as ResolvedOptionsOf<Schema>;
}

/** A value for messages: strings quoted, everything else as String gives it. */
function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * The problem with `value` for an option of this spec, as the text of an
 * InvalidInputError, or undefined when it is valid.
 */
export function optionProblem(spec: OptionSpec, value: unknown): string | undefined {
  switch (spec.type) {
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a finite number, got ${shown(value)}`;
      if (spec.integer && !Number.isInteger(value)) return `must be a whole number, got ${value}`;
      if (spec.min !== undefined) {
        if (spec.exclusiveMin ? !(value > spec.min) : !(value >= spec.min)) {
          if (spec.min === 0) return spec.exclusiveMin ? `must be a positive number, got ${value}` : `must not be negative, got ${value}`;
          return `must be ${spec.exclusiveMin ? 'greater than' : 'at least'} ${spec.min}, got ${value}`;
        }
      }
      if (spec.max !== undefined && !(value <= spec.max)) return `must be at most ${spec.max}, got ${value}`;
      return undefined;
    }
    case 'choice':
      if (typeof value !== 'string' || !spec.values.includes(value)) return `must be one of ${spec.values.map((v) => JSON.stringify(v)).join(', ')}, got ${shown(value)}`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `must be true or false, got ${shown(value)}`;
  }
}

/**
 * The options with defaults filled in, each given value checked against its
 * spec: a bad one is an InvalidInputError naming the option. Options the
 * schema does not list are ignored here (createSystem refuses them; the
 * per-system update functions let callers pass wider records). An option
 * given as `undefined` takes its default.
 */
export function resolveOptions<Schema extends OptionsSchema>(schema: Schema, options: object = {}): ResolvedOptionsOf<Schema> {
  const given = options as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, spec] of entriesOf(schema)) {
    const value = Object.hasOwn(given, name) ? given[name] : undefined;
    if (value === undefined) {
      out[name] = spec.default;
      continue;
    }
    const problem = optionProblem(spec, value);
    if (problem !== undefined) throw new InvalidInputError(problem, { field: name });
    out[name] = value;
  }
  return out as ResolvedOptionsOf<Schema>;
}

/** Each schema's entries, listed once: options are resolved on hot paths (a team rank match resolves its options). */
const ENTRIES = new WeakMap<OptionsSchema, ReadonlyArray<readonly [string, OptionSpec]>>();

function entriesOf(schema: OptionsSchema): ReadonlyArray<readonly [string, OptionSpec]> {
  let entries = ENTRIES.get(schema);
  if (entries === undefined) ENTRIES.set(schema, (entries = Object.entries(schema)));
  return entries;
}

/** The first key of `options` that the schema does not list, if any (own keys only: `constructor` is a name like any other). */
export function unknownOption(schema: OptionsSchema, options: object): string | undefined {
  return Object.keys(options).find((key) => !Object.hasOwn(schema, key));
}
