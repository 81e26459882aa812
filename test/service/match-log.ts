/**
 * A seeded log of one-on-one matches among `players` players, an hour
 * apart, for the correction tests.
 */
import { mulberry32 } from 'ladder-core/core/random.js';

export type Body = { id: string; at: number; teams: Array<{ players: string[]; rank: number }> };

export function log(count: number, seed: number, players = 6, start = Date.now() - count * 3_600_000): Body[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, (_, i) => {
    const a = Math.floor(random() * players);
    const b = (a + 1 + Math.floor(random() * (players - 1))) % players;
    const first = random() < 0.5;
    return {
      id: `m${i}`,
      at: start + i * 3_600_000,
      teams: [
        { players: [`p${a}`], rank: first ? 1 : 2 },
        { players: [`p${b}`], rank: first ? 2 : 1 },
      ],
    };
  });
}
