/**
 * Benchmark: how far the balance heuristic lands from the exact answer, and
 * what each costs. Random lobbies of 12, 14 and 16 players (Glicko-2 states,
 * ratings ~ N(1500, 300), RD 30–350; about a quarter of the players in
 * parties of 2–3), split into two teams by the exhaustive search and by the
 * heuristic (forced with `exactPlayers: 0`); then three teams of 12 and 15.
 * The gap is heuristic imbalance − exact imbalance, in win probability
 * (imbalance = max_i |p_i − 1/k|).
 */
import { type BalanceGapRow, measureBalanceGap } from 'ladder-core/matchmaking/balance-gap.js';

export type { BalanceGapRow } from 'ladder-core/matchmaking/balance-gap.js';

export async function benchBalance(instances = 500): Promise<BalanceGapRow[]> {
  const rows: BalanceGapRow[] = [];
  for (const [count, teams] of [
    [12, 2],
    [14, 2],
    [16, 2],
    [12, 3],
    [15, 3],
  ] as const) {
    const row = measureBalanceGap(count, teams, instances);
    rows.push(row);
    console.log(
      `balance ${count} players in ${teams} teams, ${instances} lobbies: heuristic gap mean ${row.meanGap.toFixed(5)} max ${row.maxGap.toFixed(4)}, ` +
        `optimal in ${(100 * row.optimalShare).toFixed(1)}%; exact imbalance mean ${row.meanExact.toFixed(5)}; ` +
        `splits scored exact ${row.exactEvaluated.toFixed(0)} / heuristic ${row.heuristicEvaluated.toFixed(0)}; ` +
        `ms per call exact ${row.exactMs.toFixed(3)} / heuristic ${row.heuristicMs.toFixed(3)}`,
    );
  }
  return rows;
}
