/**
 * Synthetic matchmaking queues: a stand-in for a live population, used by the
 * benchmarks, the tests and `ladder serve`'s warm-up (which runs passes over
 * such queues before taking traffic). Seeded, so a run can be repeated exactly.
 */
import { mulberry32 } from '../core/random.js';
import type { Ticket, TicketPlayer } from './ticket.js';

/** The core's seeded generator (Mulberry32), floats in [0, 1). */
export const seededRandom = mulberry32;

export interface RegionSpec {
  name: string;
  /** Share of players living there. */
  weight: number;
}

/** Four regions, weighted like a typical western-heavy player base. */
export const DEFAULT_REGIONS: readonly RegionSpec[] = [
  { name: 'eu', weight: 0.35 },
  { name: 'na', weight: 0.35 },
  { name: 'asia', weight: 0.2 },
  { name: 'sa', weight: 0.1 },
];

/** Party size shares for 6v6 (solo-heavy, as in most team games). */
export const DEFAULT_PARTY_SHARES: readonly number[] = [0.7, 0.15, 0.08, 0.04, 0.02, 0.01];

export interface SyntheticQueueOptions {
  tickets: number;
  seed?: number;
  /** Tickets arrive uniformly over [0, spanSeconds). @default 300 */
  spanSeconds?: number;
  teamSize?: number;
  regions?: readonly RegionSpec[];
  /** Share of tickets of each party size (index 0 = solo). */
  partyShares?: readonly number[];
  /** Share of players with a strict filter. @default 0.2 */
  strictShare?: number;
}

/** Picks an index from weights summing to ~1. */
export function pickWeighted(weights: readonly number[], random: () => number): number {
  let x = random() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i];
    if (x < 0) return i;
  }
  return weights.length - 1;
}

/** Pings from a home region: 15–60 ms at home, 80–220 ms elsewhere. */
export function pingsFrom(home: number, regions: readonly RegionSpec[], random: () => number): Record<string, number> {
  const pings: Record<string, number> = {};
  regions.forEach((region, index) => {
    pings[region.name] = Math.round(index === home ? 15 + random() * 45 : 80 + random() * 140);
  });
  return pings;
}

/** A queue of `tickets` waiting tickets, oldest first. */
export function syntheticQueue(options: SyntheticQueueOptions): Ticket[] {
  const random = seededRandom(options.seed ?? 42);
  const span = options.spanSeconds ?? 300;
  const teamSize = options.teamSize ?? 6;
  const regions = options.regions ?? DEFAULT_REGIONS;
  const shares = (options.partyShares ?? DEFAULT_PARTY_SHARES).slice(0, teamSize);
  const strictShare = options.strictShare ?? 0.2;
  const regionWeights = regions.map((r) => r.weight);
  const tickets: Ticket[] = [];
  let playerNumber = 0;
  for (let i = 0; i < options.tickets; i++) {
    const size = 1 + pickWeighted(shares, random);
    const home = pickWeighted(regionWeights, random);
    const center = 1 + random() * 99;
    const players: TicketPlayer[] = [];
    for (let j = 0; j < size; j++) {
      const percentile = Math.min(100, Math.max(1, Math.round(center + (random() - 0.5) * 16)));
      const strict = random() < strictShare;
      players.push({
        id: `p${playerNumber++}`,
        percentile,
        pings: pingsFrom(home, regions, random),
        filter: { within: strict ? 10 + Math.floor(random() * 11) : [2, 5, 10][Math.floor(random() * 3)], strict, maxPing: 80 + Math.floor(random() * 71) },
      });
    }
    tickets.push({ id: `t${i}`, at: Math.floor((i / options.tickets) * span), players });
  }
  return tickets;
}
