/**
 * `ladder fit --candidates`: model selection on the training part only. Each
 * candidate is fitted (or, with `--fit none`, scored as given) on the
 * training part, the last 30 % of it being the validation part, and the
 * lowest validation log-loss is chosen. The logs here are built so that the
 * test part, were it read, would choose the other candidate.
 */
import { describe, expect, it } from 'vitest';
import { runFit } from '../../src/cli/fit.js';
import type { Contender, EvalMatch } from '../../src/eval/contenders.js';
import { fitParameters, parseCandidates } from '../../src/eval/fit.js';
import { runLadder, scratchFiles } from '../support/cli.js';

const file = scratchFiles('ladder-select-');
const SPLIT = '2023-09-01';

/**
 * Eight players whose strength follows their number, three games a day for
 * 243 days of training (2023-01-01 to 2023-08-31); then 60 days of test in
 * which the strengths are the same (`steady`) or reversed (`reversed`).
 */
function log(test: 'steady' | 'reversed'): string {
  const lines: string[] = [];
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let day = 0; day < 303; day++) {
    const at = new Date(Date.UTC(2023, 0, 1 + day)).toISOString().slice(0, 10);
    const reversed = test === 'reversed' && at >= SPLIT;
    for (let g = 0; g < 3; g++) {
      const a = Math.floor(random() * 8);
      const b = (a + 1 + Math.floor(random() * 7)) % 8;
      const strength = (i: number) => (reversed ? 7 - i : i);
      const aWins = random() < 1 / (1 + Math.exp(-0.6 * (strength(a) - strength(b))));
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
  }
  return `${lines.join('\n')}\n`;
}

/** A slow drift (right for the steady training part) against a fast one (right once the strengths reverse). */
const SLOW = 'inference=ep,cycle=8,dailyVariance=0.0002,priorVariance=1';
const FAST = 'inference=ep,cycle=8,dailyVariance=0.05,priorVariance=1';

describe('ladder fit --candidates', () => {
  it('parses candidates: ";" between them, "," between options, numbers where they parse', () => {
    expect(parseCandidates('inference=map; inference=ep,cycle=8')).toEqual([{ inference: 'map' }, { inference: 'ep', cycle: 8 }]);
    expect(() => parseCandidates('inference')).toThrow(/key=value/);
    expect(() => parseCandidates(' ; ')).toThrow(/candidates/);
  });

  it('chooses on the validation part alone: a test part that would choose the other candidate changes nothing', () => {
    const steady = file('steady.jsonl', log('steady'));
    const reversed = file('reversed.jsonl', log('reversed'));
    const options = { system: 'whr', split: SPLIT, fit: 'none', candidates: `${SLOW};${FAST}`, evaluate: true };
    const a = runFit(steady, options);
    const b = runFit(reversed, options);
    expect(a.output.training.n).toBe(243 * 3);
    // The slow drift wins on the validation part, for both logs, with the same figures to the bit.
    expect(a.output.selection!.chosen).toBe(0);
    expect(b.output.selection).toEqual(a.output.selection);
    expect(b.output.parameters).toEqual(a.output.parameters);
    expect(a.output.selection!.candidates[0]!.logLoss).toBeLessThan(a.output.selection!.candidates[1]!.logLoss);
    // Each candidate against the chosen one, match by match over the validation part: the chosen is 0 ± 0.
    const [slow, fast] = a.output.selection!.candidates;
    expect(slow!.againstChosen).toMatchObject({ n: a.output.training.scored, difference: 0, standardError: 0, neweyWest: 0 });
    expect(fast!.againstChosen.n).toBe(a.output.training.scored);
    expect(fast!.againstChosen.difference).toBeCloseTo(fast!.logLoss - slow!.logLoss, 12);
    expect(fast!.againstChosen.standardError).toBeGreaterThan(0);
    // The reversed test part, scored once for the chosen candidate; scored for the other, it would have chosen the fast drift.
    const fastOnTest = runFit(reversed, { ...options, candidates: FAST }).test!;
    expect(b.test!.test.n).toBe(60 * 3);
    expect(fastOnTest.test.logLoss).toBeLessThan(b.test!.test.logLoss);
  });

  it('prints each candidate behind the chosen one with the paired standard error', () => {
    const steady = file('print.jsonl', log('steady'));
    const run = runLadder(['fit', '--system', 'whr', '--split', SPLIT, '--fit', 'none', '--candidates', `${SLOW};${FAST}`, steady]);
    expect(run.status).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^\* inference=ep,cycle=8,dailyVariance=0\.0002,priorVariance=1: validation log-loss \d\.\d{4}$/);
    expect(lines[1]).toMatch(
      /^ {2}inference=ep,cycle=8,dailyVariance=0\.05,priorVariance=1: validation log-loss \d\.\d{4}, \+\d\.\d{5,8} ± \d\.\d{5,8} against the chosen \(Newey–West \d\.\d{5,8} over \d+ lags\)$/,
    );
  });

  it('fits each candidate, and an unknown option of a candidate fails before any run, naming it', () => {
    const steady = file('fit.jsonl', log('steady'));
    const { output } = runFit(steady, { system: 'whr', split: SPLIT, candidates: 'inference=map;inference=ep', fit: 'dailyVariance', rounds: 1, tolerance: 0.5 });
    expect(output.selection!.candidates.map((c) => Object.keys(c.fitted))).toEqual([['dailyVariance'], ['dailyVariance']]);
    const chosen = output.selection!.candidates[output.selection!.chosen]!;
    expect(output.training.logLoss).toBe(chosen.logLoss);
    expect(output.parameters).toMatchObject({ ...chosen.options, ...chosen.fitted });
    expect(Math.min(...output.selection!.candidates.map((c) => c.logLoss))).toBe(chosen.logLoss);
    // The paired difference reads each candidate's losses at its fitted parameters: it is the difference of the log-losses.
    for (const c of output.selection!.candidates) expect(c.againstChosen.difference).toBeCloseTo(c.logLoss - chosen.logLoss, 12);
    expect(() => runFit(steady, { system: 'whr', split: SPLIT, candidates: 'inference=ep,windw=8', fit: 'none' })).toThrow(/windw/);
  });
});

