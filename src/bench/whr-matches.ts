/**
 * Benchmark: Whole-History Rating with many teams, and a whr ladder's first
 * write after a start (`npm run bench -- whr-matches`, which passes
 * --expose-gc; without it the memory rows are skipped).
 *
 * - one match of 64 teams of 64 players, and one free-for-all of 64
 *   players, added to a fresh `WhrHistory`: CPU per match (median of 5);
 * - memory retained per 64-player free-for-all: `ffaMatches` of them among
 *   5,000 players, one a day (every player a new node each match, the
 *   worst case) and twenty a day, heap + array buffers after a full
 *   collection, per match, read at several counts (typed arrays grow by
 *   half, so the figure swings between growths);
 * - the first write to a whr ladder of `restartMatches` matches after a
 *   restart (embedded PGlite in a temporary directory): the largest
 *   event-loop delay while it derives the history, and how long it took,
 *   in slices (the default) and in one piece (slices as long as the log,
 *   pages of 20,000: the derivation as it was before slicing).
 */
import { mulberry32 } from 'ladder-core/core/random.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Match } from 'ladder-core/core/match.js';
import { WhrHistory } from 'ladder-core/core/whr/index.js';
import { isEntry, numberOption, type ScriptSpec, scriptArgs } from '../cli/script-args.js';
import { startService } from '../service/index.js';
import type { DerivationOptions } from '../service/whole-history.js';

const DAY = 86_400_000;
const KEY = 'bench-admin-key-0123456789';

function cpuMs(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const ranked = (count: number, size: number, id: (t: number, i: number) => string, at = 0): Match => ({
  at,
  teams: Array.from({ length: count }, (_, t) => ({ players: Array.from({ length: size }, (_, i) => ({ id: id(t, i) })), rank: t + 1 })),
});

function memoryPerFfa(matches: number, perDay: number): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return 'run with --expose-gc';
  const random = mulberry32(3);
  const history = new WhrHistory();
  const ffa = (i: number): Match => {
    const ids = new Set<string>();
    while (ids.size < 64) ids.add(`p${Math.floor(random() * 5000)}`);
    return { at: Math.floor(i / perDay) * DAY, teams: [...ids].map((id, t) => ({ players: [{ id }], rank: t + 1 })) };
  };
  // Warm-up: every player seen, the arrays past their first sizes.
  const warm = Math.floor(matches / 4);
  for (let i = 0; i < warm; i++) history.addMatch(ffa(i));
  const used = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const base = used();
  const readings: string[] = [];
  const step = Math.floor((matches - warm) / 6);
  for (let i = warm; i < matches; i++) {
    history.addMatch(ffa(i));
    const n = i + 1 - warm;
    if (n % step === 0) readings.push(((used() - base) / n / 1024).toFixed(1));
  }
  return `${readings.join(' / ')} KB`;
}

