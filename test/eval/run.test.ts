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
