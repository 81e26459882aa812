/**
 * A worker's rating systems, rebuilt from plain data (a system's name and a
 * ladder's options, as stored) through the core's registry, and kept: every
 * job of a ladder reuses its system instead of validating options again.
 */
import { createSystem, type RatingSystem, type SystemName } from 'ladder-core/core/systems.js';

const MAX_KEPT = 64;
const kept = new Map<string, RatingSystem>();

export function systemFor(name: SystemName, options: Record<string, unknown>): RatingSystem {
  const key = `${name}\u0000${JSON.stringify(options)}`;
  let system = kept.get(key);
  if (system === undefined) {
    system = createSystem(name, options);
    if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
    kept.set(key, system);
  }
  return system;
}
