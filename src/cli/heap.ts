/**
 * The JavaScript heap's growth, for `ladder serve --heap-growing-percent`.
 *
 * After each full collection V8 lets the old generation grow to what was
 * left live times a factor it picks from how fast it collects against how
 * fast the program allocates: up to 4 (300 %) for a busy service, so an
 * instance writing a large whole-history ladder holds about twice its live
 * heap. V8's `--heap-growing-percent` fixes the factor instead (0 leaves
 * it to V8). It is read
 * at every collection, so setting it once the process runs takes effect
 * from the next one; Node refuses it in NODE_OPTIONS, hence an option of
 * Ladder's own. The young generation's size (`--max-semi-space-size`) is
 * fixed when the heap is made, so it stays a Node flag (docs/SERVICE.md,
 * "Memory").
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { applyHeapGrowingPercent } from '../service/memory-limit.js';

/** Whether `percent` is a setting V8 takes here: a whole number from 0 (V8's own choice) to 1000. */
export function isHeapGrowingPercent(percent: number): boolean {
  return Number.isInteger(percent) && percent >= 0 && percent <= 1000;
}

/** Makes V8 grow the old generation by at most `percent` past the live heap after a full collection (1–1000), or by its own choice again (0). */
export function setHeapGrowingPercent(percent: number): void {
  if (!isHeapGrowingPercent(percent)) throw new InvalidInputError(`heap growing percent must be a whole number from 0 to 1000 (got ${percent})`, { field: 'heapGrowingPercent' });
  applyHeapGrowingPercent(percent);
}
