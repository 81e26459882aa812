/** A small Prometheus text-format registry: counters, gauges and histograms with labels. */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { resourceLimits } from 'node:worker_threads';
import { watchLoop } from './loop-stall.js';
import type { MemoryLimiter } from './memory-limit.js';
import { UnavailableError } from './errors/unavailable-error.js';

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** Says whether a series is left out of a rendering (the series of private ladders, for callers who may not read them). */
export type SeriesFilter = (labels: Readonly<Labels>) => boolean;

interface Metric {
  render(hide?: SeriesFilter): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels: { ...labels }, value: by });
  }
  render(hide?: SeriesFilter): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, { labels, value }] of this.values) if (!hide?.(labels)) lines.push(`${this.name}${key} ${value}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly collect: () => Array<[Labels, number]>,
  ) {}
  render(hide?: SeriesFilter): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [labels, value] of this.collect()) if (!hide?.(labels)) lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines.join('\n');
  }
}

interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
  /** The text of each line up to its value, made once: `name_bucket{…,le="…"} `, then the +Inf, sum and count lines. */
  heads: string[];
}

export class Histogram implements Metric {
  private readonly series = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}
  /** Label text of label objects a caller reuses (the HTTP hook keeps one per route and status). */
  private readonly keys = new WeakMap<Labels, string>();
  observe(labels: Labels, value: number): void {
    let key = this.keys.get(labels);
    if (key === undefined) this.keys.set(labels, (key = labelText(labels)));
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = this.newSeries(labels, key)));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  private newSeries(labels: Labels, key: string): HistogramSeries {
    const heads = this.buckets.map((le) => `${this.name}_bucket${labelText({ ...labels, le: String(le) })} `);
    heads.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} `, `${this.name}_sum${key} `, `${this.name}_count${key} `);
    return { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0, heads };
  }
  render(hide?: SeriesFilter): string {
    let text = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram`;
    const n = this.buckets.length;
    for (const s of this.series.values()) {
      if (hide?.(s.labels)) continue;
      const { heads, counts } = s;
      for (let i = 0; i < n; i++) text += `\n${heads[i]}${counts[i]}`;
      text += `\n${heads[n]}${s.count}\n${heads[n + 1]}${s.sum}\n${heads[n + 2]}${s.count}`;
    }
    return text;
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  add<M extends Metric>(metric: M): M {
    this.metrics.push(metric);
    return metric;
  }
  render(hide?: SeriesFilter): string {
    return `${this.metrics.map((m) => m.render(hide)).join('\n')}\n`;
  }
}

/** The service's metrics. Gauges of waiting tickets are filled in at scrape time. */
export function serviceMetrics() {
  const registry = new Registry();
  let waiting: Array<[Labels, number]> = [];
  /** Whether Redis answered the last scrape; undefined when shared state is in process. */
  let redisUp: 0 | 1 | undefined;
  let locksHeld: () => string[] = () => [];
  let loopDelay: IntervalHistogram | undefined;
  let loopWatch: ReturnType<typeof watchLoop> | undefined;
  let memoryLimiter: MemoryLimiter | undefined;
  return {
    registry,
    requestSeconds: registry.add(
      new Histogram('ladder_http_request_duration_seconds', 'HTTP request latency by route and status class.', [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]),
    ),
    matchesRated: registry.add(new Counter('ladder_matches_rated_total', 'Matches rated (committed) by ladder.')),
    batchSize: registry.add(new Histogram('ladder_write_batch_size', 'Submissions per write transaction (group commit).', [1, 2, 4, 8, 16, 32, 64, 128, 256])),
    writeBatches: registry.add(
      new Counter('ladder_write_batches_total', 'Write batches by path: "fast" (one guarded statement on cached states) or "locked" (transaction holding the ladder lock).'),
    ),
    ticketWaitSeconds: registry.add(
      new Histogram('ladder_ticket_wait_seconds', 'Seconds a ticket waited before it was placed in a match, by queue.', [1, 5, 10, 30, 60, 120, 300, 600]),
    ),
    matchesFormed: registry.add(new Counter('ladder_matchmaking_matches_total', 'Matches formed by the matchmaker, by queue.')),
    backfillsFilled: registry.add(new Counter('ladder_matchmaking_backfill_fills_total', 'Backfill fills placed by the matchmaker (tickets added to a running match), by queue.')),
    ticketsExpired: registry.add(new Counter('ladder_matchmaking_tickets_expired_total', "Tickets that waited past their ladder's time-to-live and expired, by queue.")),
    backfillsExpired: registry.add(new Counter('ladder_matchmaking_backfills_expired_total', "Backfills that stayed open past their ladder's time-to-live and expired, by queue.")),
    passFailures: registry.add(
      new Counter(
        'ladder_matchmaking_pass_failures_total',
        'Matchmaking passes that failed (Redis or the database unavailable), by queue; an empty queue label is a failure to list the queues.',
      ),
    ),
    ticketsWaiting: registry.add(new Gauge('ladder_tickets_waiting', 'Tickets waiting, by queue.', () => waiting)),
    passSeconds: registry.add(
      new Histogram(
        'ladder_matchmaking_pass_seconds',
        "Seconds of one queue's matchmaking turn on the lock holder (events read, pass, assignments written), by queue.",
        [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ),
    ),
    passTickets: registry.add(new Histogram('ladder_matchmaking_pass_tickets', 'Tickets in the matchmaker at each pass, by queue.', [10, 100, 1000, 10_000, 100_000, 1_000_000])),
    passesSkipped: registry.add(
      new Counter(
        'ladder_matchmaking_passes_skipped_total',
        'Passes not run because nothing could have changed since the last one (no queue event, no match formed, no filter still widening), by queue.',
      ),
    ),
    eventLagSeconds: registry.add(
      new Histogram(
        'ladder_matchmaking_event_lag_seconds',
        'Seconds from a queue event (ticket added or cancelled) to the lock holder applying it to its matchmaker, by queue.',
        [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ),
    ),
    rebuilds: registry.add(
      new Counter(
        'ladder_matchmaking_rebuilds_total',
        'Matchmakers rebuilt from the shared queue, by queue and reason ("claim": this instance took the lock; "check": the matchmaker disagreed with the queue counters or events were lost).',
      ),
    ),
    lockHeld: registry.add(
      new Gauge('ladder_matchmaking_lock_held', '1 for each queue whose matchmaking lock this instance holds.', () => locksHeld().map((queue) => [{ queue }, 1])),
    ),
    jobs: registry.add(
      new Counter(
        'ladder_jobs_total',
        'Heavy requests run as worker jobs (balance, predict, integrity), by kind and outcome: done, failed (an error, a time limit, a lost worker), refused (a cap full: 429/503) or cancelled (its client left while it waited for a worker).',
      ),
    ),
    jobSeconds: registry.add(
      new Histogram('ladder_job_seconds', 'Seconds a heavy job ran in its worker thread, by kind.', [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60]),
    ),
    eventLoopDelay: registry.add(
      new Gauge(
        'ladder_event_loop_delay_seconds',
        'How late the event loop ran a timer sampled every 20 ms, since the service listened, by quantile (0.5, 0.99, 1 = the longest): the time requests wait behind synchronous work.',
        () => {
          if (loopDelay === undefined || loopDelay.count === 0) return [];
          return [0.5, 0.99, 1].map((q): [Labels, number] => [{ quantile: String(q) }, (q === 1 ? loopDelay!.max : loopDelay!.percentile(q * 100)) / 1e9]);
        },
      ),
    ),
    eventLoopOwnStall: registry.add(
      new Gauge(
        'ladder_event_loop_own_stall_seconds',
        "The longest stretch, since the service listened, that the event loop was held by this process's own work on the loop's thread (the thread the service runs on: its CPU time between ticks of a 10 ms timer, at most the wall time between them; garbage collection included): unlike ladder_event_loop_delay_seconds, it leaves out the time a loaded host gave its cores to other processes. Absent where a thread's CPU time cannot be read (not Linux).",
        () => {
          const own = loopWatch?.read().ownMaxMs;
          return own === undefined ? [] : [[{}, own / 1000]];
        },
      ),
    ),
    memory: registry.add(
      new Gauge(
        'ladder_process_memory_bytes',
        "This process's memory at the scrape, by kind: resident (the resident set: every thread, worker threads and PGlite's included), heap_total and heap_used (the JavaScript heap of the thread the service runs on: what the collector has reserved and what live and not-yet-collected objects fill), external (memory outside the heap held by its objects, typed arrays included) and array_buffers (the part of external in ArrayBuffers: a whole-history ladder's arrays).",
        () => {
          const m = process.memoryUsage();
          return [
            [{ kind: 'resident' }, m.rss],
            [{ kind: 'heap_total' }, m.heapTotal],
            [{ kind: 'heap_used' }, m.heapUsed],
            [{ kind: 'external' }, m.external],
            [{ kind: 'array_buffers' }, m.arrayBuffers],
          ];
        },
      ),
    ),
    heapSpaces: registry.add(
      new Gauge(
        'ladder_heap_space_bytes',
        "The JavaScript heap of the thread the service runs on, at the scrape, by V8 space: the memory each holds (new_space is the young generation's two halves, where short-lived objects are made; old_space the objects that lived through two collections; large_object_space the big ones).",
        () => getHeapSpaceStatistics().map((space): [Labels, number] => [{ space: space.space_name }, space.space_size]),
      ),
    ),
    youngGenerationMax: registry.add(
      new Gauge(
        'ladder_heap_young_generation_max_bytes',
        "The young generation's most that the heap of the service's thread was made with (`ladder serve --young-generation`, a worker thread's resourceLimits). Absent on the main thread, where V8 chose it (48 MB on 64 bits).",
        () => (resourceLimits.maxYoungGenerationSizeMb === undefined ? [] : [[{}, resourceLimits.maxYoungGenerationSizeMb * 1024 * 1024]]),
      ),
    ),
    memoryLimit: registry.add(
      new Gauge(
        'ladder_memory_limit_bytes',
        "The soft limit on this process's resident set (`ladder serve --memory-limit`): near it the service's thread collects its garbage sooner. Absent without a limit.",
        () => (memoryLimiter === undefined ? [] : [[{}, memoryLimiter.limitBytes]]),
      ),
    ),
    memoryLimitCollections: registry.add(
      new Gauge(
        'ladder_memory_limit_collections',
        'Full collections of the heap the soft memory limit ran since the start: at 90 % of the limit, when the heap has grown since the last, at most two a second. Absent without a limit.',
        () => (memoryLimiter === undefined ? [] : [[{}, memoryLimiter.collections]]),
      ),
    ),
    memoryLimitHeld: registry.add(
      new Gauge(
        'ladder_memory_limit_held',
        "1 while the soft memory limit holds the heap's growth low (from 80 % of the limit until the resident set is below 70 %), else 0. Absent without a limit.",
        () => (memoryLimiter === undefined ? [] : [[{}, memoryLimiter.tight ? 1 : 0]]),
      ),
    ),
    redisUp: registry.add(
      new Gauge(
        'ladder_redis_up',
        '1 when shared state (Redis) answered this scrape, 0 when it did not: the series read from it (ladder_tickets_waiting) are then left out, not reported as zero. Absent when shared state is in process.',
        () => (redisUp === undefined ? [] : [[{}, redisUp]]),
      ),
    ),
    /** Shared state lives in Redis: `ladder_redis_up` is reported. */
    useRedis() {
      redisUp = 1;
    },
    /**
     * Reads, for one scrape, the gauges kept in shared state. With Redis away the scrape still
     * serves what this instance knows: those series are left out and `ladder_redis_up` says 0.
     */
    async scrapeShared(waitingByQueue: () => Promise<Array<[string, number]>>): Promise<void> {
      try {
        waiting = (await waitingByQueue()).map(([queue, count]) => [{ queue }, count]);
        if (redisUp !== undefined) redisUp = 1;
      } catch (error) {
        if (!(error instanceof UnavailableError && error.dependency === 'redis')) throw error;
        waiting = [];
        redisUp = 0;
      }
    },
    setLocksHeld(source: () => string[]) {
      locksHeld = source;
    },
    /** Reports the soft memory limit (`ladder_memory_limit_bytes`, `_collections`, `_held`). */
    watchMemoryLimit(limiter: MemoryLimiter) {
      memoryLimiter = limiter;
    },
    /** Starts measuring the event loop's delay (`ladder_event_loop_delay_seconds`); returns the stop. */
    watchEventLoop(): () => void {
      const histogram = monitorEventLoopDelay({ resolution: 20 });
      histogram.enable();
      loopDelay = histogram;
      const watch = watchLoop(10);
      loopWatch = watch;
      return () => {
        histogram.disable();
        watch.stop();
      };
    },
  };
}
export type ServiceMetrics = ReturnType<typeof serviceMetrics>;
