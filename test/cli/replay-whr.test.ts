import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFit } from '../../src/cli/fit.js';
import { runReplay } from '../../src/cli/replay.js';
import { ROOT, runLadder, scratchFiles } from '../support/cli.js';

const file = scratchFiles('ladder-replay-whr-');

describe('ladder replay --system whr', () => {
  it('rates the sample log: every player, skills on the Elo scale, the winners on top', () => {
    const result = runLadder(['replay', '--system', 'whr', '--json', join(ROOT, 'examples/sample-matches.jsonl')]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout) as { system: string; players: Array<{ id: string; rating: number; rd: number; matches: number }> };
    expect(output.system).toBe('whr');
    expect(output.players.length).toBeGreaterThan(0);
    for (const p of output.players) {
      expect(Number.isFinite(p.rating)).toBe(true);
      expect(p.rd).toBeGreaterThan(0);
    }
    // The same as the library: the whole log, smoothed to the MAP.
    const direct = runReplay(join(ROOT, 'examples/sample-matches.jsonl'), { system: 'whr' });
    expect(output.players.map((p) => p.id)).toEqual(direct.players.map((p) => p.id));
    output.players.forEach((p, i) => expect(p.rating).toBeCloseTo(direct.players[i]!.rating, 6));
  });

  it('a player who won everything is first; the table prints', () => {
    const log = file(
      'wins.jsonl',
      ['a b', 'a c', 'b c', 'a b']
        .map((pair, i) => {
          const [w, l] = pair.split(' ');
          return JSON.stringify({
            at: `2024-01-0${i + 1}`,
            teams: [
              { players: [w], rank: 1 },
              { players: [l], rank: 2 },
            ],
          });
        })
        .join('\n'),
    );
    const output = runReplay(log, { system: 'whr' });
    expect(output.players.map((p) => p.id)).toEqual(['a', 'b', 'c']);
    const text = runLadder(['replay', '--system', 'whr', log]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^whr: 3 players/);
  });

  it('refuses starting states', () => {
    const players = file('players.json', JSON.stringify([{ id: 'a', rating: 1600 }]));
    const log = file(
      'one.jsonl',
      JSON.stringify({
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      }),
    );
    expect(() => runReplay(log, { system: 'whr', players })).toThrow(/field players/);
  });
});

describe('ladder fit --system whr', () => {
  it('fits the Wiener variance per day and the prior variance on the training part', () => {
    const lines: string[] = [];
    const strength: Record<string, number> = { a: 3, b: 2, c: 1, d: 0 };
    const ids = Object.keys(strength);
    for (let day = 0; day < 60; day++) {
      for (let k = 0; k < 4; k++) {
        const x = ids[(day + k) % 4]!;
        const y = ids[(day + k + 1 + (k % 2)) % 4]!;
        if (x === y) continue;
        const [w, l] = strength[x]! + ((day * 7 + k * 3) % 5) - 2 > strength[y]! ? [x, y] : [y, x];
        lines.push(
          JSON.stringify({
            at: new Date(Date.UTC(2024, 0, 1 + day)).toISOString(),
            teams: [
              { players: [w], rank: 1 },
              { players: [l], rank: 2 },
            ],
          }),
        );
      }
    }
    const log = file('fit.jsonl', lines.join('\n'));
    const { output, test } = runFit(log, { system: 'whr', split: '2024-02-15', evaluate: true, rounds: 1 });
    expect(Object.keys(output.fitted).sort()).toEqual(['dailyVariance', 'priorVariance']);
    expect(output.fitted.dailyVariance).toBeGreaterThan(0);
    expect(test!.test.n).toBeGreaterThan(0);
    expect(Number.isFinite(test!.test.logLoss)).toBe(true);
  });
});
