import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rebuildVerdict } from '../../src/cli/rebuild.js';
import { NO_DATA, runSimulate, simulateText } from '../../src/cli/simulate.js';
import { runLadder } from '../support/cli.js';

describe('ladder simulate on runs too small for some figures', () => {
  it('shows – instead of NaN and says why: no match at all', () => {
    const text = simulateText(runSimulate({ players: 12, days: 0.05, systems: 'glicko2' }));
    expect(text).not.toContain('NaN');
    expect(text).toContain(`wait (s) all: p50 ${NO_DATA} p90 ${NO_DATA} p99 ${NO_DATA}`);
    expect(text).toContain(`${NO_DATA} no match formed: 12 players in 0.05 day(s) never filled two teams of 6`);
  });

  it('shows – instead of NaN and says why: matches, but no player reached 10', () => {
    const text = simulateText(runSimulate({ players: 60, days: 0.3, systems: 'glicko2', mode: '1v1' }));
    expect(text).not.toContain('NaN');
    expect(text).toMatch(/after 1\/10\/20\/40 matches: \d+\.\d \/ – \/ – \/ –/);
    expect(text).toContain(`${NO_DATA} no player reached 10 match(es), so the error curve stops before it`);
  });
});

describe('ladder rebuild verdict', () => {
  const ok = { differences: [], fixed: false };
  const off = (players: number, fixed = false) => ({ differences: Array.from({ length: players }, (_, i) => ({ id: `p${i}` })), fixed });

  it('names every outcome in one line', () => {
    expect(rebuildVerdict([], false)).toBe('no ladders: nothing to replay');
    expect(rebuildVerdict([ok], false)).toBe('the ladder matches its stored matches');
    expect(rebuildVerdict([ok, ok, ok], false)).toBe('all 3 ladders match their stored matches');
    expect(rebuildVerdict([ok, off(2)], false)).toBe('1 of 2 ladders differ from their stored matches (2 players): run with --fix to rewrite them from the replay');
    expect(rebuildVerdict([off(1, true), off(1, true)], true)).toBe('2 of 2 ladders differ from their stored matches (2 players): rewritten from the replay');
  });

  const data = mkdtempSync(join(tmpdir(), 'ladder-rebuild-'));
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('prints its verdict on an empty database instead of nothing', () => {
    const run = runLadder(['rebuild', '--data', join(data, 'db')], { env: { DATABASE_URL: '' } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('no ladders: nothing to replay\n');
  });
});
