/**
 * Benchmark: Whole-History Rating with a horizon on a long synthetic
 * one-on-one log (`npm run bench -- whr-horizon`, which passes --expose-gc;
 * without it the memory figures are skipped).
 *
 * The log: `matches` one-on-one matches among `players` players, `perDay`
 * a day, each between two players drawn uniformly, won with the logistic
 * probability of their true skills (which drift as a random walk). It is
 * generated match by match from a seeded generator, never held whole, so the
 * process holds the history alone.
 *
 * For each horizon (0: none), every match is added with `addMatch` (the
 * ladder's incremental path, default options but the horizon and, if given,
 * `freezeLag`; nothing runs a lagged freeze's rebuild between matches, so
 * the match of its day of effect does it all, as a freeze in place would):
 * CPU time,
 * and the heap + array buffers after a full collection at several points of
 * the log and at its end, the wall time of the matches that froze the
 * history (each replays the live window) and the process's maximum resident
 * set. With a horizon, then the derivation a restart
 * makes: a new history restored from the last freeze's priors
 * (`restoreFrozen`) and fed the matches after the freeze: its CPU time, and
 * whether its estimates equal the live history's to the last bit.
 */
import { mulberry32 } from 'ladder-core/core/random.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Match } from 'ladder-core/core/match.js';
import { WhrHistory } from 'ladder-core/core/whr/index.js';
import { isEntry, numberListOption, numberOption, type ScriptSpec, scriptArgs } from '../cli/script-args.js';

const DAY = 86_400_000;

/** The synthetic log, match by match, from match `from` on (the same matches for the same arguments). */
export function* syntheticLog(matches: number, players: number, perDay: number, from = 0): Generator<Match> {
  const random = mulberry32(11);
  const skill = new Float64Array(players);
  for (let p = 0; p < players; p++) skill[p] = 2 * (random() + random() + random() - 1.5);
  for (let i = 0; i < matches; i++) {
    const a = Math.floor(random() * players);
    let b = Math.floor(random() * (players - 1));
    if (b >= a) b++;
    const win = random() < 1 / (1 + Math.exp(skill[b]! - skill[a]!));
    // Each match nudges its players' true skills: a random walk of about 0.03 per match.
    skill[a]! += 0.03 * (random() - 0.5);
    skill[b]! += 0.03 * (random() - 0.5);
    if (i < from) continue;
    yield {
      at: Math.floor(i / perDay) * DAY,
      teams: [
        { players: [{ id: `p${a}` }], rank: win ? 1 : 2 },
        { players: [{ id: `p${b}` }], rank: win ? 2 : 1 },
      ],
    };
  }
}

