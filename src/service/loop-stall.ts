/**
 * How long the event loop was held by this process's own work, as apart from
 * how long the machine kept it waiting (`ladder_event_loop_own_stall_seconds`).
 *
 * `monitorEventLoopDelay` measures the loop's delay in wall-clock time: on a
 * shared, loaded machine that includes the time the scheduler gave the cores
 * to other processes, so neither an operator nor a test can tell Ladder's own
 * stalls from the host's. This monitor also reads the CPU time of the thread
 * whose loop it watches, alone (Linux: `/proc/thread-self/stat`, in clock
 * ticks of 10 ms): the main thread, or the thread `ladder serve` runs the
 * service on (src/cli/serve.ts); other worker threads (the job pool,
 * PGlite's thread, the matchmaking worker) are not counted. Between two of
 * its ticks, the loop was held by its own work for at most the CPU time its
 * thread used, and at most the wall time that passed: the smaller of the
 * two is the "own stall" (that thread's garbage collection included). The longest own stall is the
 * figure the service's 100 ms promise speaks of; it reads up to one clock
 * tick (10 ms) high or low. Each tick reads one small /proc file (about
 * 20 µs).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * CPU time in ms (user + system) of the calling thread, or undefined where /proc cannot tell it. A
 * synchronous read runs on the calling thread, so `/proc/thread-self` is that thread (Linux 3.17 on).
 */
export function threadCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // Fields after the command name (which may hold spaces, so the last ')' ends it): state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

export interface LoopStalls {
  /** The loop's longest delay, wall clock (the machine's waits included), ms. */
  wallMaxMs: number;
  /** The longest stretch the loop's thread's own work held the loop, ms; undefined where the thread's CPU time cannot be read. */
  ownMaxMs: number | undefined;
}

/** Starts watching the loop; `read()` returns what it saw so far, `stop()` the same and stops. */
export function watchLoop(tickMs = 5): { read: () => LoopStalls; stop: () => LoopStalls } {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let lastWall = performance.now();
  let lastCpu = threadCpuMs();
  let ownMaxMs = lastCpu === undefined ? undefined : 0;
  const timer = setInterval(() => {
    const wall = performance.now();
    const cpu = threadCpuMs();
    if (cpu !== undefined && lastCpu !== undefined && ownMaxMs !== undefined) ownMaxMs = Math.max(ownMaxMs, Math.min(wall - lastWall, cpu - lastCpu));
    lastWall = wall;
    lastCpu = cpu;
  }, tickMs);
  // A watch never keeps the process alive.
  timer.unref();
  const read = (): LoopStalls => ({ wallMaxMs: delay.max / 1e6, ownMaxMs });
  return {
    read,
    stop: () => {
      clearInterval(timer);
      const seen = read();
      delay.disable();
      return seen;
    },
  };
}
