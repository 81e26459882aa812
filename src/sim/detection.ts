/**
 * How well the integrity report finds cheaters injected into a simulated
 * population, and how often it names honest players.
 *
 * A scenario runs the simulator twice with one seed: with win-traders and
 * boosters injected, and clean (no cheaters: every entry is a false
 * positive); the report is scored at each alpha asked for. A win-trading pair
 * counts as found when a pair entry names both; a booster when a pair entry
 * names booster and boostee or a quit entry names the booster. False
 * positives: entries that name no cheater.
 */
import type { SystemName } from 'ladder-core/core/systems.js';
import { type IntegrityEntry, integrityReport } from 'ladder-core/integrity/report.js';
import { simulate } from './simulate.js';

export interface DetectionScenario {
  players: number;
  days: number;
  teamSize: number;
  system: SystemName;
  seed: number;
  winTraders: number;
  boosters: number;
  /** Arranged matches a cheating pair tries to play per day. */
  arrangedPerDay: number;
  /** Honest quit chance per player and match. */
  quitRate: number;
}

export interface DetectionRow extends DetectionScenario {
  /** The report's false-discovery-rate option. */
  alpha: number;
  matches: number;
  arrangedMatches: number;
  /** Mean meetings (as opponents) of a win-trading pair. */
  winTraderMeetings: number;
  winTradersFound: number;
  boostersFound: number;
  /** Entries naming no cheater, in the run with cheaters. */
  falsePositives: number;
  /** Honest players named by any entry, in the run with cheaters. */
  honestPlayersNamed: number;
  /** Entries in the clean run (all false positives). */
  cleanEntries: number;
  cleanMatches: number;
  /** Kinds of the entries of the run with cheaters. */
  entriesByKind: Record<string, number>;
}

const names = (entry: IntegrityEntry): string[] => (entry.kind === 'pair' ? entry.players : [entry.player]);

/** Runs one scenario (with and without cheaters) and scores the report at each `alpha`. */
export function measureDetection(scenario: DetectionScenario, alphas: readonly number[] = [0.01, 0.05]): DetectionRow[] {
  const base = {
    players: scenario.players,
    days: scenario.days,
    teamSize: scenario.teamSize,
    system: scenario.system,
    seed: scenario.seed,
    quitRate: scenario.quitRate,
    keepLog: true,
  };
  const run = simulate({ ...base, cheats: { winTraders: scenario.winTraders, boosters: scenario.boosters, arrangedPerDay: scenario.arrangedPerDay } });
  const clean = simulate(base);
  const log = run.log!;
  const cheaters = run.cheaters!;
  const cheaterIds = new Set([...cheaters.winTraders.flat(), ...cheaters.boosters.flatMap((b) => [b.booster, b.boostee])]);
  const opponents = (match: (typeof log)[number], a: string, b: string) => {
    const team = (id: string) => match.teams.findIndex((t) => t.players.some((p) => p.id === id));
    return team(a) !== -1 && team(b) !== -1 && team(a) !== team(b);
  };
  const winTraderMeetings = cheaters.winTraders.reduce((n, [a, b]) => n + log.filter((m) => opponents(m, a, b)).length, 0) / Math.max(1, cheaters.winTraders.length);
  return alphas.map((alpha) => {
    const report = integrityReport(log, { alpha, limit: Number.MAX_SAFE_INTEGER });
    const pairNamed = (a: string, b: string) => report.entries.some((e) => e.kind === 'pair' && e.players.includes(a) && e.players.includes(b));
    const entriesByKind: Record<string, number> = {};
    for (const e of report.entries) entriesByKind[e.kind] = (entriesByKind[e.kind] ?? 0) + 1;
    return {
      ...scenario,
      alpha,
      matches: log.length,
      arrangedMatches: cheaters.arrangedMatches,
      winTraderMeetings,
      winTradersFound: cheaters.winTraders.filter(([a, b]) => pairNamed(a, b)).length,
      boostersFound: cheaters.boosters.filter(({ booster, boostee }) => pairNamed(booster, boostee) || report.entries.some((e) => e.kind === 'quits' && e.player === booster))
        .length,
      falsePositives: report.entries.filter((e) => names(e).every((id) => !cheaterIds.has(id))).length,
      honestPlayersNamed: new Set(report.entries.flatMap(names).filter((id) => !cheaterIds.has(id))).size,
      cleanEntries: integrityReport(clean.log!, { alpha, limit: Number.MAX_SAFE_INTEGER }).entries.length,
      cleanMatches: clean.log!.length,
      entriesByKind,
    };
  });
}
