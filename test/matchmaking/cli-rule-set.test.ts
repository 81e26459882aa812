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
