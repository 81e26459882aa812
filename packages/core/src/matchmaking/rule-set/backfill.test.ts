/**
 * Backfill for rule-set queues: values worked by hand on the AWS guide's
 * examples and small rule sets written here, and property tests where every
 * backfilled match (the players left in a formed match plus the newcomers)
 * is checked by the independent checker of the guide's examples
 * (test/support/flexmatch-checks.ts), parties stay whole and no ticket or
 * player is placed twice.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHECKS, fixture, LARGE, NAMES, type P, player } from '../../../../../test/support/flexmatch-checks.js';
import { invalidField } from '../../../../../test/support/invalid-field.js';
import { parseRuleSet, type RuleSetBackfillInput, RuleSetMatchmaker, type RuleSetTicketInput } from '../index.js';

type Attrs = Record<string, unknown>;
const solo = (id: string, at: number, attributes: Attrs = {}, extra: { pings?: Record<string, number>; roles?: string[] } = {}): RuleSetTicketInput => ({
  id,
  at,
  players: [{ id: `p-${id}`, attributes, ...extra }],
});
/** A match of `skill` players per team for example 1 (cowboys, aliens). */
const cowboys = (sizes: [number, number], skill = 20, at = 0): RuleSetBackfillInput => ({
  id: 'b',
  match: 'm',
  at,
  teams: [Array.from({ length: sizes[0] }, (_, k) => `c${k}`), Array.from({ length: sizes[1] }, (_, k) => `a${k}`)],
  players: Object.fromEntries(
    [...Array(sizes[0]).keys()].map((k) => [`c${k}`, { attributes: { skill } }]).concat([...Array(sizes[1]).keys()].map((k) => [`a${k}`, { attributes: { skill } }])),
  ),
});

/** Two teams of one, or of up to `max` with role slots; backfills served by `priority`. */
const duel = (priority: 'high' | 'normal' | 'low', extra: Record<string, unknown> = {}) => ({
  name: 'duel',
  ruleLanguageVersion: '1.0',
  playerAttributes: [{ name: 'skill', type: 'number', default: 10 }],
  algorithm: { backfillPriority: priority },
  teams: [
    { name: 'red', minPlayers: 1, maxPlayers: 1 },
    { name: 'blue', minPlayers: 1, maxPlayers: 1 },
  ],
  ...extra,
});