describe('fitParameters', () => {
  it("keeps the validation losses of the point it ends on, even when an earlier search's point was better", () => {
    // Team 0 wins every match. The contender predicts 0.9 only at exactly b = 1 (the start of b's search, the geometric
    // mean of 0.1 and 10) and 0.6 elsewhere: the best point is visited while a is searched, and b's own search, which
    // never lands on exactly 1, ends elsewhere. The losses kept must be the end point's (−ln 0.6), from one more run.
    const matches: EvalMatch[] = Array.from({ length: 40 }, (_, i) => ({
      at: Date.UTC(2024, 0, 1 + i),
      teams: [
        { players: [{ id: 'x' }], rank: 1 },
        { players: [{ id: 'y' }], rank: 2 },
      ],
    }));
    const make = (parameters: Record<string, number>): Contender => ({
      label: 'spike',
      parameters,
      predict: () => (parameters.b === 1 ? 0.9 : 0.6),
      update: () => {},
      known: () => true,
    });
    const specs = [
      { name: 'a', min: 0.1, max: 10 },
      { name: 'b', min: 0.1, max: 10 },
    ];
    const seen: number[] = [];
    const fit = fitParameters(make, matches, specs, { rounds: 1, tolerance: 0.5, draws: 'none', onEvaluation: (_, loss) => seen.push(loss) });
    // The spike was visited (while a was searched), and is better than where the search ends.
    expect(Math.min(...seen)).toBeCloseTo(-Math.log(0.9), 12);
    expect(fit.parameters.b).not.toBe(1);
    expect(fit.trainingLogLoss).toBeCloseTo(-Math.log(0.6), 12);
    expect(fit.validationLosses.losses).toHaveLength(fit.scoredMatches);
    for (const loss of fit.validationLosses.losses) expect(loss).toBeCloseTo(-Math.log(0.6), 12);
    // The extra run is counted: one run per distinct point visited, plus the end point's again.
    expect(fit.evaluations).toBe(seen.length + 1);
  });
});
