import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { simulateRuleSet } from './rule-set.js';

const aliens = readFileSync(new URL('../../test/fixtures/flexmatch/01-aliens-vs-cowboys.json', import.meta.url), 'utf8');

/** 1 against 1 whose skills must be equal: with skills spread by 15, most arrivals wait on that rule. */
const exact = {
  name: 'exact',
  ruleLanguageVersion: '1.0',
  playerAttributes: [{ name: 'skill', type: 'number', default: 50 }],
  teams: [
    { name: 'a', minPlayers: 1, maxPlayers: 1 },
    { name: 'b', minPlayers: 1, maxPlayers: 1 },
  ],
  rules: [{ name: 'SameSkill', type: 'comparison', measurements: ['flatten(teams[*].players.attributes[skill])'], operation: '=' }],
};

describe('simulateRuleSet', () => {
  it('the aliens-vs-cowboys example matches nearly every ticket within its expansions, and the same seed gives the same report', () => {
    const report = simulateRuleSet({ ruleSet: aliens, seconds: 120, arrivalsPerSecond: 3 });
    expect(report.tickets).toBeGreaterThan(200);
    expect(report.matched + report.timedOut + report.leftWaiting).toBe(report.tickets);
    expect(report.matchedShare).toBeGreaterThan(0.9);
    // Teams of 4–8 form as soon as 8 tickets fit; the skill rule widens to 100 after 15 s.
    expect(report.wait.max).toBeLessThanOrEqual(20);
    expect(report.wait.p50).toBeLessThanOrEqual(report.wait.p90);
    expect(simulateRuleSet({ ruleSet: aliens, seconds: 120, arrivalsPerSecond: 3 })).toEqual(report);
    expect(simulateRuleSet({ ruleSet: aliens, seconds: 120, arrivalsPerSecond: 3, seed: 2 })).not.toEqual(report);
  });

  it('a rule that rarely holds is named as the one that held the waiting tickets; tickets give up after maxWaitSeconds', () => {
    const report = simulateRuleSet({ ruleSet: exact, seconds: 200, arrivalsPerSecond: 0.5, maxWaitSeconds: 30 });
    expect(report.heldBy.SameSkill).toBeGreaterThan(0);
    expect(report.timedOut).toBeGreaterThan(0);
    expect(report.matchedShare).toBeLessThan(0.9);
  });

  it('refuses bad options naming them, and a bad rule set naming its path', () => {
    expect(() => simulateRuleSet({ ruleSet: aliens, seconds: 0 })).toThrow(expect.objectContaining({ field: 'seconds' }));
    expect(() => simulateRuleSet({ ruleSet: { ...exact, teams: 'x' } })).toThrow(InvalidInputError);
  });
});
