import { describe, expect, it } from 'vitest';
import { measureDetection } from '../../../../src/sim/detection.js';

describe('integrity report on a simulated population with injected cheaters', () => {
  it('finds the win-traders and boosters and names no honest player (seeded; npm run bench -- integrity has the full table)', () => {
    // 300 players, 2 days of 3v3 under team rank, honest quits 2 %, four pairs of each kind
    // playing up to twelve arranged matches a day (about fifteen meetings a pair).
    const [row] = measureDetection({ players: 300, days: 2, teamSize: 3, system: 'teamrank', seed: 6, winTraders: 4, boosters: 4, arrangedPerDay: 12, quitRate: 0.02 }, [0.01]);
    expect(row.winTraderMeetings).toBeGreaterThan(10);
    expect(row.winTradersFound).toBeGreaterThanOrEqual(3);
    expect(row.boostersFound).toBe(4);
    expect(row.falsePositives).toBe(0);
    expect(row.cleanEntries).toBe(0);
  });
});
