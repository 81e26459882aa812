import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { setHeapGrowingPercent } from './heap.js';

const root = join(import.meta.dirname, '../..');

/**
 * A child process that holds about 40 MB of objects live and churns objects
 * that live a while (as a busy instance's requests do), after
 * setHeapGrowingPercent with each of `percents` in turn: the full collections it ran and the
 * largest old space V8 reserved meanwhile, in MB.
 */
function churn(...percents: number[]): { fullCollections: number; largestMb: number } {
  const script = `
    const { setHeapGrowingPercent } = await import(${JSON.stringify(join(root, 'src/cli/heap.ts'))});
    const { PerformanceObserver, constants } = await import('node:perf_hooks');
    const { getHeapSpaceStatistics } = await import('node:v8');
    // The old generation, which the setting governs (the heap's total also holds the young generation, whose size moves with the machine's load).
    const oldSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_size;
    for (const percent of ${JSON.stringify(percents)}) setHeapGrowingPercent(percent);
    let fullCollections = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++;
    });
    observer.observe({ entryTypes: ['gc'] });
    const live = [];
    for (let i = 0; i < 300000; i++) live.push({ a: i, b: 'p' + i, c: [i] });
    const recent = [];
    let largest = 0;
    for (let round = 0; round < 400; round++) {
      for (let i = 0; i < 20000; i++) recent.push({ x: i, y: [i, i], z: 's' + i });
      if (recent.length > 100000) recent.splice(0, 60000);
      largest = Math.max(largest, oldSpace());
    }
    // The observer's entries arrive on a later turn.
    await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(JSON.stringify({ fullCollections, largestMb: largest / 1048576 }));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout.trim()) as { fullCollections: number; largestMb: number };
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
