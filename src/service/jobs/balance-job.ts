/** Lobby balance as a job: the ladder's system by name and options, the players' states, the library's `balance` with a deadline. */
import type { PlayerState, SystemName } from 'ladder-core/core/systems.js';
import { balance, type BalanceResult } from 'ladder-core/matchmaking/balance.js';
import { systemFor } from './rating-systems.js';

export interface BalanceJobInput {
  system: SystemName;
  options: Record<string, unknown>;
  players: Array<{ id: string; state: PlayerState }>;
  parties?: string[][];
  teams?: number;
  /** The match's context, for systems with per-context offsets. */
  context?: string;
  /** Milliseconds the search may take (the library's `deadlineMs`). */
  deadlineMs?: number;
}

export function balanceJob(input: BalanceJobInput): BalanceResult {
  const system = systemFor(input.system, input.options);
  return balance(
    {
      players: input.players,
      ...(input.parties !== undefined ? { parties: input.parties } : {}),
      ...(input.teams !== undefined ? { teams: input.teams } : {}),
    },
    (teams) => system.predict(teams, input.context),
    input.deadlineMs !== undefined ? { deadlineMs: input.deadlineMs } : {},
  );
}
