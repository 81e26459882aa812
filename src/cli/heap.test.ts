import { describe, expect, it } from 'vitest';
import { projectModule, runInChild } from '../../test/support/heap-churn.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { setHeapGrowingPercent } from './heap.js';

/**
 * The heap churn (test/support/heap-churn.ts) in a child process, after
 * setHeapGrowingPercent with each of `percents` in turn: the full
 * collections it ran and the largest old generation V8 reserved meanwhile, in MB.
 */
function churn(...percents: number[]): { fullCollections: number; largestMb: number } {
  return runInChild(`
    const { setHeapGrowingPercent } = await import(${projectModule('src/cli/heap.ts')});
    const { churnHeap } = await import(${projectModule('test/support/heap-churn.ts')});
    const { PerformanceObserver, constants } = await import('node:perf_hooks');
    for (const percent of ${JSON.stringify(percents)}) setHeapGrowingPercent(percent);
    let fullCollections = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++;
    });
    observer.observe({ entryTypes: ['gc'] });
    const largestMb = await churnHeap();
    // The observer's entries arrive on a later turn.
    await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(JSON.stringify({ fullCollections, largestMb }));`);
}

describe('setHeapGrowingPercent', () => {
  it('sets how far the heap grows past what is live, once the process runs (as ladder serve sets it)', () => {
    // Two settings, not one against V8's own choice: that one moves with how fast the machine collects (1.1 to 4 times).
    const tight = churn(5);
    const loose = churn(300);
    // The tight heap is collected far more often, and stays smaller.
    // 36 against 14 full collections here, and an old space of 45 MB against 104 MB at most.
    expect(tight.fullCollections).toBeGreaterThan(1.5 * loose.fullCollections);
    expect(tight.largestMb).toBeLessThan(0.75 * loose.largestMb);
  }, 60_000);

  it('gives the growth back to V8 at 0, after a setting: on this churn far looser than 5', () => {
    const tight = churn(5);
    const own = churn(5, 0);
    expect(tight.fullCollections).toBeGreaterThan(1.5 * own.fullCollections);
    expect(tight.largestMb).toBeLessThan(0.75 * own.largestMb);
  }, 60_000);

  it('takes a whole number from 0 to 1000 and names the setting otherwise', () => {
    for (const bad of [-1, 1.5, 1001, Number.NaN]) {
      expect(() => setHeapGrowingPercent(bad)).toThrow(InvalidInputError);
      expect(() => setHeapGrowingPercent(bad)).toThrow(/heap growing percent must be a whole number from 0 to 1000/);
    }
  });
});