async function firstWriteAfterRestart(
  matches: number,
  derivation: DerivationOptions | undefined,
  dataDir: string,
  seeded: boolean,
): Promise<{ maxDelayMs: number; maxDelayCpuMs: number; writeMs: number; writeCpuMs: number; turns: number }> {
  const options = { port: 0, adminKey: KEY, dataDir, matchmakingIntervalMs: 3_600_000, logger: false, onWarning: () => {}, ...(derivation ? { writer: { derivation } } : {}) };
  if (!seeded) {
    const service = await startService(options);
    const created = await fetch(`${service.url}/v1/ladders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'w', system: 'whr' }),
    });
    if (created.status !== 201) throw new Error(`ladder: ${created.status} ${await created.text()}`);
    const ladder = await service.ladders.get('w');
    const random = mulberry32(7);
    const start = (Math.floor(Date.now() / DAY) - 120) * DAY;
    const player = () => `p${Math.floor(random() * 2000)}`;
    for (let i = 0; i < matches; i += 256) {
      const jobs: Array<Promise<unknown>> = [];
      for (let k = i; k < Math.min(matches, i + 256); k++) {
        const at = start + Math.floor(k / 200) * DAY + (k % 200) * 1000;
        const match: Match =
          k % 10 === 9
            ? ranked(8, 1, (t) => `p${(k * 31 + t * 251) % 2000}`, at)
            : {
                at,
                teams: [
                  { players: [{ id: player() }], rank: 1 },
                  { players: [{ id: player() }], rank: random() < 0.1 ? 1 : 2 },
                ],
              };
        jobs.push(service.writer.submitMatch(ladder, match));
      }
      await Promise.all(jobs);
    }
    await service.close();
  }
  const service = await startService(options);
  try {
    const ladder = await service.ladders.get('w');
    // The longest stretch without a turn of the event loop: the gaps between turns of a ticker that
    // asks for one after another, the first and last stretches included.
    // On a shared machine wall time between turns includes other processes' time slices: the CPU this
    // process used between turns is kept too.
    let turns = 0;
    let counting = true;
    let last = performance.now();
    let lastCpu = process.cpuUsage();
    let longest = 0;
    let longestCpu = 0;
    const cpuSince = (from: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(from);
      return (used.user + used.system) / 1000;
    };
    const tick = () => {
      if (!counting) return;
      const now = performance.now();
      longest = Math.max(longest, now - last);
      longestCpu = Math.max(longestCpu, cpuSince(lastCpu));
      last = now;
      lastCpu = process.cpuUsage();
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    const startedCpu = process.cpuUsage();
    last = started;
    lastCpu = startedCpu;
    await service.writer.submitMatch(ladder, {
      at: Date.now() - DAY,
      teams: [
        { players: [{ id: 'p1' }], rank: 1 },
        { players: [{ id: 'p2' }], rank: 2 },
      ],
    });
    const ended = performance.now();
    counting = false;
    longest = Math.max(longest, ended - last);
    longestCpu = Math.max(longestCpu, cpuSince(lastCpu));
    return { maxDelayMs: longest, maxDelayCpuMs: longestCpu, writeMs: ended - started, writeCpuMs: cpuSince(startedCpu), turns };
  } finally {
    await service.close();
  }
}

export async function benchWhrMatches(options: { ffaMatches?: number; restartMatches?: number } = {}): Promise<void> {
  const ffaMatches = options.ffaMatches ?? 4000;
  const restartMatches = options.restartMatches ?? 20_000;
  for (const [count, size] of [
    [64, 64],
    [64, 1],
  ] as const) {
    const times: number[] = [];
    let games = 0;
    for (let run = 0; run < 5; run++) {
      const history = new WhrHistory();
      const match = ranked(count, size, (t, i) => `t${t}p${i}`);
      times.push(cpuMs(() => history.addMatch(match)));
      games = history.gamesCount;
    }
    console.log(`${`one match of ${count} teams of ${size}`.padEnd(44)} ${median(times).toFixed(2).padStart(8)} ms CPU  (${games} game, median of 5)`);
  }
  for (const perDay of [1, 20]) console.log(`${`memory per 64-player FFA, ${perDay} a day`.padEnd(44)} ${memoryPerFfa(ffaMatches, perDay)}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'ladder-bench-whr-'));
  try {
    const sliced = await firstWriteAfterRestart(restartMatches, process.env.PAGE ? { pageSize: Number(process.env.PAGE) } : undefined, dataDir, false);
    const whole = await firstWriteAfterRestart(restartMatches, { pageSize: 20_000, sliceMs: Infinity, sliceMatches: Infinity }, dataDir, true);
    for (const [name, r] of [
      ['in slices (default)', sliced],
      ['in one piece', whole],
    ] as const) {
      console.log(
        `${`first write after restart, ${restartMatches} matches, ${name}`.padEnd(44)} longest stretch without a turn ${r.maxDelayMs.toFixed(0)} ms wall (${r.maxDelayCpuMs.toFixed(0)} ms CPU), write ${r.writeMs.toFixed(0)} ms wall (${r.writeCpuMs.toFixed(0)} ms CPU), ${r.turns} turns`,
      );
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const USAGE: ScriptSpec = {
  command: 'node --expose-gc dist/bench/whr-matches.js',
  name: 'whr-matches',
  summary: "Whole-History Rating with many teams: CPU per match, memory per free-for-all, and a whr ladder's first write after a restart.",
  options: {
    ffa: { type: 'string', value: 'N', description: 'free-for-all matches of the memory rows (default 4000)' },
    restart: { type: 'string', value: 'N', description: 'matches of the ladder derived after a restart (default 20000)' },
  },
};

if (isEntry(import.meta.url)) {
  const args = scriptArgs(USAGE);
  const ffaMatches = numberOption(USAGE, args, 'ffa');
  const restartMatches = numberOption(USAGE, args, 'restart');
  await benchWhrMatches({ ...(ffaMatches !== undefined ? { ffaMatches } : {}), ...(restartMatches !== undefined ? { restartMatches } : {}) });
}
