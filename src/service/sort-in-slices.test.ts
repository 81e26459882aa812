import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortInSlices } from './sort-in-slices.js';
import { Turns } from './turns.js';
import { countLoopTurns } from '../../test/support/loop-turns.js';

describe('sortInSlices', () => {
  it('sorts as Array.prototype.sort does, stably, for any runs and lengths', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ key: fc.integer({ min: -20, max: 20 }), at: fc.nat() }), { maxLength: 300 }), fc.integer({ min: 1, max: 40 }), async (items, run) => {
        const tagged = items.map((item, i) => ({ ...item, i }));
        const compare = (a: { key: number }, b: { key: number }) => a.key - b.key;
        const sorted = await sortInSlices(tagged, compare, new Turns(0), run);
        expect(sorted).toEqual(tagged.slice().sort(compare));
        // Equal keys keep their order.
        for (let k = 1; k < sorted.length; k++) if (sorted[k - 1]!.key === sorted[k]!.key) expect(sorted[k - 1]!.i).toBeLessThan(sorted[k]!.i);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves its input as it was and gives the loop turns as it goes', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 5000);
    const before = items.slice();
    const counter = countLoopTurns();
    const sorted = await sortInSlices(items, (a, b) => a - b, new Turns(0), 64);
    const turns = counter.stop();
    expect(items).toEqual(before);
    expect(sorted).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    // 79 runs, then seven merge levels of 5,000 moves in slices of 64: far more turns than one.
    expect(turns).toBeGreaterThan(100);
  });
});
