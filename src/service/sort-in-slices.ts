/**
 * A stable sort whose work is cut into slices with turns of the event loop
 * between them: a season's frozen standings sort every player of a ladder,
 * and `Array.prototype.sort` over a million of them holds the loop for about
 * a second in one piece.
 */
import type { Turns } from './turns.js';

/**
 * `items` sorted by `compare`, stably (equal items keep their order, as with
 * `Array.prototype.sort`), in a new array: runs of `run` items are sorted
 * each in one piece, then merged bottom-up, with `turns.pause()` after each
 * run and after every `run` items a merge moves.
 */
export async function sortInSlices<T>(items: readonly T[], compare: (a: T, b: T) => number, turns: Turns, run = 4096): Promise<T[]> {
  const n = items.length;
  let from: T[] = new Array<T>(n);
  for (let start = 0; start < n; start += run) {
    const part = items.slice(start, start + run).sort(compare);
    for (let i = 0; i < part.length; i++) from[start + i] = part[i]!;
    await turns.pause();
  }
  let to: T[] = new Array<T>(n);
  for (let width = run; width < n; width *= 2) {
    let moved = 0;
    for (let left = 0; left < n; left += 2 * width) {
      const middle = Math.min(left + width, n);
      const right = Math.min(left + 2 * width, n);
      let i = left;
      let j = middle;
      for (let k = left; k < right; k++) {
        // The left run's item first on a tie: that keeps the sort stable.
        if (i < middle && (j >= right || compare(from[i]!, from[j]!) <= 0)) to[k] = from[i++]!;
        else to[k] = from[j++]!;
        if (++moved === run) {
          moved = 0;
          await turns.pause();
        }
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
