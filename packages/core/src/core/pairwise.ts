/**
 * A columnar fast path for logs of one-against-one games, the shape of most
 * real match data (tennis, chess). It gives the ratings that `Replay` gives
 * for the same games with `createSystem('glicko2' | 'elo')` (each game its
 * own rating period, RD growing with idle time), on typed arrays, so a
 * six-hundred-thousand-game log rates in a fraction of a second. Elo is
 * identical to the last bit; Glicko-2 carries ln(sigma^2) from game to game
 * instead of recomputing it from sigma, which saves a log and an exp per
 * player per game and moves results by rounding only (under 1e-6 rating
 * points: at most 2.9e-6 rating and 1.3e-6 RD over the whole ATP file).
 *
 * This file holds the log; each system's own fast path lives in its module
 * (`glicko2RatePairwise` in glicko2.ts, `eloReplayPairwise` in elo.ts) and
 * is named by its descriptor's `fastPath`.
 */
export { glicko2RatePairwise, glicko2ReplayPairwise, initialGlicko2Ratings } from './glicko2.js';
export { eloReplayPairwise } from './elo.js';

export interface PairwiseLog {
  /** Player ids by index. */
  ids: string[];
  /** Number of games. */
  count: number;
  /** Index of the first player of each game. */
  a: Int32Array;
  /** Index of the second player of each game. */
  b: Int32Array;
  /** Score of the first player: 1, 0.5 or 0 (anything in [0, 1]). */
  score: Float64Array;
  /** Epoch ms of each game, NaN where unknown. */
  at: Float64Array;
}

export interface PairwiseRatings {
  rating: Float64Array;
  /** Glicko-2 only. */
  rd?: Float64Array;
  /** Glicko-2 only. */
  volatility?: Float64Array;
  matches: Int32Array;
  /** Epoch ms of each player's last game, NaN before their first. */
  lastAt: Float64Array;
}

/** The number an id spells in canonical decimal (no sign, no leading zero, at most 15 digits), else undefined. */
export function canonicalNumber(id: string): number | undefined {
  const length = id.length;
  if (length === 0 || length > 15 || (length > 1 && id.charCodeAt(0) === 48)) return undefined;
  let value = 0;
  for (let i = 0; i < length; i++) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return value;
}

/** Builds a log incrementally, interning player ids. */
export class PairwiseLogBuilder {
  private readonly index = new Map<string, number>();
  private readonly numericIndex = new Map<number, number>();
  readonly ids: string[] = [];
  private a = new Int32Array(1024);
  private b = new Int32Array(1024);
  private score = new Float64Array(1024);
  private at = new Float64Array(1024);
  count = 0;

  /** Index of a player id, interning it on first sight. */
  playerIndex(id: string): number {
    const numeric = canonicalNumber(id);
    if (numeric !== undefined) return this.numericPlayerIndex(numeric, id);
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.index.set(id, i);
      this.ids.push(id);
    }
    return i;
  }

  /**
   * Index of a player whose id is the canonical decimal form of `value`
   * (digits, no leading zero), the common case in real data: a number key
   * hashes far faster than a freshly sliced string. `id`, when given, is that
   * string already made.
   */
  numericPlayerIndex(value: number, id?: string): number {
    let i = this.numericIndex.get(value);
    if (i === undefined) {
      i = this.ids.length;
      this.numericIndex.set(value, i);
      this.ids.push(id ?? String(value));
    }
    return i;
  }

  /** Adds a game between two interned players. */
  addIndexed(a: number, b: number, scoreOfA: number, at = NaN): void {
    if (this.count === this.a.length) this.grow();
    const n = this.count++;
    this.a[n] = a;
    this.b[n] = b;
    this.score[n] = scoreOfA;
    this.at[n] = at;
  }

  add(a: string, b: string, scoreOfA: number, at = NaN): void {
    this.addIndexed(this.playerIndex(a), this.playerIndex(b), scoreOfA, at);
  }

  private grow(): void {
    const size = this.a.length * 2;
    const copy = <T extends Int32Array | Float64Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.a = copy(this.a, new Int32Array(size));
    this.b = copy(this.b, new Int32Array(size));
    this.score = copy(this.score, new Float64Array(size));
    this.at = copy(this.at, new Float64Array(size));
  }

  build(): PairwiseLog {
    const n = this.count;
    return { ids: this.ids, count: n, a: this.a.subarray(0, n), b: this.b.subarray(0, n), score: this.score.subarray(0, n), at: this.at.subarray(0, n) };
  }
}
