/**
 * The progress bars of the long commands (replay, evaluate, fit, simulate,
 * rebuild), driven in-process: each command's run function is given a fake
 * bar factory or a fake terminal stream, and the test counts what the bars
 * were told. Nothing here is timed.
 */
import { describe, expect, it } from 'vitest';
import { runFit } from '../../src/cli/fit.js';
import { rebuildProgress } from '../../src/cli/rebuild.js';
import { type ReplayPhase, replayProgress, runReplay } from '../../src/cli/replay.js';
import { runEvaluate } from '../../src/cli/evaluate.js';
import { runSimulate } from '../../src/cli/simulate.js';
import { finishProgress, type ProgressStarter, type ReportStream } from '../../src/cli/stderr.js';
import { counted } from '../../src/service/rebuild.js';
import type { StoredMatch } from '../../src/service/rating.js';
import { scratchFiles } from '../support/cli.js';

const file = scratchFiles('ladder-progress-');

/** A bar factory that records every bar started and every update and finish it gets. */
function recorder() {
  const bars: Array<{ label: string; total: number; unit: string; updates: number[]; finished: boolean }> = [];
  const progress: ProgressStarter = (label, total, unit) => {
    const bar = { label, total, unit, updates: [] as number[], finished: false };
    bars.push(bar);
    return { update: (done) => bar.updates.push(done), finish: () => (bar.finished = true) };
  };
  return { bars, progress };
}

/** A stream that says it is a terminal and keeps what is written to it. */
function fakeTerminal(isTTY = true): ReportStream & { text: string } {
  const stream = { isTTY, text: '', write: (chunk: string) => ((stream.text += chunk), true) };
  return stream;
}

// 25 000 one-against-one games between numbered players: long enough for two reports of 10 000.
const GAMES = 25_000;
const csvLines = Array.from({ length: GAMES }, (_, i) => `${i % 97},${(i % 89) + 100}`);
const csv = file('games.csv', `winner,loser\n${csvLines.join('\n')}\n`);
const jsonl = file(
  'games.jsonl',
  `${csvLines
    .map((line) => {
      const [w, l] = line.split(',');
      return JSON.stringify({
        teams: [
          { players: [w], rank: 1 },
          { players: [l], rank: 2 },
        ],
      });
    })
    .join('\n')}\n`,
);

