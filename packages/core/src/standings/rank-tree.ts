/**
 * An ordered multiset of (rating, id) in (rating descending, id ascending)
 * order with rank queries: a sorted list cut into blocks.
 *
 * Why blocks, not a balanced tree: at a million players a binary tree is
 * ~27 levels deep, and every level is a cache miss — the earlier treap
 * spent ~8 µs per rank query and ~10 µs per insert on those misses. Here a
 * query is a binary search over one small array of block boundaries (a few
 * KB, stays in cache), a prefix count looked up in another, and a binary
 * search inside one block of at most `maxBlock` ratings in a Float64Array
 * (a handful of misses). An insert or remove moves at most one block's
 * entries (memmove) and adds ±1 to the prefix counts of the blocks after it —
 * O(maxBlock + blocks) cheap sequential work, ~√n at the default size.
 *
 * Ties in rating are ordered by id, so positions and pages are stable.
 */

/** @default block size: a block splits in two when it reaches this many entries. */
const DEFAULT_MAX_BLOCK = 1024;

export class RankTree {
  private readonly maxBlock: number;
  /** Ratings of each block, descending (capacity maxBlock, `sizes[b]` used). */
  private ratings: Float64Array[] = [];
  /** Ids of each block, parallel to `ratings`. */
  private ids: string[][] = [];
  private sizes = new Int32Array(16);
  /** Lowest rating in each block (its last entry). */
  private lows = new Float64Array(16);
  /** Entries in all blocks before b; starts[blocks] is the total. */
  private starts = new Int32Array(17);
  private blocks = 0;

  /**
   * @param initialCapacity players expected (kept for compatibility; blocks grow on demand)
   * @param maxBlock entries per block before it splits; small values exercise splits in tests. @default 1024
   */
  constructor(initialCapacity = 1024, maxBlock = DEFAULT_MAX_BLOCK) {
    void initialCapacity;
    if (!Number.isInteger(maxBlock) || maxBlock < 4) throw new RangeError(`maxBlock must be an integer ≥ 4, got ${maxBlock}`);
    this.maxBlock = maxBlock;
  }

  /** Number of entries. */
  get size(): number {
    return this.starts[this.blocks];
  }

  /** Adds an entry. The caller guarantees (rating, id) is not present. */
  insert(id: string, rating: number): void {
    if (this.blocks === 0) this.insertBlock(0, new Float64Array(this.maxBlock), []);
    // The first block whose last entry sorts after the new one; past the end, the last block.
    let b = this.blockFor(id, rating);
    if (b === this.blocks) b--;
    const ratings = this.ratings[b];
    const ids = this.ids[b];
    const size = this.sizes[b];
    const at = this.indexIn(b, id, rating);
    ratings.copyWithin(at + 1, at, size);
    ratings[at] = rating;
    ids.splice(at, 0, id);
    this.sizes[b] = size + 1;
    this.lows[b] = ratings[size];
    for (let k = b + 1; k <= this.blocks; k++) this.starts[k]++;
    if (size + 1 === this.maxBlock) this.split(b);
  }

  /** Removes the entry with exactly this (rating, id); returns whether it existed. */
  remove(id: string, rating: number): boolean {
    const b = this.blockFor(id, rating);
    if (b === this.blocks) return false;
    const at = this.indexIn(b, id, rating);
    const size = this.sizes[b];
    const ratings = this.ratings[b];
    if (at >= size || ratings[at] !== rating || this.ids[b][at] !== id) return false;
    ratings.copyWithin(at, at + 1, size);
    this.ids[b].splice(at, 1);
    this.sizes[b] = size - 1;
    for (let k = b + 1; k <= this.blocks; k++) this.starts[k]--;
    if (size === 1) this.removeBlock(b);
    else {
      this.lows[b] = ratings[size - 2];
      // Keep blocks from fragmenting under churn: fold a small block into a neighbour.
      const half = this.maxBlock >> 1;
      if (b + 1 < this.blocks && this.sizes[b] + this.sizes[b + 1] <= half) this.mergeWithNext(b);
      else if (b > 0 && this.sizes[b - 1] + this.sizes[b] <= half) this.mergeWithNext(b - 1);
    }
    return true;
  }

