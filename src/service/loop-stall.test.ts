/**
 * The loop-stall monitor tells the loop's own work from waiting: a busy
 * stretch of the loop's thread reads as an own stall of about its length, an
 * idle wait and work in another thread read as none; on a worker thread (as
 * `ladder serve` runs the service) it reads that thread's CPU time.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { workerStart } from '../store/worker-start.js';
import { threadCpuMs, watchLoop } from './loop-stall.js';

/** Holds the loop until the process has spent `ms` of CPU time (not wall time: on a loaded machine that could be mostly waiting). */
function busy(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe.runIf(process.platform === 'linux')('watchLoop', () => {
  it("reads the calling thread's CPU time from /proc", () => {
    const before = threadCpuMs()!;
    busy(60);
    expect(threadCpuMs()! - before).toBeGreaterThanOrEqual(20);
  });

  it("on a worker thread, reads that thread's CPU time, not the main thread's", async () => {
    // The module itself, loaded in the worker (through tsx from the sources), busy there for 200 ms of CPU.
    const start = workerStart(new URL('./loop-stall.ts', import.meta.url));
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      const load = workerData.api ? import(workerData.api).then((tsx) => { tsx.register(); return import(workerData.entry); }) : import(workerData.entry);
      load.then(({ threadCpuMs }) => {
        const before = threadCpuMs();
        const cpu = process.cpuUsage();
        while (process.cpuUsage(cpu).user < 200000);
        parentPort.postMessage(threadCpuMs() - before);
      });`;
    const mainBefore = threadCpuMs()!;
    const worker = new Worker(code, { eval: true, workerData: start.workerData ?? { entry: String(start.target) } });
    const [workerMs] = await Promise.all([new Promise<number>((resolve) => worker.once('message', resolve)), new Promise((resolve) => worker.once('exit', resolve))]);
    expect(workerMs).toBeGreaterThanOrEqual(150);
    // The main thread waited meanwhile (loading tsx in the worker costs it a little, not 200 ms).
    expect(threadCpuMs()! - mainBefore).toBeLessThan(workerMs);
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
