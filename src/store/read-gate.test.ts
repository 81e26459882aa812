import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DatabaseReadStoppedError } from './database-errors.js';
import { ReadGate } from './read-gate.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadGate', () => {
  it('lets one read run, the next ones wait in arrival order, and refuses past the line', async () => {
    const gate = new ReadGate({ concurrency: 1, queue: 2 });
    const order: number[] = [];
    const first = await gate.enter();
    const second = gate.enter().then((leave) => (order.push(2), leave));
    const third = gate.enter().then((leave) => (order.push(3), leave));
    await expect(gate.enter()).rejects.toMatchObject({ reason: 'busy' });
    expect(gate.load).toEqual({ running: 1, waiting: 2 });
    first();
    (await second)();
    (await third)();
    expect(order).toEqual([2, 3]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('drops a waiting read whose client went away, without running it', async () => {
    const gate = new ReadGate({ concurrency: 1, queue: 4 });
    const first = await gate.enter();
    const abort = new AbortController();
    const gone = gate.enter(abort.signal);
    const next = gate.enter();
    abort.abort();
    await expect(gone).rejects.toBeInstanceOf(DatabaseReadStoppedError);
    expect(gate.load.waiting).toBe(1);
    first();
    (await next)();
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
    await expect(gate.enter(abort.signal)).rejects.toMatchObject({ reason: 'cancelled' });
  });

  it('never runs more than its concurrency, and every admitted read ends (random arrivals, lengths and give-ups)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 5 }),
        fc.array(fc.record({ ticks: fc.integer({ min: 0, max: 3 }), giveUp: fc.boolean() }), { maxLength: 20 }),
        async (concurrency, queue, reads) => {
          const gate = new ReadGate({ concurrency, queue });
          let running = 0;
          let most = 0;
          await Promise.all(
            reads.map(async (read) => {
              const abort = new AbortController();
              if (read.giveUp) setImmediate(() => abort.abort());
              let leave: () => void;
              try {
                leave = await gate.enter(abort.signal);
              } catch (error) {
                expect(error).toBeInstanceOf(DatabaseReadStoppedError);
                return;
              }
              running++;
              most = Math.max(most, running);
              for (let i = 0; i < read.ticks; i++) await tick();
              running--;
              leave();
            }),
          );
          expect(most).toBeLessThanOrEqual(concurrency);
          expect(gate.load).toEqual({ running: 0, waiting: 0 });
        },
      ),
      { numRuns: 200 },
    );
  });
});
