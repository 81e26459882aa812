/**
 * The AWS guide's eleven example rule sets (test/fixtures/flexmatch), and an
 * independent checker of each: its rules written out from the guide's prose
 * (not by the engine's evaluator), for the rule-set tests' formed matches
 * and backfilled ones. Also random players for each example, from small
 * domains so that matches form.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';

type Attrs = Record<string, unknown>;

export const fixture = (name: string): string => readFileSync(new URL(`../fixtures/flexmatch/${name}.json`, import.meta.url), 'utf8');
export const NAMES = [
  '01-aliens-vs-cowboys',
  '02-hunters-vs-monster',
  '03-three-team-game',
  '04-multi-map-game',
  '05-preferred-characters',
  '06-compare-all-players',
  '07-free-for-all',
  '08-monster-hunters',
  '09-large-similar-attributes',
  '10-compound',
  '11-block-list',
] as const;
export type Name = (typeof NAMES)[number];

export type P = { id: string; attributes: Attrs; pings?: Record<string, number> };
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const step = (steps: Array<[number, number]>, base: number, age: number) => steps.reduce((v, [wait, value]) => (age >= wait ? value : v), base);
const num = (p: P, k: string) => p.attributes[k] as number;
const latencyOk = (players: P[], region: string | null, max: number) => region !== null && players.every((p) => (p.pings?.[region] ?? Infinity) <= max);

export const CHECKS: Record<Name, (teams: P[][], age: number, region: string | null) => string | undefined> = {
  '01-aliens-vs-cowboys': (teams, age) => {
    const all = avg(teams.flat().map((p) => num(p, 'skill')));
    const d = step(
      [
        [5, 50],
        [15, 100],
      ],
      10,
      age,
    );
    if (teams[0].length !== teams[1].length) return 'sizes';
    if (teams.some((t) => t.length < 4 || t.length > 8)) return 'size range';
    if (teams.some((t) => Math.abs(avg(t.map((p) => num(p, 'skill'))) - all) > d)) return 'FairTeamSkill';
  },
  '02-hunters-vs-monster': (teams, age) => {
    const [hunters, monster] = teams;
    if (
      hunters.length <
        step(
          [
            [30, 4],
            [60, 3],
          ],
          5,
          age,
        ) ||
      hunters.length > 5 ||
      monster.length !== 1
    )
      return 'sizes';
    if (monster[0].attributes.wantsToBeMonster !== 1 || hunters.some((h) => h.attributes.wantsToBeMonster !== 0)) return 'selection';
    if (num(monster[0], 'skill') < Math.max(...hunters.map((h) => num(h, 'desiredSkillOfMonster')))) return 'MonsterSkill';
  },
  '03-three-team-game': (teams, age, region) => {
    const all = avg(teams.flat().map((p) => num(p, 'skill')));
    if (teams.some((t) => t.length < 3 || t.length > 5)) return 'sizes';
    if (Math.max(...teams.map((t) => t.length)) - Math.min(...teams.map((t) => t.length)) > 1) return 'CloseTeamSizes';
    if (teams.some((t) => Math.abs(avg(t.map((p) => num(p, 'skill'))) - all) > 10)) return 'FairTeamSkill';
    if (
      teams
        .flat()
        .flatMap((p) => p.attributes.character as string[])
        .filter((c) => c === 'medic').length > 5
    )
      return 'medics';
    if (
      !latencyOk(
        teams.flat(),
        region,
        step(
          [
            [10, 100],
            [20, 150],
          ],
          50,
          age,
        ),
      )
    )
      return 'latency';
  },
  '04-multi-map-game': (teams) => {
    if (teams.some((t) => t.length !== 3)) return 'sizes';
    const everyone = teams.flat();
    for (const k of ['gameMode', 'acceptableMaps']) {
      const common = (everyone[0].attributes[k] as string[]).filter((x) => everyone.every((p) => (p.attributes[k] as string[]).includes(x)));
      if (common.length === 0) return k;
    }
  },
  '05-preferred-characters': (teams, age) => {
    const everyone = teams.flat();
    if (everyone.length !== 5) return 'sizes';
    if (age >= 15) return undefined;
    const wanted = (everyone[0].attributes.preferredOpponents as string[]).filter((c) => everyone.every((p) => (p.attributes.preferredOpponents as string[]).includes(c)));
    if (everyone.some((p) => !(p.attributes.myCharacter as string[]).some((c) => wanted.includes(c)))) return 'OpponentMatch';
  },
  '06-compare-all-players': (teams) => {
    const [[a], [b]] = teams;
    if (!a || !b || teams.some((t) => t.length !== 1)) return 'sizes';
    if ((a.attributes.gameMode ?? 'turn-based') !== (b.attributes.gameMode ?? 'turn-based') || (a.attributes.gameMap ?? 1) !== (b.attributes.gameMap ?? 1)) return 'same';
    if (a.attributes.character === b.attributes.character) return 'DifferentCharacter';
  },
  '07-free-for-all': (teams, age, region) => {
    const n = teams[0].length;
    if (
      n > 200 ||
      n <
        step(
          [
            [10, 150],
            [15, 100],
          ],
          175,
          age,
        )
    )
      return 'sizes';
    if (!latencyOk(teams[0], region, 150)) return 'latency';
  },
  '08-monster-hunters': (teams, age, region) => {
    if (teams[0].length !== 5) return 'monsters';
    if (
      teams.slice(1).some(
        (t) =>
          t.length > 15 ||
          t.length <
            step(
              [
                [15, 10],
                [20, 8],
              ],
              12,
              age,
            ),
      )
    )
      return 'hunters';
    if (!latencyOk(teams.flat(), region, 150)) return 'latency';
  },
  '09-large-similar-attributes': (teams, age) => {
    const everyone = teams.flat();
    if (teams.some((t) => t.length !== 100)) return 'sizes';
    const spread = (k: string) => Math.max(...everyone.map((p) => num(p, k))) - Math.min(...everyone.map((p) => num(p, k)));
    if (spread('league') > 2) return 'SimilarLeague';
    if (
      spread('skill') >
      step(
        [
          [10, 20],
          [20, 40],
        ],
        10,
        age,
      )
    )
      return 'SimilarSkill';
    if (new Set(everyone.map((p) => p.attributes.map)).size > 1 || new Set(everyone.map((p) => p.attributes.mode)).size > 1) return 'map/mode';
  },
  '10-compound': (teams, age) => {
    const everyone = teams.flat();
    if (teams.some((t) => t.length < 10 || t.length > 20)) return 'sizes';
    const spread = (k: string) => Math.max(...everyone.map((p) => num(p, k))) - Math.min(...everyone.map((p) => num(p, k)));
    const same = new Set(everyone.map((p) => p.attributes.map)).size === 1 && new Set(everyone.map((p) => p.attributes.mode)).size === 1;
    const similar =
      spread('league') <= 2 &&
      spread('skill') <=
        step(
          [
            [10, 20],
            [20, 40],
          ],
          10,
          age,
        );
    if (!same && !similar) return 'CompoundRuleMatchmaker';
  },
  '11-block-list': (teams) => {
    if (teams.some((t) => t.length !== 5)) return 'sizes';
    const ids = new Set(teams.flat().map((p) => p.id));
    if (teams.flat().some((p) => ((p.attributes.BlockList as string[] | undefined) ?? []).some((b) => ids.has(b)))) return 'block list';
  },
};

/** Random attributes for each example, from small domains so that matches form. */
export const player = (name: Name, id: string): fc.Arbitrary<P> => {
  const pings = fc.record({ 'us-east-1': fc.integer({ min: 20, max: 200 }), 'eu-west-1': fc.integer({ min: 20, max: 200 }) });
  const a = (attributes: fc.Arbitrary<Attrs>, withPings = false) =>
    withPings ? fc.tuple(attributes, pings).map(([attrs, p]) => ({ id, attributes: attrs, pings: p })) : attributes.map((attrs) => ({ id, attributes: attrs }));
  switch (name) {
    case '01-aliens-vs-cowboys':
      return a(fc.record({ skill: fc.integer({ min: 0, max: 100 }) }));
    case '02-hunters-vs-monster':
      return a(fc.record({ skill: fc.integer({ min: 0, max: 30 }), desiredSkillOfMonster: fc.integer({ min: 0, max: 30 }), wantsToBeMonster: fc.constantFrom(0, 0, 0, 1) }));
    case '03-three-team-game':
      return a(fc.record({ skill: fc.integer({ min: 0, max: 40 }), character: fc.subarray(['medic', 'peasant', 'knight'], { minLength: 1 }) }), true);
    case '04-multi-map-game':
      return a(
        fc.record({
          experience: fc.integer({ min: 0, max: 100 }),
          gameMode: fc.subarray(['coop', 'deathmatch', 'ctf'], { minLength: 1 }),
          acceptableMaps: fc.subarray(['a', 'b', 'c'], { minLength: 1 }),
          mapPreference: fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 100 })),
        }),
      );
    case '05-preferred-characters':
      return a(
        fc.record({ myCharacter: fc.subarray(['elf', 'ogre', 'imp'], { minLength: 1, maxLength: 1 }), preferredOpponents: fc.subarray(['elf', 'ogre', 'imp'], { minLength: 1 }) }),
      );
    case '06-compare-all-players':
      return a(
        fc.record(
          { gameMode: fc.constantFrom('turn-based', 'real-time'), gameMap: fc.integer({ min: 1, max: 2 }), character: fc.integer({ min: 1, max: 3 }) },
          { requiredKeys: ['character'] },
        ),
      );
    case '07-free-for-all':
      return a(fc.record({ skill: fc.integer({ min: 0, max: 100 }) }), true);
    case '08-monster-hunters':
      return a(fc.record({ 'monster-kills': fc.integer({ min: 0, max: 20 }) }, { requiredKeys: [] }), true);
    case '09-large-similar-attributes':
      return a(fc.record({ league: fc.integer({ min: 0, max: 3 }), skill: fc.integer({ min: 0, max: 30 }), map: fc.constantFrom('x', 'y'), mode: fc.constant('ctf') }));
    case '10-compound':
      return a(fc.record({ league: fc.integer({ min: 0, max: 4 }), skill: fc.integer({ min: 0, max: 40 }), map: fc.constantFrom('x', 'y'), mode: fc.constantFrom('ctf', 'tdm') }));
    case '11-block-list':
      return a(
        fc.record({
          BlockList: fc.subarray(
            Array.from({ length: 30 }, (_, k) => `p${k}`),
            { maxLength: 4 },
          ),
        }),
      );
  }
};

export const LARGE = new Set<Name>(['07-free-for-all', '08-monster-hunters', '09-large-similar-attributes']);