describe('rule-set backfill, worked by hand', () => {
  it('example 1: a 4-v-3 match takes one newcomer onto aliens (EqualTeamSizes holds at 4 v 4), three make it 5 v 5', () => {
    const mm = new RuleSetMatchmaker(fixture('01-aliens-vs-cowboys'));
    mm.addBackfill(cowboys([4, 3]));
    mm.add(solo('t1', 0, { skill: 20 }));
    const r = mm.pass(0);
    expect(r.backfills).toEqual([
      {
        id: 'b',
        match: 'm',
        region: null,
        teamNames: ['cowboys', 'aliens'],
        added: [[], ['t1']],
        players: [
          ['c0', 'c1', 'c2', 'c3'],
          ['a0', 'a1', 'a2', 'p-t1'],
        ],
        open: [4, 4],
        filled: false,
      },
    ]);
    expect(r.matches).toEqual([]);
    // Still open with its newcomer: three more make 5 v 5 (after two it would be 5 v 4, refused by EqualTeamSizes).
    expect(mm.backfills()[0].teams[1]).toContain('p-t1');
    for (const id of ['t2', 't3', 't4']) mm.add(solo(id, 0, { skill: 20 }));
    // Aliens and cowboys each have 4 open: cowboys (listed first) takes t2, aliens t3, cowboys t4 → 6 v 5, so the largest equal match is 5 v 5.
    const next = mm.pass(1);
    expect(next.backfills[0].added).toEqual([['t2'], ['t3']]);
    expect(next.waiting).toEqual(['t4']);
  });

  it('example 1: FairTeamSkill is judged on the whole match, widened by the age of the request and newcomer (newest, or oldest)', () => {
    // Cowboys 4 × 20, aliens 3 × 20 + 120: aliens average 45, match 32.5: 12.5 apart, over 10, within 50 after 5 s.
    const at = (requestAt: number, ticketAt: number, now: number) => {
      const mm = new RuleSetMatchmaker(fixture('01-aliens-vs-cowboys'));
      mm.addBackfill(cowboys([4, 3], 20, requestAt));
      mm.add(solo('far', ticketAt, { skill: 120 }));
      return mm.pass(now).backfills.length;
    };
    expect(at(0, 0, 4)).toBe(0);
    expect(at(0, 0, 5)).toBe(1);
    // The newest of request and ticket decides: a ticket 2 s old keeps the 10.
    expect(at(0, 3, 5)).toBe(0);
    expect(at(3, 0, 5)).toBe(0);
    // With expansionAgeSelection "oldest", the older of the two decides.
    const parsed = parseRuleSet(fixture('01-aliens-vs-cowboys'));
    const oldest = { ...parsed, algorithm: { ...parsed.algorithm, expansionAgeSelection: 'oldest' as const } };
    const byOldest = (requestAt: number, ticketAt: number, now: number) => {
      const mm = new RuleSetMatchmaker(oldest);
      mm.addBackfill(cowboys([4, 3], 20, requestAt));
      mm.add(solo('far', ticketAt, { skill: 120 }));
      return mm.pass(now).backfills.length;
    };
    expect(byOldest(0, 3, 5)).toBe(1);
    expect(byOldest(3, 0, 5)).toBe(1);
    expect(byOldest(3, 3, 5)).toBe(0);
    // 100 apart: (20·4 + 20·3 + 100)/8 = 30, aliens (60 + 100)/4 = 40, within 10 at once.
    const mm = new RuleSetMatchmaker(fixture('01-aliens-vs-cowboys'));
    mm.addBackfill(cowboys([4, 3]));
    mm.add(solo('near', 0, { skill: 100 }));
    expect(mm.pass(0).backfills[0].added).toEqual([[], ['near']]);
  });

  it('example 2: only a would-be monster may fill the monster slot, and only one meeting every hunter’s wish', () => {
    const request = (): RuleSetBackfillInput => ({
      id: 'b',
      at: 0,
      teams: [['h0', 'h1', 'h2', 'h3', 'h4'], []],
      players: Object.fromEntries([0, 1, 2, 3, 4].map((k) => [`h${k}`, { attributes: { skill: 10, desiredSkillOfMonster: 20 } }])),
    });
    const mm = new RuleSetMatchmaker(fixture('02-hunters-vs-monster'));
    mm.addBackfill(request());
    mm.add(solo('hunter', 0, { skill: 30 }));
    mm.add(solo('weak', 1, { skill: 15, wantsToBeMonster: 1 }));
    mm.add(solo('strong', 2, { skill: 25, wantsToBeMonster: 1 }));
    const r = mm.pass(0);
    expect(r.backfills.map((b) => [b.added, b.filled])).toEqual([[[[], ['strong']], true]]);
    expect(mm.backfills()).toEqual([]);
    expect(r.waiting).toEqual(['hunter', 'weak']);
  });

  it('example 9: ten leave a 100-v-100 match; ten of its map, league and skill nearest the match’s take their places, others wait', () => {
    const attrs = (k: number, map = 'x') => ({ league: k % 3, skill: (k * 10) / 200, map, mode: 'ctf' });
    const mm = new RuleSetMatchmaker(fixture('09-large-similar-attributes'));
    for (let k = 0; k < 200; k++) mm.add(solo(`t${k}`, 0, attrs(k)));
    const formed = mm.pass(0).matches[0];
    const byPlayer = new Map(Array.from({ length: 200 }, (_, k) => [`p-t${k}`, attrs(k)]));
    const kept = formed.players.map((team) => team.slice(5));
    mm.addBackfill({ id: 'b', at: 0, teams: kept, players: Object.fromEntries(kept.flat().map((id) => [id, { attributes: byPlayer.get(id)! }])) });
    mm.add(solo('otherMap', 0, attrs(1, 'y')));
    mm.add(solo('farSkill', 0, { ...attrs(1), skill: 30 }));
    for (let k = 0; k < 12; k++) mm.add(solo(`n${k}`, 1, attrs(k)));
    const r = mm.pass(0);
    expect(r.backfills).toHaveLength(1);
    expect(r.backfills[0].added.map((team) => team.length)).toEqual([5, 5]);
    expect(r.backfills[0].filled).toBe(true);
    // Candidates come nearest the match's mean skill first: n0 and n1 (skill 0 and 0.05) are the farthest.
    expect(r.waiting).toEqual(['otherMap', 'farSkill', 'n0', 'n1']);
  });

  it('backfillPriority: high serves the request before new matches, low after them, normal by age among the anchors', () => {
    const run = (priority: 'high' | 'normal' | 'low', requestAt: number) => {
      const mm = new RuleSetMatchmaker(duel(priority));
      mm.addBackfill({ id: 'b', at: requestAt, teams: [['m1'], []] });
      mm.add(solo('a', 1));
      mm.add(solo('b', 2));
      const r = mm.pass(10);
      return { filled: r.backfills.flatMap((b) => b.added.flat()), matched: r.matches.flatMap((m) => m.teams.flat()) };
    };
    expect(run('high', 5)).toEqual({ filled: ['a'], matched: [] });
    expect(run('low', 0)).toEqual({ filled: [], matched: ['a', 'b'] });
    expect(run('normal', 1)).toEqual({ filled: ['a'], matched: [] });
    expect(run('normal', 1.5)).toEqual({ filled: [], matched: ['a', 'b'] });
    // Low: what the new matches leave.
    const mm = new RuleSetMatchmaker(duel('low'));
    mm.addBackfill({ id: 'b', at: 0, teams: [['m1'], []] });
    for (const id of ['a', 'b', 'c']) mm.add(solo(id, 1));
    expect(mm.pass(10).backfills[0].added).toEqual([[], ['c']]);
  });

  it('parties join whole on one team with room for all of them; roles seat the whole team', () => {
    const ruleSet = duel('high', {
      teams: [
        { name: 'red', minPlayers: 3, maxPlayers: 3, roles: { tank: 1, healer: 1, damage: 1 } },
        { name: 'blue', minPlayers: 3, maxPlayers: 3, roles: { tank: 1, healer: 1, damage: 1 } },
      ],
    });
    const mm = new RuleSetMatchmaker(ruleSet);
    mm.addBackfill({
      id: 'b',
      at: 0,
      teams: [['r1', 'r2'], ['u1']],
      players: { r1: { roles: ['tank'] }, r2: { roles: ['healer'] }, u1: { roles: ['tank'] } },
    });
    // A party of three fits no team; a tank-only player fits neither; a healer + damage party fits blue.
    mm.add({ id: 'trio', at: 0, players: [{ id: 'x1' }, { id: 'x2' }, { id: 'x3' }] });
    mm.add(solo('tank', 1, {}, { roles: ['tank'] }));
    mm.add({
      id: 'pair',
      at: 2,
      players: [
        { id: 'y1', roles: ['healer', 'damage'] },
        { id: 'y2', roles: ['damage'] },
      ],
    });
    mm.add(solo('any', 3));
    const r = mm.pass(0);
    expect(r.backfills).toHaveLength(1);
    const fill = r.backfills[0];
    expect(fill.added).toEqual([['any'], ['pair']]);
    expect(fill.players).toEqual([
      ['r1', 'r2', 'p-any'],
      ['u1', 'y1', 'y2'],
    ]);
    expect(fill.roles).toEqual({ r1: 'tank', r2: 'healer', 'p-any': 'damage', u1: 'tank', y1: 'healer', y2: 'damage' });
    expect(fill.filled).toBe(true);
    expect(r.waiting).toEqual(['trio', 'tank']);
  });

  it('latency is judged in the match’s region with the match’s players’ pings; results follow the request’s team order', () => {
    const ruleSet = duel('high', {
      teams: [
        { name: 'red', minPlayers: 2, maxPlayers: 2 },
        { name: 'blue', minPlayers: 2, maxPlayers: 2 },
      ],
      rules: [{ name: 'FastConnection', type: 'latency', maxLatency: 100 }],
    });
    const mm = new RuleSetMatchmaker(ruleSet);
    mm.addBackfill({
      id: 'b',
      at: 0,
      region: 'eu',
      teamNames: ['blue', 'red'],
      teams: [['u1', 'u2'], ['r1']],
      players: { u1: { pings: { eu: 40 } }, u2: { pings: { eu: 50 } }, r1: { pings: { eu: 90, us: 10 } } },
    });
    // Fast in the US only: the match is in the EU.
    mm.add(solo('us', 0, {}, { pings: { us: 5, eu: 150 } }));
    mm.add(solo('eu', 1, {}, { pings: { eu: 80 } }));
    const r = mm.pass(0);
    expect(r.backfills).toEqual([
      {
        id: 'b',
        match: 'b',
        region: 'eu',
        teamNames: ['blue', 'red'],
        added: [[], ['eu']],
        players: [
          ['u1', 'u2'],
          ['r1', 'p-eu'],
        ],
        open: [0, 0],
        filled: true,
      },
    ]);
    expect(r.waiting).toEqual(['us']);
  });

  it('a withdrawn request takes nobody; a match player cannot queue while the request is open', () => {
    const mm = new RuleSetMatchmaker(duel('high'));
    mm.addBackfill({ id: 'b', at: 0, teams: [['m1'], []] });
    expect(invalidField(() => mm.add({ id: 'again', at: 0, players: [{ id: 'm1' }] }))).toBe('players[0].id');
    expect(mm.hasBackfill('b')).toBe(true);
    expect(mm.removeBackfill('b')).toBe(true);
    expect(mm.removeBackfill('b')).toBe(false);
    mm.add(solo('a', 0));
    expect(mm.pass(0).backfills).toEqual([]);
    // Withdrawn: its players may queue again.
    expect(() => mm.add({ id: 'again', at: 0, players: [{ id: 'm1' }] })).not.toThrow();
  });

  it('bad requests are InvalidInputErrors naming the field', () => {
    const mm = new RuleSetMatchmaker(fixture('01-aliens-vs-cowboys'));
    mm.add(solo('w', 0, { skill: 3 }));
    const field = (patch: Record<string, unknown>) => invalidField(() => mm.addBackfill({ ...cowboys([2, 2]), ...patch }));
    expect(field({ id: '' })).toBe('id');
    expect(field({ at: 'soon' })).toBe('at');
    expect(field({ teams: [['c0']] })).toBe('teams');
    expect(field({ teamNames: ['aliens', 'robots'] })).toBe('teamNames[1]');
    expect(field({ teamNames: ['aliens', 'aliens'] })).toBe('teamNames[1]');
    expect(field({ teams: [['c0', 'c0'], []], players: {} })).toBe('teams[0][1]');
    expect(field({ teams: [['p-w'], []], players: {} })).toBe('teams[0][0]');
    expect(field({ teams: [Array.from({ length: 9 }, (_, k) => `c${k}`), []], players: {} })).toBe('teams[0]');
    expect(field({ teams: [['c0'], []], players: { c0: { attributes: { skill: 'high' } } } })).toBe('players.c0.attributes.skill');
    expect(field({ teams: [['c0'], []], players: { c0: { attributes: { speed: 1 } } } })).toBe('players.c0.attributes.speed');
    expect(field({ teams: [['c0'], []], players: { c9: {} } })).toBe('players.c9');
    expect(field({ teams: [[], []], players: {} })).toBe('teams');
    expect(field({ color: 'red' })).toBe('color');
    mm.addBackfill(cowboys([2, 2]));
    expect(invalidField(() => mm.addBackfill(cowboys([2, 2])))).toBe('id');
    expect(invalidField(() => mm.addBackfill({ ...cowboys([1, 0]), id: 'other' }))).toBe('teams[0][0]');
    expect(invalidField(() => new RuleSetMatchmaker(fixture('03-three-team-game')).addBackfill({ id: 'x', at: 0, teams: [['a'], [], []], players: {} }))).toBe('players.a.pings');
  });
});

