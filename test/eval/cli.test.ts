import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pairedText, parseAgainst, runEvaluate } from '../../src/cli/evaluate.js';
import { runFit } from '../../src/cli/fit.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { loadFootball } from '../../src/eval/datasets.js';
import { ROOT, runLadder, scratchFiles } from '../support/cli.js';

const file = scratchFiles('ladder-eval-');
const fourMatches = join(import.meta.dirname, 'fixtures/four-matches.jsonl');

/** A log of 60 days of games among six players whose strength follows their name, then a test part. */
function syntheticLog(testOutcomes: 'as-strength' | 'reversed'): string {
  const lines: string[] = [];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let day = 0; day < 80; day++) {
    const a = Math.floor(random() * 6);
    const b = (a + 1 + Math.floor(random() * 5)) % 6;
    const test = day >= 60;
    const strongerWins = test && testOutcomes === 'reversed' ? false : random() < 0.5 + 0.08 * Math.abs(a - b);
    const aWins = a > b === strongerWins;
    const at = new Date(Date.UTC(2023, 0, 1 + day)).toISOString().slice(0, 10);
    lines.push(
      JSON.stringify({
        at,
        teams: [
          { players: [`p${a}`], rank: aWins ? 1 : 2 },
          { players: [`p${b}`], rank: aWins ? 2 : 1 },
        ],
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('ladder fit', () => {
  it('never reads the test part: the same training part gives the same parameters whatever the test results', () => {
    const a = runFit(file('a.jsonl', syntheticLog('as-strength')), { system: 'elo', split: '2023-03-02' });
    const b = runFit(file('b.jsonl', syntheticLog('reversed')), { system: 'elo', split: '2023-03-02' });
    expect(a.output.training.n).toBe(60);
    expect(a.output.fitted.k).toBe(b.output.fitted.k);
    expect(a.output.training.logLoss).toBe(b.output.training.logLoss);
  });

  it('fits Glicko-2 tau and RD by default, within their ranges', () => {
    const { output } = runFit(file('c.jsonl', syntheticLog('as-strength')), { system: 'glicko2', split: '2023-03-02', rounds: 1 });
    expect(Object.keys(output.fitted).sort()).toEqual(['rd', 'tau']);
    expect(output.fitted.tau).toBeGreaterThanOrEqual(0.05);
    expect(output.fitted.rd).toBeLessThanOrEqual(600);
  });
});

describe('ladder evaluate', () => {
  it('returns the hand-computed metrics of the four-match fixture (see engine.test.ts)', async () => {
    const [result] = await runEvaluate(fourMatches, { system: 'elo', k: 32, split: '2020-01-03' });
    expect(result!.train.n).toBe(2);
    expect(result!.test.n).toBe(2);
    expect(result!.test.logLoss).toBeCloseTo(0.6963736, 6);
  });

  it('prints the documented JSON shape', () => {
    const run = runLadder(['evaluate', '--system', 'elo', '--k', '32', '--split', '2020-01-03', '--json', fourMatches]);
    expect(run.status).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.system).toBe('elo');
    expect(out.test).toMatchObject({ n: 2, accuracy: 0.5 });
    expect(out.test.logLoss).toBeCloseTo(0.6963736, 6);
    expect(out.test.brier).toBeCloseTo(0.2516086, 6);
    expect(out.calibration).toHaveLength(10);
  });

  it('exits 2 naming the line and the field for a bad match', () => {
    const bad = file('bad.jsonl', `${readFileSync(fourMatches, 'utf8')}{"at":"2020-01-05","teams":[{"players":["A"],"rank":1}]}\n`);
    const run = runLadder(['evaluate', '--system', 'elo', '--split', '2020-01-03', bad]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/line 5/);
    expect(run.stderr).toMatch(/field teams/);
    expect(run.stdout).toBe('');
  });

  it('names the line of a match the system itself rejects (WvW needs scores)', async () => {
    await expect(runEvaluate(fourMatches, { system: 'wvw', split: '2020-01-03' })).rejects.toThrow(/line 1, field teams\[0\]\.score/);
  });

  it('warns when the test part is empty instead of printing empty figures silently', () => {
    const run = runLadder(['evaluate', '--system', 'elo', '--split', '2030-01-01', fourMatches]);
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/^ladder: warning: no test match was scored: the test part \(from --split 2030-01-01\) is empty/m);
    const scored = runLadder(['evaluate', '--system', 'elo', '--split', '2020-01-03', fourMatches]);
    expect(scored.stderr).not.toMatch(/no test match was scored/);
  });

  it('--paired: each peer against Ladder, the difference of their log-losses on the same matches, with its standard error', async () => {
    const results = await runEvaluate(fourMatches, { system: 'elo', k: 32, split: '2020-01-03', peers: true, paired: true });
    expect(results).toHaveLength(3);
    expect(results[0]!.paired).toBeUndefined();
    for (const peer of results.slice(1)) {
      expect(peer.paired!.against).toBe(results[0]!.system);
      expect(peer.paired!.n).toBe(2);
      expect(peer.paired!.difference).toBeCloseTo(peer.test.logLoss - results[0]!.test.logLoss, 12);
      expect(peer.paired!.standardError).toBeGreaterThan(0);
    }
    const run = runLadder(['evaluate', '--system', 'elo', '--split', '2020-01-03', '--peers', '--paired', '--json', fourMatches]);
    expect(run.status).toBe(0);
    const out = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(out[0]).not.toHaveProperty('losses');
    expect(out[1]!.paired).toMatchObject({ against: 'elo', n: 2 });
    const text = runLadder(['evaluate', '--system', 'elo', '--split', '2020-01-03', '--peers', '--paired', fourMatches]);
    expect(text.stdout).toMatch(/against elo: log-loss [+−]\d\.\d{5,8} ± \d\.\d{5,8} \(paired standard error over the 2 matches both scored; Newey–West \d\.\d{5,8} over 1 lags\)/);
  });

  it('--paired on a data set: OWL row 11 against Elo fitted, as docs/EVALUATION.md quotes it (+0.00012 ± 0.00442)', async () => {
    const [elo, whr] = await runEvaluate(undefined, { dataset: 'owl', row: [2, 11], peers: false, paired: true });
    expect(elo!.paired).toBeUndefined();
    expect(whr!.paired).toMatchObject({ against: elo!.label, n: 1262 });
    expect(whr!.paired!.difference).toBeCloseTo(whr!.test.logLoss - elo!.test.logLoss, 12);
    expect(whr!.paired!.difference).toBeCloseTo(0.00012, 5);
    expect(whr!.paired!.standardError).toBeCloseTo(0.00442, 5);
    expect(whr!.paired!.lags).toBe(7);
    expect(whr!.paired!.neweyWest).toBeCloseTo(0.00466, 5);
  });

  it('--against scores more systems on the same log, each with its own options, and pairs them with the first', async () => {
    const results = await runEvaluate(fourMatches, { system: 'elo', k: 32, split: '2020-01-03', against: ['elo:k=16', 'glicko2:tau=0.3,rd=200'], paired: true });
    expect(results.map((r) => r.label ?? r.system)).toEqual(['elo', 'elo:k=16', 'glicko2:tau=0.3,rd=200']);
    expect(results[1]!.parameters).toMatchObject({ k: 16 });
    expect(results[2]!.parameters).toMatchObject({ tau: 0.3, rd: 200 });
    // Elo K 16 by hand, as the four-match fixture's K 32 in engine.test.ts: m1 A beats B, m2 B beats C, then the test part.
    const E = (a: number, b: number) => 1 / (1 + 10 ** ((b - a) / 400));
    const [a1, b1] = [1508, 1492];
    const b2 = b1 + 16 * (1 - E(b1, 1500));
    const c2 = 1500 - 16 * (1 - E(b1, 1500));
    const p3 = E(a1, c2); // m3: A won
    const c3 = c2 - 16 * (1 - p3);
    const p4 = E(b2, c3); // m4: C won
    expect(p3).toBeCloseTo(0.523271, 5);
    expect(results[1]!.test.logLoss).toBeCloseTo(-(Math.log(p3) + Math.log(1 - p4)) / 2, 10);
    expect(results[1]!.paired!.difference).toBeCloseTo(results[1]!.test.logLoss - 0.6963736, 6);
    expect(results[2]!.paired!.against).toBe('elo');
  });

  it('--against refuses a bad system or option naming the field, and is for match logs only', async () => {
    expect(parseAgainst('elo:k=40,scale=400')).toEqual({ name: 'elo', options: { k: 40, scale: 400 } });
    expect(parseAgainst(' whr ')).toEqual({ name: 'whr', options: {} });
    expect(() => parseAgainst('nope')).toThrow(/^field against: --against "nope": unknown system "nope"/);
    expect(() => parseAgainst('elo:k')).toThrow(/expected key=value/);
    await expect(runEvaluate(fourMatches, { system: 'elo', split: '2020-01-03', against: ['elo:kk=3'] })).rejects.toThrow(/kk/);
    await expect(runEvaluate(undefined, { dataset: 'owl', against: ['elo'] })).rejects.toThrow(/--against is for a match log/);
    const run = runLadder(['evaluate', '--system', 'elo', '--split', '2020-01-03', '--against', 'elo:k=16', 'nope', '--paired', fourMatches]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/field against/);
  });

  it('prints a paired difference to five places, or to two digits of a smaller error', () => {
    expect(pairedText({ difference: 0.00012, standardError: 0.00442 })).toBe('+0.00012 ± 0.00442');
    expect(pairedText({ difference: -0.00362, standardError: 0.00145 })).toBe('−0.00362 ± 0.00145');
    expect(pairedText({ difference: 0.00007, standardError: 4.3e-6 })).toBe('+0.0000700 ± 0.0000043');
    expect(pairedText({ difference: 0, standardError: 0 })).toBe('+0.00000 ± 0.00000');
    expect(pairedText({ difference: 1e-12, standardError: 1e-13 })).toBe('+0.00000000 ± 0.00000000');
  });

  it('--paired with a single result is refused before anything runs, naming the field', async () => {
    await expect(runEvaluate(fourMatches, { system: 'elo', split: '2020-01-03', paired: true })).rejects.toThrow(/--paired compares two results or more/);
    const run = runLadder(['evaluate', '--dataset', 'owl', '--row', '2', '--paired']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/field paired/);
  });

  it('requires a split and a known system', async () => {
    await expect(runEvaluate(fourMatches, { system: 'elo' })).rejects.toThrow(InvalidInputError);
    await expect(runEvaluate(fourMatches, { system: 'nope', split: '2020-01-03' })).rejects.toThrow(/unknown system/);
  });
});

describe('dataset loaders', () => {
  it('reads football with goals as scores, home only away from neutral venues, friendlies as a context', () => {
    // test/fixtures/football-excerpt.csv: the first six rows of martj42/international_results (CC0).
    const matches = loadFootball(join(ROOT, 'test/fixtures/football-excerpt.csv'));
    expect(matches).toHaveLength(6);
    expect(matches[0]).toMatchObject({
      at: Date.UTC(1872, 10, 30),
      home: 0,
      teams: [
        { players: [{ id: 'Scotland' }], score: 0 },
        { players: [{ id: 'England' }], score: 0 },
      ],
    });
    expect(matches[1]!.teams[0]!.score).toBe(4);
    // The tournament as context: Friendly, or every other one as competitive.
    expect(matches.map((m) => m.context)).toEqual(Array(6).fill('friendly'));
  });
});
