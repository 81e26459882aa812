import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { invalidField } from '../../../../test/support/invalid-field.js';
import { type BackfillInput, Matchmaker, matchmake, type TicketInput } from './index.js';
import { solo } from '../../../../test/support/tickets.js';

function party(id: string, at: number, percentiles: number[], pings: Record<string, number> = { eu: 30 }): TicketInput {
  return { id, at, players: percentiles.map((percentile, k) => ({ id: `${id}-p${k}`, percentile, pings, filter: { within: 10, strict: false, maxPing: 100 } })) };
}

/** A backfill of players at the given percentiles per team (ids a0, a1, … per team letter). */
function backfill(id: string, teams: number[][], extra: Partial<BackfillInput> = {}): BackfillInput {
  const players: NonNullable<BackfillInput['players']> = {};
  const ids = teams.map((team, t) =>
    team.map((percentile, i) => {
      const playerId = `${id}-${'abcd'[t]}${i}`;
      players[playerId] = { percentile };
      return playerId;
    }),
  );
  return { id, match: `m-${id}`, region: 'eu', at: 0, teams: ids, players, ...extra };
}

describe('backfill: rules worked by hand', () => {
  it('fills an open slot from the queue before forming new matches, and the filled request leaves', () => {
    // 2v2 with one player gone from team 1; t1 (42) fits everyone's ±10; t2 (90) does not.
    const mm = new Matchmaker({ teamSize: 2 });
    mm.add(solo('t1', 0, 42));
    mm.add(solo('t2', 0, 90));
    mm.addBackfill(backfill('b', [[40, 44], [41]]));
    const result = mm.pass(1);
    expect(result.backfills).toEqual([
      {
        id: 'b',
        match: 'm-b',
        region: 'eu',
        added: [[], ['t1']],
        players: [
          ['b-a0', 'b-a1'],
          ['b-b0', 't1-p'],
        ],
        open: [0, 0],
        filled: true,
      },
    ]);
    expect(result.waiting).toEqual(['t2']);
    expect(mm.backfills()).toEqual([]);
  });

  it('serves backfills before new matches: the oldest ticket fills the slot, the others wait', () => {
    const result = matchmake([solo('x', 0, 50), solo('y', 1, 50)], 5, { teamSize: 1 }, [backfill('b', [[50], []])]);
    expect(result.backfills.map((b) => b.added)).toEqual([[[], ['x']]]);
    expect(result.matches).toEqual([]);
    expect(result.waiting).toEqual(['y']);
  });

  it("holds filters both ways: the ticket's against the match's players, theirs against the ticket", () => {
    // The ticket's strict ±2 does not reach the match player at 60.
    expect(matchmake([solo('t', 0, 50, { within: 2, strict: true })], 0, { teamSize: 1 }, [backfill('b', [[60], []])]).backfills).toEqual([]);
    // The match player's strict ±2 does not reach the ticket at 56, however wide the ticket's filter.
    const strictPlayer = backfill('b', [[50], []]);
    strictPlayer.players![strictPlayer.teams[0][0]].filter = { within: 2, strict: true };
    expect(matchmake([solo('t', 0, 56, { within: 100 })], 1000, { teamSize: 1 }, [strictPlayer]).backfills).toEqual([]);
    // The request's filter sets the match players' defaults; loose ones widen with the time since `at` (±2 → ±5 at 30 s).
    const loose = backfill('b', [[50], []], { filter: { within: 2, strict: false } });
    expect(matchmake([solo('t', 0, 54)], 29, { teamSize: 1 }, [loose]).backfills).toEqual([]);
    expect(matchmake([solo('t', 0, 54)], 30, { teamSize: 1 }, [loose]).backfills).toHaveLength(1);
  });

  it("does not ask the match's players to hold each other, only the newcomers", () => {
    // 20 and 80 with ±10 filters: no newcomer can sit in both ranges, whatever the match's own spread.
    expect(matchmake([solo('t', 0, 50, { within: 100 })], 0, { teamSize: 2 }, [backfill('b', [[20], [80]])]).backfills).toEqual([]);
    // With ±40 both hold 50 (and 50's ±100 holds both), although 20 and 80 are 60 apart.
    const wide = backfill('b', [[20], [80]], { filter: { within: 40, strict: true } });
    const result = matchmake([solo('t', 0, 50, { within: 100 })], 0, { teamSize: 2 }, [wide]);
    expect(result.backfills[0].players.flat()).toContain('t-p');
  });

  it('keeps newcomers compatible with each other', () => {
    // Match player at 50 ±40 holds both 22 and 80, and their strict ±30 hold 50, but not each other: only the nearer (22) joins.
    const wide = backfill('b', [[50], []], { filter: { within: 40, strict: true }, teamSize: 2 });
    const result = matchmake([solo('lo', 0, 22, { within: 30, strict: true }), solo('hi', 1, 80, { within: 30, strict: true })], 0, { teamSize: 2 }, [wide]);
    expect(result.backfills[0].added.flat()).toEqual(['lo']);
    expect(result.waiting).toEqual(['hi']);
  });

  it('applies the region and both ping limits', () => {
    const na = solo('na', 0, 50, { pings: { na: 20, eu: 140 }, maxPing: 100 });
    expect(matchmake([na], 0, { teamSize: 1 }, [backfill('b', [[50], []])]).backfills).toEqual([]);
    const far = solo('far', 0, 50, { pings: { eu: 90 }, maxPing: 100 });
    expect(matchmake([far], 0, { teamSize: 1 }, [backfill('b', [[50], []])]).backfills).toHaveLength(1);
    expect(matchmake([far], 0, { teamSize: 1 }, [backfill('b', [[50], []], { filter: { maxPing: 80 } })]).backfills).toEqual([]);
    // A region no ticket has named: the request waits.
    expect(matchmake([far], 0, { teamSize: 1 }, [backfill('b', [[50], []], { region: 'oce' })]).backfills).toEqual([]);
  });

  it('keeps parties whole on a team with room, and evens team sizes', () => {
    // Open slots [1, 2]: the duo goes to team 1; the trio fits nowhere.
    const result = matchmake([party('trio', 0, [50, 50, 50]), party('duo', 1, [50, 51])], 0, { teamSize: 3 }, [backfill('b', [[50, 50], [50]])]);
    expect(result.backfills[0].added).toEqual([[], ['duo']]);
    expect(result.backfills[0].open).toEqual([1, 0]);
    expect(result.waiting).toEqual(['trio']);
    // Three solos into open [2, 1] of a 3v3: two and one.
    const solos = matchmake([solo('s1', 0, 50), solo('s2', 1, 50), solo('s3', 2, 50)], 0, { teamSize: 3 }, [backfill('c', [[50], [50, 50]])]);
    expect(solos.backfills[0].added.map((team) => team.length)).toEqual([2, 1]);
  });

  it('evens team ratings among newcomers', () => {
    // 2v2, both teams have one player (rating 100 vs 200); newcomers 100 and 200: the 200 joins the 100, and vice versa.
    const request: BackfillInput = {
      id: 'b',
      match: 'm',
      region: 'eu',
      at: 0,
      teams: [['x'], ['y']],
      teamSize: 2,
      players: { x: { percentile: 50, rating: 100 }, y: { percentile: 50, rating: 200 } },
    };
    const result = matchmake([solo('weak', 0, 50, { rating: 100 }), solo('strong', 1, 50, { rating: 200 })], 0, { teamSize: 2 }, [request]);
    expect(result.backfills[0].players).toEqual([
      ['x', 'strong-p'],
      ['y', 'weak-p'],
    ]);
  });

  it('partially filled requests stay open across passes; newcomers join their filters; requests can be withdrawn', () => {
    const mm = new Matchmaker({ teamSize: 3 });
    mm.addBackfill(backfill('b', [[50], [50]]));
    mm.add(solo('t1', 0, 58, { within: 10 }));
    const first = mm.pass(0);
    expect(first.backfills[0]).toMatchObject({ open: [1, 2], filled: false });
    expect(mm.backfills()[0].teams).toEqual([['b-a0', 't1-p'], ['b-b0']]);
    // 45 is within the match player's ±10 but not the newcomer's (58 ± 10): no join.
    mm.add(solo('t2', 1, 45, { within: 20 }));
    expect(mm.pass(1).backfills).toEqual([]);
    expect(mm.removeBackfill('b')).toBe(true);
    expect(mm.removeBackfill('b')).toBe(false);
    expect(mm.pass(2).backfills).toEqual([]);
  });

  it('hands back the remaining request for the one-shot matchmake, newcomers and their filters included', () => {
    const first = matchmake([solo('t1', 0, 58, { within: 10 })], 0, { teamSize: 3 }, [backfill('b', [[50], [50]], { filter: { maxPing: 90 } })]);
    const remaining = first.backfills[0].remaining!;
    expect(remaining.teams).toEqual([['b-a0', 't1-p'], ['b-b0']]);
    expect(remaining.players!['t1-p']).toEqual({ percentile: 58, filter: { within: 10, strict: false } });
    expect(remaining.filter).toEqual({ maxPing: 90 });
    // Next pass: 45 is outside the newcomer's 58 ± 10, 52 is inside everyone's range.
    const second = matchmake([solo('t2', 1, 45, { within: 20 }), solo('t3', 1, 52)], 1, { teamSize: 3 }, [remaining]);
    expect(second.backfills[0].added.flat()).toEqual(['t3']);
    // The same as a long-lived matchmaker.
    const mm = new Matchmaker({ teamSize: 3 });
    mm.addBackfill(backfill('b', [[50], [50]], { filter: { maxPing: 90 } }));
    mm.add(solo('t1', 0, 58, { within: 10 }));
    mm.pass(0);
    mm.add(solo('t2', 1, 45, { within: 20 }));
    mm.add(solo('t3', 1, 52));
    expect(mm.pass(1).backfills).toEqual(second.backfills);
  });

  it('never adds a player already in the match', () => {
    const request = backfill('b', [[50], []]);
    const mm = new Matchmaker({ teamSize: 2 });
    mm.addBackfill(request);
    mm.add({ id: 't', at: 0, players: [{ id: 'b-a0-again', percentile: 50, pings: { eu: 10 } }] });
    mm.add({ id: 'dup', at: 0, players: [{ id: 'b-a0', percentile: 50, pings: { eu: 10 } }] });
    const result = mm.pass(0);
    expect(result.backfills[0].added.flat()).toEqual(['t']);
  });
});

