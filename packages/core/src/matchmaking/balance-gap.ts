/**
 * How far the balance heuristic lands from the exact answer, and what each
 * costs, on seeded random lobbies (Glicko-2 states, ratings ~ N(1500, 300),
 * RD 30–350; about a quarter of the players in parties of 2–3). The gap is
 * heuristic imbalance − exact imbalance, in win probability (imbalance =
 * max_i |p_i − 1/k|).
 */
import { createSystem, type PlayerState } from '../core/systems.js';
import { balance, type BalancePlayer } from './balance.js';
import { seededRandom } from './synthetic-queue.js';

export interface BalanceGapRow {
  players: number;
  teams: number;
  instances: number;
  /** Mean and largest heuristic − exact imbalance. */
  meanGap: number;
  maxGap: number;
  /** Share of instances where the heuristic found an optimal split. */
  optimalShare: number;
  /** Mean imbalance of the exact answer, for scale. */
  meanExact: number;
  /** Mean splits scored per call. */
  exactEvaluated: number;
  heuristicEvaluated: number;
  /** Mean wall ms per call. */
  exactMs: number;
  heuristicMs: number;
}

function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A seeded random lobby of `count` players with parties that can always be split into `teams` teams. */
export function randomLobby(count: number, teams: number, random: () => number): { players: BalancePlayer<PlayerState>[]; parties: string[][] } {
  const players = Array.from({ length: count }, (_, i) => ({
    id: `p${i}`,
    state: { rating: 1500 + 300 * normal(random), rd: 30 + 320 * random(), volatility: 0.06, matches: 20 },
  }));
  // Parties cut inside blocks of one team's size (so a split exists), then the ids shuffled.
  const size = count / teams;
  const parties: string[][] = [];
  for (let block = 0; block < teams; block++) {
    for (let next = block * size; next < (block + 1) * size; ) {
      const party = random() < 0.25 ? Math.min(random() < 0.6 ? 2 : 3, (block + 1) * size - next) : 1;
      if (party >= 2) parties.push(Array.from({ length: party }, (_, j) => `p${next + j}`));
      next += party;
    }
  }
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [players[i].state, players[j].state] = [players[j].state, players[i].state];
  }
  return { players, parties };
}

/** Exact vs heuristic on `instances` seeded lobbies. */
export function measureBalanceGap(count: number, teams: number, instances: number, seed = 1): BalanceGapRow {
  const system = createSystem('glicko2');
  const random = seededRandom(seed * 1000 + count * 10 + teams);
  const gaps: number[] = [];
  let exactSum = 0;
  let exactEvaluated = 0;
  let heuristicEvaluated = 0;
  let exactMs = 0;
  let heuristicMs = 0;
  for (let i = 0; i < instances; i++) {
    const lobby = randomLobby(count, teams, random);
    const request = { ...lobby, teams };
    let start = performance.now();
    const exact = balance(request, system.predict, { exactSplits: Number.MAX_SAFE_INTEGER });
    exactMs += performance.now() - start;
    start = performance.now();
    const heuristic = balance(request, system.predict, { exactPlayers: 0 });
    heuristicMs += performance.now() - start;
    if (!exact.exact || heuristic.exact) throw new Error('balance bench: the searches were not the ones asked for');
    gaps.push(Math.max(0, heuristic.imbalance - exact.imbalance));
    exactSum += exact.imbalance;
    exactEvaluated += exact.evaluated;
    heuristicEvaluated += heuristic.evaluated;
  }
  return {
    players: count,
    teams,
    instances,
    meanGap: gaps.reduce((a, b) => a + b, 0) / instances,
    maxGap: Math.max(...gaps),
    optimalShare: gaps.filter((gap) => gap <= 1e-12).length / instances,
    meanExact: exactSum / instances,
    exactEvaluated: exactEvaluated / instances,
    heuristicEvaluated: heuristicEvaluated / instances,
    exactMs: exactMs / instances,
    heuristicMs: heuristicMs / instances,
  };
}
