/**
 * What the command line writes to standard error: usage errors in the
 * `ladder:` format with exit 2, progress bars finished before any other line
 * (and drawn only on a terminal), and a warning for input with nothing in it.
 */
import { describe, expect, it } from 'vitest';
import { runLadder, scratchFiles } from '../support/cli.js';

const file = scratchFiles('ladder-messages-');
const duel = (a: string, b: string, at?: string) =>
  JSON.stringify({
    ...(at && { at }),
    teams: [
      { players: [a], rank: 1 },
      { players: [b], rank: 2 },
    ],
  });

describe('usage errors', () => {
  it.each([
    [['matchmake', 'tickets.jsonl'], /^ladder: required option '--now <seconds>' not specified \(see ladder matchmake --help\)\n$/],
    [['replay', 'log.jsonl'], /^ladder: required option '--system <name>' not specified/],
    [['replay', '--system', 'elo', '--tua', '0.3', 'log.jsonl'], /^ladder: unknown option '--tua'/],
    // An unknown option is named even where a required one is missing too (commander checks those first).
    [['fit', '--sytem', 'elo', 'log.jsonl'], /^ladder: unknown option '--sytem' \(see ladder fit --help\)\n$/],
    [['matchmake', '--nwo=5', 'tickets.jsonl'], /^ladder: unknown option '--nwo' \(see ladder matchmake --help\)\n$/],
    [['replay', '--system', 'elo', '--k', 'abc', 'log.jsonl'], /^ladder: option '--k <x>' argument 'abc' is invalid\. --k takes a number, got "abc"/],
    [['replay', '--system', 'elo'], /^ladder: missing required argument 'matches'/],
    [['fly'], /^ladder: unknown command 'fly' \(see ladder --help\)/],
  ])('ladder %j exits 2 with one ladder: line', (args, message) => {
    const run = runLadder(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  it('help still exits 0', () => {
    const run = runLadder(['replay', '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: ladder replay');
  });
});

describe('progress bars', () => {
  // 20 001 lines (a bar appears from 10 000), one of them invalid and skipped.
  const lines = Array.from({ length: 20_001 }, (_, i) => duel(`a${i % 50}`, `b${i % 37}`));
  lines[15_000] = '{"teams":[{"players":["x"],"rank":1}]}';
  const long = file('long.jsonl', `${lines.join('\n')}\n`);

  it('replay finishes its bar before reporting the skipped lines', () => {
    const run = runLadder(['replay', '--system', 'elo', '--skip-invalid', long], { terminal: true });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('replay [');
    // The message starts a line of its own instead of continuing the bar's.
    expect(run.stderr).toMatch(/lines[^\n]*\nladder: skipped 1 invalid line\(s\):\n {2}line 15001, field teams/);
  });

  it('draws nothing when standard error is not a terminal', () => {
    const run = runLadder(['replay', '--system', 'elo', '--skip-invalid', long]);
    expect(run.stderr).toMatch(/^ladder: skipped 1 invalid line\(s\)/);
  });

  const days = Array.from({ length: 40 }, (_, i) => duel(`p${i % 3}`, `p${(i + 1) % 3}`, new Date(Date.UTC(2023, 0, 1 + i)).toISOString()));
  const log = file('days.jsonl', `${days.join('\n')}\n`);

  it('evaluate and fit show progress on a terminal, and only there', () => {
    const evaluate = runLadder(['evaluate', '--system', 'elo', '--split', '2023-01-31', log], { terminal: true });
    expect(evaluate.status).toBe(0);
    expect(evaluate.stderr).toMatch(/evaluate elo \[=+\] 100% \| 40\/40 matches/);
    const fit = runLadder(['fit', '--system', 'elo', '--split', '2023-01-31', '--rounds', '1', '--evaluate', log], { terminal: true });
    expect(fit.status).toBe(0);
    expect(fit.stderr).toMatch(/fit elo \[=+\] 100% \| (\d+)\/\1 steps/);
    // The result names the runs and the steps the bar counted (a revisited point reuses its run).
    expect(fit.stdout).toMatch(/\(\d+ runs over \d+ search steps;/);
    expect(fit.stderr).toMatch(/evaluate elo \[/);
    const quiet = runLadder(['evaluate', '--system', 'elo', '--split', '2023-01-31', log]);
    expect(quiet.stderr).toBe('');
  });
});

describe('empty input', () => {
  const empty = file('empty.jsonl', '');

  it.each([
    [['replay', '--system', 'glicko2'], 'matches'],
    [['matchmake', '--now', '0'], 'tickets'],
    [['evaluate', '--system', 'elo', '--split', '2020-01-01'], 'matches'],
  ])('ladder %j warns that there is nothing in the file', (args, what) => {
    const run = runLadder([...args, empty]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(`ladder: warning: no ${what} in ${empty}\n`);
  });

  it('a header-only CSV is empty too, and standard input is named as such', () => {
    expect(runLadder(['replay', '--system', 'glicko2', '--map', 'winner=w,loser=l', file('header.csv', 'w,l\n')]).stderr).toMatch(/warning: no matches in .*header\.csv/);
    expect(runLadder(['replay', '--system', 'elo', '-'], { input: '' }).stderr).toBe('ladder: warning: no matches in standard input\n');
  });

  it('performance and fit, which have nothing to compute, exit 2 naming the file', () => {
    const performance = runLadder(['performance', empty]);
    expect(performance.status).toBe(2);
    expect(performance.stderr).toBe(`ladder: field games: no games in ${empty}\n`);
    const fit = runLadder(['fit', '--system', 'elo', '--split', '2020-01-01', empty]);
    expect(fit.status).toBe(2);
    expect(fit.stderr).toBe(`ladder: field matches: no matches in ${empty}: nothing to fit\n`);
  });
});