describe('backfill: validation names the field', () => {
  const base = () => backfill('b', [[50], []]);
  it.each<[string, (b: BackfillInput) => unknown, string]>([
    ['no id', (b) => ({ ...b, id: '' }), 'id'],
    ['no match', (b) => ({ ...b, match: undefined }), 'match'],
    ['no region', (b) => ({ ...b, region: '' }), 'region'],
    ['no at', (b) => ({ ...b, at: 'now' }), 'at'],
    ['one team', (b) => ({ ...b, teams: [['b-a0']] }), 'teams'],
    ['a team over size', (b) => ({ ...b, teamSize: 1, teams: [['b-a0', 'x'], []], players: { 'b-a0': { percentile: 5 }, x: { percentile: 5 } } }), 'teams[0]'],
    ['full teams', (b) => ({ ...b, teamSize: 1, teams: [['b-a0'], ['x']], players: { 'b-a0': { percentile: 5 }, x: { percentile: 5 } } }), 'teams'],
    ['a player twice', (b) => ({ ...b, teams: [['b-a0'], ['b-a0']] }), 'teams[1][0]'],
    ['no percentile', (b) => ({ ...b, players: {} }), 'players.b-a0'],
    ['a percentile out of range', (b) => ({ ...b, players: { 'b-a0': { percentile: 101 } } }), 'players.b-a0.percentile'],
    ['a player on no team', (b) => ({ ...b, players: { ...b.players, ghost: { percentile: 3 } } }), 'players.ghost'],
    ['a bad filter', (b) => ({ ...b, filter: { within: -1 } }), 'filter.within'],
    ['a bad player filter', (b) => ({ ...b, players: { 'b-a0': { percentile: 50, filter: { strict: 'yes' } } } }), 'players.b-a0.filter.strict'],
  ])('%s', (_, change, field) => {
    const mm = new Matchmaker({ teamSize: 2 });
    expect(invalidField(() => mm.addBackfill(change(base()) as BackfillInput))).toBe(field);
    expect(mm.backfills()).toEqual([]);
  });

  it('rejects an id already open and a match player who waits in a ticket', () => {
    const mm = new Matchmaker({ teamSize: 2 });
    mm.addBackfill(base());
    expect(invalidField(() => mm.addBackfill(base()))).toBe('id');
    mm.add({ id: 't', at: 0, players: [{ id: 'q', percentile: 50, pings: { eu: 10 } }] });
    expect(invalidField(() => mm.addBackfill({ ...backfill('c', [[50], []]), teams: [['q'], []], players: { q: { percentile: 50 } } }))).toBe('teams[0][0]');
  });

  it("matchmake names the request's index", () => {
    expect(() => matchmake([], 0, { teamSize: 2 }, [base(), { ...base(), at: NaN }])).toThrow(/backfill 1: .*field at/);
  });
});

