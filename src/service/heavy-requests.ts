/**
 * The requests whose CPU could stall the event loop: lobby balance, large
 * predictions and the integrity report. Each reads what it needs and hands
 * the computation to the worker pool (jobs/), under its caps; given the
 * client's signal, a job still queued when the client leaves is dropped.
 */
import type { IntegrityReport } from 'ladder-core/integrity/report.js';
import type { Database } from '../store/database.js';
import { recentCountingMatchesJson } from '../store/matches.js';
import { findPlayers } from '../store/players.js';
import { rowToState } from '../store/rows.js';
import type { Jobs } from './jobs/index.js';
import type { Ladder } from './ladders.js';

export interface HeavyContext {
  db: Database;
  jobs: Jobs;
}

async function statesOf(db: Database, ladder: Ladder, ids: readonly string[]) {
  const stored = new Map((await findPlayers(db, ladder.id, [...ids])).map((row) => [row.id, rowToState(row)]));
  const initial = ladder.rating.initial();
  return (id: string) => stored.get(id) ?? initial;
}

export interface BalanceAnswer {
  teams: string[][];
  probabilities: number[];
  imbalance: number;
  exact: boolean;
}

/** Balanced teams from the ladder's current states (unknown players at the starting state), searched in a worker until the deadline. */
export async function balanceLobby(
  ctx: HeavyContext,
  ladder: Ladder,
  body: { players: string[]; parties?: string[][]; teams?: number; context?: string | undefined },
  caller: string,
  signal?: AbortSignal,
): Promise<BalanceAnswer> {
  const result = await ctx.jobs.run(
    'balance',
    { caller, ladder: ladder.id },
    async () => {
      const stateOf = await statesOf(ctx.db, ladder, body.players);
      return {
        system: ladder.system,
        options: ladder.options,
        players: body.players.map((id) => ({ id, state: stateOf(id) })),
        ...(body.parties !== undefined ? { parties: body.parties } : {}),
        ...(body.teams !== undefined ? { teams: body.teams } : {}),
        ...(body.context !== undefined ? { context: body.context } : {}),
        deadlineMs: ctx.jobs.balanceDeadlineMs,
      };
    },
    signal,
  );
  return { teams: result.teams, probabilities: result.probabilities, imbalance: result.imbalance, exact: result.exact };
}

/** Each team's chance of winning; in a worker only past `predictPoolPlayers` players, since a prediction costs microseconds and the hop more. */
export async function predictTeams(
  ctx: HeavyContext,
  ladder: Ladder,
  teams: ReadonlyArray<{ players: string[] }>,
  caller: string,
  signal?: AbortSignal,
  context?: string,
): Promise<number[]> {
  const ids = teams.flatMap((team) => team.players);
  if (ids.length <= ctx.jobs.predictPoolPlayers) {
    const stateOf = await statesOf(ctx.db, ladder, ids);
    return ladder.rating.predict(
      teams.map((team) => team.players.map(stateOf)),
      context,
    );
  }
  return ctx.jobs.run(
    'predict',
    { caller, ladder: ladder.id },
    async () => {
      const stateOf = await statesOf(ctx.db, ladder, ids);
      return { system: ladder.system, options: ladder.options, teams: teams.map((team) => team.players.map(stateOf)), ...(context !== undefined ? { context } : {}) };
    },
    signal,
  );
}

/** The integrity report over the ladder's last `matches` counting matches, computed in a worker. */
export function integrityOf(ctx: HeavyContext, ladder: Ladder, matches: number, limit: number, caller: string, signal?: AbortSignal): Promise<IntegrityReport> {
  return ctx.jobs.run(
    'integrity',
    { caller, ladder: ladder.id },
    async () => ({ matchesJson: await recentCountingMatchesJson(ctx.db, ladder.id, matches), options: { limit } }),
    signal,
  );
}
