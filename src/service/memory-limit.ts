/**
 * A soft limit on the process's resident set (`ladder serve --memory-limit`),
 * in the spirit of Go's GOMEMLIMIT: far from the limit the garbage collector
 * runs as V8 chooses; near it, the service's thread collects sooner.
 *
 * Why: after each full collection V8 lets the old generation grow to what
 * was left live times a factor of up to 4 on a busy instance. An instance
 * writing a large whole-history ladder leaves about 40 MB live in its heap
 * but let garbage reach 150 MB before V8 collected it (docs/BENCHMARKS.md,
 * "A soft memory limit"). Holding the factor low all the time
 * (`--heap-growing-percent`) keeps memory down but costs CPU on every
 * request of every instance, most of which are nowhere near a budget.
 *
 * How, read every `intervalMs` (100 ms):
 * - at 80 % of the limit the heap's growth factor is held to 10 % (V8 reads
 *   it at every collection); below 70 % it is given back (V8's own choice,
 *   or `--heap-growing-percent`);
 * - at 90 % a full collection is run at once, when the old generation has
 *   grown by a step (2 % of the limit, at least 4 MB) since the last one
 *   it ran and 500 ms have passed since: the factor acts only from V8's
 *   next collection, which may be a whole old generation away. Its pause
 *   is the heap's live part marked at once (a whole-history ladder's
 *   arrays are outside it, never traced), so none is run while more than
 *   64 MB may be live (MAX_COLLECT_LIVE_BYTES).
 *
 * It is soft: memory that is live stays live, so an instance whose live
 * data exceeds the limit exceeds it, collecting at most twice a second.
 * The resident set is the whole process's (worker threads and, on PGlite,
 * the database's thread included); only the service's thread is collected.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What the limiter reads and does: the process's and heap's sizes, a full collection, the growth factor. */
export interface MemoryProbe {
  residentBytes(): number;
  /** The heap's used bytes outside the young generation: what a full collection can free, and what garbage grows. */
  oldGenerationBytes(): number;
  /** A full collection of this thread's heap, now. */
  collect(): void;
  /** The heap's growth factor past what a collection left live, in percent (0: V8's own choice). */
  setGrowingPercent(percent: number): void;
  now(): number;
}

export interface MemoryLimitOptions {
  /** The soft limit on the resident set, in bytes. */
  limitBytes: number;
  /** The growth factor given back below the limit (`--heap-growing-percent`; 0: V8's own). @default 0 */
  basePercent?: number;
  /** @default 100 */
  intervalMs?: number;
  /** @default the process's own (processProbe) */
  probe?: MemoryProbe;
}

/** The growth factor held near the limit, in percent. */
export const TIGHT_GROWING_PERCENT = 10;
/** Fractions of the limit: hold the factor from, give it back below, collect at once from. */
export const TIGHTEN_AT = 0.8;
export const RELAX_BELOW = 0.7;
export const COLLECT_AT = 0.9;
/** The least time between two collections the limiter runs. */
export const MIN_COLLECT_INTERVAL_MS = 500;
/**
 * A collection the limiter runs holds the thread while it marks what is live (V8's own mark
 * incrementally, beside the program): measured here, 31 ms at 43 MB live, 69 ms at 83 MB, 196 ms at
 * 319 MB. Past this much live in the old generation the limiter runs none, so the event loop keeps its
 * 100 ms; the held growth factor still acts, through V8's own collections.
 */
export const MAX_COLLECT_LIVE_BYTES = 64 * 1024 * 1024;

/** Sets V8's heap growing factor (0: V8's own choice). V8 reads it at every collection. */
export function applyHeapGrowingPercent(percent: number): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

let exposedCollect: (() => void) | undefined;

/**
 * A full collection of the calling thread's heap: V8's `gc`, exposed for
 * contexts made from here on and taken from a new one, so the process needs
 * no `--expose-gc` and no global `gc` appears in its own context.
 */
function collectNow(): void {
  if (exposedCollect === undefined) {
    setFlagsFromString('--expose-gc');
    exposedCollect = runInNewContext('gc') as () => void;
  }
  exposedCollect();
}

/** The used bytes of the heap's spaces other than the young generation's (which fills and empties many times a second). */
function oldGenerationBytes(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) if (space.space_name !== 'new_space' && space.space_name !== 'new_large_object_space') bytes += space.space_used_size;
  return bytes;
}

