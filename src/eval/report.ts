/**
 * Regenerates the evaluation results: `node dist/eval/report.js [dataset…]
 * [--no-peers] [--keep] [--out DIR]` (`--help` lists the options). For each data set it runs the preset (our
 * systems and the peers), writes DIR/eval/<dataset>.json and
 * DIR/eval/<dataset>-reliability.svg, and rewrites that data set's table in
 * DIR/EVALUATION.md between the markers `<!-- table:<dataset> -->` and
 * `<!-- /table:<dataset> -->`. DIR defaults to `./eval-report`, so a run
 * never rewrites the tracked docs by accident; `--out docs` regenerates them.
 * `--keep` takes the rows already in docs/eval/<dataset>.json as they are
 * (matched by label) and runs only the rows not there, such as a system
 * just added to a preset.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LadderError } from 'ladder-core/core/errors.js';
import { isEntry, type ScriptSpec, scriptArgs, textOption, usageError } from '../cli/script-args.js';
import { reliabilitySvg } from './plot.js';
import { type DatasetPreset, PRESETS } from './presets.js';
import { type PresetRow, runPreset } from './run.js';

const fixed = (value: number | undefined, digits = 4) => (value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits));

const CONTEXT_OPTIONS = ['contextK', 'contextRd', 'contextPriorVariance', 'contextDailyVariance'];

function parametersText(row: PresetRow): string {
  const shown = { ...row.parameters, ...(row.fitted ?? {}) };
  return (
    Object.entries(shown)
      .filter(([key]) => !['epsilon', 'periodMs', 'volatility', 'decimals', 'floor', 'stakeDivisor', 'quitterModifier', 'timeBasis', 'refresh', 'integrate'].includes(key))
      // Per-context options at 0 are off: not worth a column entry.
      .filter(([key, value]) => !(value === 0 && CONTEXT_OPTIONS.includes(key)))
      // How deviations are smoothed means nothing without them.
      .filter(([key]) => !(key === 'contextInference' && !shown.contextPriorVariance))
      // A freeze's lag and passes mean nothing without a horizon.
      .filter(([key]) => !((key === 'freezeLag' || key === 'freezeSweeps') && !shown.horizon))
      // Whole-History Rating's newcomer options, off: a learning curve's τ is read only with a trend.
      .filter(
        ([key, value]) => !(key === 'newcomerMean' && value === 'zero') && !(key === 'newcomerTrend' && value === 0) && !(key === 'newcomerTrendPeriods' && !shown.newcomerTrend),
      )
      .map(([key, value]) => `${key} ${typeof value === 'number' ? +value.toPrecision(4) : value}${row.fitted && key in row.fitted ? '*' : ''}`)
      .join(', ')
  );
}

export function tableOf(preset: DatasetPreset, rows: readonly PresetRow[]): string {
  const draws = rows.some((r) => r.test.draws > 0);
  const head = ['#', 'system', 'parameters (* fitted on training)', 'scored', 'log-loss', 'accuracy', 'Brier'];
  if (draws) head.push('3-way acc.', 'ν', 'decisive log-loss / acc.');
  if (preset.reportCounts) head.push('favourite won / wrong');
  head.push('s');
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const t = row.test;
    const cells = [String(row.row), row.label, parametersText(row), String(t.n), fixed(t.logLoss), fixed(t.accuracy), fixed(t.brier)];
    if (draws) cells.push(fixed(t.accuracy3), fixed(row.drawNu, 3), t.decisive ? `${fixed(t.decisive.logLoss)} / ${fixed(t.decisive.accuracy)}` : '—');
    if (preset.reportCounts) {
      const right = Math.round(t.accuracy * t.n);
      cells.push(`${right} / ${t.n - right}`);
    }
    cells.push((row.seconds + (row.fitSeconds ?? 0)).toFixed(1));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push('', 'Published:', '');
  for (const p of preset.published) {
    const numbers = [p.logLoss !== undefined ? `log-loss ${p.logLoss}` : '', p.accuracy !== undefined ? `accuracy ${p.accuracy}` : '', p.note ?? ''].filter(Boolean).join(', ');
    lines.push(`- ${p.model}${numbers ? `: ${numbers}` : ''} (${p.source})`);
  }
  lines.push('', `Reproduce a row: \`ladder evaluate --dataset ${preset.name} --row N\` (all rows: \`node dist/eval/report.js ${preset.name}\`).`);
  return lines.join('\n');
}

export function replaceBetweenMarkers(document: string, name: string, content: string): string {
  const open = `<!-- table:${name} -->`;
  const close = `<!-- /table:${name} -->`;
  const start = document.indexOf(open);
  const end = document.indexOf(close);
  if (start < 0 || end < start) return `${document.trimEnd()}\n\n${open}\n${content}\n${close}\n`;
  return `${document.slice(0, start + open.length)}\n${content}\n${document.slice(end)}`;
}

export const REPORT_USAGE: ScriptSpec = {
  command: 'node dist/eval/report.js',
  name: 'report',
  operands: '[DATASET ...]',
  summary: `Runs each data set's preset (Ladder's systems and the peers) and writes its table into
OUT/EVALUATION.md, between the markers table:<dataset>, with OUT/eval/<dataset>.json and
OUT/eval/<dataset>-reliability.svg. Data sets (all by default): ${PRESETS.map((p) => p.name).join(', ')}.
The data are read from ../shared/data beside the project, or from the folder LADDER_DATA names.`,
  options: {
    out: { type: 'string', value: 'DIR', description: 'where the report goes (default ./eval-report; --out docs rewrites the tracked docs)' },
    'no-peers': { type: 'boolean', description: 'leave out the peers openskill and ts-trueskill' },
    keep: { type: 'boolean', description: 'take the rows already in OUT/eval/<dataset>.json (else docs/eval) as they are; run only the others' },
  },
};

async function main(argv: string[]): Promise<void> {
  const args = scriptArgs(REPORT_USAGE, argv);
  const peers = args.values['no-peers'] === undefined;
  const keep = args.values.keep !== undefined;
  const out = textOption(args, 'out') ?? 'eval-report';
  const names = args.operands;
  const unknown = names.filter((n) => !PRESETS.some((p) => p.name === n));
  if (unknown.length) usageError(REPORT_USAGE, `unknown data set(s): ${unknown.join(', ')}; expected ${PRESETS.map((p) => p.name).join(', ')}`);
  const chosen = names.length ? PRESETS.filter((p) => names.includes(p.name)) : PRESETS;
  const docs = resolve(out);
  // The tracked tables list the peers: a run without them would drop their rows there.
  if (!peers && docs === resolve('docs'))
    usageError(REPORT_USAGE, "--no-peers with --out docs would drop the peers' rows from the tracked tables; run with the peers, or write elsewhere");
  mkdirSync(join(docs, 'eval'), { recursive: true });
  const documentPath = join(docs, 'EVALUATION.md');
  process.stderr.write(`writing the report to ${documentPath} and ${join(docs, 'eval')}\n`);
  for (const preset of chosen) {
    const jsonPath = join(docs, 'eval', `${preset.name}.json`);
    // --keep reuses rows of the report being written, else of the tracked docs.
    const keptPath = existsSync(jsonPath) ? jsonPath : join(process.cwd(), 'docs', 'eval', `${preset.name}.json`);
    const kept = keep && existsSync(keptPath) ? (JSON.parse(readFileSync(keptPath, 'utf8')) as { rows: PresetRow[] }).rows : [];
    const { matches, rows } = await runPreset(preset, {
      peers,
      reuse: (kind, label) => kept.find((row) => row.kind === kind && row.label === label),
      onLog: (m) => process.stderr.write(`${m}\n`),
      onRow: (r) =>
        process.stderr.write(`  ${r.row}. ${r.label}: n ${r.test.n}, log-loss ${fixed(r.test.logLoss)}, accuracy ${fixed(r.test.accuracy)} (${r.seconds.toFixed(1)} s)\n`),
    });
    writeFileSync(jsonPath, `${JSON.stringify({ dataset: preset.name, matches, rows }, null, 1)}\n`);
    writeFileSync(
      join(docs, 'eval', `${preset.name}-reliability.svg`),
      reliabilitySvg(
        preset.title,
        rows.map((r) => ({ label: `${r.row}. ${r.label}`, bins: r.calibration })),
      ),
    );
    const tracked = join(process.cwd(), 'docs', 'EVALUATION.md');
    const document = existsSync(documentPath) ? readFileSync(documentPath, 'utf8') : existsSync(tracked) ? readFileSync(tracked, 'utf8') : '# Evaluation\n';
    writeFileSync(documentPath, replaceBetweenMarkers(document, preset.name, tableOf(preset, rows)));
  }
}

if (isEntry(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    // Bad input, such as a missing data folder, exits 2 as the ladder command does.
    process.exit(error instanceof LadderError ? 2 : 1);
  });
}