  /** Entries with a rating strictly greater than `rating`. */
  countAbove(rating: number): number {
    // Entries rated > rating are a prefix: it ends in the first block whose lowest rating is ≤ rating.
    const lows = this.lows;
    let lo = 0;
    let hi = this.blocks;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lows[mid] <= rating) hi = mid;
      else lo = mid + 1;
    }
    if (lo === this.blocks) return this.starts[lo];
    const ratings = this.ratings[lo];
    let i = 0;
    let j = this.sizes[lo];
    while (i < j) {
      const mid = (i + j) >> 1;
      if (ratings[mid] <= rating) j = mid;
      else i = mid + 1;
    }
    return this.starts[lo] + i;
  }

  /** Entries with a rating strictly lower than `rating`. */
  countBelow(rating: number): number {
    // Entries rated ≥ rating are a prefix: it ends in the first block whose lowest rating is < rating.
    const lows = this.lows;
    let lo = 0;
    let hi = this.blocks;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lows[mid] < rating) hi = mid;
      else lo = mid + 1;
    }
    const total = this.starts[this.blocks];
    if (lo === this.blocks) return 0;
    const ratings = this.ratings[lo];
    let i = 0;
    let j = this.sizes[lo];
    while (i < j) {
      const mid = (i + j) >> 1;
      if (ratings[mid] < rating) j = mid;
      else i = mid + 1;
    }
    return total - (this.starts[lo] + i);
  }

  /** Entries strictly above and strictly below `rating`. */
  countAround(rating: number, out: { above: number; below: number }): void {
    out.above = this.countAbove(rating);
    out.below = this.countBelow(rating);
  }

  /** 0-based position of (rating, id) in (rating desc, id asc) order, or -1 if absent. */
  positionOf(id: string, rating: number): number {
    const b = this.blockFor(id, rating);
    if (b === this.blocks) return -1;
    const at = this.indexIn(b, id, rating);
    if (at >= this.sizes[b] || this.ratings[b][at] !== rating || this.ids[b][at] !== id) return -1;
    return this.starts[b] + at;
  }

  /** The entry at a 0-based position in (rating desc, id asc) order. */
  at(position: number): { id: string; rating: number } | undefined {
    if (!(position >= 0 && position < this.size)) return undefined;
    const b = this.blockAt(position);
    const i = position - this.starts[b];
    return { id: this.ids[b][i], rating: this.ratings[b][i] };
  }

  /** Up to `count` entries starting at a 0-based position, in order. O(log n + count). */
  slice(start: number, count: number): Array<{ id: string; rating: number }> {
    const out: Array<{ id: string; rating: number }> = [];
    const from = Math.max(0, start);
    if (count <= 0 || from >= this.size) return out;
    let b = this.blockAt(from);
    let i = from - this.starts[b];
    while (out.length < count && b < this.blocks) {
      out.push({ id: this.ids[b][i], rating: this.ratings[b][i] });
      if (++i === this.sizes[b]) {
        b++;
        i = 0;
      }
    }
    return out;
  }

  /** First block whose last entry does not sort before (rating, id); `blocks` if none. */
  private blockFor(id: string, rating: number): number {
    const lows = this.lows;
    let lo = 0;
    let hi = this.blocks;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const low = lows[mid];
      // (rating, id) sorts at or before the block's last entry?
      if (rating > low || (rating === low && id <= this.ids[mid][this.sizes[mid] - 1])) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Index in block b of the first entry that does not sort before (rating, id). */
  private indexIn(b: number, id: string, rating: number): number {
    const ratings = this.ratings[b];
    const ids = this.ids[b];
    let i = 0;
    let j = this.sizes[b];
    while (i < j) {
      const mid = (i + j) >> 1;
      const r = ratings[mid];
      if (rating > r || (rating === r && id <= ids[mid])) j = mid;
      else i = mid + 1;
    }
    return i;
  }

  /** The block holding a position (0 ≤ position < size). */
  private blockAt(position: number): number {
    const starts = this.starts;
    let lo = 0;
    let hi = this.blocks - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private split(b: number): void {
    const size = this.sizes[b];
    const keep = size >> 1;
    const ratings = new Float64Array(this.maxBlock);
    ratings.set(this.ratings[b].subarray(keep, size));
    const ids = this.ids[b].splice(keep, size - keep);
    this.sizes[b] = keep;
    this.lows[b] = this.ratings[b][keep - 1];
    this.insertBlock(b + 1, ratings, ids);
  }

  private mergeWithNext(b: number): void {
    const size = this.sizes[b];
    const next = this.sizes[b + 1];
    this.ratings[b].set(this.ratings[b + 1].subarray(0, next), size);
    const ids = this.ids[b];
    for (const id of this.ids[b + 1]) ids.push(id);
    this.sizes[b] = size + next;
    this.lows[b] = this.ratings[b][size + next - 1];
    this.sizes[b + 1] = 0;
    this.removeBlock(b + 1);
  }

  /** Inserts a block (sizes from `ids.length`) at index b and recomputes the block tables. */
  private insertBlock(b: number, ratings: Float64Array, ids: string[]): void {
    if (this.blocks + 2 > this.sizes.length) {
      const capacity = this.sizes.length * 2;
      const sizes = new Int32Array(capacity);
      sizes.set(this.sizes);
      const lows = new Float64Array(capacity);
      lows.set(this.lows);
      this.sizes = sizes;
      this.lows = lows;
      this.starts = new Int32Array(capacity + 1);
    }
    this.ratings.splice(b, 0, ratings);
    this.ids.splice(b, 0, ids);
    this.sizes.copyWithin(b + 1, b, this.blocks);
    this.lows.copyWithin(b + 1, b, this.blocks);
    this.sizes[b] = ids.length;
    this.lows[b] = ids.length > 0 ? ratings[ids.length - 1] : Infinity;
    this.blocks++;
    this.recount();
  }

  private removeBlock(b: number): void {
    this.ratings.splice(b, 1);
    this.ids.splice(b, 1);
    this.sizes.copyWithin(b, b + 1, this.blocks);
    this.lows.copyWithin(b, b + 1, this.blocks);
    this.blocks--;
    this.recount();
  }

  private recount(): void {
    let total = 0;
    for (let k = 0; k < this.blocks; k++) {
      this.starts[k] = total;
      total += this.sizes[k];
    }
    this.starts[this.blocks] = total;
  }
}
