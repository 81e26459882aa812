/**
 * The loop-stall monitor tells the loop's own work from waiting: a busy
 * stretch of the main thread reads as an own stall of about its length, an
 * idle wait and work in a worker thread read as none.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { mainThreadCpuMs, watchLoop } from './loop-stall.js';

/** Holds the loop until the process has spent `ms` of CPU time (not wall time: on a loaded machine that could be mostly waiting). */
function busy(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe.runIf(process.platform === 'linux')('watchLoop', () => {
  it("reads the main thread's CPU time from /proc", () => {
    const before = mainThreadCpuMs()!;
    busy(60);
    expect(mainThreadCpuMs()! - before).toBeGreaterThanOrEqual(20);
  });

  it('counts 200 ms of work on the loop as an own stall, and a 200 ms idle wait and 200 ms of a worker thread as none', async () => {
    const watch = watchLoop();
    await new Promise((resolve) => setTimeout(resolve, 30));
    busy(200);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const worked = watch.stop();
    // Up to a clock tick low.
    expect(worked.ownMaxMs).toBeGreaterThanOrEqual(180);
    expect(worked.wallMaxMs).toBeGreaterThanOrEqual(180);

    const idle = watchLoop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const worker = new Worker('const start = process.cpuUsage(); while (process.cpuUsage(start).user < 200000);', { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));
    expect(idle.stop().ownMaxMs).toBeLessThan(60);
  });
});
