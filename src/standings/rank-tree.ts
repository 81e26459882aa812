/**
 * An order-statistic treap over (rating descending, id ascending), stored in
 * flat typed arrays.
 *
 * Why a treap in typed arrays: insert, remove, rank and select all run in
 * expected O(log n), and keeping each node's rating, children and subtree
 * size side by side in one Float64Array means a query touches about one cache
 * line per level — that is what keeps rank + percentile under 10 µs at a
 * million players (see docs/BENCHMARKS.md). Priorities come from a seeded
 * generator, so the shape (and the timings) are reproducible.
 */

const NIL = -1;
/**
 * Slots per node in `nodes`: rating, left, right, and the sizes of the left
 * and right subtrees — kept in the node itself so a descent reads one node
 * per level instead of also loading a child just for its size.
 */
const STRIDE = 5;
const RATING = 0;
const LEFT = 1;
const RIGHT = 2;
const LEFT_SIZE = 3;
const RIGHT_SIZE = 4;

export class RankTree {
  private nodes: Float64Array;
  private priorities: Uint32Array;
  private ids: string[] = [];
  private root = NIL;
  private free: number[] = [];
  private used = 0;
  private seed: number;

  constructor(initialCapacity = 1024, seed = 0x9e3779b9) {
    const capacity = Math.max(16, initialCapacity);
    this.nodes = new Float64Array(capacity * STRIDE);
    this.priorities = new Uint32Array(capacity);
    this.seed = seed >>> 0 || 1;
  }

  /** Number of entries. */
  get size(): number {
    return this.sizeOf(this.root);
  }

  /** Adds an entry. The caller guarantees (rating, id) is not present. */
  insert(id: string, rating: number): void {
    const node = this.allocate(id, rating);
    this.root = this.insertAt(this.root, node);
  }

  /** Removes the entry with exactly this (rating, id); returns whether it existed. */
  remove(id: string, rating: number): boolean {
    const before = this.size;
    this.root = this.removeAt(this.root, id, rating);
    return this.size < before;
  }

  /** Entries with a rating strictly greater than `rating`. */
  countAbove(rating: number): number {
    const nodes = this.nodes;
    let count = 0;
    let t = this.root;
    while (t !== NIL) {
      const base = t * STRIDE;
      if (nodes[base + RATING] > rating) {
        // t and its whole left subtree (all rated ≥ t) are above.
        count += 1 + nodes[base + LEFT_SIZE];
        t = nodes[base + RIGHT];
      } else {
        t = nodes[base + LEFT];
      }
    }
    return count;
  }

  /** Entries with a rating strictly lower than `rating`. */
  countBelow(rating: number): number {
    const nodes = this.nodes;
    let count = 0;
    let t = this.root;
    while (t !== NIL) {
      const base = t * STRIDE;
      if (nodes[base + RATING] < rating) {
        count += 1 + nodes[base + RIGHT_SIZE];
        t = nodes[base + LEFT];
      } else {
        t = nodes[base + RIGHT];
      }
    }
    return count;
  }

  /**
   * Entries strictly above and strictly below `rating` in one descent: the
   * two counts share their path down to the first node rated exactly
   * `rating`, then split into its two subtrees.
   */
  countAround(rating: number, out: { above: number; below: number }): void {
    const nodes = this.nodes;
    let above = 0;
    let below = 0;
    let t = this.root;
    while (t !== NIL) {
      const base = t * STRIDE;
      const r = nodes[base + RATING];
      if (r > rating) {
        above += 1 + nodes[base + LEFT_SIZE];
        t = nodes[base + RIGHT];
      } else if (r < rating) {
        below += 1 + nodes[base + RIGHT_SIZE];
        t = nodes[base + LEFT];
      } else {
        // Left subtree: ratings ≥ rating; count those strictly above.
        let u = nodes[base + LEFT];
        while (u !== NIL) {
          const ub = u * STRIDE;
          if (nodes[ub + RATING] > rating) {
            above += 1 + nodes[ub + LEFT_SIZE];
            u = nodes[ub + RIGHT];
          } else u = nodes[ub + LEFT];
        }
        u = nodes[base + RIGHT];
        while (u !== NIL) {
          const ub = u * STRIDE;
          if (nodes[ub + RATING] < rating) {
            below += 1 + nodes[ub + RIGHT_SIZE];
            u = nodes[ub + LEFT];
          } else u = nodes[ub + RIGHT];
        }
        break;
      }
    }
    out.above = above;
    out.below = below;
  }

