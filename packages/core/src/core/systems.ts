/**
 * `createSystem`: any registered rating system by name, its options checked
 * against the system's schema, typed from the registry.
 */
import { InvalidInputError } from './errors.js';
import { type OptionsOf, resolveOptions, unknownOption } from './options.js';
import type { RatingSystem, WholeHistorySystem } from './rating-system.js';
import { type DescriptorOf, describeSystem, type SystemName } from './registry.js';

export type {
  ContextOffset,
  FrozenContext,
  FrozenEntrants,
  FrozenPast,
  FrozenPlayer,
  HistoryHorizon,
  MatchRating,
  PlayerChange,
  PlayerState,
  RatePeriodOptions,
  RatingSystem,
  WholeHistorySystem,
} from './rating-system.js';
export { SYSTEM_NAMES, type SystemName } from './registry.js';

/** True for a union of several types, false for one type. */
type IsUnion<T, All = T> = T extends unknown ? ([All] extends [T] ? false : true) : never;

/** Each system's options type, by system name, from its descriptor's schema. */
export type SystemOptionsByName = { [Name in SystemName]: OptionsOf<DescriptorOf<Name>['options']> };

/**
 * The options `createSystem` takes for a name: that system's own options type
 * for one literal name, so a misspelt option (`{ tua: 0.3 }`) does not
 * compile; any record for a name only known at run time (a ladder definition
 * read as JSON), whose options are then checked at run time.
 */
export type OptionsFor<Name extends SystemName> = IsUnion<Name> extends true ? Readonly<Record<string, unknown>> : SystemOptionsByName[Name];

/** The system `createSystem` returns for a name: its own type (`WhrSystem` for `whr`) for one literal name, else RatingSystem. */
export type SystemFor<Name extends SystemName> = IsUnion<Name> extends true ? RatingSystem : ReturnType<DescriptorOf<Name>['create']>;

/**
 * Creates the named system with its options (defaults and ranges in each
 * system's options schema, `describeSystem(name).options`). A bad value or
 * an option the system does not have is an InvalidInputError naming it; an
 * unknown name is one naming `system`.
 */
export function createSystem<Name extends SystemName>(name: Name, options?: OptionsFor<Name>): SystemFor<Name>;
/**
 * A name typed only as `string` (configuration, JSON): checked at run time,
 * an unknown one is an UnknownSystemError. A misspelt literal still fails to
 * compile (this overload takes no literal).
 */
export function createSystem<Name extends string>(name: string extends Name ? Name : never, options?: Readonly<Record<string, unknown>>): RatingSystem;
export function createSystem(name: string, options: object = {}): RatingSystem {
  const descriptor = describeSystem(name);
  // What the types refuse at compile time, refused at run time for callers without them (JSON, JavaScript).
  const unknown = unknownOption(descriptor.options, options);
  if (unknown !== undefined) {
    throw new InvalidInputError(`unknown option for ${name}; known: ${Object.keys(descriptor.options).join(', ')}`, { field: unknown });
  }
  const resolved = resolveOptions(descriptor.options, options);
  descriptor.check?.(resolved);
  return descriptor.create(resolved);
}

/**
 * Creates a system that keeps whole histories (`capabilities.wholeHistory`),
 * typed as such: a fresh object with no history, for one log. Any other
 * system is an InvalidInputError naming `system`.
 */
export function createWholeHistorySystem(name: string, options: object = {}): WholeHistorySystem {
  if (!describeSystem(name).capabilities.wholeHistory) throw new InvalidInputError(`${name} does not keep whole histories`, { field: 'system' });
  return createSystem(name as SystemName, options as Readonly<Record<string, unknown>>) as WholeHistorySystem;
}