const REGIONS = ['eu', 'na'];

describe('backfill (property tests)', () => {
  const teamSize = 3;
  const player = fc.record({
    percentile: fc.integer({ min: 1, max: 100 }),
    within: fc.constantFrom(2, 5, 10, 30),
    strict: fc.boolean(),
  });
  const ticket = fc.record({
    at: fc.integer({ min: 0, max: 200 }),
    players: fc.array(
      fc.record({
        p: player,
        pings: fc.array(fc.tuple(fc.constantFrom(...REGIONS), fc.integer({ min: 5, max: 200 })), { minLength: 1, maxLength: 2 }),
        maxPing: fc.constantFrom(60, 150),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  });
  const request = fc.record({
    at: fc.integer({ min: 0, max: 200 }),
    region: fc.constantFrom(...REGIONS),
    teams: fc.tuple(fc.array(player, { maxLength: teamSize }), fc.array(player, { maxLength: teamSize - 1 })),
    maxPing: fc.option(fc.integer({ min: 20, max: 200 }), { nil: undefined }),
  });

  it('every fill keeps team sizes, parties, both-way filters, region and ping; every ticket ends in one place', () => {
    fc.assert(
      fc.property(fc.array(ticket, { maxLength: 40 }), fc.array(request, { minLength: 1, maxLength: 4 }), fc.integer({ min: 200, max: 500 }), (rawTickets, rawRequests, now) => {
        const tickets: TicketInput[] = rawTickets.map((t, i) => ({
          id: `t${i}`,
          at: t.at,
          players: t.players.map((p, j) => ({
            id: `t${i}p${j}`,
            percentile: p.p.percentile,
            pings: Object.fromEntries(p.pings),
            filter: { within: p.p.within, strict: p.p.strict, maxPing: p.maxPing },
          })),
        }));
        const requests: BackfillInput[] = rawRequests.map((r, i) => {
          const players: NonNullable<BackfillInput['players']> = {};
          const teams = r.teams.map((team, t) =>
            team.map((p, k) => {
              players[`b${i}t${t}k${k}`] = { percentile: p.percentile, filter: { within: p.within, strict: p.strict } };
              return `b${i}t${t}k${k}`;
            }),
          );
          return { id: `b${i}`, match: `m${i}`, region: r.region, at: r.at, teams, players, ...(r.maxPing === undefined ? {} : { filter: { maxPing: r.maxPing } }) };
        });
        const result = matchmake(tickets, now, { teamSize }, requests);
        const byId = new Map(tickets.map((t) => [t.id, t]));
        const step = (at: number) => Math.max(0, Math.floor((now - at) / 30));
        const widths = [5, 10, 20, 50, 100];
        const width = (own: number, strict: boolean, s: number) =>
          strict || s === 0 ? own : [own, ...widths.filter((w) => w > own)][Math.min(s, widths.filter((w) => w > own).length)];
        const used: string[] = [];
        for (const fill of result.backfills) {
          const req = requests.find((r) => r.id === fill.id)!;
          // Groups: each match player alone at the request's step, each newcomer ticket at its own.
          const groups = req.teams.flat().map((id) => ({
            ps: [req.players![id].percentile],
            ranges: [[req.players![id].percentile, width(req.players![id].filter!.within!, req.players![id].filter!.strict!, step(req.at))]],
          }));
          fill.added.forEach((team, t) => {
            expect(fill.players[t]).toHaveLength(req.teams[t].length + team.reduce((n, id) => n + byId.get(id)!.players.length, 0));
            expect(fill.players[t].length).toBeLessThanOrEqual(teamSize);
            for (const id of team) {
              used.push(id);
              const tk = byId.get(id)!;
              for (const p of tk.players) {
                expect(fill.players[t]).toContain(p.id); // the party is whole, on this team
                expect(p.pings[req.region]).toBeLessThanOrEqual(p.filter!.maxPing!);
                if (req.filter?.maxPing !== undefined) expect(p.pings[req.region]).toBeLessThanOrEqual(req.filter.maxPing);
              }
              groups.push({ ps: tk.players.map((p) => p.percentile), ranges: tk.players.map((p) => [p.percentile, width(p.filter!.within!, p.filter!.strict!, step(tk.at))]) });
            }
          });
          const matchPlayers = req.teams.flat().length;
          groups.forEach((g, gi) => {
            const low = Math.min(...g.ranges.map(([p, w]) => p - w));
            const high = Math.max(...g.ranges.map(([p, w]) => p + w));
            groups.forEach((h, hi) => {
              if (gi === hi || (gi < matchPlayers && hi < matchPlayers)) return; // the match's own players need not hold each other
              for (const p of h.ps) {
                expect(p).toBeGreaterThanOrEqual(low);
                expect(p).toBeLessThanOrEqual(high);
              }
            });
          });
          expect(fill.filled).toBe(fill.open.every((n) => n === 0));
          expect(fill.open).toEqual(fill.players.map((team) => teamSize - team.length));
        }
        for (const match of result.matches) used.push(...match.teams.flat());
        expect([...used, ...result.waiting].sort()).toEqual(tickets.map((t) => t.id).sort());
        expect(matchmake(tickets, now, { teamSize }, requests)).toEqual(result);
      }),
      { numRuns: 150 },
    );
  });
});