function retained(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const mb = (bytes: number | undefined): string => (bytes === undefined ? 'n/a (no --expose-gc)' : `${(bytes / 2 ** 20).toFixed(0)} MB`);

function cpuSeconds(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

export interface WhrHorizonBenchOptions {
  matches?: number;
  players?: number;
  perDay?: number;
  /** Horizons in days (0: none). @default [365, 730] */
  horizons?: number[];
  /** Matches of the run without a horizon (its memory grows with the log: a prefix says how fast). @default 1,000,000 */
  wholeMatches?: number;
  /** The history's `freezeLag` (periods; 0: a freeze in place). Nothing runs its rebuild between matches, so the day of effect does it all. @default the history's (1) */
  freezeLag?: number;
}

/** Each horizon runs in a process of its own (`--only`), so that no run's garbage is counted in another's memory. */
export async function benchWhrHorizon(options: WhrHorizonBenchOptions = {}): Promise<void> {
  const matches = options.matches ?? 10_000_000;
  const players = options.players ?? 20_000;
  const perDay = options.perDay ?? 1_500;
  const horizons = options.horizons ?? [365, 730];
  const wholeMatches = Math.min(matches, options.wholeMatches ?? 1_000_000);
  const lag = options.freezeLag === undefined ? '' : ` and freezeLag ${options.freezeLag}`;
  console.log(`synthetic one-on-one log: ${matches} matches, ${players} players, ${perDay} a day (${Math.ceil(matches / perDay)} days); default options but the horizon${lag}`);
  for (const horizon of [0, ...horizons]) {
    const args = ['--expose-gc', fileURLToPath(import.meta.url), '--matches', String(horizon === 0 ? wholeMatches : matches)];
    args.push('--players', String(players), '--per-day', String(perDay), '--only', String(horizon));
    if (options.freezeLag !== undefined) args.push('--freeze-lag', String(options.freezeLag));
    const child = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (child.status !== 0) console.log(`horizon ${horizon}: exit ${child.status}`);
  }
}

/** Milliseconds at a quantile of sorted durations. */
const at = (sorted: readonly number[], q: number): string => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);

/**
 * The work a writer runs in steps, timed step by step: each day's close run
 * ahead of its first match (`closeAhead`, 16 timelines a step), and each
 * pending freeze's rebuild in calls of `advanceFreeze(16)` (what a writer's
 * slice runs between two looks at the clock), run to the end after the match
 * that starts it. The log up to `count` matches, with the horizon (and
 * `freezeLag`, default 1); no memory or restart figures.
 */
function runSteps(count: number, players: number, perDay: number, horizon: number, freezeLag: number | undefined): void {
  const live = new WhrHistory({ horizon, ...(freezeLag !== undefined ? { freezeLag } : {}) });
  const closes: number[] = [];
  const closeSteps: number[] = [];
  const advances: number[] = [];
  for (const match of syntheticLog(count, players, perDay)) {
    const ahead = live.closeAhead(live.dayOf(match.at));
    if (ahead !== undefined) {
      let total = 0;
      for (let it = ahead[Symbol.iterator](), start = performance.now(); ; start = performance.now()) {
        const done = it.next().done;
        const ms = performance.now() - start;
        total += ms;
        if (done) break;
        closeSteps.push(ms);
      }
      closes.push(total);
    }
    live.addMatch(match);
    while (live.freezePending) {
      const start = performance.now();
      const done = live.advanceFreeze(16);
      advances.push(performance.now() - start);
      if (done) break;
    }
  }
  for (const list of [closes, closeSteps, advances]) list.sort((a, b) => a - b);
  console.log(`horizon ${horizon} days, ${count} matches: ${live.gamesCount} games held, ${live.freezes} freezes`);
  if (closes.length > 0)
    console.log(
      `${''.padEnd(34)} a day's close (${closes.length}): ${at(closes, 0.5)} ms in all (median), ${at(closes, 1)} ms (most); its steps (${closeSteps.length}): p99 ${at(closeSteps, 0.99)} ms, longest ${at(closeSteps, 1)} ms`,
    );
  if (advances.length > 0)
    console.log(
      `${''.padEnd(34)} a rebuild's calls of advanceFreeze(16) (${advances.length}): p50 ${at(advances, 0.5)}, p99 ${at(advances, 0.99)}, p99.9 ${at(advances, 0.999)} ms, longest ${at(advances, 1)} ms; ${advances.filter((ms) => ms > 20).length} over 20 ms`,
    );
}

/** One run: the log added with the horizon `horizon` (0: none), then, with a horizon, a restart's derivation. */
function runOne(count: number, players: number, perDay: number, horizon: number, freezeLag: number | undefined): void {
  {
    const base = retained();
    const options = { horizon, ...(freezeLag !== undefined ? { freezeLag } : {}) };
    const live = new WhrHistory(options);
    const readings: string[] = [];
    const every = Math.ceil(count / 5);
    let i = 0;
    // The wall time of each match that froze the history (its replay of the live window).
    const freezeMs: number[] = [];
    const cpu = cpuSeconds(() => {
      for (const match of syntheticLog(count, players, perDay)) {
        const freezes = live.freezes;
        const start = performance.now();
        live.addMatch(match);
        if (live.freezes !== freezes) freezeMs.push(performance.now() - start);
        if (++i % every === 0 && i < count) {
          const used = retained();
          if (used !== undefined && base !== undefined) readings.push(`${i / 1e6}M: ${mb(used - base)}`);
        }
      }
    });
    const end = retained();
    const held = end !== undefined && base !== undefined ? end - base : undefined;
    const label = horizon === 0 ? `no horizon, first ${count} matches` : `horizon ${horizon} days`;
    console.log(
      `${label.padEnd(34)} add ${cpu.toFixed(1)} s CPU (${((cpu / count) * 1e6).toFixed(1)} µs a match); retained ${mb(held)}${held !== undefined ? ` (${(held / count).toFixed(0)} bytes a match)` : ''}; ${live.nodesCount} nodes, ${live.gamesCount} games, ${live.freezes} freezes`,
    );
    if (readings.length > 0) console.log(`${''.padEnd(34)} retained along the log: ${readings.join(', ')}`);
    if (freezeMs.length > 0) {
      const sorted = [...freezeMs].sort((a, b) => a - b);
      const total = freezeMs.reduce((a, b) => a + b, 0) / 1000;
      console.log(
        `${''.padEnd(34)} a match that froze the history took ${sorted[sorted.length >> 1]!.toFixed(0)} ms wall (median), ${sorted[sorted.length - 1]!.toFixed(0)} ms (longest); all freezes ${total.toFixed(1)} s wall`,
      );
    }
    console.log(`${''.padEnd(34)} max resident set ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
    const frozen = live.frozen();
    if (frozen !== undefined) {
      // A restart: the priors, then the matches after the freeze day.
      const first = (frozen.day + 1) * perDay;
      const restored = new WhrHistory(options);
      const restart = cpuSeconds(() => {
        restored.restoreFrozen(frozen);
        for (const match of syntheticLog(count, players, perDay, first)) restored.addMatch(match);
      });
      let same = true;
      for (const id of live.playerIds()) {
        const a = live.estimate(id)!;
        const b = restored.estimate(id);
        if (b === undefined || a.mean !== b.mean || a.variance !== b.variance || a.matches !== b.matches) same = false;
      }
      console.log(
        `${''.padEnd(34)} restart: ${frozen.players.length} priors (freeze day ${frozen.day}) + ${count - first} matches in ${restart.toFixed(1)} s CPU; estimates ${same ? 'bit-identical to' : 'DIFFER from'} the live history's`,
      );
    }
  }
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/whr-horizon.js',
  name: 'whr-horizon',
  summary: 'Whole-History Rating with a horizon on a synthetic one-on-one log: CPU, memory retained, and the derivation after a restart.',
  options: {
    matches: { type: 'string', value: 'N', description: 'matches of the log (default 10000000)' },
    players: { type: 'string', value: 'N', description: 'players (default 20000)' },
    'per-day': { type: 'string', value: 'N', description: 'matches a day (default 1500)' },
    horizons: { type: 'string', value: 'DAYS,...', description: 'horizons to run, in days (default 365,730)' },
    whole: { type: 'string', value: 'N', description: 'matches of the run without a horizon (default 1000000)' },
    only: { type: 'string', value: 'DAYS', description: 'one run in this process, with this horizon (0: none) over --matches matches' },
    'freeze-lag': { type: 'string', value: 'PERIODS', description: "the history's freezeLag (default 1; 0: each freeze in place)" },
    steps: { type: 'boolean', description: "with --only: time the steps a writer runs instead (each day's close ahead of its first match, a rebuild's slices)" },
  },
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const matches = numberOption(USAGE, args, 'matches');
  const players = numberOption(USAGE, args, 'players');
  const perDay = numberOption(USAGE, args, 'per-day');
  const wholeMatches = numberOption(USAGE, args, 'whole');
  const horizons = numberListOption(USAGE, args, 'horizons');
  const only = numberOption(USAGE, args, 'only', 'any');
  const freezeLag = numberOption(USAGE, args, 'freeze-lag', 'any');
  if (only !== undefined && args.values.steps === true) runSteps(matches ?? 10_000_000, players ?? 20_000, perDay ?? 1_500, only, freezeLag);
  else if (only !== undefined) runOne(matches ?? 10_000_000, players ?? 20_000, perDay ?? 1_500, only, freezeLag);
  else
    await benchWhrHorizon({
      ...(matches !== undefined ? { matches } : {}),
      ...(players !== undefined ? { players } : {}),
      ...(perDay !== undefined ? { perDay } : {}),
      ...(wholeMatches !== undefined ? { wholeMatches } : {}),
      ...(horizons !== undefined ? { horizons } : {}),
      ...(freezeLag !== undefined ? { freezeLag } : {}),
    });
}
