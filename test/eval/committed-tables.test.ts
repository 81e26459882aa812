/**
 * The tables of docs/EVALUATION.md are what `node dist/eval/report.js --out
 * docs` renders from the committed rows in docs/eval/<dataset>.json: a row
 * edited by hand, dropped, or left stale after a preset changed shows here.
 * And the committed rows name the systems and parameters the presets give
 * today (each contender built, not run): a changed default or preset fails
 * here until its rows are measured again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPeers } from '../../src/eval/load-peers.js';
import { createRunContender, PRESETS } from '../../src/eval/presets.js';
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

/**
 * Per-context offsets, Whole-History Rating's horizon (packages/core/src/core/whr/horizon.test.ts) and its newcomer
 * options (whr.test.ts): these values switch them off.
 */
const OFF_UNLESS_SET: Record<string, unknown> = {
  contextK: 0,
  contextRd: 0,
  contextPriorVariance: 0,
  contextDailyVariance: 0,
  horizon: 0,
  newcomerMean: 'zero',
  newcomerTrend: 0,
  newcomerTrendPeriods: 730,
};

describe('docs/EVALUATION.md tables', () => {
  it.each(PRESETS.map((preset) => [preset.name, preset] as const))('%s: the table is rendered from its committed rows, one row per run and peer of the preset', (name, preset) => {
    const path = join(ROOT, 'docs', 'eval', `${name}.json`);
    expect(existsSync(path)).toBe(true);
    const { rows } = JSON.parse(readFileSync(path, 'utf8')) as { rows: PresetRow[] };
    expect(committedTable(name)).toBe(tableOf(preset, rows).trim());
    expect(rows.filter((row) => row.kind === 'ladder').map((row) => row.label)).toEqual(preset.runs.map((run) => run.label));
  });

  it.each(PRESETS.map((preset) => [preset.name, preset] as const))('%s: each committed row has the parameters its preset run or peer gives today', async (name, preset) => {
    const { rows } = JSON.parse(readFileSync(join(ROOT, 'docs', 'eval', `${name}.json`), 'utf8')) as { rows: PresetRow[] };
    const ladder = rows.filter((row) => row.kind === 'ladder');
    preset.runs.forEach((run, i) => {
      const today = { ...createRunContender(run, ladder[i]!.fitted).parameters };
      // Options added after a row was measured, at the value that leaves every rating bit for bit as before
      // (packages/core/src/core/context.test.ts), are the same run: a row without them is not stale.
      for (const [option, off] of Object.entries(OFF_UNLESS_SET)) if (!(option in ladder[i]!.parameters) && today[option] === off) delete today[option];
      // How context deviations are smoothed is no option of a run without them.
      if (!(Number(today.contextPriorVariance) > 0) && !('contextInference' in ladder[i]!.parameters)) delete today.contextInference;
      // Nor are when a freeze takes effect and how it is replayed options of a run without a horizon.
      for (const option of ['freezeLag', 'freezeSweeps']) if (!(Number(today.horizon) > 0) && !(option in ladder[i]!.parameters)) delete today[option];
      expect(ladder[i]!.parameters, `row ${i + 1}, ${run.label}`).toEqual(today);
    });
    const { openSkillContender, trueSkillContender } = await loadPeers();
    const peers = preset.peers.flatMap((config) => [
      ...(config.openskill ? [{ contender: openSkillContender(config.openskill), ownDraw: true }] : []),
      // Where the preset leaves TrueSkill's draw rate to the data (the training part's draw share), the row's own is taken.
      ...(config.trueskill ? [{ contender: trueSkillContender({ drawProbability: 0, ...config.trueskill }), ownDraw: config.trueskill.drawProbability !== undefined }] : []),
    ]);
    const peerRows = rows.filter((row) => row.kind === 'peer');
    expect(peerRows.map((row) => row.label.split(' (')[0])).toEqual(peers.map((peer) => peer.contender.label));
    peers.forEach(({ contender, ownDraw }, i) => {
      const row = peerRows[i]!;
      const expected = { ...contender.parameters };
      if (!ownDraw && 'drawProbability' in row.parameters) expected.drawProbability = row.parameters.drawProbability!;
      expect(row.parameters, row.label).toEqual(expected);
    });
  });
});
