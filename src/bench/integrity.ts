/**
 * Measurement: how well the integrity report finds cheaters injected into a
 * simulated population, and how often it names honest players. Not a speed
 * benchmark; it lives here so `npm run bench -- integrity` reproduces the
 * figures in docs/INTEGRITY.md. The scoring is `measureDetection` in
 * src/sim/detection.ts; each scenario is scored at alpha 0.01 (the report's
 * default) and 0.05.
 */
import { type DetectionRow, type DetectionScenario, measureDetection } from '../sim/detection.js';

export type { DetectionRow, DetectionScenario } from '../sim/detection.js';

export const DETECTION_SCENARIOS: readonly DetectionScenario[] = [
  { players: 2000, days: 4, teamSize: 6, system: 'teamrank', seed: 1, winTraders: 10, boosters: 10, arrangedPerDay: 6, quitRate: 0.02 },
  { players: 2000, days: 4, teamSize: 6, system: 'glicko2', seed: 2, winTraders: 10, boosters: 10, arrangedPerDay: 6, quitRate: 0.02 },
  { players: 2000, days: 4, teamSize: 6, system: 'teamrank', seed: 3, winTraders: 10, boosters: 10, arrangedPerDay: 3, quitRate: 0.02 },
  { players: 1000, days: 4, teamSize: 1, system: 'glicko2', seed: 4, winTraders: 10, boosters: 10, arrangedPerDay: 6, quitRate: 0.02 },
];

export async function benchIntegrity(scenarios: readonly DetectionScenario[] = DETECTION_SCENARIOS): Promise<DetectionRow[]> {
  const rows: DetectionRow[] = [];
  for (const scenario of scenarios) {
    for (const row of measureDetection(scenario)) {
      rows.push(row);
      console.log(
        `integrity ${row.players} players ${row.days} days ${row.teamSize}v${row.teamSize} ${row.system} seed ${row.seed}, ${row.arrangedPerDay} arranged/pair/day, honest quits ${row.quitRate}, alpha ${row.alpha}: ` +
          `${row.matches} matches (${row.arrangedMatches} arranged); win-traders found ${row.winTradersFound}/${row.winTraders} (mean ${row.winTraderMeetings.toFixed(1)} meetings), boosters found ${row.boostersFound}/${row.boosters}; ` +
          `false-positive entries ${row.falsePositives} (honest players named ${row.honestPlayersNamed}); clean run (${row.cleanMatches} matches): ${row.cleanEntries} entries; ` +
          `entries by kind ${JSON.stringify(row.entriesByKind)}`,
      );
    }
  }
  return rows;
}