  /** 0-based position of (rating, id) in (rating desc, id asc) order, or -1 if absent. */
  positionOf(id: string, rating: number): number {
    const nodes = this.nodes;
    let position = 0;
    let t = this.root;
    while (t !== NIL) {
      const base = t * STRIDE;
      const r = nodes[base + RATING];
      const left = nodes[base + LEFT];
      const leftSize = nodes[base + LEFT_SIZE];
      const nodeId = this.ids[t];
      if (r === rating && nodeId === id) return position + leftSize;
      if (rating > r || (rating === r && id < nodeId)) {
        t = left;
      } else {
        position += leftSize + 1;
        t = nodes[base + RIGHT];
      }
    }
    return -1;
  }

  /** The entry at a 0-based position in (rating desc, id asc) order. */
  at(position: number): { id: string; rating: number } | undefined {
    if (position < 0 || position >= this.size) return undefined;
    const nodes = this.nodes;
    let t = this.root;
    let remaining = position;
    for (;;) {
      const base = t * STRIDE;
      const left = nodes[base + LEFT];
      const leftSize = nodes[base + LEFT_SIZE];
      if (remaining < leftSize) t = left;
      else if (remaining === leftSize) return { id: this.ids[t], rating: nodes[base + RATING] };
      else {
        remaining -= leftSize + 1;
        t = nodes[base + RIGHT];
      }
    }
  }

  /** Up to `count` entries starting at a 0-based position, in order. O(log n + count). */
  slice(start: number, count: number): Array<{ id: string; rating: number }> {
    const out: Array<{ id: string; rating: number }> = [];
    if (count <= 0 || start >= this.size) return out;
    const nodes = this.nodes;
    // Walk down to `start`, remembering the ancestors still to visit in order.
    const stack: number[] = [];
    let t = this.root;
    let remaining = Math.max(0, start);
    while (t !== NIL) {
      const base = t * STRIDE;
      const left = nodes[base + LEFT];
      const leftSize = nodes[base + LEFT_SIZE];
      if (remaining < leftSize) {
        stack.push(t);
        t = left;
      } else if (remaining === leftSize) {
        stack.push(t);
        break;
      } else {
        remaining -= leftSize + 1;
        t = nodes[base + RIGHT];
      }
    }
    while (stack.length > 0 && out.length < count) {
      const node = stack.pop()!;
      out.push({ id: this.ids[node], rating: nodes[node * STRIDE + RATING] });
      let next = nodes[node * STRIDE + RIGHT];
      while (next !== NIL) {
        stack.push(next);
        next = nodes[next * STRIDE + LEFT];
      }
    }
    return out;
  }

  private nextPriority(): number {
    // xorshift32: cheap, seeded, good enough for treap balance.
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }

  private allocate(id: string, rating: number): number {
    let node: number;
    if (this.free.length > 0) node = this.free.pop()!;
    else {
      node = this.used++;
      if (node >= this.priorities.length) this.grow();
    }
    const base = node * STRIDE;
    this.nodes[base + RATING] = rating;
    this.nodes[base + LEFT] = NIL;
    this.nodes[base + RIGHT] = NIL;
    this.nodes[base + LEFT_SIZE] = 0;
    this.nodes[base + RIGHT_SIZE] = 0;
    this.priorities[node] = this.nextPriority();
    this.ids[node] = id;
    return node;
  }

  private grow(): void {
    const capacity = this.priorities.length * 2;
    const nodes = new Float64Array(capacity * STRIDE);
    nodes.set(this.nodes);
    const priorities = new Uint32Array(capacity);
    priorities.set(this.priorities);
    this.nodes = nodes;
    this.priorities = priorities;
  }

