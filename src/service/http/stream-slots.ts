/**
 * Slots for server-sent-event streams: each open stream holds a socket, a
 * listener and a keep-alive timer for as long as the client keeps it, so
 * their number is capped per client address and per instance. Past either
 * cap a new stream is refused (503 with Retry-After); a stream's slot is
 * given back when it closes, however it closes.
 */
import { StreamsFullError } from '../errors/index.js';

export interface StreamLimits {
  /** Open streams one client address may hold on this instance. @default 16 */
  perAddress?: number;
  /** Open streams this instance serves at most. @default 10000 */
  total?: number;
}

export class StreamSlots {
  readonly perAddress: number;
  readonly total: number;
  private readonly byAddress = new Map<string, number>();
  private open = 0;

  constructor(limits: StreamLimits = {}) {
    this.perAddress = limits.perAddress ?? 16;
    this.total = limits.total ?? 10_000;
  }

  /** Open streams now. */
  get size(): number {
    return this.open;
  }

  /** Takes a slot for `address`, or throws StreamsFullError; returns the function that gives it back (once, however often called). */
  take(address: string): () => void {
    const held = this.byAddress.get(address) ?? 0;
    if (held >= this.perAddress) throw new StreamsFullError('perAddress', this.perAddress);
    if (this.open >= this.total) throw new StreamsFullError('total', this.total);
    this.byAddress.set(address, held + 1);
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    };
  }
}
