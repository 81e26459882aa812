import { describe, expect, it } from 'vitest';
import { warmUpMatchmaker } from './matchmaking-warm-up.js';

describe('warmUpMatchmaker', () => {
  it('runs real passes over synthetic queues of both shapes and keeps nothing', () => {
    const report = warmUpMatchmaker({ passes: 2, tickets: 600 });
    expect(report.passes).toBe(2);
    // A 6v6 queue of 600 tickets and a 1v1 queue of 600 both form matches.
    expect(report.matches).toBeGreaterThan(100);
    expect(report.ms).toBeGreaterThan(0);
  });

  it('runs rule-set passes over queues that keep filling, and they form matches', () => {
    const report = warmUpMatchmaker({ passes: 0, ruleSetPasses: 4 });
    expect(report.ruleSetPasses).toBe(4);
    // 300 tickets of one or two players arrive before each pass: the 6v6 and the duel queue both form matches.
    expect(report.ruleSetMatches).toBeGreaterThan(20);
  });
});