  private sizeOf(t: number): number {
    if (t === NIL) return 0;
    const base = t * STRIDE;
    return 1 + this.nodes[base + LEFT_SIZE] + this.nodes[base + RIGHT_SIZE];
  }

  private update(t: number): void {
    const base = t * STRIDE;
    this.nodes[base + LEFT_SIZE] = this.sizeOf(this.nodes[base + LEFT]);
    this.nodes[base + RIGHT_SIZE] = this.sizeOf(this.nodes[base + RIGHT]);
  }

  private rotateRight(t: number): number {
    const nodes = this.nodes;
    const l = nodes[t * STRIDE + LEFT];
    nodes[t * STRIDE + LEFT] = nodes[l * STRIDE + RIGHT];
    nodes[l * STRIDE + RIGHT] = t;
    this.update(t);
    this.update(l);
    return l;
  }

  private rotateLeft(t: number): number {
    const nodes = this.nodes;
    const r = nodes[t * STRIDE + RIGHT];
    nodes[t * STRIDE + RIGHT] = nodes[r * STRIDE + LEFT];
    nodes[r * STRIDE + LEFT] = t;
    this.update(t);
    this.update(r);
    return r;
  }

  /** Whether node a sorts before node b: higher rating first, then smaller id. */
  private before(rating: number, id: string, t: number): boolean {
    const r = this.nodes[t * STRIDE + RATING];
    return rating > r || (rating === r && id < this.ids[t]);
  }

  private insertAt(t: number, node: number): number {
    if (t === NIL) return node;
    const nodes = this.nodes;
    const base = t * STRIDE;
    if (this.before(nodes[node * STRIDE + RATING], this.ids[node], t)) {
      nodes[base + LEFT] = this.insertAt(nodes[base + LEFT], node);
      nodes[base + LEFT_SIZE] += 1;
      if (this.priorities[nodes[base + LEFT]] > this.priorities[t]) return this.rotateRight(t);
    } else {
      nodes[base + RIGHT] = this.insertAt(nodes[base + RIGHT], node);
      nodes[base + RIGHT_SIZE] += 1;
      if (this.priorities[nodes[base + RIGHT]] > this.priorities[t]) return this.rotateLeft(t);
    }
    return t;
  }

  private removeAt(t: number, id: string, rating: number): number {
    if (t === NIL) return NIL;
    const nodes = this.nodes;
    const base = t * STRIDE;
    if (nodes[base + RATING] === rating && this.ids[t] === id) {
      const merged = this.merge(nodes[base + LEFT], nodes[base + RIGHT]);
      this.free.push(t);
      this.ids[t] = '';
      return merged;
    }
    if (this.before(rating, id, t)) {
      const before = this.sizeOf(nodes[base + LEFT]);
      nodes[base + LEFT] = this.removeAt(nodes[base + LEFT], id, rating);
      if (this.sizeOf(nodes[base + LEFT]) < before) nodes[base + LEFT_SIZE] -= 1;
    } else {
      const before = this.sizeOf(nodes[base + RIGHT]);
      nodes[base + RIGHT] = this.removeAt(nodes[base + RIGHT], id, rating);
      if (this.sizeOf(nodes[base + RIGHT]) < before) nodes[base + RIGHT_SIZE] -= 1;
    }
    return t;
  }

  /** Joins two treaps where every key of `a` sorts before every key of `b`. */
  private merge(a: number, b: number): number {
    if (a === NIL) return b;
    if (b === NIL) return a;
    const nodes = this.nodes;
    if (this.priorities[a] > this.priorities[b]) {
      nodes[a * STRIDE + RIGHT] = this.merge(nodes[a * STRIDE + RIGHT], b);
      this.update(a);
      return a;
    }
    nodes[b * STRIDE + LEFT] = this.merge(a, nodes[b * STRIDE + LEFT]);
    this.update(b);
    return b;
  }
}
