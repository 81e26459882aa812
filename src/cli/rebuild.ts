/**
 * `ladder rebuild`: replays every stored match and reports any difference
 * from the stored ratings; `--fix` rewrites them. Uses the same database
 * settings as `ladder serve` (DATABASE_URL or --data); run it against PGlite
 * only while the server is stopped (the data directory lock enforces it).
 */
import type { Command } from 'commander';
import { rebuildLadder } from '../service/rebuild.js';
import { Ladders } from '../service/ladders.js';
import { openDatabase } from '../store/database.js';
import { migrate } from '../store/migrations.js';
import { action } from './errors.js';
import { type ProgressBar, type ProgressStarter, startProgress } from './stderr.js';

/**
 * The one line that ends every text report, so a run is never silent: an
 * empty database, every ladder matching, or how many differ and what was done.
 * Takes only what it reads of each ladder's report (the report's type lives
 * with the store).
 */
export function rebuildVerdict(reports: ReadonlyArray<{ differences: readonly unknown[]; fixed: boolean }>, fix: boolean): string {
  const ladders = (n: number) => `${n} ladder${n === 1 ? '' : 's'}`;
  if (reports.length === 0) return 'no ladders: nothing to replay';
  const differing = reports.filter((report) => report.differences.length > 0).length;
  if (differing === 0) return reports.length === 1 ? 'the ladder matches its stored matches' : `all ${ladders(reports.length)} match their stored matches`;
  const players = reports.reduce((sum, report) => sum + report.differences.length, 0);
  const what = `${differing} of ${ladders(reports.length)} differ from their stored matches (${players} player${players === 1 ? '' : 's'})`;
  return fix ? `${what}: rewritten from the replay` : `${what}: run with --fix to rewrite them from the replay`;
}

/**
 * The bar of one ladder's replay, started at its first report; `progress`
 * decides whether one is drawn (startProgress: on a terminal only).
 */
export function rebuildProgress(ladder: string, progress: ProgressStarter): (done: number, total: number) => void {
  let bar: ProgressBar | undefined;
  return (done, total) => {
    bar ??= progress(`rebuild ${ladder}`, total, 'matches');
    bar?.update(done);
    if (done === total) bar?.finish();
  };
}

export function register(program: Command): void {
  program
    .command('rebuild')
    .description('replay the stored matches of every ladder (or --ladder) and report differences from the stored ratings')
    .option('--data <dir>', 'embedded database directory (when DATABASE_URL is not set)', './ladder-data')
    .option('--ladder <id>', 'only this ladder')
    .option('--fix', 'rewrite the stored ratings that differ from the replay', false)
    .option('--json', 'print the report as JSON', false)
    .action(
      action(async (opts: { data: string; ladder?: string; fix: boolean; json: boolean }) => {
        const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: opts.data, schema: process.env.DATABASE_SCHEMA || undefined });
        let differing = 0;
        try {
          await migrate(db);
          const ladders = new Ladders(db);
          const targets = opts.ladder !== undefined ? [await ladders.get(opts.ladder)] : await ladders.list();
          const reports = [];
          for (const ladder of targets) {
            const report = await rebuildLadder(db, ladder, { fix: opts.fix, onProgress: rebuildProgress(ladder.id, startProgress) });
            differing += report.differences.length;
            reports.push(report);
            if (!opts.json) {
              process.stdout.write(
                `${ladder.id}: ${report.matches} matches replayed, ${report.players} players, ${report.differences.length} differ${report.fixed ? ' (fixed)' : ''}\n`,
              );
              if (report.frozenPriors !== undefined)
                process.stdout.write(
                  `  stored frozen priors (horizon): ${report.frozenPriors}${report.fixed && report.frozenPriors !== 'same' && report.frozenPriors !== 'none' ? ' (rewritten)' : ''}\n`,
                );
              for (const d of report.differences.slice(0, 20)) process.stdout.write(`  ${d.id}: stored ${JSON.stringify(d.stored)} replayed ${JSON.stringify(d.replayed)}\n`);
              if (report.differences.length > 20) process.stdout.write(`  … and ${report.differences.length - 20} more\n`);
            }
          }
          if (opts.json) process.stdout.write(`${JSON.stringify({ ladders: reports }, null, 2)}\n`);
          else process.stdout.write(`${rebuildVerdict(reports, opts.fix)}\n`);
          if (opts.fix && differing > 0 && process.env.REDIS_URL) {
            process.stdout.write('note: restart the servers (or delete the Redis leaderboard keys) so Redis leaderboards reload the fixed ratings\n');
          }
        } finally {
          await db.close();
        }
        // Differences found and not fixed: exit 3 so scripts notice.
        if (differing > 0 && !opts.fix) process.exitCode = 3;
      }),
    );
}