/** The process's own probe: its resident set, this thread's heap and collector. */
export function processProbe(): MemoryProbe {
  return {
    residentBytes: () => process.memoryUsage.rss(),
    oldGenerationBytes,
    collect: collectNow,
    setGrowingPercent: applyHeapGrowingPercent,
    now: () => performance.now(),
  };
}

export class MemoryLimiter {
  readonly limitBytes: number;
  /** Collections the limiter ran. */
  collections = 0;
  /** At most what is live in the old generation, as last seen (its used size is an upper bound; right after a collection, exact). */
  private liveBound = Number.POSITIVE_INFINITY;
  /** Whether the growth factor is held now. */
  tight = false;
  private readonly basePercent: number;
  private readonly intervalMs: number;
  private readonly probe: MemoryProbe;
  private readonly step: number;
  private lastCollectAt = Number.NEGATIVE_INFINITY;
  /** The old generation's used size after the last collection the limiter ran (0: none yet). */
  private oldAfterCollect = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryLimitOptions) {
    if (!(options.limitBytes > 0)) throw new RangeError(`a memory limit must be a positive number of bytes (got ${options.limitBytes})`);
    this.limitBytes = options.limitBytes;
    this.basePercent = options.basePercent ?? 0;
    this.intervalMs = options.intervalMs ?? 100;
    this.probe = options.probe ?? processProbe();
    this.step = Math.max(4 * 1024 * 1024, 0.02 * options.limitBytes);
  }

  /** Reads the resident set once and acts on it. */
  tick(): void {
    const resident = this.probe.residentBytes();
    if (!this.tight && resident >= TIGHTEN_AT * this.limitBytes) {
      this.tight = true;
      // A factor the user set lower is kept.
      this.probe.setGrowingPercent(this.basePercent > 0 ? Math.min(this.basePercent, TIGHT_GROWING_PERCENT) : TIGHT_GROWING_PERCENT);
    } else if (this.tight && resident < RELAX_BELOW * this.limitBytes) {
      this.tight = false;
      this.probe.setGrowingPercent(this.basePercent);
    }
    if (resident < COLLECT_AT * this.limitBytes) return;
    const now = this.probe.now();
    if (now - this.lastCollectAt < MIN_COLLECT_INTERVAL_MS) return;
    const old = this.probe.oldGenerationBytes();
    if (old < this.liveBound) this.liveBound = old;
    // Too much live to mark in one pause.
    if (this.liveBound > MAX_COLLECT_LIVE_BYTES) return;
    // Nothing to gain when the old generation has not grown since the last collection: what is resident is live, or not
    // the heap's. (Not the young generation: it fills and empties many times a second, and a scavenge empties it.)
    if (this.oldAfterCollect > 0 && old - this.oldAfterCollect < this.step) return;
    this.probe.collect();
    this.collections++;
    this.lastCollectAt = this.probe.now();
    this.oldAfterCollect = this.probe.oldGenerationBytes();
    this.liveBound = this.oldAfterCollect;
  }

  start(): this {
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      // The limiter keeps no process alive.
      this.timer.unref();
    }
    return this;
  }

  /** Stops reading; the growth factor is given back. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tight) {
      this.tight = false;
      this.probe.setGrowingPercent(this.basePercent);
    }
  }
}

/**
 * The memory limit of the container the process runs in, in bytes: cgroup
 * v2's memory.max or v1's memory.limit_in_bytes, when one is set below the
 * machine's memory (an unlimited cgroup reads "max" or a huge number).
 * Undefined when there is none, or it cannot be read (not Linux).
 */
export function containerMemoryLimit(read: (path: string) => string = (path) => readFileSync(path, 'utf8'), machineBytes = totalmem()): number | undefined {
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    let text: string;
    try {
      text = read(path).trim();
    } catch {
      continue;
    }
    if (!/^\d+$/.test(text)) return undefined;
    const bytes = Number(text);
    return bytes > 0 && bytes < machineBytes ? bytes : undefined;
  }
  return undefined;
}

/** The share of a container's limit `--memory-limit auto` takes: room for what the limiter cannot collect. */
export const CONTAINER_SHARE = 0.9;
