import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EvalMatch } from '../../src/eval/contenders.js';
import type { DatasetPreset } from '../../src/eval/presets.js';
import { type PresetRow, runPreset } from '../../src/eval/run.js';

const DAY = 86_400_000;
const matches: EvalMatch[] = Array.from({ length: 40 }, (_, i) => ({
  at: i * DAY,
  teams: [
    { players: [{ id: `p${i % 4}` }], rank: 1 },
    { players: [{ id: `p${(i + 1 + (i % 3)) % 4}` }], rank: 2 },
  ],
})).filter((m) => m.teams[0]!.players[0]!.id !== m.teams[1]!.players[0]!.id);

const preset: DatasetPreset = {
  name: 'tiny',
  title: 'tiny',
  split: 'day 30',
  load: () => matches,
  isTest: (m) => m.at! >= 30 * DAY,
  runs: [
    { label: 'elo, K 32', system: 'elo' },
    { label: 'whr, defaults', system: 'whr' },
  ],
  peers: [],
  published: [],
};

describe("runPreset: reusing measured rows (the report's --keep)", () => {
  afterEach(() => vi.unstubAllEnvs());

  it('takes a kept row as it was, numbered anew, and runs the rest', async () => {
    vi.stubEnv('LADDER_DATA', tmpdir());
    const fresh = await runPreset(preset, { peers: false });
    expect(fresh.rows.map((r) => r.label)).toEqual(['elo, K 32', 'whr, defaults']);
    const kept: PresetRow = { ...fresh.rows[0]!, row: 7, seconds: 123 };
    const asked: string[] = [];
    const again = await runPreset(preset, {
      peers: false,
      reuse: (kind, label) => {
        asked.push(`${kind}:${label}`);
        return label === 'elo, K 32' ? kept : undefined;
      },
    });
    expect(asked).toEqual(['ladder:elo, K 32', 'ladder:whr, defaults']);
    expect(again.rows[0]).toEqual({ ...kept, row: 1 });
    // The row not kept is run again, with the same result.
    expect(again.rows[1]!.row).toBe(2);
    expect(again.rows[1]!.test).toEqual(fresh.rows[1]!.test);
  });
});

describe('runPreset: --param over a row (ladder evaluate --dataset … --row N --param k=v)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('runs the row with those options changed, named so, and refuses a parameter the row fits', async () => {
    vi.stubEnv('LADDER_DATA', tmpdir());
    const plain = await runPreset(preset, { peers: false, rows: [2] });
    const changed = await runPreset(preset, { peers: false, rows: [2], params: { horizon: 10, inference: 'ep' } });
    expect(changed.rows.map((r) => r.label)).toEqual(['whr, defaults, with horizon 10, inference ep']);
    expect(changed.rows[0]!.parameters).toMatchObject({ horizon: 10, inference: 'ep' });
    expect(plain.rows[0]!.parameters).toMatchObject({ horizon: 0 });
    // The horizon freezes the first days of the 40: the predictions move.
    expect(changed.rows[0]!.test.logLoss).not.toBe(plain.rows[0]!.test.logLoss);
    const fitted: DatasetPreset = { ...preset, runs: [{ label: 'elo, K fitted', system: 'elo', fit: [{ name: 'k', min: 4, max: 64 }] }] };
    await expect(runPreset(fitted, { peers: false, params: { k: 20 } })).rejects.toMatchObject({ field: 'param', message: expect.stringContaining('fits k') });
  });
});
