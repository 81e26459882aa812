import { describe, expect, it } from 'vitest';
import { parseMatch } from '../../src/core/match.js';
import { createSystem } from '../../src/core/systems.js';
import { parseColumnMap, parseMatchLog } from '../../src/io/matches.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const football = readFileSync(join(import.meta.dirname, '../fixtures/football-excerpt.csv'), 'utf8');

describe('match logs', () => {
  it('reads the football excerpt with a mapping, home from the neutral column', () => {
    const map = parseColumnMap('a=home_team,b=away_team,scoreA=home_score,scoreB=away_score,at=date,neutral=neutral');
    const matches = [...parseMatchLog(football, 'csv', { map })].map((m) => m.match);
    expect(matches).toHaveLength(6);
    expect(matches[1]).toEqual({
      teams: [{ players: [{ id: 'England' }], score: 4 }, { players: [{ id: 'Scotland' }], score: 2 }],
      at: Date.UTC(1873, 2, 8),
      home: 0,
    });
  });

  it('names the line and field of a bad CSV row', () => {
    const map = parseColumnMap('a=home_team,b=away_team,scoreA=home_score,scoreB=away_score');
    const bad = football.replace('England,Scotland,4,2', 'England,Scotland,four,2');
    expect(() => [...parseMatchLog(bad, 'csv', { map })]).toThrow(/line 3, field scoreA: must be a finite, non-negative number, got "four"/);
    expect(() => parseColumnMap('winner')).toThrow(/field map: expected key=column/);
    expect(() => parseColumnMap('champion=x')).toThrow(/unknown key "champion"/);
    expect(() => [...parseMatchLog('x,y\n1,2\n', 'csv', {})]).toThrow(/line 1, field map: the CSV needs winner and loser columns/);
  });

  it('validates home', () => {
    expect(parseMatch({ home: 1, teams: [{ players: ['a'], rank: 1 }, { players: ['b'], rank: 2 }] }).home).toBe(1);
    expect(() => parseMatch({ home: 2, teams: [{ players: ['a'], rank: 1 }, { players: ['b'], rank: 2 }] })).toThrow(/field home: must be the index of a team/);
  });
});

describe('team rank over a period of several matches', () => {
  it('rates them in order, each seeing the ones before', () => {
    const system = createSystem('teamrank');
    const m1 = { teams: [{ players: [{ id: 'a' }], rank: 1 }, { players: [{ id: 'b' }], rank: 2 }] };
    const m2 = { teams: [{ players: [{ id: 'a' }], rank: 1 }, { players: [{ id: 'c' }], rank: 2 }] };
    const [r1, r2] = system.ratePeriod([m1, m2], new Map());
    // a: 1.00 -> 1.05 (win against an equal), then 1.05 + 1.05/20 * (1.00/1.05) = 1.10.
    expect(r1!.players[0]!.after.rating).toBe(1.05);
    expect(r2!.players[0]!.before.rating).toBe(1.05);
    expect(r2!.players[0]!.after.rating).toBe(1.1);
  });
});
