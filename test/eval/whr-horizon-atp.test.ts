/**
 * Whole-History Rating's batch path with a horizon (`rateLog`, the core's
 * `addLog`) on real matches: the ATP file up to 2000, where strong players'
 * precise priors meet upsets. Each freeze must replay its live window match
 * by match: added at once, with every message back at zero, expectation
 * propagation diverged there (means of 100–300 logits, ratings tens of
 * thousands of points from 1500), while the whole history converges.
 */
import { describe, expect, it } from 'vitest';
import { WHR, resolveWhrOptions } from 'ladder-core/core/whr/index.js';
import { loadTennisKdd19 } from '../../src/eval/datasets.js';

describe('whr rateLog with a horizon on the ATP file to 2000', () => {
  it('stays where the whole history is: no rating further from 1500 than the whole log converged puts any, each within a deviation and a half of its whole-history rating', () => {
    const end = Date.UTC(2000, 0, 1);
    const log = loadTennisKdd19().filter((match) => match.at! < end);
    expect(log.length).toBeGreaterThan(150_000);
    const whole = WHR.rateLog!(log, resolveWhrOptions({}));
    const bounded = WHR.rateLog!(log, resolveWhrOptions({ horizon: 730 }));
    const farthest = (states: ReadonlyMap<string, { rating: number }>) => Math.max(...[...states.values()].map((state) => Math.abs(state.rating - 1500)));
    expect(farthest(whole)).toBeLessThan(2000);
    expect(farthest(bounded)).toBeLessThan(farthest(whole) * 1.1);
    let worst = 0;
    for (const [id, state] of whole) worst = Math.max(worst, Math.abs(bounded.get(id)!.rating - state.rating) / state.rd!);
    expect(worst).toBeLessThan(1.5);
  });
});
