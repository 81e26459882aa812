import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { matchmakeJson, runMatchmake } from '../../src/cli/matchmake.js';
import { childEnv } from '../support/test-env.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

function cli(args: string[], input?: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'matchmake', ...args], { cwd: root, encoding: 'utf8', input, env: childEnv() });
}

describe('ladder matchmake (in process)', () => {
  it('pairs 1v1 tickets by rules worked by hand', () => {
    // At now=12: t1 (42, ±2 loose, waited 12 s → still ±2) and t2 (43, ±5) are compatible both ways;
    // t1 allows only eu (na 120 > 80). t3 is na-only and strict ±2 around 90; t4 at 60 is alone in na range.
    const result = runMatchmake(fixture('tickets-1v1.jsonl'), { mode: '1v1', now: 12 });
    expect(JSON.parse(matchmakeJson(result))).toEqual({ matches: [{ region: 'eu', teams: [['t1'], ['t2']] }], waiting: ['t3', 't4'] });
  });

  it('keeps a party together and balances ratings', () => {
    // t1 is a duo (20 + 22 = 42); the solos 25 and 18 make 43 together — the only split that keeps the duo whole.
    const result = runMatchmake(fixture('tickets-2v2.jsonl'), { mode: '2v2', now: 3 });
    expect(JSON.parse(matchmakeJson(result))).toEqual({ matches: [{ region: 'eu', teams: [['t1'], ['t2', 't3']] }], waiting: ['t9'] });
    expect(result.matches[0].quality.balance).toBeCloseTo(43 / 42, 12);
  });

  it('fills backfill requests before forming new matches', () => {
    // b1 (2v2, team 2 one short) takes the oldest ticket near its players (t1, 42); t2–t5 form a new 2v2.
    // b2 is in na, where no ticket can play: it stays open.
    const result = runMatchmake(fixture('tickets-backfill.jsonl'), { mode: '2v2', now: 5 });
    const json = JSON.parse(matchmakeJson(result));
    expect(json.backfills).toEqual([
      {
        id: 'b1',
        match: 'm7',
        region: 'eu',
        added: [[], ['t1']],
        players: [
          ['p1', 'p2'],
          ['p3', 'q1'],
        ],
        open: [0, 0],
        filled: true,
      },
    ]);
    expect(json.waitingBackfills).toEqual(['b2']);
    expect(json.matches).toHaveLength(1);
    expect(json.matches[0].teams.flat().sort()).toEqual(['t2', 't3', 't4', 't5']);
    expect(json.waiting).toEqual([]);
  });

  it('widens with --widen and --widen-every', () => {
    // 40 and 60 with loose ±2: the default schedule (2 → 5 → 10 → 20 every 30 s) reaches 20 at 90 s;
    // --widen 2,20 --widen-every 5 reaches 20 at 5 s.
    const file = fixture('tickets-widen.jsonl');
    expect(runMatchmake(file, { mode: '1v1', now: 89 }).matches).toHaveLength(0);
    expect(runMatchmake(file, { mode: '1v1', now: 90 }).matches).toHaveLength(1);
    expect(runMatchmake(file, { mode: '1v1', now: 4, widen: '2,20', widenEvery: 5 }).matches).toHaveLength(0);
    expect(runMatchmake(file, { mode: '1v1', now: 5, widen: '2,20', widenEvery: 5 }).matches).toHaveLength(1);
    expect(() => runMatchmake(file, { mode: '1v1', now: 5, widen: '2,x' })).toThrow(/--widen\[1\]/);
  });
});

describe('ladder matchmake (spawned CLI)', () => {
  it('prints the JSON document and exits 0', () => {
    const run = cli(['--mode', '1v1', '--now', '12', '--json', fixture('tickets-1v1.jsonl')]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ matches: [{ region: 'eu', teams: [['t1'], ['t2']] }], waiting: ['t3', 't4'] });
  });

  it('prints backfills in the table and documents them in --help', () => {
    const run = cli(['--mode', '2v2', '--now', '5', fixture('tickets-backfill.jsonl')]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/backfill b1 \(match m7, eu\): team 1: none added \(0 open\), team 2: \+t1 \(0 open\), filled/);
    expect(run.stdout).toMatch(/backfills still open \(1\): b2/);
    expect(cli(['--help']).stdout).toMatch(/"backfill":\{"id":"b1"/);
  });

  it('reads standard input and prints a table without --json', () => {
    const run = cli(
      ['--mode', '1v1', '--now', '12', '-'],
      `${'{"id":"a","at":0,"players":[{"id":"x","percentile":50,"pings":{"eu":10}}]}'}\n{"id":"b","at":0,"players":[{"id":"y","percentile":50,"pings":{"eu":20}}]}\n`,
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/region/);
    expect(run.stdout).toMatch(/\beu\b.*\ba\b.*\bb\b/);
  });

  it.each([
    ['bad-percentile.jsonl', /line 2, field players\[0\]\.percentile/],
    ['bad-no-pings.jsonl', /line 2, field players\[0\]\.pings/],
    ['bad-party.jsonl', /line 1, field players: party of 2 is larger than a team of 1/],
    ['bad-duplicate.jsonl', /line 3, field id: duplicate ticket id "t1" \(first on line 1\)/],
    ['bad-json.jsonl', /line 2.*malformed JSON/],
    ['bad-backfill.jsonl', /line 2, field players\.p1: must give the player's percentile/],
  ])('rejects %s: exit 2, message names line and field, nothing on stdout', (name, message) => {
    const run = cli(['--mode', '1v1', '--now', '0', '--json', fixture(name)]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