describe('replay', () => {
  const phases = (source: string, system: string) => {
    const calls: Array<[number, number, ReplayPhase]> = [];
    runReplay(source, { system }, { onProgress: (done, total, phase) => calls.push([done, total, phase]) });
    return calls;
  };

  it.each(['elo', 'glicko2'])('%s on CSV (the fast path) reports reading the lines, then rating the games', (system) => {
    const calls = phases(csv, system);
    expect(calls.filter(([, , phase]) => phase === 'reading')).toEqual([
      [10_000, GAMES + 2, 'reading'],
      [20_000, GAMES + 2, 'reading'],
    ]);
    expect(calls.filter(([, , phase]) => phase === 'rating')).toEqual([
      [10_000, GAMES, 'rating'],
      [20_000, GAMES, 'rating'],
    ]);
    // Reading comes first: the bar never goes back to the log once rating began.
    expect(calls.findIndex(([, , phase]) => phase === 'rating')).toBe(2);
  });

  it('a whole-history system reports reading the log, then the start and end of its rating', () => {
    const calls = phases(jsonl, 'whr');
    expect(calls).toEqual([
      [10_000, GAMES + 1, 'reading'],
      [20_000, GAMES + 1, 'reading'],
      [0, GAMES, 'rating'],
      [GAMES, GAMES, 'rating'],
    ]);
  });

  it('a JSON Lines log is read and rated line by line under one bar', () => {
    const calls = phases(jsonl, 'elo');
    expect(calls).toEqual([
      [10_000, GAMES + 1, 'lines'],
      [20_000, GAMES + 1, 'lines'],
    ]);
  });

  it('the bar does not change the ratings', () => {
    for (const system of ['elo', 'glicko2']) {
      const watched = runReplay(csv, { system }, { onProgress: () => {} });
      expect(runReplay(csv, { system })).toEqual(watched);
    }
  });

  it('draws the phases as bars on a terminal, and nothing off one', () => {
    const terminal = fakeTerminal();
    runReplay(csv, { system: 'elo' }, { onProgress: replayProgress(terminal) });
    finishProgress();
    expect(terminal.text).toContain('replay: reading [');
    expect(terminal.text).toMatch(/replay: rating \[[^\n]*\| 20000\/25000 matches/);
    expect(replayProgress(fakeTerminal(false))).toBeUndefined();
  });

  it('a short log reports nothing, so no bar appears', () => {
    const short = file('short.csv', 'winner,loser\n1,2\n2,3\n');
    expect(phases(short, 'glicko2')).toEqual([]);
  });
});

// 40 daily games among three players, the last ten after the split.
const days = Array.from({ length: 40 }, (_, i) =>
  JSON.stringify({
    at: new Date(Date.UTC(2023, 0, 1 + i)).toISOString(),
    teams: [
      { players: [`p${i % 3}`], rank: 1 },
      { players: [`p${(i + 1) % 3}`], rank: 2 },
    ],
  }),
);
const log = file('days.jsonl', `${days.join('\n')}\n`);

describe('evaluate and fit', () => {
  it('evaluate drives one bar over the matches to its end', async () => {
    const { bars, progress } = recorder();
    await runEvaluate(log, { system: 'elo', split: '2023-01-31' }, progress);
    expect(bars.map((b) => [b.label, b.total, b.unit, b.finished])).toEqual([['evaluate elo', 40, 'matches', true]]);
    expect(bars[0]!.updates.at(-1)).toBe(40);
  });

  it('fit drives a bar over its search steps, ending at the total', () => {
    const { bars, progress } = recorder();
    const { output } = runFit(log, { system: 'elo', split: '2023-01-31', rounds: 1 }, progress);
    const fit = bars.find((b) => b.label === 'fit elo')!;
    expect(fit.unit).toBe('steps');
    expect(fit.updates.length).toBeGreaterThan(1);
    expect(fit.updates.at(-1)).toBe(fit.total);
    expect(fit.finished).toBe(true);
    // The result counts what the bar counted: its steps, and the runs among them (a revisited point reuses its run).
    expect(output.steps).toBe(fit.total);
    expect(output.evaluations).toBeLessThan(output.steps);
  });
});

describe('simulate', () => {
  it('drives one bar per system over the simulated ticks, ending at the total', () => {
    const { bars, progress } = recorder();
    runSimulate({ players: 40, days: 0.25, mode: '1v1', systems: 'glicko2,elo' }, progress);
    // 6 hours in 10-second ticks: one report an hour, then the end.
    expect(bars.map((b) => [b.label, b.total, b.unit, b.finished])).toEqual([
      ['simulate glicko2', 2160, 'ticks', true],
      ['simulate elo', 2160, 'ticks', true],
    ]);
    expect(bars[0]!.updates).toEqual([0, 360, 720, 1080, 1440, 1800, 2160]);
  });

  it('gives the same report with a bar as without', () => {
    const options = { players: 40, days: 0.25, mode: '1v1', systems: 'glicko2' };
    expect(runSimulate(options, recorder().progress)).toEqual(runSimulate(options));
  });
});

describe('rebuild', () => {
  const stored = (n: number): StoredMatch[] =>
    Array.from({ length: n }, (_, i) => ({
      seq: i + 1,
      id: `m${i}`,
      at: i,
      round: null,
      voided: false,
      body: {
        teams: [
          { players: [{ id: 'a' }], rank: 1 },
          { players: [{ id: 'b' }], rank: 2 },
        ],
      },
    }));

  it('counts the stored matches as the replay takes them, every 1 000 and at the end', () => {
    const calls: Array<[number, number]> = [];
    const handed = [...counted(stored(2_500), (done, total) => calls.push([done, total]))];
    expect(handed).toHaveLength(2_500);
    expect(calls).toEqual([
      [0, 2_500],
      [1_000, 2_500],
      [2_000, 2_500],
      [2_500, 2_500],
    ]);
  });

  it("draws one bar per ladder, named after it, finished at the ladder's last match", () => {
    const { bars, progress } = recorder();
    const onProgress = rebuildProgress('duels', progress);
    for (const done of [0, 1_000, 2_000, 2_500]) onProgress(done, 2_500);
    expect(bars).toEqual([{ label: 'rebuild duels', total: 2_500, unit: 'matches', updates: [0, 1_000, 2_000, 2_500], finished: true }]);
  });
});
