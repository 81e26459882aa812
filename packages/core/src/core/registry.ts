/**
 * The registry of rating systems: one line per system. Everything that
 * offers a choice of system (createSystem, the command line, the service's
 * ladder definitions and its systems endpoint, the evaluation, the
 * simulator, the dashboard) reads this list and each system's descriptor.
 * Adding a system is one module exporting a descriptor (see descriptor.ts
 * and docs/RATING.md) and one line here.
 */
import type { AnySystemDescriptor } from './descriptor.js';
import { ELO } from './elo.js';
import { UnknownSystemError } from './errors.js';
import { GLICKO2 } from './glicko2.js';
import { TEAM_RANK } from './teamrank.js';
import { WHR } from './whr/index.js';
import { WVW } from './wvw.js';

/** Every rating system, in the order they are listed to users. */
export const SYSTEMS = Object.freeze([GLICKO2, WVW, TEAM_RANK, ELO, WHR] as const);

/** Any registered system's descriptor. */
export type RegisteredSystem = (typeof SYSTEMS)[number];

/** The name of a registered system. */
export type SystemName = RegisteredSystem['name'];

/** The descriptor registered under `Name`. */
export type DescriptorOf<Name extends SystemName> = Extract<RegisteredSystem, { name: Name }>;

/** The names of every registered system, in registry order. */
export const SYSTEM_NAMES: readonly SystemName[] = Object.freeze(SYSTEMS.map((d) => d.name));

const BY_NAME: ReadonlyMap<string, RegisteredDescriptor> = new Map<string, RegisteredDescriptor>(SYSTEMS.map((d) => [d.name, d]));

export function isSystemName(name: unknown): name is SystemName {
  return typeof name === 'string' && BY_NAME.has(name);
}

/**
 * The descriptor of a registered system. An unknown name is an
 * InvalidInputError naming `field` (default `system`) and listing the names.
 */
export function describeSystem<Name extends SystemName>(name: Name, field?: string): DescriptorOf<Name>;
export function describeSystem(name: string, field?: string): RegisteredDescriptor;
export function describeSystem(name: string, field = 'system'): RegisteredDescriptor {
  const descriptor = BY_NAME.get(name);
  if (!descriptor) throw new UnknownSystemError(name, SYSTEM_NAMES, field);
  return descriptor;
}

/** Any registered system's descriptor, as code working with every system sees it. */
export type RegisteredDescriptor = AnySystemDescriptor & { readonly name: SystemName };

/** Every registered descriptor, as code working with any system sees them. */
export function allSystems(): readonly RegisteredDescriptor[] {
  return SYSTEMS;
}

/** The registered systems whose descriptor satisfies `test` (e.g. those a service ladder may use). */
export function systemsWhere(test: (descriptor: RegisteredDescriptor) => boolean): RegisteredDescriptor[] {
  return SYSTEMS.filter(test);
}
