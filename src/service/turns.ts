/**
 * Long work on the event loop, cut into slices: `pause()` gives the loop a
 * turn (`setImmediate`, so timers and I/O callbacks run first) once
 * `sliceMs` of work has run since the last turn, and costs nothing before
 * that. Corrections, the matchmaking pass's rebuild and placing, and other
 * work whose length grows with the data use it, so no synchronous stretch
 * is much longer than one slice (docs/SERVICE.md, "Availability").
 */
export class Turns {
  private since = performance.now();
  constructor(private readonly sliceMs: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