describe('every backfilled match obeys every rule (independent checker), parties whole, nothing placed twice', () => {
  it.each(NAMES)('%s', (name) => {
    const large = LARGE.has(name);
    const partySize = name === '06-compare-all-players' ? 1 : name === '02-hunters-vs-monster' ? 2 : 3;
    const ticket = (prefix: string, k: number) =>
      fc
        .tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: large ? 1 : partySize }))
        .chain(([at, size]) =>
          fc.tuple(...Array.from({ length: size }, (_, j) => player(name, `${prefix}${k}-${j}`))).map((players) => ({ id: `${prefix}${k}`, at, players }) as RuleSetTicketInput),
        );
    const batch = (prefix: string, min: number, max: number) =>
      fc.integer({ min, max }).chain((n) => (n === 0 ? fc.constant([] as RuleSetTicketInput[]) : fc.tuple(...Array.from({ length: n }, (_, k) => ticket(prefix, k)))));
    const first = large ? batch('f', 250, 400) : batch('f', 4, 50);
    const later = large ? batch('n', 0, 120) : batch('n', 0, 40);
    let fills = 0;
    fc.assert(
      fc.property(
        first,
        later,
        fc.array(fc.boolean(), { minLength: 400, maxLength: 400 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 30 }),
        fc.boolean(),
        (list1, list2, drop, now, requestAge, reversed) => {
          const mm = new RuleSetMatchmaker(fixture(name));
          for (const t of list1) mm.add(t);
          const firstPass = mm.pass(now + 40);
          const formed = firstPass.matches[0];
          if (formed === undefined) return;
          const matchedFirst = new Set(firstPass.matches.flatMap((m) => m.teams.flat()));
          const byId = new Map([...list1, ...list2].map((t) => [t.id, t]));
          const playerOf = new Map([...list1, ...list2].flatMap((t) => t.players.map((p) => [p.id, p as P] as const)));
          // Some players leave the match; the rest ask for newcomers (teams in either order).
          let k = 0;
          // About half the players leave a small match, an eighth a large one.
          const leaves = () => (large ? drop[k++ % 400] && drop[k++ % 400] && drop[k++ % 400] : drop[k++ % 400]);
          const kept = formed.players.map((team) => team.filter(() => !leaves()));
          if (kept.flat().length === 0 || kept.flat().length === formed.players.flat().length) return;
          const order = reversed ? formed.teamNames.map((_, t) => formed.teamNames.length - 1 - t) : formed.teamNames.map((_, t) => t);
          const requestAt = now + 40 - requestAge;
          mm.addBackfill({
            id: 'b',
            at: requestAt,
            teamNames: order.map((t) => formed.teamNames[t]),
            teams: order.map((t) => kept[t]),
            players: Object.fromEntries(
              kept.flat().map((id) => {
                const p = playerOf.get(id)!;
                return [id, { attributes: p.attributes, ...(p.pings ? { pings: p.pings } : {}) }];
              }),
            ),
          });
          for (const t of list2) mm.add(t);
          const result = mm.pass(now + 60);
          const seenTickets = new Set<string>();
          const seenPlayers = new Set<string>(kept.flat());
          for (const fill of result.backfills) {
            fills++;
            expect(fill.teamNames).toEqual(order.map((t) => formed.teamNames[t]));
            // Parties whole: each team is the match's players then its newcomer tickets' players.
            fill.added.forEach((ids, i) => {
              expect(fill.players[i]).toEqual([...kept[order[i]], ...ids.flatMap((id) => byId.get(id)!.players.map((p) => p.id))]);
            });
            for (const id of fill.added.flat()) {
              expect(seenTickets.has(id)).toBe(false);
              seenTickets.add(id);
              for (const p of byId.get(id)!.players) {
                expect(seenPlayers.has(p.id)).toBe(false);
                seenPlayers.add(p.id);
              }
            }
            // Back in the rule set's team order for the checker; expansions by the newest of request and newcomers.
            const teams: P[][] = formed.teamNames.map((_, t) => fill.players[order.indexOf(t)].map((id) => playerOf.get(id)!));
            const age = now + 60 - Math.max(requestAt, ...fill.added.flat().map((id) => byId.get(id)!.at));
            expect(CHECKS[name](teams, age, fill.region)).toBeUndefined();
            expect(fill.open.every((n) => n >= 0)).toBe(true);
          }
          for (const m of result.matches) {
            for (const id of m.teams.flat()) {
              expect(seenTickets.has(id)).toBe(false);
              seenTickets.add(id);
            }
          }
          const waitingBefore = list1.filter((t) => !matchedFirst.has(t.id)).length + list2.length;
          expect(new Set([...seenTickets, ...result.waiting]).size).toBe(waitingBefore);
        },
      ),
      { numRuns: large ? 6 : 60 },
    );
    // Not vacuous: the random queues fill some requests (example 9's random players rarely form a 100-v-100 match; it has its own case above).
    if (name !== '09-large-similar-attributes') expect(fills).toBeGreaterThan(0);
  });
});
