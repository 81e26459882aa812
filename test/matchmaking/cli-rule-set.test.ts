import { spawnSync } from 'node:child_process';
import { childEnv } from '../support/test-env.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ruleSetMatchmakeJson, runRuleSetMatchmake } from '../../src/cli/matchmake-rule-set.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ladder-rule-set-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const cli = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'matchmake', ...args], { cwd: root, encoding: 'utf8', env: childEnv() });

const ROLES = fixture('rule-set-roles.json');
const TICKETS = fixture('tickets-rule-set.jsonl');

describe('ladder matchmake --rule-set', () => {
  it("prints the issue's JSON shape with roles; why only when asked", () => {
    // t1 (tank or healer) anchors first but cannot finish a match: t2 and t4 are tanks only and the
    // second duo needs a healer. t2 anchors next: t2 tank + t3 healer, t1 healer + t4 tank. t5 is 60+ skill away.
    const expected = {
      matches: [
        {
          region: 'us-east-1',
          teams: [
            ['t2', 't3'],
            ['t1', 't4'],
          ],
          teamNames: ['duo_1', 'duo_2'],
          players: [
            ['p2', 'p3'],
            ['p1', 'p4'],
          ],
          roles: { p1: 'healer', p2: 'tank', p3: 'healer', p4: 'tank' },
        },
      ],
      waiting: ['t5'],
    };
    expect(JSON.parse(ruleSetMatchmakeJson(runRuleSetMatchmake(TICKETS, { ruleSet: ROLES, now: 10 })))).toEqual(expected);
    const run = cli(['--rule-set', ROLES, '--now', '10', '--json', '--why', TICKETS]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ ...expected, why: { t5: 'CloseSkill' } });
  });

  it('reads an AWS example as printed and prints a table', () => {
    const tickets = write(
      'monster.jsonl',
      [
        '{"id":"m","at":0,"players":[{"id":"pm","attributes":{"skill":30,"wantsToBeMonster":1}}]}',
        ...[1, 2, 3, 4, 5].map((k) => `{"id":"h${k}","at":0,"players":[{"id":"ph${k}","attributes":{"desiredSkillOfMonster":20}}]}`),
      ].join('\n'),
    );
    const run = cli(['--rule-set', fixture('../../fixtures/flexmatch/02-hunters-vs-monster.json'), '--now', '0', tickets]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('monster: pm');
  });

  it('a backfill line: the match keeps its players and takes a healer that fits the rule set; a bad one exits 2 naming its line and field', () => {
    const match =
      '{"backfill":{"id":"b1","at":0,"teams":[["m1","m2"],["m3"]],"players":{"m1":{"attributes":{"skill":20},"roles":["tank"]},"m2":{"attributes":{"skill":22},"roles":["healer"]},"m3":{"attributes":{"skill":18},"roles":["tank"]}}}}';
    const tickets = write(
      'backfill.jsonl',
      [
        match,
        // Too far in skill (CloseSkill: within 10 of 18–22), a tank (the duo has one), and a healer that fits.
        '{"id":"far","at":1,"players":[{"id":"pf","attributes":{"skill":40},"roles":["healer"]}]}',
        '{"id":"tank","at":1,"players":[{"id":"pt","attributes":{"skill":20},"roles":["tank"]}]}',
        '{"id":"heal","at":2,"players":[{"id":"ph","attributes":{"skill":24},"roles":["healer"]}]}',
      ].join('\n'),
    );
    const run = cli(['--rule-set', ROLES, '--now', '10', '--json', tickets]);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      matches: [],
      waiting: ['far', 'tank'],
      backfills: [
        {
          id: 'b1',
          match: 'b1',
          region: null,
          teamNames: ['duo_1', 'duo_2'],
          added: [[], ['heal']],
          players: [
            ['m1', 'm2'],
            ['m3', 'ph'],
          ],
          roles: { m1: 'tank', m2: 'healer', m3: 'tank', ph: 'healer' },
          open: [0, 0],
          filled: true,
        },
      ],
      waitingBackfills: [],
    });
    expect(cli(['--rule-set', ROLES, '--now', '10', tickets]).stdout).toContain('backfill b1 (match b1): duo_1: none added (0 open), duo_2: +heal (0 open), filled');
    const bad = write('bad-backfill.jsonl', `${match.replace('"m3"]]', '"m3"],[]]')}\n`);
    const refused = cli(['--rule-set', ROLES, '--now', '0', '--json', bad]);
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/line 1, field teams: must be 2 lists of player ids/);
  });

  it('a bad rule set exits 2 naming its JSON path, nothing on stdout', () => {
    const bad = write(
      'bad.json',
      '{"ruleLanguageVersion":"1.0","playerAttributes":[{"name":"skill","type":"number"}],"teams":[{"name":"a","minPlayers":1,"maxPlayers":2}],\n"rules":[{"name":"r","type":"distance","measurements":["mean(teams[*].players.attributes[skill])"],"maxDistance":1},]}',
    );
    const run = cli(['--rule-set', bad, '--now', '0', '--json', TICKETS]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain("rules[0].measurements[0]: unknown function 'mean'");
  });

  it('a bad ticket exits 2 naming its line and field, nothing on stdout', () => {
    const tickets = write('bad.jsonl', '{"id":"t1","at":0,"players":[{"id":"p1","roles":["tank"]}]}\n{"id":"t2","at":0,"players":[{"id":"p2","roles":["mage"]}]}\n');
    const run = cli(['--rule-set', ROLES, '--now', '0', '--json', tickets]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/line 2, field players\[0\]\.roles\[0\]: unknown role "mage"/);
  });
});
