/**
 * The tables of docs/EVALUATION.md are what `node dist/eval/report.js --out
 * docs` renders from the committed rows in docs/eval/<dataset>.json: a row
 * edited by hand, dropped, or left stale after a preset changed shows here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/eval/presets.js';
import { tableOf } from '../../src/eval/report.js';
import type { PresetRow } from '../../src/eval/run.js';
import { ROOT } from '../support/cli.js';

const document = readFileSync(join(ROOT, 'docs', 'EVALUATION.md'), 'utf8');

function committedTable(name: string): string | undefined {
  const open = `<!-- table:${name} -->`;
  const start = document.indexOf(open);
  const end = document.indexOf(`<!-- /table:${name} -->`);
  return start < 0 || end < start ? undefined : document.slice(start + open.length, end).trim();
}

describe('docs/EVALUATION.md tables', () => {
  it.each(PRESETS.map((preset) => [preset.name, preset] as const))('%s: the table is rendered from its committed rows, one row per run and peer of the preset', (name, preset) => {
    const path = join(ROOT, 'docs', 'eval', `${name}.json`);
    expect(existsSync(path)).toBe(true);
    const { rows } = JSON.parse(readFileSync(path, 'utf8')) as { rows: PresetRow[] };
    expect(committedTable(name)).toBe(tableOf(preset, rows).trim());
    expect(rows.filter((row) => row.kind === 'ladder').map((row) => row.label)).toEqual(preset.runs.map((run) => run.label));
  });
});
