import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatTable, runReplay } from '../../src/cli/replay.js';
import { glicko2Update } from 'ladder-core/core/glicko2.js';
import { teamRankMatch } from 'ladder-core/core/teamrank.js';
import { ROOT, runLadder, scratchFiles } from '../support/cli.js';

const file = scratchFiles('ladder-replay-');
const ladder = (args: string[], input?: string) => runLadder(args, { input });

describe('ladder replay', () => {
  it("rates Glickman's example as one rating period from --players", () => {
    const players = file(
      'players.json',
      JSON.stringify([
        { id: 'me', rating: 1500, rd: 200, volatility: 0.06 },
        { id: 'o1', rating: 1400, rd: 30 },
        { id: 'o2', rating: 1550, rd: 100 },
        { id: 'o3', rating: 1700, rd: 300 },
      ]),
    );
    const matches = file(
      'glickman.jsonl',
      [
        {
          period: 'p1',
          teams: [
            { players: ['me'], rank: 1 },
            { players: ['o1'], rank: 2 },
          ],
        },
        {
          period: 'p1',
          teams: [
            { players: ['me'], rank: 2 },
            { players: ['o2'], rank: 1 },
          ],
        },
        {
          period: 'p1',
          teams: [
            { players: ['me'], rank: 2 },
            { players: ['o3'], rank: 1 },
          ],
        },
      ]
        .map((m) => JSON.stringify(m))
        .join('\n'),
    );
    const result = ladder(['replay', '--system', 'glicko2', '--tau', '0.5', '--players', players, '--json', matches]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout);
    const me = output.players.find((p: { id: string }) => p.id === 'me');
    expect(me.rating).toBeCloseTo(1464.05, 2);
    expect(me.rd).toBeCloseTo(151.52, 2);
    expect(me.volatility).toBeCloseTo(0.059996, 6);
    expect(me.matches).toBe(3);
  });

  it('rates team rank at two decimals with quitters, from stdin', () => {
    const match = {
      teams: [
        {
          players: [
            { id: 'me', seconds: 801 },
            { id: 'q', seconds: 609, quit: true },
          ],
          rank: 1,
        },
        {
          players: [
            { id: 'x', seconds: 801 },
            { id: 'y', seconds: 801 },
          ],
          rank: 2,
        },
      ],
    };
    const players = file(
      'ranks.json',
      JSON.stringify([
        { id: 'me', rating: 21.84 },
        { id: 'q', rating: 19.71 },
        { id: 'x', rating: 22.87 },
        { id: 'y', rating: 17.04 },
      ]),
    );
    const result = ladder(['replay', '--system', 'teamrank', '--players', players, '--json', '-'], JSON.stringify(match));
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout);
    const expected = teamRankMatch(
      [
        [
          { id: 'me', rank: 21.84, seconds: 801 },
          { id: 'q', rank: 19.71, seconds: 609, quit: true },
        ],
        [
          { id: 'x', rank: 22.87, seconds: 801 },
          { id: 'y', rank: 17.04, seconds: 801 },
        ],
      ],
      'win',
    );
    for (const change of expected) expect(output.players.find((p: { id: string }) => p.id === change.id).rating).toBe(change.after);
  });

  it('reads CSV with a column mapping, the same as JSON Lines', () => {
    const csv = runReplay(join(ROOT, 'test/fixtures/football-excerpt.csv'), { system: 'elo', map: 'a=home_team,b=away_team,scoreA=home_score,scoreB=away_score,at=date' });
    // By hand, K 32: 0-0 draw -> both 1500; England 4-2: E 1516, S 1484; Scotland 2-1: S 1484+32*(1-0.454)=1501.47, E 1498.53 ...
    expect(csv.players.map((p) => p.id).sort()).toEqual(['England', 'Scotland', 'Wales']);
    const england = csv.players.find((p) => p.id === 'England')!;
    expect(england.matches).toBe(5);
    const jsonl = file(
      'football.jsonl',
      [
        ['Scotland', 'England', 0, 0],
        ['England', 'Scotland', 4, 2],
        ['Scotland', 'England', 2, 1],
        ['England', 'Scotland', 2, 2],
        ['Scotland', 'England', 3, 0],
        ['Scotland', 'Wales', 4, 0],
      ]
        .map(([a, b, sa, sb]) =>
          JSON.stringify({
            teams: [
              { players: [a], score: sa },
              { players: [b], score: sb },
            ],
          }),
        )
        .join('\n'),
    );
    const fromJson = runReplay(jsonl, { system: 'elo' });
    expect(fromJson.players).toEqual(csv.players);
  });

  it('uses the pairwise fast path for one-against-one CSV with the same ratings as the general path', () => {
    const csv = file('games.csv', 'date,w,l\n20200101,a,b\n20200105,b,c\n20200301,a,c\n20200302,c,a\n');
    const fast = runReplay(csv, { system: 'glicko2', map: 'winner=w,loser=l,at=date' });
    const jsonl = file(
      'games.jsonl',
      [
        ['20200101', 'a', 'b'],
        ['20200105', 'b', 'c'],
        ['20200301', 'a', 'c'],
        ['20200302', 'c', 'a'],
      ]
        .map(([at, w, l]) =>
          JSON.stringify({
            at: `${at!.slice(0, 4)}-${at!.slice(4, 6)}-${at!.slice(6)}`,
            teams: [
              { players: [w], rank: 1 },
              { players: [l], rank: 2 },
            ],
          }),
        )
        .join('\n'),
    );
    const general = runReplay(jsonl, { system: 'glicko2' });
    fast.players.forEach((p, i) => {
      expect(p.id).toBe(general.players[i]!.id);
      expect(p.rating).toBeCloseTo(general.players[i]!.rating, 6);
      expect(p.rd).toBeCloseTo(general.players[i]!.rd!, 6);
    });
    // First game by hand: both new (1500, 350): the winner's rating is glicko2Update's.
    const one = runReplay(file('one.csv', 'w,l\na,b\n'), { system: 'glicko2', map: 'winner=w,loser=l' });
    expect(one.players[0]!.rating).toBeCloseTo(glicko2Update({ rating: 1500, rd: 350, volatility: 0.06 }, [{ opponent: { rating: 1500, rd: 350 }, score: 1 }]).rating, 9);
  });

  it('groups World-vs-World worlds for the next round', () => {
    const round = file(
      'wvw.jsonl',
      [
        {
          teams: [
            { players: ['A'], score: 300 },
            { players: ['B'], score: 200 },
            { players: ['C'], score: 100 },
          ],
        },
        {
          teams: [
            { players: ['D'], score: 100 },
            { players: ['E'], score: 250 },
            { players: ['F'], score: 150 },
          ],
        },
      ]
        .map((m) => JSON.stringify(m))
        .join('\n'),
    );
    const output = runReplay(round, { system: 'wvw' });
    expect(output.groups).toHaveLength(2);
    // Groups follow the replayed ratings, best first.
    expect(output.groups!.flat()).toEqual(output.players.map((p) => p.id));
    expect(output.groups!.flat().sort()).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(output.groups![0]).toContain('A');
    expect(output.groups![0]).toContain('E');
  });

  it("names team rank's number a rating, in the table and in --json, as the library and the API do", () => {
    const sample = join(ROOT, 'examples/sample-matches.jsonl');
    const output = runReplay(sample, { system: 'teamrank' });
    expect(output.players.every((p) => typeof p.rating === 'number' && !('rank' in p))).toBe(true);
    const header = formatTable(output).split('\n')[1]!;
    expect(header.trim().split(/\s+/)).toEqual(['#', 'player', 'rating', 'matches', 'pct', 'division']);
  });

  it('gives percentiles and divisions over active, placed players at the time of the last match', () => {
    const sample = join(ROOT, 'examples/sample-matches.jsonl');
    const placed = runReplay(sample, { system: 'teamrank', placement: 3 });
    const byId = new Map(placed.players.map((p) => [p.id, p]));
    // Eight placed players; fay alone at the top is percentile 100, ada and eli tied at the floor share percentile 1.
    expect(byId.get('fay')!.percentile).toBe(100);
    expect(byId.get('ada')!.percentile).toBe(1);
    expect(byId.get('eli')!.percentile).toBe(1);
    expect(byId.get('fay')!.division).toBe('Master');
    // With the default ten placement matches nobody in the sample has a percentile yet.
    expect(runReplay(sample, { system: 'teamrank' }).players.every((p) => p.percentile === null && p.division === null)).toBe(true);
    // A window shorter than the gap to a player's last match leaves them inactive.
    const old = file(
      'old.jsonl',
      [
        {
          at: '2024-01-01',
          teams: [
            { players: ['gone'], rank: 1 },
            { players: ['x'], rank: 2 },
          ],
        },
        {
          at: '2024-03-01',
          teams: [
            { players: ['x'], rank: 1 },
            { players: ['y'], rank: 2 },
          ],
        },
      ]
        .map((m) => JSON.stringify(m))
        .join('\n'),
    );
    const windowed = runReplay(old, { system: 'elo', placement: 0, window: 30 });
    expect(windowed.players.find((p) => p.id === 'gone')!.percentile).toBeNull();
    expect(windowed.players.find((p) => p.id === 'x')!.percentile).toBe(100);
    expect(windowed.players.find((p) => p.id === 'y')!.percentile).toBe(1);
  });

  it('rejects bad input with the line and the field, printing nothing on stdout', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"teams":[{"players":["a"],"rank":1},{"players":["b"],"rank":2}]}\n{not json', /line 2: malformed JSON/],
      ['{"teams":[{"players":[],"rank":1},{"players":["b"],"rank":2}]}', /line 1, field teams\[0\]\.players: a team needs at least one player/],
      ['{"teams":[{"players":["a"],"rank":1},{"players":["a"],"rank":2}]}', /line 1, field teams\[1\]\.players\[0\]\.id: player "a" is on two teams/],
      ['{"teams":[{"players":["a"],"score":-1},{"players":["b"],"score":2}]}', /line 1, field teams\[0\]\.score: must be at least 0/],
      ['{"teams":[{"players":[{"id":"a","seconds":1e999}],"rank":1},{"players":["b"],"rank":2}]}', /field teams\[0\]\.players\[0\]\.seconds: must be a finite number/],
      ['{"teams":[{"players":["a"]},{"players":["b"]}]}', /line 1, field teams\[0\]: needs a rank or a score/],
    ];
    for (const [input, message] of cases) {
      const result = ladder(['replay', '--system', 'elo', '-'], input);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    const unknown = ladder(['replay', '--system', 'chess', '-'], '');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/field system: unknown system "chess"/);
  });

  it('skips invalid lines with --skip-invalid and reports them', () => {
    const input = '{"teams":[{"players":["a"],"rank":1},{"players":["b"],"rank":2}]}\n{"teams":[{"players":["a"],"rank":1},{"players":["a"],"rank":2}]}\n';
    const result = ladder(['replay', '--system', 'elo', '--skip-invalid', '--json', '-'], input);
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/skipped 1 invalid line\(s\):\n {2}line 2/);
    expect(JSON.parse(result.stdout).players).toHaveLength(2);
  });
});
