/**
 * Benchmark: Whole-History Rating on the ATP file (KDD 2019 split).
 *
 * - the whole history (619,377 matches) fitted to convergence from nothing
 *   by the mode (`WHR_MAP_OPTIONS`; expectation propagation converges far
 *   more slowly from nothing): `WhrHistory.addMatches`, then `converge()`
 *   until no Newton step exceeds 10⁻⁴ (target: under 10 s);
 * - the online evaluation of the split, each match predicted from the earlier
 *   ones then added (the incremental path), in process;
 * - the whole `ladder evaluate --system whr --split 2011-08-28` command on the
 *   raw file through the general CSV reader (target: under 60 s).
 *
 * Each figure is the median of `runs` runs, as wall-clock and CPU seconds
 * (the process's user + system time over the same span): the machine may be
 * shared, and CPU time says what the work cost where wall time says how long
 * it took.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WHR_MAP_OPTIONS, WhrHistory } from 'ladder-core/core/whr/index.js';
import { systemContender } from '../eval/contenders.js';
import { dataRoot, loadTennisKdd19, TENNIS_KDD19_FILE } from '../eval/datasets.js';
import { evaluate, splitAtDate } from '../eval/engine.js';

export interface WhrBenchRow {
  name: string;
  wall: number;
  cpu: number;
  note: string;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

function measure<T>(work: () => T): { wall: number; cpu: number; result: T } {
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const result = work();
  const wall = (performance.now() - wall0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / 1e6, result };
}

export async function benchWhr(runs = 3): Promise<WhrBenchRow[]> {
  const rows: WhrBenchRow[] = [];
  const load = measure(() => loadTennisKdd19());
  const matches = load.result;
  rows.push({ name: 'load (gunzip + parse + sort)', wall: load.wall, cpu: load.cpu, note: `${matches.length} matches` });

  const add: number[][] = [];
  const fit: number[][] = [];
  let note = '';
  for (let run = 0; run < runs; run++) {
    (globalThis as { gc?: () => void }).gc?.();
    const history = new WhrHistory(WHR_MAP_OPTIONS);
    const added = measure(() => history.addMatches(matches));
    const converged = measure(() => history.converge());
    add.push([added.wall, added.cpu]);
    fit.push([converged.wall, converged.cpu]);
    note = `${history.nodesCount} player-days, ${history.playerCount} players; ${converged.result} sweeps to a largest step < 1e-4`;
  }
  rows.push({ name: 'whole history: addMatches', wall: median(add.map((x) => x[0]!)), cpu: median(add.map((x) => x[1]!)), note: `median of ${runs}` });
  rows.push({ name: 'whole history: converge', wall: median(fit.map((x) => x[0]!)), cpu: median(fit.map((x) => x[1]!)), note });
  rows.push({
    name: 'whole history: add + converge',
    wall: median(add.map((x, i) => x[0]! + fit[i]![0]!)),
    cpu: median(add.map((x, i) => x[1]! + fit[i]![1]!)),
    note: 'target < 10 s',
  });

  const isTest = splitAtDate(Date.UTC(2011, 7, 28));
  const online = measure(() => evaluate(systemContender('whr'), matches, { isTest }));
  rows.push({
    name: 'online evaluation, KDD split (in process)',
    wall: online.wall,
    cpu: online.cpu,
    note: `log-loss ${online.result.test.logLoss.toFixed(4)}, accuracy ${online.result.test.accuracy.toFixed(4)}`,
  });

  const cli = join(dirname(fileURLToPath(import.meta.url)), '../cli/main.js');
  const args = [
    cli,
    'evaluate',
    '--system',
    'whr',
    '--split',
    '2011-08-28',
    '--skip-invalid',
    '--map',
    'winner=winner_name,loser=loser_name,at=tourney_date',
    '--json',
    join(dataRoot(), TENNIS_KDD19_FILE),
  ];
  const command = measure(() => spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 }));
  const run = command.result;
  const result =
    run.status === 0 ? `log-loss ${(JSON.parse(run.stdout) as { test: { logLoss: number } }).test.logLoss.toFixed(4)}` : `exit ${run.status}: ${run.stderr.slice(0, 200)}`;
  // The child's CPU is not this process's: only wall time for the whole command.
  rows.push({ name: 'ladder evaluate --system whr (whole command)', wall: command.wall, cpu: Number.NaN, note: `${result}; target < 60 s` });

  for (const row of rows) {
    const cpu = Number.isFinite(row.cpu) ? `${row.cpu.toFixed(2).padStart(7)} s CPU` : '      (child) CPU';
    console.log(`${row.name.padEnd(46)} ${row.wall.toFixed(2).padStart(7)} s wall ${cpu}  ${row.note}`);
  }
  return rows;
}
