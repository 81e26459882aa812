/**
 * Admission for the public reads of embedded PGlite. PGlite runs every
 * statement, one at a time, on its one thread, so a crowd of readers would
 * queue in front of the writers' statements read after read. The gate lets `concurrency` reads run at once (their statements then
 * interleave with the writers' in PGlite's own queue), keeps at most
 * `queue` more waiting in arrival order, and refuses the rest at once
 * (DatabaseReadStoppedError 'busy', answered 503 with Retry-After). A
 * waiting read whose client went away leaves the line without running.
 */
import { DatabaseReadStoppedError } from './database-errors.js';

export interface ReadGateOptions {
  /** Reads running at once. @default 1 */
  concurrency?: number;
  /** Reads waiting at most; past that a read is refused. @default 32 */
  queue?: number;
}

export class ReadGate {
  private running = 0;
  private readonly waiting: Array<{ admit: () => void; refuse: (error: Error) => void }> = [];
  private readonly concurrency: number;
  private readonly queue: number;

  constructor(options: ReadGateOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    this.queue = Math.max(0, options.queue ?? 32);
  }

  /** Reads running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Waits for a turn; resolves the function that ends it. */
  async enter(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw new DatabaseReadStoppedError('cancelled', undefined);
    if (this.running < this.concurrency) {
      this.running++;
      return this.leave();
    }
    if (this.waiting.length >= this.queue) throw new DatabaseReadStoppedError('busy', undefined);
    await new Promise<void>((resolve, reject) => {
      const entry = {
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        refuse: reject,
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new DatabaseReadStoppedError('cancelled', undefined));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
    return this.leave();
  }

  private leave(): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.waiting.shift();
      // The turn passes straight to the next read in line (running stays the same), else it ends.
      if (next) next.admit();
      else this.running--;
    };
  }
}
