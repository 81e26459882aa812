import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../core/errors.js';
import { parseRuleSet, parseTolerantJson, RoleAssignment, RuleSetMatchmaker } from './index.js';

const base = {
  ruleLanguageVersion: '1.0',
  playerAttributes: [{ name: 'skill', type: 'number', default: 10 }],
  teams: [
    { name: 'red', minPlayers: 1, maxPlayers: 2 },
    { name: 'blue', minPlayers: 1, maxPlayers: 2 },
  ],
};
const fieldOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof InvalidInputError) return `${e.field}: ${e.detail}`;
    throw e;
  }
  return undefined;
};

describe('tolerant JSON', () => {
  it('reads comments, trailing commas, and keeps the last of a repeated key', () => {
    expect(parseTolerantJson('{ // c\n "a": [1, 2,], /* x */ "a": {"b": "//not a comment",}, }')).toEqual({ a: { b: '//not a comment' } });
  });
  it('agrees with JSON.parse on plain JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(parseTolerantJson(JSON.stringify(v, null, 1))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });
  it('names the line and column of a mistake', () => {
    expect(() => parseTolerantJson('{\n  "a": ]\n}')).toThrow(/line 2, column 8/);
  });
});

describe('parseRuleSet names the JSON path of a mistake', () => {
  it.each([
    [{ rules: [{ name: 'r', type: 'distance', measurements: ['mean(teams[*].players.attributes[skill])'], maxDistance: 1 }] }, "rules[0].measurements[0]: unknown function 'mean'"],
    [{ rules: [{ name: 'r', type: 'distance', measurements: ['avg(teams[*].players.attributes[skil])'], maxDistance: 1 }] }, 'rules[0].measurements[0]: unknown attribute "skil"'],
    [
      { rules: [{ name: 'r', type: 'comparison', measurements: ['count(teams[green].players)'], referenceValue: 1, operation: '=' }] },
      'rules[0].measurements[0]: unknown team "green"',
    ],
    [{ rules: [{ name: 'r', type: 'comparison', measurements: ['teams[red].players.attributes[skill]'], operation: '<' }] }, 'rules[0].referenceValue: is required'],
    [{ rules: [{ name: 'c', type: 'compound', statement: 'and(a, b)' }] }, 'rules[0].statement: unknown rule "a"'],
    [{ expansions: [{ target: 'rules[nope].maxDistance', steps: [{ waitTimeSeconds: 5, value: 1 }] }] }, 'expansions[0].target: unknown rule "nope"'],
    [{ teams: [{ name: 'a', minPlayers: 3, maxPlayers: 2 }] }, 'teams[0].minPlayers: must not exceed maxPlayers'],
    [
      {
        teams: [
          { name: 'a', minPlayers: 1, maxPlayers: 150 },
          { name: 'b', minPlayers: 1, maxPlayers: 51 },
        ],
      },
      'teams: allow 201 players',
    ],
    [{ algorithm: { strategy: 'balanced' } }, 'algorithm.balancedAttribute: is required'],
    [{ playerAttributes: [{ name: 'skill', type: 'number', default: 'x' }] }, 'playerAttributes[0].default: must be a number'],
    [{ teams: [{ name: 'a', minPlayers: 5, maxPlayers: 5, roles: { tank: 1, dps: 2 } }] }, 'teams[0].roles: holds 3 slots'],
    [{ ruleLanguageVersion: '2.0' }, 'ruleLanguageVersion: must be "1.0"'],
  ])('%j', (patch, message) => {
    expect(fieldOf(() => parseRuleSet({ ...base, ...patch }))).toContain(message);
  });
  it("reads numbers written as strings, as AWS's own rule-type page does", () => {
    const rs = parseRuleSet({ ...base, rules: [{ name: 'r', type: 'batchDistance', batchAttribute: 'skill', maxDistance: '500' }] });
    expect(rs.rules[0]).toMatchObject({ maxDistance: 500, partyAggregation: 'avg' });
  });
});

describe('tickets', () => {
  const mm = () => new RuleSetMatchmaker({ ...base, rules: [{ name: 'ping', type: 'latency', maxLatency: 100 }] });
  it('name the player field at fault', () => {
    expect(fieldOf(() => mm().add({ id: 't', at: 0, players: [{ id: 'p', attributes: { skil: 3 }, pings: { eu: 1 } }] }))).toContain('players[0].attributes.skil: is not declared');
    expect(fieldOf(() => mm().add({ id: 't', at: 0, players: [{ id: 'p', attributes: { skill: '3' }, pings: { eu: 1 } }] }))).toContain(
      'players[0].attributes.skill: must be a number',
    );
    expect(fieldOf(() => mm().add({ id: 't', at: 0, players: [{ id: 'p' }] }))).toContain('players[0].pings: is required');
  });
  it('refuse a player already waiting', () => {
    const m = mm();
    m.add({ id: 't1', at: 0, players: [{ id: 'p', pings: { eu: 1 } }] });
    expect(fieldOf(() => m.add({ id: 't2', at: 0, players: [{ id: 'p', pings: { eu: 1 } }] }))).toContain('players[0].id: player "p" already waits');
  });
  it('take attributes from the ladder, not the client', () => {
    const m = new RuleSetMatchmaker(base, { attributes: { skill: (id) => (id === 'a' ? 1500 : undefined) } });
    expect(m.add({ id: 't', at: 0, players: [{ id: 'a' }] }).players[0].attributes.skill).toBe(1500);
    expect(fieldOf(() => m.add({ id: 'u', at: 0, players: [{ id: 'b', attributes: { skill: 9999 } }] }))).toContain('comes from the ladder');
  });
});

describe('role queue', () => {
  it('finds the assignment a greedy first fit misses', () => {
    const roles = new RoleAssignment({ tank: 1, healer: 1 });
    expect(roles.add(['tank', 'healer'])).toBe(true); // first fit: tank
    expect(roles.add(['tank'])).toBe(true); // needs the first player moved to healer
    expect(roles.roles()).toEqual(['healer', 'tank']);
    expect(roles.add([])).toBe(false);
  });
  it('seats everyone exactly when a perfect assignment exists (brute force)', () => {
    const ROLES = ['tank', 'damage', 'support'];
    const slots = { tank: 1, damage: 2, support: 2 };
    fc.assert(
      fc.property(fc.array(fc.subarray(ROLES, { minLength: 1 }), { minLength: 1, maxLength: 5 }), (players) => {
        const seatable = (k: number, left: Record<string, number>): boolean =>
          k === players.length || players[k].some((r) => left[r] > 0 && seatable(k + 1, { ...left, [r]: left[r] - 1 }));
        const a = new RoleAssignment(slots);
        const all = players.every((p) => a.add(p));
        expect(all).toBe(seatable(0, slots));
        if (all) a.roles().forEach((role, k) => expect(players[k]).toContain(role));
      }),
    );
  });
  it('a pass assigns roles and says who plays what', () => {
    const m = new RuleSetMatchmaker({ ruleLanguageVersion: '1.0', teams: [{ name: 'a', minPlayers: 2, maxPlayers: 2, quantity: 2, roles: { tank: 1, healer: 1 } }] });
    m.add({ id: 't1', at: 0, players: [{ id: 'p1', roles: ['tank', 'healer'] }] });
    m.add({ id: 't2', at: 1, players: [{ id: 'p2', roles: ['tank', 'healer'] }] });
    m.add({ id: 't3', at: 2, players: [{ id: 'p3', roles: ['tank'] }] });
    m.add({ id: 't4', at: 3, players: [{ id: 'p4', roles: ['tank'] }] });
    const [match] = m.pass(10).matches;
    expect(match.teamNames).toEqual(['a_1', 'a_2']);
    for (const team of match.players) expect(new Set(team.map((p) => match.roles![p]))).toEqual(new Set(['tank', 'healer']));
    expect(match.roles).toMatchObject({ p3: 'tank', p4: 'tank' });
  });
});

describe('why waiting', () => {
  it('names the rule that most often kept a ticket out', () => {
    const m = new RuleSetMatchmaker({ ...base, rules: [{ name: 'close', type: 'batchDistance', batchAttribute: 'skill', maxDistance: 5 }] });
    m.add({ id: 'a', at: 0, players: [{ id: 'pa', attributes: { skill: 10 } }] });
    m.add({ id: 'b', at: 0, players: [{ id: 'pb', attributes: { skill: 12 } }] });
    m.add({ id: 'far', at: 0, players: [{ id: 'pf', attributes: { skill: 90 } }] });
    const r = m.pass(0);
    expect(r.waiting).toEqual(['far']);
    expect(r.why).toEqual({ far: 'close' });
    expect(m.whyWaiting('far')).toBe('close');
  });

  it('counts only anchors that could take the ticket: a young anchor does not look past its own reach', () => {
    // The same league first, then skill within 10, widened to 50 after 20 s. Three young tickets near skill 0 cannot reach 'far' (skill 40,
    // another league) before 20 s: their match's age is at most theirs. Looked at by them, 'far' would be refused three times by
    // SameLeague; it is not, so what held it is its own match: nothing within SimilarSkill's reach (10) of 40.
    const m = new RuleSetMatchmaker({
      ruleLanguageVersion: '1.0',
      playerAttributes: [
        { name: 'league', type: 'number' },
        { name: 'skill', type: 'number' },
      ],
      teams: [{ name: 'all', minPlayers: 5, maxPlayers: 5 }],
      // Candidates are taken nearest in skill (the sorted batching's attribute); rules are judged in the order listed.
      algorithm: { batchingPreference: 'sorted', sortByAttributes: ['skill'] },
      rules: [
        { name: 'SameLeague', type: 'batchDistance', batchAttribute: 'league', maxDistance: 0 },
        { name: 'SimilarSkill', type: 'batchDistance', batchAttribute: 'skill', maxDistance: 10 },
      ],
      expansions: [{ target: 'rules[SimilarSkill].maxDistance', steps: [{ waitTimeSeconds: 20, value: 50 }] }],
    });
    for (const [id, skill] of [
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ] as const)
      m.add({ id, at: 0, players: [{ id: `p${id}`, attributes: { league: 1, skill } }] });
    m.add({ id: 'far', at: 0, players: [{ id: 'pf', attributes: { league: 2, skill: 40 } }] });
    expect(m.pass(5).why.far).toBe('SimilarSkill');
    // After 20 s the anchors reach 50: each looks at 'far' and its league refuses it (three times against its own one).
    expect(m.pass(25).why.far).toBe('SameLeague');
  });
});

describe('the search window', () => {
  it('counts only candidates the forming match could still take', () => {
    // Skill within 10, three players, a window of three candidates. Anchor a (50) takes b (55) first; the match's values are then
    // 50–55, so 44 could only join a match reaching 11 and neither 44 is looked at: the window goes on to c (58), and a, b and c
    // form a match. Counting the two 44s against the window, a would fail after b, 44, 44, and the next anchor (44, older than b
    // and c) would take the other 44 and a instead.
    const m = new RuleSetMatchmaker(
      {
        ruleLanguageVersion: '1.0',
        playerAttributes: [{ name: 'skill', type: 'number' }],
        teams: [{ name: 'all', minPlayers: 3, maxPlayers: 3 }],
        rules: [{ name: 'CloseSkill', type: 'batchDistance', batchAttribute: 'skill', maxDistance: 10 }],
      },
      { searchWindow: 3 },
    );
    const add = (id: string, at: number, skill: number) => m.add({ id, at, players: [{ id: `p${id}`, attributes: { skill } }] });
    add('a', 0, 50);
    add('low1', 1, 44);
    add('low2', 2, 44);
    add('b', 3, 55);
    add('c', 4, 58);
    const r = m.pass(5);
    expect(r.matches.map((match) => [...match.teams[0]].sort())).toEqual([['a', 'b', 'c']]);
    expect(r.waiting).toEqual(['low1', 'low2']);
  });
});
