/**
 * The AWS guide's eleven example rule sets, as printed: each one's prose as
 * assertions on formed matches, and property tests over random tickets where
 * every formed match is checked by a checker written here from the prose
 * (not by the engine's evaluator), parties stay whole, no ticket or player is
 * placed twice, and expansions apply at the newest ticket's age.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHECKS, fixture, LARGE, NAMES, type Name, type P, player } from '../../../../../test/support/flexmatch-checks.js';
import { parseRuleSet, type RuleSetMatch, RuleSetMatchmaker, type RuleSetTicketInput } from '../index.js';

type Attrs = Record<string, unknown>;
const solo = (id: string, at: number, attributes: Attrs, pings?: Record<string, number>): RuleSetTicketInput => ({
  id,
  at,
  players: [{ id: `p-${id}`, attributes, ...(pings ? { pings } : {}) }],
});
const run = (name: Name, tickets: RuleSetTicketInput[], now: number) => {
  const mm = new RuleSetMatchmaker(fixture(name));
  for (const t of tickets) mm.add(t);
  return mm.pass(now);
};
const range = (n: number, f: (k: number) => RuleSetTicketInput): RuleSetTicketInput[] => Array.from({ length: n }, (_, k) => f(k));

describe('the eleven examples parse as printed', () => {
  it.each(NAMES)('%s', (name) => {
    expect(() => parseRuleSet(fixture(name))).not.toThrow();
  });
});

describe('example prose as formed matches', () => {
  it('1: teams of 4–8 of equal size; team averages within 10, 50 after 5 s, 100 after 15 s', () => {
    const parties: RuleSetTicketInput[] = [
      { id: 'low', at: 0, players: [0, 1, 2, 3].map((k) => ({ id: `l${k}`, attributes: { skill: 10 } })) },
      { id: 'high', at: 0, players: [0, 1, 2, 3].map((k) => ({ id: `h${k}`, attributes: { skill: 40 } })) },
    ];
    // Averages 10 and 40 around 25: 15 apart, over 10 at once, within 50 after 5 s.
    expect(run('01-aliens-vs-cowboys', parties, 4).matches).toEqual([]);
    const late = run('01-aliens-vs-cowboys', parties, 5).matches;
    expect(late).toHaveLength(1);
    expect(late[0].teamNames).toEqual(['cowboys', 'aliens']);
    const even = run(
      '01-aliens-vs-cowboys',
      range(19, (k) => solo(`t${k}`, 0, { skill: 20 })),
      0,
    ).matches;
    expect(even).toHaveLength(1);
    expect(even[0].players.map((p) => p.length)).toEqual([8, 8]);
  });

  it("2: the monster asked to be one and meets every hunter's wish; hunters 5, 4 after 30 s, 3 after 60 s", () => {
    const hunters = (n: number, at = 0) => range(n, (k) => solo(`h${k}`, at, { skill: 10, desiredSkillOfMonster: 20 }));
    const monster = (skill: number, at = 0) => solo('m', at, { skill, wantsToBeMonster: 1 });
    const ok = run('02-hunters-vs-monster', [monster(25), ...hunters(5)], 0).matches;
    expect(ok).toHaveLength(1);
    expect(ok[0].teams[1]).toEqual(['m']);
    expect(run('02-hunters-vs-monster', [monster(15), ...hunters(5)], 0).matches).toEqual([]);
    expect(run('02-hunters-vs-monster', [monster(25), ...hunters(4)], 29).matches).toEqual([]);
    expect(run('02-hunters-vs-monster', [monster(25), ...hunters(4)], 30).matches[0].players[0]).toHaveLength(4);
    expect(run('02-hunters-vs-monster', [monster(25), ...hunters(3)], 60).matches[0].players[0]).toHaveLength(3);
  });

  it('3: three teams of 3–5 within one, at most five medics, latency 50, 100 after 10 s, 150 after 20 s', () => {
    const players = (n: number, ms: number, character: string[] = ['peasant']) =>
      range(n, (k) => solo(`t${k}`, 0, { skill: 10, character }, { 'us-east-1': ms, 'eu-west-1': ms + 40 }));
    expect(run('03-three-team-game', players(15, 60), 9).matches).toEqual([]);
    const m = run('03-three-team-game', players(15, 60), 10).matches;
    expect(m).toHaveLength(1);
    expect(m[0].region).toBe('us-east-1');
    expect(m[0].teamNames).toEqual(['trio_1', 'trio_2', 'trio_3']);
    const medics = run('03-three-team-game', players(15, 20, ['medic']), 0).matches;
    expect(medics.flatMap((x) => x.players.flat()).length).toBeLessThanOrEqual(5 * medics.length);
    expect(medics.every((x) => x.players.flat().length <= 5)).toBe(true);
  });

  it("4: shared game mode and acceptable map; the anchor's favourite map first", () => {
    const p = (id: string, maps: string[], modes = ['coop'], pref: Record<string, number> = { a: 100 }) =>
      solo(id, 0, { gameMode: modes, acceptableMaps: maps, mapPreference: pref });
    // x, the oldest, accepts only map c, which nobody else accepts: the others form without it.
    const r = run(
      '04-multi-map-game',
      [p('x', ['c']), ...range(6, (k) => p(`t${k}`, ['a', 'b']))].map((t, k) => ({ ...t, at: k })),
      10,
    );
    expect(r.matches).toHaveLength(1);
    expect(r.waiting).toEqual(['x']);
    expect(r.why.x).toBe('MapOverlap');
    // A player sharing no mode is left out the same way.
    const modes = run('04-multi-map-game', [p('y', ['a'], ['ctf']), ...range(6, (k) => p(`t${k}`, ['a']))], 0);
    expect(modes.waiting).toEqual(['y']);
    expect(modes.why.y).toBe('SharedMode');
  });

  it("5: every character is on everyone's preferred-opponents list; dropped after 15 s", () => {
    const fan = (id: string, mine: string, wants: string[]) => solo(id, 0, { myCharacter: [mine], preferredOpponents: wants });
    const tickets = [fan('odd', 'ogre', ['elf']), ...range(4, (k) => fan(`t${k}`, 'elf', ['elf']))];
    expect(run('05-preferred-characters', tickets, 14).matches).toEqual([]);
    expect(run('05-preferred-characters', tickets, 15).matches).toHaveLength(1);
  });

  it('6: same mode, same map, different characters', () => {
    expect(run('06-compare-all-players', [solo('a', 0, { character: 1 }), solo('b', 0, { character: 2 })], 0).matches).toHaveLength(1);
    expect(run('06-compare-all-players', [solo('a', 0, { character: 1 }), solo('b', 0, { character: 1 })], 0).matches).toEqual([]);
    expect(run('06-compare-all-players', [solo('a', 0, { character: 1, gameMap: 2 }), solo('b', 0, { character: 2 })], 0).matches).toEqual([]);
    expect(() => run('06-compare-all-players', [solo('a', 0, {})], 0)).toThrow(/players\[0\]\.attributes\.character/);
  });

  it('7: 175–200 under 150 ms; 150 after 10 s, 100 after 15 s; the duplicated target keeps its last value', () => {
    const crowd = (n: number, ms = 100) => range(n, (k) => solo(`t${k}`, 0, { skill: k % 50 }, { 'us-east-1': ms }));
    const full = run('07-free-for-all', crowd(230), 0).matches;
    expect(full.map((m) => m.players[0].length)).toEqual([200]);
    expect(run('07-free-for-all', crowd(160), 9).matches).toEqual([]);
    expect(run('07-free-for-all', crowd(160), 10).matches.map((m) => m.players[0].length)).toEqual([160]);
    expect(run('07-free-for-all', crowd(120), 15).matches).toHaveLength(1);
    // The latency expansion is lost to the duplicate "target" key (last value wins, as in JSON.parse).
    expect(run('07-free-for-all', crowd(200, 180), 30).matches).toEqual([]);
  });

  it('8: ten hunter teams of 12–15 and five monsters; filled the way the guide walks through', () => {
    const crowd = (n: number) => range(n, (k) => solo(`t${k}`, 0, {}, { 'us-east-1': 40 }));
    const full = run('08-monster-hunters', crowd(155), 0).matches;
    expect(full).toHaveLength(1);
    expect(full[0].players.map((p) => p.length)).toEqual([5, ...Array(10).fill(15)]);
    const partial = run('08-monster-hunters', crowd(125), 0).matches;
    expect(partial[0].players.map((p) => p.length)).toEqual([5, ...Array(10).fill(12)]);
    expect(run('08-monster-hunters', crowd(124), 14).matches).toEqual([]);
    expect(run('08-monster-hunters', crowd(105), 15).matches[0].players.map((p) => p.length)).toEqual([5, ...Array(10).fill(10)]);
  });

  it('9: 100 against 100 of one map and mode, league within 2, skill within 10 (20 after 10 s)', () => {
    const crowd = (n: number, map: string, spread: number) => range(n, (k) => solo(`${map}${k}`, 0, { league: k % 3, skill: (k * spread) / n, map, mode: 'ctf' }));
    const r = run('09-large-similar-attributes', [...crowd(200, 'a', 10), ...crowd(150, 'b', 10)], 0);
    expect(r.matches).toHaveLength(1);
    expect(r.matches[0].teams.flat().every((id) => id.startsWith('a'))).toBe(true);
    expect(run('09-large-similar-attributes', crowd(200, 'a', 15), 9).matches).toEqual([]);
    expect(run('09-large-similar-attributes', crowd(200, 'a', 15), 10).matches).toHaveLength(1);
  });

  it('10: same map and mode, or similar skill and league', () => {
    const p = (id: string, a: Attrs) => solo(id, 0, a);
    const sameMap = range(20, (k) => p(`m${k}`, { league: k % 7, skill: k * 9, map: 'x', mode: 'y' }));
    expect(run('10-compound', sameMap, 0).matches).toHaveLength(1);
    const similar = range(20, (k) => p(`s${k}`, { league: 3, skill: 50 + (k % 5), map: `m${k}`, mode: 'y' }));
    expect(run('10-compound', similar, 0).matches).toHaveLength(1);
    const neither = range(20, (k) => p(`n${k}`, { league: k, skill: k * 9, map: `m${k}`, mode: 'y' }));
    expect(run('10-compound', neither, 0).matches).toEqual([]);
  });

  it("11: never with a player on either one's block list", () => {
    const tickets = range(12, (k) => solo(`t${k}`, k, { BlockList: k === 0 ? ['p-t1'] : [] }));
    const r = run('11-block-list', tickets, 20);
    expect(r.matches).toHaveLength(1);
    const ids = r.matches[0].teams.flat();
    expect(ids.includes('t0') && ids.includes('t1')).toBe(false);
  });
});

describe('every formed match obeys every rule (independent checker), parties whole, nothing placed twice', () => {
  it.each(NAMES)('%s', (name) => {
    const large = LARGE.has(name);
    const partySize = name === '06-compare-all-players' ? 1 : name === '02-hunters-vs-monster' ? 2 : 3;
    const ticket = (k: number) =>
      fc
        .tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: large ? 1 : partySize }))
        .chain(([at, size]) =>
          fc.tuple(...Array.from({ length: size }, (_, j) => player(name, `p${k}-${j}`))).map((players) => ({ id: `t${k}`, at, players }) as RuleSetTicketInput),
        );
    const count = large ? fc.integer({ min: 150, max: 320 }) : fc.integer({ min: 0, max: 60 });
    const tickets = count.chain((n) => fc.tuple(...Array.from({ length: n }, (_, k) => ticket(k))));
    fc.assert(
      fc.property(tickets, fc.integer({ min: 0, max: 60 }), (list, now) => {
        const mm = new RuleSetMatchmaker(fixture(name));
        for (const t of list) mm.add(t);
        const result = mm.pass(now + 40);
        const byId = new Map(list.map((t) => [t.id, t]));
        const seenTickets = new Set<string>();
        const seenPlayers = new Set<string>();
        for (const m of result.matches as RuleSetMatch[]) {
          const teams: P[][] = m.teams.map((ids) => ids.flatMap((id) => byId.get(id)!.players as P[]));
          m.teams.forEach((ids, t) => {
            // Parties whole: a team's players are exactly its tickets' players.
            expect(m.players[t]).toEqual(ids.flatMap((id) => byId.get(id)!.players.map((p) => p.id)));
          });
          for (const id of m.teams.flat()) {
            expect(seenTickets.has(id)).toBe(false);
            seenTickets.add(id);
          }
          for (const id of m.players.flat()) {
            expect(seenPlayers.has(id)).toBe(false);
            seenPlayers.add(id);
          }
          // Expansions by the newest ticket's age.
          const age = now + 40 - Math.max(...m.teams.flat().map((id) => byId.get(id)!.at));
          expect(CHECKS[name](teams, age, m.region)).toBeUndefined();
        }
        expect(new Set([...seenTickets, ...result.waiting]).size).toBe(list.length);
        expect(result.waiting.every((id) => !seenTickets.has(id) && typeof result.why[id] === 'string')).toBe(true);
      }),
      { numRuns: large ? 8 : 60 },
    );
  });
});

describe('a pass does not depend on the order tickets were queued in, when their times differ', () => {
  // The pass takes tickets oldest first, and a batch by its order value with ties by age: queued in time order
  // or shuffled, the same tickets give the same matches, waiting list and reasons.
  it.each(NAMES)('%s', (name) => {
    const large = LARGE.has(name);
    const partySize = name === '06-compare-all-players' ? 1 : name === '02-hunters-vs-monster' ? 2 : 3;
    const ticket = (k: number) =>
      fc
        .integer({ min: 1, max: large ? 1 : partySize })
        .chain((size) => fc.tuple(...Array.from({ length: size }, (_, j) => player(name, `p${k}-${j}`))).map((players) => ({ id: `t${k}`, at: 0, players }) as RuleSetTicketInput));
    const queue = (large ? fc.integer({ min: 150, max: 260 }) : fc.integer({ min: 0, max: 60 })).chain((n) =>
      fc.tuple(
        fc.tuple(...Array.from({ length: n }, (_, k) => ticket(k))),
        fc.uniqueArray(fc.integer({ min: 0, max: 4000 }), { minLength: n, maxLength: n }),
        fc.array(fc.nat(), { minLength: n, maxLength: n }),
      ),
    );
    fc.assert(
      fc.property(queue, fc.integer({ min: 0, max: 60 }), ([list, times, shuffle], now) => {
        const timed = list.map((t, k) => ({ ...t, at: times[k] / 100 }));
        const inTimeOrder = [...timed].sort((a, b) => a.at - b.at);
        // Fisher–Yates driven by the generated numbers.
        const shuffled = [...timed];
        for (let k = shuffled.length - 1; k > 0; k--) {
          const j = shuffle[k] % (k + 1);
          [shuffled[k], shuffled[j]] = [shuffled[j], shuffled[k]];
        }
        const passOver = (tickets: RuleSetTicketInput[]) => {
          const mm = new RuleSetMatchmaker(fixture(name));
          for (const t of tickets) mm.add(t);
          return mm.pass(now + 40);
        };
        expect(passOver(shuffled)).toEqual(passOver(inTimeOrder));
      }),
      { numRuns: large ? 4 : 30 },
    );
  });
});
