import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { computePerformance, formatPerformance } from '../src/cli/performance.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { childEnv } from './support/test-env.js';

const root = join(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'ladder-performance-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
}

const line = (opponent: number, result: string, weight?: number) => JSON.stringify({ opponent, result, ...(weight !== undefined && { weight }) });
// The performance-rating post's run: three wins then three losses, all against 1500.
const seedText = [line(1500, 'win'), line(1500, 'win'), line(1500, 'win'), line(1500, 'loss'), line(1500, 'loss'), line(1500, 'loss')].join('\n') + '\n';
const seedFile = file('seed.jsonl', seedText);

/**
 * Runs `ladder performance ...` in a child process through tsx, registering
 * only this command, so the test exercises commander parsing, exit codes and
 * stdout/stderr without depending on a build or on the other commands.
 */
function ladder(args: string[], stdin?: string) {
  const script = [
    "import { Command } from 'commander';",
    "import { register } from './src/cli/performance.ts';",
    'const program = new Command().name("ladder");',
    'register(program);',
    "await program.parseAsync(process.argv.slice(1), { from: 'user' });",
  ].join('\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, '--', 'performance', ...args], {
    cwd: root,
    input: stdin ?? '',
    encoding: 'utf8',
    env: childEnv(),
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('computePerformance', () => {
  it("rates the performance-rating post's run with every method", () => {
    expect(computePerformance(seedFile, { method: 'algo400' }).rating).toBe(1500);
    expect(computePerformance(seedFile, { method: 'ml' }).rating).toBeCloseTo(1500, 9);
    expect(computePerformance(seedFile, { method: 'netzero-unordered' }).rating).toBeCloseTo(1500, 9);
    // Netzero with Elo K = 32: 1475.4715729689282752 (mpmath, see packages/core/src/core/performance.test.ts).
    expect(computePerformance(seedFile, { method: 'netzero' }).rating).toBeCloseTo(1475.4715729689282752, 8);
  });

  it('passes --k to the netzero replay', () => {
    // Same equation as for K = 32 with K = 16, solved by mpmath.findroot at 40 digits:
    // 1487.8646809117437716 (a smaller K makes smaller swings, so closer to 1500).
    expect(computePerformance(seedFile, { method: 'netzero', k: 16 }).rating).toBeCloseTo(1487.8646809117437716, 8);
  });

  it('prints a readable line with the tier display', () => {
    expect(formatPerformance({ method: 'netzero', rating: 1475.4715729689282752, games: 6 })).toBe('netzero performance rating: 1475.47 (Tier 5 · 75%) over 6 games');
  });

  it('names the line and field of bad input', () => {
    const bad = file('bad-result.jsonl', `${line(1500, 'win')}\n\n${line(1500, 'won')}\n`);
    try {
      computePerformance(bad, { method: 'ml' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).line).toBe(3);
      expect((error as InvalidInputError).field).toBe('result');
    }
  });
});

describe('ladder performance (process)', () => {
  it('prints {"method","rating"} with --json, reading stdin for -', () => {
    const run = ladder(['--method', 'netzero', '--json', '-'], seedText);
    expect(run.status).toBe(0);
    const printed = JSON.parse(run.stdout) as { method: string; rating: number };
    expect(printed.method).toBe('netzero');
    expect(printed.rating).toBeCloseTo(1475.4715729689282752, 8);
  });

  it('prints a readable line without --json', () => {
    const run = ladder(['--method', 'algo400', seedFile]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('algo400 performance rating: 1500.00 (Tier 6 · 0%) over 6 games\n');
  });

  it('weighs blitz games through the weight field', () => {
    // (1 * (1600 + 400) + (1/3) * (1400 - 400)) / (4/3) = 1750.
    const weighted = file('weighted.jsonl', `${line(1600, 'win')}\n${line(1400, 'loss', 1 / 3)}\n`);
    const run = ladder(['--json', weighted]);
    expect(run.status).toBe(0);
    expect((JSON.parse(run.stdout) as { rating: number }).rating).toBeCloseTo(1750, 9);
  });

  const failures: Array<[string, string[], string | undefined, RegExp]> = [
    ['a malformed line', [file('malformed.jsonl', `${line(1500, 'win')}\n{"opponent":1500,\n`)], undefined, /line 2.*malformed JSON/],
    ['a non-numeric opponent', [file('opponent.jsonl', `${line(1500, 'win')}\n{"opponent":"x","result":"win"}\n`)], undefined, /line 2, field opponent/],
    ['a negative weight', [file('weight.jsonl', `{"opponent":1500,"result":"win","weight":-1}\n`)], undefined, /line 1, field weight/],
    ['an unknown method', ['--method', 'elo', seedFile], undefined, /field --method: unknown method "elo"/],
    ['an empty record', ['-'], '\n', /no games in standard input/],
    ['a missing file', [join(scratch, 'absent.jsonl')], undefined, /no such file/],
  ];
  for (const [what, args, stdin, message] of failures) {
    it(`exits 2 with a message on stderr and nothing on stdout for ${what}`, () => {
      const run = ladder(args, stdin);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
    });
  }

  it('exits 2 for an all-wins record under --unbounded throw, and clamps by default', () => {
    const wins = file('wins.jsonl', `${line(1500, 'win')}\n${line(1700, 'win')}\n`);
    const thrown = ladder(['--method', 'ml', '--unbounded', 'throw', wins]);
    expect(thrown.status).toBe(2);
    expect(thrown.stdout).toBe('');
    expect(thrown.stderr).toMatch(/only wins/);
    const clamped = ladder(['--method', 'ml', '--json', wins]);
    expect(JSON.parse(clamped.stdout)).toEqual({ method: 'ml', rating: 2500 });
  });
});
