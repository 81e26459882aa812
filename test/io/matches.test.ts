import { describe, expect, it } from 'vitest';
import { parseMatch } from 'ladder-core/core/match.js';
import { createSystem } from 'ladder-core/core/systems.js';
import { parseColumnMap, parseMatchLog, parsePairwiseCsv } from '../../src/io/matches.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const football = readFileSync(join(import.meta.dirname, '../fixtures/football-excerpt.csv'), 'utf8');

describe('match logs', () => {
  it('reads the football excerpt with a mapping, home from the neutral column', () => {
    const map = parseColumnMap('a=home_team,b=away_team,scoreA=home_score,scoreB=away_score,at=date,neutral=neutral');
    const matches = [...parseMatchLog(football, 'csv', { map })].map((m) => m.match);
    expect(matches).toHaveLength(6);
    expect(matches[1]).toEqual({
      teams: [
        { players: [{ id: 'England' }], score: 4 },
        { players: [{ id: 'Scotland' }], score: 2 },
      ],
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

  it('reads a context column, as tennis levels in the ATP files (context=tourney_level), naming the line of a bad one', () => {
    const csv = 'tourney_level,winner_id,loser_id\nG,1,2\n,2,3\nM,3,1\n';
    const matches = [...parseMatchLog(csv, 'csv', { map: parseColumnMap('winner=winner_id,loser=loser_id,context=tourney_level') })].map((m) => m.match);
    expect(matches.map((m) => m.context)).toEqual(['G', undefined, 'M']);
    // The pairwise scanner leaves a log with contexts to the general reader.
    expect(parsePairwiseCsv(csv, parseColumnMap('winner=winner_id,loser=loser_id,context=tourney_level'))).toBeUndefined();
    const long = `tourney_level,winner_id,loser_id\nG,1,2\n${'x'.repeat(65)},2,3\n`;
    expect(() => [...parseMatchLog(long, 'csv', { map: parseColumnMap('winner=winner_id,loser=loser_id,context=tourney_level') })]).toThrow(
      /line 3, field context: must be at most 64 characters/,
    );
  });

  it('validates home', () => {
    expect(
      parseMatch({
        home: 1,
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      }).home,
    ).toBe(1);
    expect(() =>
      parseMatch({
        home: 2,
        teams: [
          { players: ['a'], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      }),
    ).toThrow(/field home: must be the index of a team/);
  });
});

describe('team rank over a period of several matches', () => {
  it('rates them in order, each seeing the ones before', () => {
    const system = createSystem('teamrank');
    const m1 = {
      teams: [
        { players: [{ id: 'a' }], rank: 1 },
        { players: [{ id: 'b' }], rank: 2 },
      ],
    };
    const m2 = {
      teams: [
        { players: [{ id: 'a' }], rank: 1 },
        { players: [{ id: 'c' }], rank: 2 },
      ],
    };
    const [r1, r2] = system.ratePeriod([m1, m2], new Map());
    // a: 1.00 -> 1.05 (win against an equal), then 1.05 + 1.05/20 * (1.00/1.05) = 1.10.
    expect(r1!.players[0]!.after.rating).toBe(1.05);
    expect(r2!.players[0]!.before.rating).toBe(1.05);
    expect(r2!.players[0]!.after.rating).toBe(1.1);
  });
});

describe('the pairwise CSV scanner', () => {
  it('accepts and rejects exactly the rows the general reader does', async () => {
    const fc = (await import('fast-check')).default;
    const { parsePairwiseCsv } = await import('../../src/io/matches.js');
    const id = fc.oneof(fc.constantFrom('1', '2', '10', '0', '007', 'ann', ' 3', 'b b', '', '"4"', '12345678901234567'), fc.integer({ min: 1, max: 30 }).map(String));
    const date = fc.constantFrom('20240101', '20240230', '2024-03-01', '', '2024010', 'x');
    const row = fc.tuple(date, id, id, fc.constantFrom('', 'note', '"a,b"'));
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            row.map((cells) => cells.join(',')),
            fc.constant(''),
            fc.constant('   '),
          ),
          { maxLength: 12 },
        ),
        (rows) => {
          const text = `date,winner,loser,extra\n${rows.join('\n')}\n`;
          const map = { winner: 'winner', loser: 'loser', at: 'date' };
          const slowErrors: string[] = [];
          const slow = [...parseMatchLog(text, 'csv', { map, onInvalid: (e) => slowErrors.push(e.message) })].map(({ match }) => [
            match.teams[0]!.players[0]!.id,
            match.teams[1]!.players[0]!.id,
            match.at ?? null,
          ]);
          const fastErrors: string[] = [];
          const log = parsePairwiseCsv(text, map, (e) => fastErrors.push(e.message))!;
          const fast = Array.from({ length: log.count }, (_, g) => [log.ids[log.a[g]!], log.ids[log.b[g]!], Number.isNaN(log.at[g]!) ? null : log.at[g]]);
          expect(fast).toEqual(slow);
          expect(fastErrors).toEqual(slowErrors);
          // No player appears who is in no accepted game.
          expect(new Set(log.ids)).toEqual(new Set(slow.flatMap((row) => row.slice(0, 2))));
        },
      ),
      { numRuns: 300 },
    );
  });
});
