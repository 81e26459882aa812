/**
 * Benchmark: evaluating the ATP file (619,377 matches, KDD 2019 split).
 * Times the data-set loader, the online evaluation of Elo and of Glicko-2
 * (RD growing per idle day), and the whole `ladder evaluate` command on the
 * file through the general CSV reader, as wall-clock seconds. Target: under
 * 10 s for the file.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemContender } from '../eval/contenders.js';
import { dataRoot, loadTennisKdd19, TENNIS_KDD19_FILE } from '../eval/datasets.js';
import { evaluate, splitAtDate } from '../eval/engine.js';
import { KDD19_ELO_K } from '../eval/presets.js';

export interface EvaluateBenchRow {
  name: string;
  seconds: number;
  note: string;
}

const ATP_FILE = join(dataRoot(), TENNIS_KDD19_FILE);

export async function benchEvaluate(): Promise<EvaluateBenchRow[]> {
  const rows: EvaluateBenchRow[] = [];
  let start = performance.now();
  const matches = loadTennisKdd19();
  rows.push({ name: 'load (gunzip + parse + sort)', seconds: (performance.now() - start) / 1000, note: `${matches.length} matches` });
  const isTest = splitAtDate(Date.UTC(2011, 7, 28));
  for (const [name, system, options] of [
    ['evaluate elo K 45.5', 'elo', { k: KDD19_ELO_K }],
    ['evaluate glicko2 defaults, idle growth', 'glicko2', {}],
  ] as const) {
    start = performance.now();
    const result = evaluate(systemContender(system, options), matches, { isTest });
    rows.push({ name, seconds: (performance.now() - start) / 1000, note: `log-loss ${result.test.logLoss.toFixed(4)}, accuracy ${result.test.accuracy.toFixed(4)}` });
  }
  const cli = join(dirname(fileURLToPath(import.meta.url)), '../cli/main.js');
  for (const [system, flags] of [
    ['elo', ['--k', String(KDD19_ELO_K)]],
    ['glicko2', []],
  ] as const) {
    start = performance.now();
    const run = spawnSync(
      process.execPath,
      [
        cli,
        'evaluate',
        '--system',
        system,
        ...flags,
        '--split',
        '2011-08-28',
        '--map',
        'winner=winner_name,loser=loser_name,at=tourney_date',
        '--skip-invalid',
        '--json',
        ATP_FILE,
      ],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    const seconds = (performance.now() - start) / 1000;
    const note = run.status === 0 ? (JSON.parse(run.stdout) as { test: { logLoss: number } }).test.logLoss.toFixed(4) : `exit ${run.status}: ${run.stderr.slice(0, 200)}`;
    rows.push({ name: `ladder evaluate --system ${system} (whole command)`, seconds, note: `log-loss ${note}` });
  }
  for (const row of rows) console.log(`${row.name.padEnd(48)} ${row.seconds.toFixed(2).padStart(7)} s  ${row.note}`);
  return rows;
}
