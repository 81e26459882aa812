/** A prediction as a job: the ladder's system by name and options, and each team's player states. */
import type { PlayerState, SystemName } from 'ladder-core/core/systems.js';
import { systemFor } from './rating-systems.js';

export interface PredictJobInput {
  system: SystemName;
  options: Record<string, unknown>;
  teams: PlayerState[][];
  /** The match's context, for systems with per-context offsets. */
  context?: string;
}

export function predictJob(input: PredictJobInput): number[] {
  return systemFor(input.system, input.options).predict(input.teams, input.context);
}
