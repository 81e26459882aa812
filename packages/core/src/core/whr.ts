/**
 * Whole-History Rating (Coulom 2008, "Whole-History Rating: A Bayesian
 * Rating System for Players of Time-Varying Strength").
 *
 * Each player has one skill per day on which they played (a "node"). The
 * skills follow a Wiener process: the first has a Gaussian prior N(0, σ0²),
 * and the change between two of a player's days Δt apart is N(0, w²·Δt).
 * A game between sides A and B (a side's strength is the mean of its
 * players' skills) is won by A with probability σ(d) (logistic,
 * Bradley–Terry) or Φ(d) (probit), d = s_A − s_B (+ a home offset). Skills
 * are in natural units (logits for the logistic link); displayed ratings
 * are 1500 + r · 400/ln 10, as on Elo's scale.
 *
 * Inference is Coulom's: the maximum a posteriori skills, by Newton's method
 * over one player's whole timeline at a time (its Hessian is tridiagonal, so
 * a step costs O(nodes)), the other players held fixed, sweeping players
 * until no skill moves more than a tolerance. The uncertainty of a player's
 * current skill is the Laplace approximation: the last diagonal element of
 * the inverse of minus the Hessian, got by forward elimination (a Kalman
 * filter's precision) along the timeline.
 *
 * Incremental use: a new match appends a game to each player's node of its
 * day and takes Newton steps on those last nodes; when the day changes, the
 * last `window` nodes of each player who played on it are re-smoothed for
 * `sweeps` passes. `converge()` smooths everything, every node of every
 * player, to the MAP. With `cycle`, each closed day also re-smooths the
 * whole timelines of a slice of all active players, round robin.
 *
 * `inference: 'ep'` infers the same model by expectation propagation
 * instead (as TrueSkill Through Time and kickscore): each game sends each of
 * its nodes a Gaussian message, moment-matched against the cavity of both
 * sides, and each timeline is a Kalman filter and Rauch–Tung–Striebel
 * smoother over its messages, so the estimates are posterior means and
 * variances. The same windows, sweeps and cycle schedule the passes.
 */
import { defineSystem } from './descriptor.js';
import { type Match, pairScore, teamPlacements } from './match.js';
import { booleanOption, choiceOption, defaultsOf, numberOption, type OptionsOf, resolveOptions, type ResolvedOptionsOf } from './options.js';
import { type MatchRating, type PlayerState, predictFromPairs, type WholeHistorySystem } from './rating-system.js';

/** Rating points per natural unit of skill: the Elo scale, 400 / ln 10. */
export const WHR_SCALE = 400 / Math.LN10;
const DAY_MS = 86_400_000;
const CONVERGE_RELAXATION = 1.7;

export type WhrLink = 'logistic' | 'probit';

/** Whole-History Rating's options: what each means, its default and range. */
export const WHR_OPTIONS = {
  /** Displayed rating of skill 0. @default 1500 */
  rating: numberOption({ default: 1500, description: 'displayed rating of skill 0' }),
  /** σ0², the variance of a new player's skill, in natural units² (logits² for the logistic link). @default 0.6 */
  priorVariance: numberOption({ default: 0.6, min: 0, exclusiveMin: true, description: "σ0², the variance of a new player's skill, in natural units²" }),
  /** w², the variance the skill drifts by per period (a day), in natural units². @default 0.0025 */
  dailyVariance: numberOption({ default: 0.0025, min: 0, exclusiveMin: true, description: 'w², the variance the skill drifts by per period, in natural units²' }),
  /** P(A wins) = σ(d) (Bradley–Terry) or Φ(d). @default 'logistic' */
  link: choiceOption(['logistic', 'probit'], 'logistic', 'P(A wins) = σ(d) (logistic, Bradley–Terry) or Φ(d) (probit)'),
  /** Length of one period of the Wiener process, in ms. @default 86 400 000 (a day) */
  periodMs: numberOption({ default: DAY_MS, min: 0, exclusiveMin: true, description: 'length of one period of the Wiener process, in ms' }),
  /** Nodes at the end of each player's timeline re-smoothed when a day closes. @default 32 */
  window: numberOption({ default: 32, min: 1, integer: true, description: "nodes at the end of each player's timeline re-smoothed when a day closes" }),
  /** Newton passes over the players of a closed day. @default 2 */
  sweeps: numberOption({ default: 2, min: 0, integer: true, description: 'Newton passes over the players of a closed day' }),
  /**
   * Closed days over which every player's whole timeline is re-smoothed once,
   * a slice of the players at each closed day, round robin (0: never): what a
   * day's results teach reaches the players who did not play, and the past
   * of those who did. @default 0
   */
  cycle: numberOption({
    default: 0,
    min: 0,
    integer: true,
    description: "closed days over which every player's whole timeline is re-smoothed once, a slice at each closed day (0: never)",
  }),
  /** The cycle skips players whose last day is more than this many periods before the latest day (retired players' timelines no longer move the active ones much). @default 730 */
  cycleHorizon: numberOption({ default: 730, min: 0, description: 'the cycle skips players whose last day is more than this many periods before the latest day' }),
  /** Newton passes over a player's last `window` nodes before their first match of a day (see `WhrHistory.prepare`; 0: none). @default 0 */
  refresh: numberOption({ default: 0, min: 0, integer: true, description: "Newton passes over a player's last window nodes before their first match of a day (0: none)" }),
  /**
   * How the skills are inferred: `map` is Coulom's (the posterior's mode by
   * Newton's method, a Laplace variance per player); `ep` is expectation
   * propagation (each game a Gaussian message to each of its players, each
   * timeline a Kalman filter and smoother over its messages: posterior means
   * and variances, as TrueSkill Through Time and kickscore). @default 'map'
   */
  inference: choiceOption(['map', 'ep'], 'map', 'map: the posterior mode (Newton, Laplace variances); ep: expectation propagation (posterior means and variances)'),
  /** Predictions integrate over both sides' uncertainty (else they use the modes only). @default true */
  integrate: booleanOption(true, "predictions integrate over both sides' uncertainty (else they use the modes only)"),
};

export type WhrOptions = OptionsOf<typeof WHR_OPTIONS>;
export type ResolvedWhrOptions = ResolvedOptionsOf<typeof WHR_OPTIONS>;

export const WHR_DEFAULTS: Readonly<ResolvedWhrOptions> = defaultsOf(WHR_OPTIONS);

export function resolveWhrOptions(options: WhrOptions = {}): ResolvedWhrOptions {
  return resolveOptions(WHR_OPTIONS, options);
}

const SQRT2PI = Math.sqrt(2 * Math.PI);

/**
 * λ(z) = φ(z)/Φ(z), stable for very negative z: Φ(z) = ½ erfc(−z/√2) with
 * the Numerical Recipes erfc (relative error < 1.2e-7), whose exp(−x²)
 * factor cancels φ's.
 */
export function inverseMillsRatio(z: number): number {
  const x = -z / Math.SQRT2;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.5 * ax);
  const poly =
    -1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  if (x >= 0) {
    // Φ(z) = ½ t exp(−x² + poly), φ(z) = exp(−x²)/√(2π)
    return 2 / (SQRT2PI * t * Math.exp(poly));
  }
  const phi = Math.exp((-z * z) / 2) / SQRT2PI;
  const Phi = 1 - 0.5 * t * Math.exp(-ax * ax + poly);
  return phi / Phi;
}

/** Standard normal cdf Φ(z). */
export function normalCdf(z: number): number {
  const x = -z / Math.SQRT2;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.5 * ax);
  const erfc =
    t *
    Math.exp(
      -ax * ax -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 0.5 * erfc : 1 - 0.5 * erfc;
}

const logistic = (d: number): number => 1 / (1 + Math.exp(-d));

/**
 * P(side A wins) for a skill difference d with variance v (both sides'
 * uncertainty): logistic σ(d/√(1 + πv/8)) (MacKay's approximation), probit
 * Φ(d/√(1 + v)) (exact). v = 0 gives σ(d) and Φ(d).
 */
export function whrWinProbability(d: number, v: number, link: WhrLink): number {
  return link === 'probit' ? normalCdf(d / Math.sqrt(1 + v)) : logistic(d / Math.sqrt(1 + (Math.PI * v) / 8));
}

/** The probit link's gradient and curvature of ln P(score | d), into out[0], out[1]. */
function probitTerms(d: number, s: number, out: Float64Array): void {
  let grad = 0;
  let curv = 0;
  if (s > 0) {
    const l = inverseMillsRatio(d);
    grad += s * l;
    curv += s * l * (l + d);
  }
  if (s < 1) {
    const l = inverseMillsRatio(-d);
    grad -= (1 - s) * l;
    curv += (1 - s) * l * (l - d);
  }
  out[0] = grad;
  out[1] = curv;
}

/**
 * The gradient and curvature (minus the second derivative) of one game's
 * log-likelihood in d, into out[0], out[1]: side A is nodes[start, split),
 * side B nodes[split, end), skills read from r.
 */
function gameTermsOf(start: number, split: number, end: number, s: number, offset: number, nodes: Int32Array, r: Float64Array, probit: boolean, out: Float64Array): void {
  let sa = 0;
  for (let i = start; i < split; i++) sa += r[nodes[i]!]!;
  let sb = 0;
  for (let i = split; i < end; i++) sb += r[nodes[i]!]!;
  const d = sa / (split - start) - sb / (end - split) + offset;
  if (probit) {
    probitTerms(d, s, out);
    return;
  }
  const p = 1 / (1 + Math.exp(-d));
  out[0] = s - p;
  out[1] = p * (1 - p);
}

/**
 * Solves (−H) δ = g for one timeline, −H = tridiag(−c, a, −c) positive
 * definite (Thomas algorithm, O(count)), and adds relax · δ to
 * r[base … base + count) (each step clamped to ±4, a guard against a wild
 * first step far from the mode, never active near it). Returns the larger of
 * `largest` and the largest |δ|.
 */
function solveTimeline(
  count: number,
  a: Float64Array,
  b: Float64Array,
  c: Float64Array,
  dp: Float64Array,
  y: Float64Array,
  r: Float64Array,
  base: number,
  relax: number,
  largest: number,
): number {
  dp[0] = a[0]!;
  y[0] = b[0]!;
  for (let j = 1; j < count; j++) {
    const m = c[j - 1]! / dp[j - 1]!;
    dp[j] = a[j]! - c[j - 1]! * m;
    y[j] = b[j]! + m * y[j - 1]!;
  }
  let delta = y[count - 1]! / dp[count - 1]!;
  for (let j = count - 1; j >= 0; j--) {
    if (j < count - 1) delta = (y[j]! + c[j]! * delta) / dp[j]!;
    const step = delta > 4 ? 4 : delta < -4 ? -4 : delta;
    r[base + j] = r[base + j]! + relax * step;
    const size = step < 0 ? -step : step;
    if (size > largest) largest = size;
    delta = step;
  }
  return largest;
}

/** The history laid out for whole sweeps (see WhrHistory.compile): positions are player-major. */
interface Compiled {
  playerStart: Int32Array;
  /** Position → node id, and node id → position. */
  nodeOf: Int32Array;
  pos: Int32Array;
  /** The Wiener link to the player's node before: 1/(w² Δt) and w² Δt (0 for a first node). */
  linkPrecision: Float64Array;
  linkVariance: Float64Array;
  entryStart: Int32Array;
  /** The one opponent's position, or −1 − entry (the original entry) for a general or ranked game. */
  opp: Int32Array;
  score: Float64Array;
  offset: Float64Array;
  /** The games' node lists, as positions. */
  gamePos: Int32Array;
  /** Skills and forward precisions by position. */
  r: Float64Array;
  f: Float64Array;
}

export interface WhrConvergeOptions {
  /** ω, the over-relaxation of the sweeps after the first (1 is plain Gauss–Seidel; keep below 2). @default 1.7 */
  relaxation?: number;
  /** Called after each sweep with its largest Newton step. */
  onSweep?: (sweep: number, moved: number) => void;
}

/** A player's current skill: mode and variance (natural units), and when it was last estimated. */
export interface WhrEstimate {
  mean: number;
  variance: number;
  /** Period index of the player's last node. */
  day: number;
  matches: number;
  lastAt?: number;
}

/** `array`, or a copy half as long again (at least `needed`): a history's arrays are most of its memory, and doubling would leave up to half of them unused. */
function grow<T extends Float64Array | Int32Array | Uint8Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const size = Math.max(needed, Math.ceil(array.length * 1.5));
  const bigger = new (array.constructor as { new (n: number): T })(size);
  bigger.set(array);
  return bigger;
}

interface Player {
  /** Global node ids, in time order. */
  nodes: number[];
  matches: number;
  lastAt: number | undefined;
  /** Mark: the day on which the player was last put on the touched list. */
  touchedDay: number;
  /** The day for which the player's timeline was last brought up to date before a match (see `prepare`). */
  preparedDay: number;
}

/**
 * The whole history of a population: nodes (one per player per day), games
 * between sides of nodes, and the MAP skills with their Laplace variances.
 */
export class WhrHistory {
  readonly options: ResolvedWhrOptions;
  private readonly index = new Map<string, number>();
  private readonly ids: string[] = [];
  private readonly players: Player[] = [];
  // Nodes.
  private nodeCount = 0;
  private nodeR = new Float64Array(1024);
  private nodeDay = new Float64Array(1024);
  /** Forward (filter) precision: the node's games plus the message from the player's past. */
  private nodeF = new Float64Array(1024);
  private nodeHead = new Int32Array(1024);
  /**
   * Expectation propagation only (empty under `map`, where they would be a
   * third of a node's memory): the filter's mean, and the smoothed
   * (posterior) variance; nodeR is then the posterior mean.
   */
  private nodeMF = new Float64Array(1024);
  private nodeV = new Float64Array(1024);
  /** The posterior as precision 1/v and precision × mean m/v (kept beside nodeR and nodeV: the cavities need them). */
  private nodeP = new Float64Array(1024);
  private nodeH = new Float64Array(1024);
  // Adjacency entries: node → (game, side), a linked list.
  private entryCount = 0;
  private entryGame = new Int32Array(4096);
  private entrySide = new Int32Array(4096);
  private entryNext = new Int32Array(4096);
  /** One-against-one games: the opponent's node (else −1), this side's score and home offset. */
  private entryOpp = new Int32Array(4096);
  private entryScore = new Float64Array(4096);
  private entryOffset = new Float64Array(4096);
  /** The entry's place in gameNodes (its player's slot in the game). */
  private entrySlot = new Int32Array(4096);
  // Games: side A = gameNodes[start, split), side B = gameNodes[split, end).
  // A ranked game (a match of three or more teams, see addRankedGame) holds
  // its teams in rank order in gameNodes[start, end); its entries' side is
  // the team's place in that order.
  private gameCount = 0;
  private gameStart = new Int32Array(1024);
  private gameSplit = new Int32Array(1024);
  private gameEnd = new Int32Array(1024);
  private gameScore = new Float64Array(1024);
  private gameOffset = new Float64Array(1024);
  /** A ranked game's first index into rankBound/rankScore/rankOffset; −1 for a game of two sides. */
  private gameRank = new Int32Array(1024);
  private gameNodeCount = 0;
  private gameNodes = new Int32Array(4096);
  /**
   * Ranked games, team by team in rank order: where team t starts in
   * gameNodes (and, one past the last team, where the game ends), and
   * whether team t is tied with team t + 1 (a draw; else team t won). A
   * ranked game's home team (its place in rank order, −1 for none) is kept
   * in gameScore and the home offset in gameOffset.
   */
  private rankCount = 0;
  private rankBound = new Int32Array(256);
  private rankTie = new Uint8Array(256);
  /**
   * Expectation propagation only: each game slot's Gaussian message to its
   * node, as precision and precision × mean. In a ranked game, siteTau/siteNu
   * hold the message of the comparison with the team below and siteTauUp/siteNuUp
   * that of the comparison with the team above.
   */
  private siteTau = new Float64Array(4096);
  private siteNu = new Float64Array(4096);
  private siteTauUp = new Float64Array(0);
  private siteNuUp = new Float64Array(0);
  /** The latest period seen. */
  private day = -Infinity;
  /** Players whose skills moved since the last `takeMoved` (a flag per player, and the list in order). */
  private movedFlag = new Uint8Array(64);
  private movedList: number[] = [];
  private touched: number[] = [];
  // Scratch for the tridiagonal solve.
  private a = new Float64Array(256);
  private b = new Float64Array(256);
  private c = new Float64Array(256);
  private dp = new Float64Array(256);
  private y = new Float64Array(256);
  private scratchR = new Float64Array(256);
  private readonly probit: boolean;
  private readonly ep: boolean;
  private readonly priorPrecision: number;
  private readonly w2: number;

  constructor(options: WhrOptions = {}) {
    this.options = resolveWhrOptions(options);
    this.probit = this.options.link === 'probit';
    this.ep = this.options.inference === 'ep';
    this.priorPrecision = 1 / this.options.priorVariance;
    this.w2 = this.options.dailyVariance;
    if (!this.ep) {
      // Only expectation propagation reads these: without them a node costs 28 bytes, not 60.
      this.nodeMF = new Float64Array(0);
      this.nodeV = new Float64Array(0);
      this.nodeP = new Float64Array(0);
      this.nodeH = new Float64Array(0);
      this.siteTau = new Float64Array(0);
      this.siteNu = new Float64Array(0);
    }
  }

  get playerCount(): number {
    return this.players.length;
  }

  get gamesCount(): number {
    return this.gameCount;
  }

  get nodesCount(): number {
    return this.nodeCount;
  }

  has(id: string): boolean {
    return this.index.has(id);
  }

  playerIds(): readonly string[] {
    return this.ids;
  }

  /** The period a match falls in: from `at`, else the period after the latest one. */
  dayOf(at: number | undefined): number {
    if (at !== undefined) return Math.floor(at / this.options.periodMs);
    return Number.isFinite(this.day) ? this.day + 1 : 0;
  }

  private playerIndex(id: string): number {
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.players.length;
      this.index.set(id, i);
      this.ids.push(id);
      this.players.push({ nodes: [], matches: 0, lastAt: undefined, touchedDay: -Infinity, preparedDay: -Infinity });
      if (i >= this.movedFlag.length) {
        const flags = new Uint8Array(this.movedFlag.length * 2);
        flags.set(this.movedFlag);
        this.movedFlag = flags;
      }
      this.noteMoved(i);
    }
    return i;
  }

  private noteMoved(p: number): void {
    if (this.movedFlag[p] === 1) return;
    this.movedFlag[p] = 1;
    this.movedList.push(p);
  }

  /**
   * The players whose skills may have moved since the last call (new
   * players, every Newton step's player, everyone after `converge` or
   * `sweepOnce`), in the order they first moved; the next call starts afresh.
   */
  takeMoved(): string[] {
    const ids = this.movedList.map((p) => this.ids[p]!);
    for (const p of this.movedList) this.movedFlag[p] = 0;
    this.movedList = [];
    return ids;
  }

  private noteAllMoved(): void {
    for (let p = 0; p < this.players.length; p++) this.noteMoved(p);
  }

  /** The player's node for `day` (a late day is folded into the player's last node). */
  private nodeFor(p: number, day: number): number {
    const player = this.players[p]!;
    const nodes = player.nodes;
    if (nodes.length > 0) {
      const last = nodes[nodes.length - 1]!;
      if (this.nodeDay[last]! >= day) return last;
    }
    const n = this.nodeCount++;
    if (n >= this.nodeR.length) {
      const size = this.nodeR.length * 2;
      this.nodeR = grow(this.nodeR, size);
      this.nodeDay = grow(this.nodeDay, size);
      this.nodeF = grow(this.nodeF, size);
      this.nodeHead = grow(this.nodeHead, size);
      this.growEpNodes(size);
    }
    const previous = nodes.length > 0 ? nodes[nodes.length - 1]! : -1;
    this.nodeR[n] = previous >= 0 ? this.nodeR[previous]! : 0;
    this.nodeDay[n] = day;
    this.nodeF[n] = previous >= 0 ? 1 / (1 / this.nodeF[previous]! + this.w2 * (day - this.nodeDay[previous]!)) : this.priorPrecision;
    this.nodeHead[n] = -1;
    if (this.ep) {
      // With no message of its own yet, the node's filter and posterior are the past's message.
      this.nodeMF[n] = previous >= 0 ? this.nodeMF[previous]! : 0;
      this.nodeV[n] = 1 / this.nodeF[n]!;
      this.nodeP[n] = this.nodeF[n]!;
      this.nodeH[n] = this.nodeR[n]! * this.nodeF[n]!;
    }
    nodes.push(n);
    return n;
  }

  /** Room for `size` nodes in the arrays only expectation propagation keeps. */
  private growEpNodes(size: number): void {
    if (!this.ep) return;
    this.nodeMF = grow(this.nodeMF, size);
    this.nodeV = grow(this.nodeV, size);
    this.nodeP = grow(this.nodeP, size);
    this.nodeH = grow(this.nodeH, size);
  }

  private addEntry(node: number, game: number, side: number, slot: number): void {
    const e = this.entryCount++;
    if (e >= this.entryGame.length) {
      const size = this.entryGame.length * 2;
      this.entryGame = grow(this.entryGame, size);
      this.entrySide = grow(this.entrySide, size);
      this.entryNext = grow(this.entryNext, size);
      this.entryOpp = grow(this.entryOpp, size);
      this.entryScore = grow(this.entryScore, size);
      this.entryOffset = grow(this.entryOffset, size);
      this.entrySlot = grow(this.entrySlot, size);
    }
    this.entryGame[e] = game;
    this.entrySide[e] = side;
    const oneOnOne = this.gameSplit[game]! - this.gameStart[game]! === 1 && this.gameEnd[game]! - this.gameSplit[game]! === 1;
    this.entryOpp[e] = oneOnOne ? this.gameNodes[side === 0 ? this.gameSplit[game]! : this.gameStart[game]!]! : -1;
    this.entryScore[e] = side === 0 ? this.gameScore[game]! : 1 - this.gameScore[game]!;
    this.entryOffset[e] = side === 0 ? this.gameOffset[game]! : -this.gameOffset[game]!;
    this.entrySlot[e] = slot;
    this.entryNext[e] = this.nodeHead[node]!;
    this.nodeHead[node] = e;
  }

  /** Room for the messages of every game slot (zero: no message yet). */
  private growSites(): void {
    if (!this.ep) return;
    this.siteTau = grow(this.siteTau, this.gameNodes.length);
    this.siteNu = grow(this.siteNu, this.gameNodes.length);
    if (this.rankCount > 0) {
      // The messages from the team above exist only once there is a ranked game.
      if (this.siteTauUp.length === 0) {
        this.siteTauUp = new Float64Array(this.siteTau.length);
        this.siteNuUp = new Float64Array(this.siteTau.length);
      }
      this.siteTauUp = grow(this.siteTauUp, this.gameNodes.length);
      this.siteNuUp = grow(this.siteNuUp, this.gameNodes.length);
    }
  }

  /** A new game's number, every per-game array grown to hold it. */
  private newGame(): number {
    const g = this.gameCount++;
    if (g >= this.gameStart.length) {
      const size = this.gameStart.length * 2;
      this.gameStart = grow(this.gameStart, size);
      this.gameSplit = grow(this.gameSplit, size);
      this.gameEnd = grow(this.gameEnd, size);
      this.gameScore = grow(this.gameScore, size);
      this.gameOffset = grow(this.gameOffset, size);
      this.gameRank = grow(this.gameRank, size);
    }
    this.gameRank[g] = -1;
    return g;
  }

  private addGame(sideA: readonly number[], sideB: readonly number[], score: number, offset: number): void {
    const g = this.newGame();
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + sideA.length + sideB.length);
    this.gameStart[g] = this.gameNodeCount;
    for (const n of sideA) this.gameNodes[this.gameNodeCount++] = n;
    this.gameSplit[g] = this.gameNodeCount;
    for (const n of sideB) this.gameNodes[this.gameNodeCount++] = n;
    this.gameEnd[g] = this.gameNodeCount;
    this.gameScore[g] = score;
    this.gameOffset[g] = offset;
    this.growSites();
    for (let i = this.gameStart[g]!; i < this.gameEnd[g]!; i++) this.addEntry(this.gameNodes[i]!, g, i < this.gameSplit[g]! ? 0 : 1, i);
  }

  private addGame1v1(na: number, nb: number, score: number, offset: number): void {
    const g = this.newGame();
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + 2);
    this.gameStart[g] = this.gameNodeCount;
    this.gameNodes[this.gameNodeCount++] = na;
    this.gameSplit[g] = this.gameNodeCount;
    this.gameNodes[this.gameNodeCount++] = nb;
    this.gameEnd[g] = this.gameNodeCount;
    this.gameScore[g] = score;
    this.gameOffset[g] = offset;
    this.growSites();
    this.addEntry(na, g, 0, this.gameStart[g]!);
    this.addEntry(nb, g, 1, this.gameStart[g]! + 1);
  }

  /**
   * Adds a match of three or more teams as one ranked game: `teams` in rank
   * order, `ties[t]` whether team t drew with team t + 1 (else it won), the
   * home team's place in that order (−1: none) and its offset (see
   * addMatch). One entry per player, whatever the number of teams.
   */
  private addRankedGame(teams: readonly (readonly number[])[], ties: readonly boolean[], home: number, homeOffset: number): void {
    const g = this.newGame();
    let players = 0;
    for (const team of teams) players += team.length;
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + players);
    const b = this.rankCount;
    this.rankCount += teams.length + 1;
    if (this.rankCount > this.rankBound.length) {
      this.rankBound = grow(this.rankBound, this.rankCount);
      this.rankTie = grow(this.rankTie, this.rankCount);
    }
    this.gameRank[g] = b;
    this.gameStart[g] = this.gameNodeCount;
    // No side A: addEntry then sees no one-against-one game.
    this.gameSplit[g] = this.gameNodeCount;
    this.gameScore[g] = home;
    this.gameOffset[g] = homeOffset;
    for (let t = 0; t < teams.length; t++) {
      this.rankBound[b + t] = this.gameNodeCount;
      this.rankTie[b + t] = ties[t] === true ? 1 : 0;
      for (const n of teams[t]!) this.gameNodes[this.gameNodeCount++] = n;
    }
    this.rankBound[b + teams.length] = this.gameNodeCount;
    this.rankTie[b + teams.length] = 0;
    this.gameEnd[g] = this.gameNodeCount;
    this.growSites();
    for (let t = 0; t < teams.length; t++) {
      for (let i = this.rankBound[b + t]!; i < this.rankBound[b + t + 1]!; i++) this.addEntry(this.gameNodes[i]!, g, t, i);
    }
  }

  /**
   * The gradient and curvature of a ranked game's log-likelihood in the skill
   * of one player of its team t, into out[0], out[1]: the comparisons of
   * team t with the team above (t as side B) and with the team below (t as
   * side A), each a game of two sides, over the team's size (a team's
   * strength is its players' mean).
   */
  private rankedTerms(g: number, t: number, nodes: Int32Array, r: Float64Array, out: Float64Array): void {
    const { rankBound, rankTie, probit } = this;
    const b = this.gameRank[g]! + t;
    const start = rankBound[b]!;
    const end = rankBound[b + 1]!;
    let grad = 0;
    let curv = 0;
    if (t > 0) {
      gameTermsOf(rankBound[b - 1]!, start, end, rankTie[b - 1] === 1 ? 0.5 : 1, this.rankedOffset(g, t - 1), nodes, r, probit, out);
      grad -= out[0]!;
      curv += out[1]!;
    }
    if (end < this.gameEnd[g]!) {
      gameTermsOf(start, end, rankBound[b + 2]!, rankTie[b] === 1 ? 0.5 : 1, this.rankedOffset(g, t), nodes, r, probit, out);
      grad += out[0]!;
      curv += out[1]!;
    }
    const size = end - start;
    out[0] = grad / size;
    out[1] = curv / (size * size);
  }

  /** The home offset of a ranked game's comparison of team t with team t + 1, from team t's side. */
  private rankedOffset(g: number, t: number): number {
    const home = this.gameScore[g]!;
    return home === t ? this.gameOffset[g]! : home === t + 1 ? -this.gameOffset[g]! : 0;
  }

  /**
   * Adds a match: two teams are one game, scored by placement (a draw is
   * half a win and half a loss). Three or more teams are one ranked game:
   * the teams in order of placement (tied teams in the order given), each
   * compared with the next, a win for the better placed or a draw between
   * tied ones, so that N teams make N − 1 comparisons, not the N(N − 1)/2 of
   * every pair. This is TrueSkill's factor graph for a free-for-all
   * (Herbrich, Minka & Graepel 2006: each team's performance against its
   * neighbours in rank order) with Bradley–Terry or probit comparisons, the
   * "partial pair" model of Weng & Lin (JMLR 2011); a match's memory and
   * cost then grow with its players, not with the square of its teams, and
   * one team is no longer counted N − 1 times. `homeOffset` (natural units)
   * is added to the home team's strength. Then the match's players' last
   * nodes take Newton steps. A new day first re-smooths the players of the
   * day before.
   */
  addMatch(match: Match, homeOffset = 0, day = this.dayOf(match.at)): void {
    if (!this.deferred) this.prepare(match, day);
    if (day > this.day) {
      if (!this.deferred) this.closeDay();
      this.day = day;
    }
    const placements = teamPlacements(match);
    const teamNodes = match.teams.map((team) =>
      team.players.map((player) => {
        const p = this.playerIndex(player.id);
        const state = this.players[p]!;
        state.matches++;
        if (match.at !== undefined && (state.lastAt === undefined || match.at > state.lastAt)) state.lastAt = match.at;
        if (state.touchedDay !== this.day) {
          state.touchedDay = this.day;
          this.touched.push(p);
        }
        return this.nodeFor(p, day);
      }),
    );
    if (match.teams.length === 2) {
      const offset = match.home === 0 ? homeOffset : match.home === 1 ? -homeOffset : 0;
      this.addGame(teamNodes[0]!, teamNodes[1]!, pairScore(placements, 0, 1), offset);
    } else {
      // Rank order, ties in the order given (a stable sort).
      const order = placements.map((_, t) => t).sort((x, y) => placements[x]! - placements[y]!);
      const ties: boolean[] = [];
      for (let k = 0; k + 1 < order.length; k++) ties.push(placements[order[k]!] === placements[order[k + 1]!]);
      this.addRankedGame(
        order.map((t) => teamNodes[t]!),
        ties,
        match.home === undefined ? -1 : order.indexOf(match.home),
        homeOffset,
      );
    }
    if (this.deferred) return;
    const involved: number[] = [];
    for (const team of match.teams) for (const player of team.players) involved.push(this.index.get(player.id)!);
    for (let round = 0; round < 2; round++) {
      for (const p of involved) this.smooth(p, this.players[p]!.nodes.length - 1);
    }
  }

  /** One pass over nodes [from, end) of player p's timeline: a Newton step (MAP) or the messages and the smoother (EP). */
  private smooth(p: number, from: number): number {
    return this.ep ? this.epSmooth(p, from) : this.newton(p, from);
  }

  /**
   * Brings the timelines of a coming match's players up to date, so that a
   * prediction made now sees every result already added: a match of a new
   * day first closes the day before (as `addMatch` would), and a player's
   * first match of a day re-smooths the last `window` nodes of their
   * timeline `refresh` times, since their past opponents' timelines may have
   * moved since the player last played. Reads only what was already added;
   * `addMatch` calls it, and a caller who predicts before adding may call it
   * first.
   */
  prepare(match: Match, day = this.dayOf(match.at)): void {
    if (this.deferred) return;
    if (day > this.day) this.closeDay();
    const { window, refresh } = this.options;
    if (refresh === 0) return;
    for (const team of match.teams) {
      for (const player of team.players) {
        const p = this.index.get(player.id);
        if (p === undefined) continue;
        const state = this.players[p]!;
        if (state.preparedDay >= day) continue;
        state.preparedDay = day;
        const count = state.nodes.length;
        if (this.nodeDay[state.nodes[count - 1]!]! >= day) continue;
        for (let s = 0; s < refresh; s++) this.smooth(p, Math.max(0, count - window));
      }
    }
  }

  /**
   * Re-smooths the last `window` nodes of the players who played in the
   * latest day, `sweeps` times; then, with `cycle`, the whole timelines of
   * the next slice of all players (round robin), but for those who last
   * played more than `cycleHorizon` periods ago.
   */
  closeDay(): void {
    if (this.touched.length === 0) return;
    const { window, sweeps, cycle, cycleHorizon } = this.options;
    for (let s = 0; s < sweeps; s++) {
      for (const p of this.touched) {
        const count = this.players[p]!.nodes.length;
        this.smooth(p, Math.max(0, count - window));
      }
    }
    this.touched = [];
    if (cycle > 0) {
      const players = this.players.length;
      const slice = Math.ceil(players / cycle);
      for (let i = 0; i < slice; i++) {
        if (this.cursor >= players) this.cursor = 0;
        const nodes = this.players[this.cursor]!.nodes;
        if (this.day - this.nodeDay[nodes[nodes.length - 1]!]! <= cycleHorizon) this.smooth(this.cursor, 0);
        this.cursor++;
      }
    }
  }

  /** The next player of the round robin of `cycle`. */
  private cursor = 0;

  /**
   * Smooths every player's whole timeline to the MAP: Newton sweeps over all
   * players until no skill moves more than `tolerance`, or `maxSweeps`.
   * Nodes that never had a Newton step (added by `addMatches`) first get a
   * forward (filtering) pass. Returns the sweeps taken.
   */
  converge(tolerance = 1e-4, maxSweeps = 500, options: WhrConvergeOptions = {}): number {
    const relaxation = options.relaxation ?? CONVERGE_RELAXATION;
    this.touched = [];
    this.noteAllMoved();
    if (this.ep) return this.epConverge(tolerance, maxSweeps, options);
    const compiled = this.compile();
    if (this.unfittedFrom < this.nodeCount) this.forwardPass(compiled, this.unfittedFrom);
    this.unfittedFrom = this.nodeCount;
    let sweeps = maxSweeps;
    for (let sweep = 1; sweep <= maxSweeps; sweep++) {
      // Over-relaxed Gauss–Seidel over players (SOR): plain sweeps creep along
      // the slow collective modes (pools of players who mostly meet each
      // other). The first sweep is plain, as the start may be far from the mode.
      const moved = this.sweepCompiled(compiled, sweep === 1 ? 1 : relaxation, false);
      options.onSweep?.(sweep, moved);
      if (moved < tolerance) {
        sweeps = sweep;
        break;
      }
    }
    // A last plain step, so the forward precisions belong to the final skills.
    this.sweepCompiled(compiled, 1);
    this.writeBack(compiled);
    return sweeps === maxSweeps ? maxSweeps : sweeps + 1;
  }

  /** One Newton step on every player's whole timeline (relaxed by `relax`; with `inference: 'ep'`, one pass of messages and smoothing, unrelaxed); returns [largest step, its player]. */
  sweepOnce(relax = 1): [number, number] {
    this.noteAllMoved();
    if (this.ep) {
      // Expectation propagation: one pass over every whole timeline (no relaxation).
      let moved = 0;
      let who = -1;
      for (let p = 0; p < this.players.length; p++) {
        const step = this.epSmooth(p, 0);
        if (step > moved) {
          moved = step;
          who = p;
        }
      }
      return [moved, who];
    }
    const compiled = this.compile();
    const moved = this.sweepCompiled(compiled, relax);
    this.writeBack(compiled);
    return [moved, this.largestPlayer];
  }

  /** The player of the largest step of the last sweep. */
  private largestPlayer = -1;

  /**
   * Adds matches without any smoothing (then call `converge`): the batch
   * path, cheaper than `addMatch` when the whole history is fitted at once.
   * Matches of one player against one are added without building their
   * placements.
   */
  addMatches(matches: Iterable<Match>, homeOffset = 0): void {
    const first = this.nodeCount;
    // Room for the whole batch at once: growing the arrays step by step
    // costs a full garbage collection of a large heap at each doubling.
    if (Array.isArray(matches)) this.reserve(matches.length);
    this.deferred = true;
    try {
      for (const match of matches) {
        const teams = match.teams;
        const day = this.dayOf(match.at);
        if (teams.length !== 2 || teams[0]!.players.length !== 1 || teams[1]!.players.length !== 1) {
          this.addMatch(match, homeOffset, day);
          continue;
        }
        if (day > this.day) this.day = day;
        const a = teams[0]!;
        const b = teams[1]!;
        const na = this.nodeFor(this.notePlayer(a.players[0]!.id, match.at), day);
        const nb = this.nodeFor(this.notePlayer(b.players[0]!.id, match.at), day);
        let score: number;
        if (a.rank !== undefined) score = a.rank! < b.rank! ? 1 : a.rank! > b.rank! ? 0 : 0.5;
        else score = a.score! > b.score! ? 1 : a.score! < b.score! ? 0 : 0.5;
        const offset = match.home === 0 ? homeOffset : match.home === 1 ? -homeOffset : 0;
        this.addGame1v1(na, nb, score, offset);
      }
    } finally {
      this.deferred = false;
    }
    this.touched = [];
    if (first < this.unfittedFrom) this.unfittedFrom = first;
  }

  /** Grows the arrays for `count` more one-on-one matches (two nodes, two entries, one game each). */
  private reserve(count: number): void {
    const nodes = this.nodeCount + 2 * count;
    if (nodes > this.nodeR.length) {
      this.nodeR = grow(this.nodeR, nodes);
      this.nodeDay = grow(this.nodeDay, nodes);
      this.nodeF = grow(this.nodeF, nodes);
      this.nodeHead = grow(this.nodeHead, nodes);
      this.growEpNodes(nodes);
    }
    const entries = this.entryCount + 2 * count;
    if (entries > this.entryGame.length) {
      this.entryGame = grow(this.entryGame, entries);
      this.entrySide = grow(this.entrySide, entries);
      this.entryNext = grow(this.entryNext, entries);
      this.entryOpp = grow(this.entryOpp, entries);
      this.entryScore = grow(this.entryScore, entries);
      this.entryOffset = grow(this.entryOffset, entries);
      this.entrySlot = grow(this.entrySlot, entries);
    }
    const games = this.gameCount + count;
    if (games > this.gameStart.length) {
      this.gameStart = grow(this.gameStart, games);
      this.gameSplit = grow(this.gameSplit, games);
      this.gameEnd = grow(this.gameEnd, games);
      this.gameScore = grow(this.gameScore, games);
      this.gameOffset = grow(this.gameOffset, games);
      this.gameRank = grow(this.gameRank, games);
    }
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + 2 * count);
    this.growSites();
  }

  private deferred = false;
  /** Nodes from this id on have had no Newton step (added by `addMatches`). */
  private unfittedFrom = 0;

  /** The player's index, counting the match and its time. */
  private notePlayer(id: string, at: number | undefined): number {
    const p = this.playerIndex(id);
    const state = this.players[p]!;
    state.matches++;
    if (at !== undefined && (state.lastAt === undefined || at > state.lastAt)) state.lastAt = at;
    this.noteMoved(p);
    return p;
  }

  /**
   * The history laid out for whole sweeps: each player's nodes at
   * consecutive positions, each node's games as a contiguous run of entries
   * (compressed sparse rows), so a sweep reads memory in order but for the
   * opponents' skills.
   */
  private compile(): Compiled {
    const players = this.players.length;
    const nodes = this.nodeCount;
    const playerStart = new Int32Array(players + 1);
    const nodeOf = new Int32Array(nodes);
    const pos = new Int32Array(nodes);
    let k = 0;
    for (let p = 0; p < players; p++) {
      playerStart[p] = k;
      for (const n of this.players[p]!.nodes) {
        nodeOf[k] = n;
        pos[n] = k++;
      }
    }
    playerStart[players] = k;
    const linkPrecision = new Float64Array(nodes);
    const linkVariance = new Float64Array(nodes);
    const r = new Float64Array(nodes);
    const f = new Float64Array(nodes);
    for (let p = 0; p < players; p++) {
      for (let k = playerStart[p]!; k < playerStart[p + 1]!; k++) {
        const n = nodeOf[k]!;
        r[k] = this.nodeR[n]!;
        f[k] = this.nodeF[n]!;
        if (k > playerStart[p]!) {
          const variance = this.w2 * (this.nodeDay[n]! - this.nodeDay[nodeOf[k - 1]!]!);
          linkVariance[k] = variance;
          linkPrecision[k] = 1 / variance;
        }
      }
    }
    const entryStart = new Int32Array(nodes + 1);
    const opp = new Int32Array(this.entryCount);
    const score = new Float64Array(this.entryCount);
    const offset = new Float64Array(this.entryCount);
    let e = 0;
    for (let k = 0; k < nodes; k++) {
      entryStart[k] = e;
      for (let x = this.nodeHead[nodeOf[k]!]!; x !== -1; x = this.entryNext[x]!) {
        const o = this.entryOpp[x]!;
        // A general or ranked game is −1 − its entry (which names the game and the side or team).
        opp[e] = o >= 0 ? pos[o]! : -1 - x;
        score[e] = this.entryScore[x]!;
        offset[e] = this.entryOffset[x]!;
        e++;
      }
    }
    entryStart[nodes] = e;
    const gamePos = new Int32Array(this.gameNodeCount);
    for (let i = 0; i < this.gameNodeCount; i++) gamePos[i] = pos[this.gameNodes[i]!]!;
    this.ensureScratch(1);
    for (let p = 0; p < players; p++) this.ensureScratch(playerStart[p + 1]! - playerStart[p]!);
    return { playerStart, nodeOf, pos, linkPrecision, linkVariance, entryStart, opp, score, offset, gamePos, r, f };
  }

  private writeBack(c: Compiled): void {
    for (let k = 0; k < c.nodeOf.length; k++) {
      const n = c.nodeOf[k]!;
      this.nodeR[n] = c.r[k]!;
      this.nodeF[n] = c.f[k]!;
    }
  }

  private ensureScratch(count: number): void {
    if (this.a.length >= count) return;
    const size = Math.max(count, this.a.length * 2);
    this.a = new Float64Array(size);
    this.b = new Float64Array(size);
    this.c = new Float64Array(size);
    this.dp = new Float64Array(size);
    this.y = new Float64Array(size);
    this.scratchR = new Float64Array(size);
  }

  /**
   * A filter in time order over nodes `from` on, as an online system would
   * rate them: each day's nodes start from the player's skill of the node
   * before and take Newton steps on the day's games, three Gauss–Seidel
   * rounds over the day, with the past as a Gaussian message (the forward
   * precision). A start for the sweeps far closer to the MAP than zero.
   */
  // The loop over a node's games is written out here and in sweepCompiled: as a shared method it cost
  // 3–19 % more converge time on the ATP history (not inlined), with the same result.
  private forwardPass(c: Compiled, from: number): void {
    const { pos, r, f, linkVariance, entryStart, opp, score, offset } = c;
    const out = this.terms;
    const probit = this.probit;
    let start = from;
    while (start < this.nodeCount) {
      const day = this.nodeDay[start]!;
      let end = start + 1;
      while (end < this.nodeCount && this.nodeDay[end] === day) end++;
      for (let n = start; n < end; n++) {
        const k = pos[n]!;
        r[k] = linkVariance[k]! > 0 ? r[k - 1]! : 0;
      }
      for (let round = 0; round < 3; round++) {
        for (let n = start; n < end; n++) {
          const k = pos[n]!;
          const first = !(linkVariance[k]! > 0);
          const mean = first ? 0 : r[k - 1]!;
          const message = first ? this.priorPrecision : 1 / (1 / f[k - 1]! + linkVariance[k]!);
          const rk = r[k]!;
          let grad = -message * (rk - mean);
          let curv = message;
          for (let e = entryStart[k]!; e < entryStart[k + 1]!; e++) {
            const o = opp[e]!;
            if (o >= 0) {
              const d = rk - r[o]! + offset[e]!;
              if (!probit) {
                const q = 1 / (1 + Math.exp(-d));
                grad += score[e]! - q;
                curv += q * (1 - q);
              } else {
                probitTerms(d, score[e]!, out);
                grad += out[0]!;
                curv += out[1]!;
              }
            } else {
              this.generalTerms(c, -1 - o, out);
              grad += out[0]!;
              curv += out[1]!;
            }
          }
          const step = grad / curv;
          r[k] = rk + (step > 4 ? 4 : step < -4 ? -4 : step);
          f[k] = curv;
        }
      }
      start = end;
    }
  }

  /** A general or ranked game's gradient and curvature for the side or team of entry x, on the compiled skills. */
  private generalTerms(c: Compiled, x: number, out: Float64Array): void {
    const g = this.entryGame[x]!;
    const side = this.entrySide[x]!;
    if (this.gameRank[g]! >= 0) {
      this.rankedTerms(g, side, c.gamePos, c.r, out);
      return;
    }
    gameTermsOf(this.gameStart[g]!, this.gameSplit[g]!, this.gameEnd[g]!, this.gameScore[g]!, this.gameOffset[g]!, c.gamePos, c.r, this.probit, out);
    const size = side === 0 ? this.gameSplit[g]! - this.gameStart[g]! : this.gameEnd[g]! - this.gameSplit[g]!;
    out[0] = (side === 0 ? out[0]! : -out[0]!) / size;
    out[1] = out[1]! / (size * size);
  }

  /** One Newton step on every player's whole timeline in the compiled layout; returns the largest step. */
  private sweepCompiled(c: Compiled, relax: number, precisions = true): number {
    const { playerStart, r, f, linkPrecision, linkVariance, entryStart, opp, score, offset } = c;
    const { a, b, c: upper, dp, y, terms: out, priorPrecision } = this;
    const probit = this.probit;
    let largest = 0;
    this.largestPlayer = -1;
    const players = playerStart.length - 1;
    for (let p = 0; p < players; p++) {
      const base = playerStart[p]!;
      const count = playerStart[p + 1]! - base;
      let previousF = 0;
      for (let j = 0; j < count; j++) {
        const k = base + j;
        const rk = r[k]!;
        let grad = 0;
        let curv = 0;
        const end = entryStart[k + 1]!;
        for (let e = entryStart[k]!; e < end; e++) {
          const o = opp[e]!;
          if (o >= 0) {
            const d = rk - r[o]! + offset[e]!;
            if (!probit) {
              const q = 1 / (1 + Math.exp(-d));
              grad += score[e]! - q;
              curv += q * (1 - q);
            } else {
              probitTerms(d, score[e]!, out);
              grad += out[0]!;
              curv += out[1]!;
            }
          } else {
            this.generalTerms(c, -1 - o, out);
            grad += out[0]!;
            curv += out[1]!;
          }
        }
        if (precisions) {
          const message = j === 0 ? priorPrecision : 1 / (1 / previousF + linkVariance[k]!);
          previousF = curv + message;
          f[k] = previousF;
        }
        if (j === 0) {
          curv += priorPrecision;
          grad -= priorPrecision * rk;
        } else {
          const link = linkPrecision[k]!;
          const diff = r[k - 1]! - rk;
          upper[j - 1] = link;
          a[j - 1] += link;
          b[j - 1] -= link * diff;
          curv += link;
          grad += link * diff;
        }
        a[j] = curv;
        b[j] = grad;
      }
      const step = solveTimeline(count, a, b, upper, dp, y, r, base, relax, 0);
      if (step > largest) {
        largest = step;
        this.largestPlayer = p;
      }
    }
    return largest;
  }

  private readonly terms = new Float64Array(2);

  /**
   * One Newton step on nodes [from, end) of player p's timeline, the node
   * before `from` held fixed. Updates the forward precisions of those nodes.
   * Returns the largest |step|.
   */
  private newton(p: number, from: number, relax = 1): number {
    const nodes = this.players[p]!.nodes;
    const count = nodes.length - from;
    if (count <= 0) return 0;
    this.noteMoved(p);
    this.ensureScratch(count);
    const { a, b, c, dp, y, terms, nodeR, nodeDay, nodeF, w2 } = this;
    // Each node's games: gradient into b, curvature into a; the forward precision alongside.
    let previousF = 0;
    for (let j = 0; j < count; j++) {
      const n = nodes[from + j]!;
      let grad = 0;
      let curv = 0;
      for (let e = this.nodeHead[n]!; e !== -1; e = this.entryNext[e]!) {
        const opp = this.entryOpp[e]!;
        if (opp >= 0 && !this.probit) {
          // One against one, logistic: the common case, inline.
          const q = 1 / (1 + Math.exp(nodeR[opp]! - nodeR[n]! - this.entryOffset[e]!));
          grad += this.entryScore[e]! - q;
          curv += q * (1 - q);
          continue;
        }
        if (opp >= 0) {
          probitTerms(nodeR[n]! - nodeR[opp]! + this.entryOffset[e]!, this.entryScore[e]!, terms);
          grad += terms[0]!;
          curv += terms[1]!;
          continue;
        }
        const g = this.entryGame[e]!;
        if (this.gameRank[g]! >= 0) {
          this.rankedTerms(g, this.entrySide[e]!, this.gameNodes, nodeR, terms);
          grad += terms[0]!;
          curv += terms[1]!;
          continue;
        }
        gameTermsOf(this.gameStart[g]!, this.gameSplit[g]!, this.gameEnd[g]!, this.gameScore[g]!, this.gameOffset[g]!, this.gameNodes, nodeR, this.probit, terms);
        const size = this.entrySide[e] === 0 ? this.gameSplit[g]! - this.gameStart[g]! : this.gameEnd[g]! - this.gameSplit[g]!;
        const sign = this.entrySide[e] === 0 ? 1 : -1;
        grad += (sign * terms[0]!) / size;
        curv += terms[1]! / (size * size);
      }
      a[j] = curv;
      b[j] = grad;
      // Forward precision: this node's games plus the past's message.
      let message: number;
      if (j === 0) {
        if (from === 0) message = this.priorPrecision;
        else {
          const before = nodes[from - 1]!;
          message = 1 / (1 / nodeF[before]! + w2 * (nodeDay[n]! - nodeDay[before]!));
        }
      } else {
        message = 1 / (1 / previousF + w2 * (nodeDay[n]! - nodeDay[nodes[from + j - 1]!]!));
      }
      previousF = curv + message;
      nodeF[n] = previousF;
    }
    // The prior on the first node, or the Wiener link to the fixed node before the window.
    const first = nodes[from]!;
    if (from === 0) {
      a[0] += this.priorPrecision;
      b[0] -= this.priorPrecision * nodeR[first]!;
    } else {
      const before = nodes[from - 1]!;
      const link = 1 / (w2 * (nodeDay[first]! - nodeDay[before]!));
      a[0] += link;
      b[0] -= link * (nodeR[first]! - nodeR[before]!);
    }
    // Wiener links inside the window.
    for (let j = 0; j + 1 < count; j++) {
      const n0 = nodes[from + j]!;
      const n1 = nodes[from + j + 1]!;
      const link = 1 / (w2 * (nodeDay[n1]! - nodeDay[n0]!));
      c[j] = link;
      a[j] += link;
      a[j + 1] += link;
      const diff = nodeR[n0]! - nodeR[n1]!;
      b[j] -= link * diff;
      b[j + 1] += link * diff;
    }
    // The Newton step δ = (−H)⁻¹ g on the window's nodes, in place.
    for (let j = 0; j < count; j++) this.scratchR[j] = nodeR[nodes[from + j]!]!;
    const largest = solveTimeline(count, a, b, c, dp, y, this.scratchR, 0, relax, 0);
    for (let j = 0; j < count; j++) nodeR[nodes[from + j]!] = this.scratchR[j]!;
    return largest;
  }

  /**
   * Expectation propagation: a new message from game g to the node at
   * `slot`, the game's other messages held. Each node's cavity is its
   * posterior without this game's message; d = Σ c_j x_j + offset (c_j =
   * ±1/side size) is then N(m, v) with m = Σ c_j m_j, v = Σ c_j² v_j, and
   * Z(m, v) = E[P(score | d)]: probit Φ(m/√(1 + v)) (exact), logistic
   * σ(m/√(1 + πv/8)) (MacKay). With α = ∂ln Z/∂m and β = −∂²ln Z/∂m², the
   * posterior of the node's x is matched to mean m_i + v_i c_i α and variance
   * v_i − v_i² c_i² β; the message is that posterior over the cavity:
   * precision τ = c_i² β/(1 − c_i² β v_i), precision × mean
   * ν = (c_i α + c_i² β m_i)/(1 − c_i² β v_i).
   */
  private epSite(g: number, slot: number): void {
    this.epComparison(
      this.gameStart[g]!,
      this.gameSplit[g]!,
      this.gameEnd[g]!,
      this.gameScore[g]!,
      this.gameOffset[g]!,
      slot,
      this.siteTau,
      this.siteNu,
      this.siteTau,
      this.siteNu,
    );
  }

  /**
   * epSite for one comparison of two sides, gameNodes[start, split) against
   * gameNodes[split, end), scored `score` for side A with home offset
   * `offset`: side A's messages of this comparison are in tauA/nuA, side B's
   * in tauB/nuB (the same arrays for a game of two sides; in a ranked game a
   * team's message from the team below and from the team above are kept
   * apart).
   */
  private epComparison(
    start: number,
    split: number,
    end: number,
    s: number,
    offset: number,
    slot: number,
    tauA: Float64Array,
    nuA: Float64Array,
    tauB: Float64Array,
    nuB: Float64Array,
  ): void {
    const { gameNodes, nodeR, nodeV } = this;
    const ca = 1 / (split - start);
    const cb = -1 / (end - split);
    let m = offset;
    let v = 0;
    let mi = 0;
    let vi = 0;
    for (let j = start; j < end; j++) {
      const n = gameNodes[j]!;
      const c = j < split ? ca : cb;
      const siteTau = j < split ? tauA : tauB;
      const siteNu = j < split ? nuA : nuB;
      // The cavity: the node's posterior without this game's message.
      let precision = 1 / nodeV[n]! - siteTau[j]!;
      let mean: number;
      if (precision > 1e-12) mean = (nodeR[n]! / nodeV[n]! - siteNu[j]!) / precision;
      else {
        precision = 1 / nodeV[n]!;
        mean = nodeR[n]!;
      }
      m += c * mean;
      v += (c * c) / precision;
      if (j === slot) {
        mi = mean;
        vi = 1 / precision;
      }
    }
    let alpha: number;
    let beta: number;
    if (this.probit) {
      const root = Math.sqrt(1 + v);
      const z = m / root;
      alpha = 0;
      beta = 0;
      if (s > 0) {
        const l = inverseMillsRatio(z);
        alpha += (s * l) / root;
        beta += (s * l * (l + z)) / (1 + v);
      }
      if (s < 1) {
        const l = inverseMillsRatio(-z);
        alpha -= ((1 - s) * l) / root;
        beta += ((1 - s) * l * (l - z)) / (1 + v);
      }
    } else {
      const kappa = 1 / Math.sqrt(1 + (Math.PI * v) / 8);
      const q = 1 / (1 + Math.exp(-kappa * m));
      alpha = kappa * (s - q);
      beta = kappa * kappa * q * (1 - q);
    }
    const c = slot < split ? ca : cb;
    const bi = c * c * beta;
    const shrink = 1 - bi * vi;
    if (!(shrink > 1e-9)) return;
    if (slot < split) {
      tauA[slot] = bi / shrink;
      nuA[slot] = (c * alpha + bi * mi) / shrink;
    } else {
      tauB[slot] = bi / shrink;
      nuB[slot] = (c * alpha + bi * mi) / shrink;
    }
  }

  /** A ranked game's new messages to the player at `slot` of team t, from the comparisons with the team above and below; returns their summed precision into out[0], precision × mean into out[1]. */
  private epRanked(g: number, t: number, slot: number, out: Float64Array): void {
    const { rankBound, rankTie, siteTau, siteNu, siteTauUp, siteNuUp } = this;
    const b = this.gameRank[g]! + t;
    const start = rankBound[b]!;
    const end = rankBound[b + 1]!;
    let tau = 0;
    let nu = 0;
    if (t > 0) {
      // Against the team above, as side B: the team above's messages of this comparison are its "below" ones.
      this.epComparison(rankBound[b - 1]!, start, end, rankTie[b - 1] === 1 ? 0.5 : 1, this.rankedOffset(g, t - 1), slot, siteTau, siteNu, siteTauUp, siteNuUp);
      tau += siteTauUp[slot]!;
      nu += siteNuUp[slot]!;
    }
    if (end < this.gameEnd[g]!) {
      this.epComparison(start, end, rankBound[b + 2]!, rankTie[b] === 1 ? 0.5 : 1, this.rankedOffset(g, t), slot, siteTau, siteNu, siteTauUp, siteNuUp);
      tau += siteTau[slot]!;
      nu += siteNu[slot]!;
    }
    out[0] = tau;
    out[1] = nu;
  }

  /**
   * Expectation propagation on nodes [from, end) of player p's timeline: new
   * messages from each of their games, then the Kalman filter forward (from
   * the filter of the node before `from`, or the prior) and the
   * Rauch–Tung–Striebel smoother back, which give each node's posterior mean
   * (into nodeR) and variance. Returns the largest change of a mean.
   */
  private epSmooth(p: number, from: number): number {
    const nodes = this.players[p]!.nodes;
    const count = nodes.length;
    if (count - from <= 0) return 0;
    this.noteMoved(p);
    const { nodeR, nodeV, nodeP, nodeH, nodeF, nodeMF, nodeDay, w2, siteTau, siteNu, entrySlot, entryOpp, entrySide, entryScore, entryOffset, entryNext, nodeHead } = this;
    this.ensureScratch(count - from);
    const sumTau = this.a;
    const sumNu = this.b;
    const probit = this.probit;
    const pi8 = Math.PI / 8;
    // New messages from each node's games, summed per node.
    for (let j = from; j < count; j++) {
      const n = nodes[j]!;
      let tau = 0;
      let nu = 0;
      const pn = nodeP[n]!;
      const hn = nodeH[n]!;
      for (let e = nodeHead[n]!; e !== -1; e = entryNext[e]!) {
        const slot = entrySlot[e]!;
        const o = entryOpp[e]!;
        if (o >= 0 && !probit) {
          // One against one, logistic: epSite written out, the cavities from the stored precisions.
          const other = entrySide[e] === 0 ? slot + 1 : slot - 1;
          let pi = pn - siteTau[slot]!;
          let hi = hn - siteNu[slot]!;
          if (!(pi > 1e-12)) {
            pi = pn;
            hi = hn;
          }
          let po = nodeP[o]! - siteTau[other]!;
          let ho = nodeH[o]! - siteNu[other]!;
          if (!(po > 1e-12)) {
            po = nodeP[o]!;
            ho = nodeH[o]!;
          }
          const vi = 1 / pi;
          const vo = 1 / po;
          const mi = hi * vi;
          const kappa = 1 / Math.sqrt(1 + pi8 * (vi + vo));
          const q = 1 / (1 + Math.exp(-kappa * (mi - ho * vo + entryOffset[e]!)));
          const beta = kappa * kappa * q * (1 - q);
          const shrink = 1 - beta * vi;
          if (shrink > 1e-9) {
            const inverse = 1 / shrink;
            siteTau[slot] = beta * inverse;
            siteNu[slot] = (kappa * (entryScore[e]! - q) + beta * mi) * inverse;
          }
        } else {
          const g = this.entryGame[e]!;
          if (this.gameRank[g]! >= 0) {
            this.epRanked(g, entrySide[e]!, slot, this.terms);
            tau += this.terms[0]!;
            nu += this.terms[1]!;
            continue;
          }
          this.epSite(g, slot);
        }
        tau += siteTau[slot]!;
        nu += siteNu[slot]!;
      }
      sumTau[j - from] = tau;
      sumNu[j - from] = nu;
    }
    // Forward: the past's message, times the node's own messages.
    for (let j = from; j < count; j++) {
      const n = nodes[j]!;
      let messageMean: number;
      let messageVariance: number;
      if (j === 0) {
        messageMean = 0;
        messageVariance = this.options.priorVariance;
      } else {
        const before = nodes[j - 1]!;
        messageMean = nodeMF[before]!;
        messageVariance = 1 / nodeF[before]! + w2 * (nodeDay[n]! - nodeDay[before]!);
      }
      const precision = 1 / messageVariance + sumTau[j - from]!;
      nodeF[n] = precision;
      nodeMF[n] = (messageMean / messageVariance + sumNu[j - from]!) / precision;
    }
    // Backward: the last node's posterior is its filter; each earlier one is corrected by the one after.
    let largest = 0;
    let nextMean = 0;
    let nextVariance = 0;
    for (let j = count - 1; j >= from; j--) {
      const n = nodes[j]!;
      const filterVariance = 1 / nodeF[n]!;
      let mean: number;
      let variance: number;
      if (j === count - 1) {
        mean = nodeMF[n]!;
        variance = filterVariance;
      } else {
        const predicted = filterVariance + w2 * (nodeDay[nodes[j + 1]!]! - nodeDay[n]!);
        const gain = filterVariance / predicted;
        mean = nodeMF[n]! + gain * (nextMean - nodeMF[n]!);
        variance = filterVariance + gain * gain * (nextVariance - predicted);
      }
      const moved = Math.abs(mean - nodeR[n]!);
      if (moved > largest) largest = moved;
      nodeR[n] = mean;
      nodeV[n] = variance;
      nodeP[n] = 1 / variance;
      nodeH[n] = mean / variance;
      nextMean = mean;
      nextVariance = variance;
    }
    return largest;
  }

  /** Expectation propagation over every player's whole timeline, until no mean moves more than `tolerance`. */
  private epConverge(tolerance: number, maxSweeps: number, options: WhrConvergeOptions): number {
    this.unfittedFrom = this.nodeCount;
    for (let sweep = 1; sweep <= maxSweeps; sweep++) {
      let moved = 0;
      for (let p = 0; p < this.players.length; p++) {
        const step = this.epSmooth(p, 0);
        if (step > moved) moved = step;
      }
      options.onSweep?.(sweep, moved);
      if (moved < tolerance) return sweep;
    }
    return maxSweeps;
  }

  /** A player's current skill estimate, or undefined for a player never seen. */
  estimate(id: string): WhrEstimate | undefined {
    const p = this.index.get(id);
    if (p === undefined) return undefined;
    const player = this.players[p]!;
    const last = player.nodes[player.nodes.length - 1]!;
    const out: WhrEstimate = { mean: this.nodeR[last]!, variance: this.ep ? this.nodeV[last]! : 1 / this.nodeF[last]!, day: this.nodeDay[last]!, matches: player.matches };
    if (player.lastAt !== undefined) out.lastAt = player.lastAt;
    return out;
  }

  /** Mean and variance of a player's skill on `day` (drifted forward from their last node; the prior for a new player). */
  skillAt(id: string, day: number, out: Float64Array): void {
    const p = this.index.get(id);
    if (p === undefined) {
      out[0] = 0;
      out[1] = this.options.priorVariance;
      return;
    }
    const nodes = this.players[p]!.nodes;
    const last = nodes[nodes.length - 1]!;
    const gap = day - this.nodeDay[last]!;
    out[0] = this.nodeR[last]!;
    out[1] = (this.ep ? this.nodeV[last]! : 1 / this.nodeF[last]!) + (gap > 0 ? this.w2 * gap : 0);
  }

  private readonly skill = new Float64Array(2);

  /** P(team 0 beats team 1) of a two-team match on the match's day, with `homeOffset` for its home team. */
  predictMatch(match: Match, homeOffset = 0): number {
    const day = this.dayOf(match.at);
    const strength = [0, 0];
    const variance = [0, 0];
    for (let t = 0; t < 2; t++) {
      const players = match.teams[t]!.players;
      for (const player of players) {
        this.skillAt(player.id, day, this.skill);
        strength[t]! += this.skill[0]!;
        variance[t]! += this.skill[1]!;
      }
      strength[t]! /= players.length;
      variance[t]! /= players.length * players.length;
    }
    const offset = match.home === 0 ? homeOffset : match.home === 1 ? -homeOffset : 0;
    return whrWinProbability(strength[0]! - strength[1]! + offset, this.options.integrate ? variance[0]! + variance[1]! : 0, this.options.link);
  }

  /** A player's whole timeline: day and skill of each node (for plots and tests). */
  timeline(id: string): Array<{ day: number; mean: number }> {
    const p = this.index.get(id);
    if (p === undefined) return [];
    return this.players[p]!.nodes.map((n) => ({ day: this.nodeDay[n]!, mean: this.nodeR[n]! }));
  }
}

/** The `whr` rating system: a RatingSystem that keeps the whole history inside it. */
export interface WhrSystem extends WholeHistorySystem {
  readonly options: ResolvedWhrOptions;
  /** Every match rated so far, and the skills. */
  readonly history: WhrHistory;
}

/**
 * Wraps a WhrHistory as a RatingSystem. Unlike the other systems, it is
 * stateful: each `ratePeriod`/`rateMatch` call adds its matches to the
 * system's own history, so one system object rates one log, in time order,
 * and `states` is read only for each player's `before`. A period of matches
 * without `at` is one day of the Wiener process (one period).
 */
export function createWhrSystem(options: WhrOptions = {}): WhrSystem {
  const history = new WhrHistory(options);
  const o = history.options;
  const initial = (): PlayerState => ({ rating: o.rating, rd: Math.sqrt(o.priorVariance) * WHR_SCALE, matches: 0 });
  const stateOf = (id: string): PlayerState | undefined => {
    const estimate = history.estimate(id);
    if (!estimate) return undefined;
    const state: PlayerState = { rating: o.rating + estimate.mean * WHR_SCALE, rd: Math.sqrt(estimate.variance) * WHR_SCALE, matches: estimate.matches };
    if (estimate.lastAt !== undefined) state.lastAt = estimate.lastAt;
    return state;
  };
  const ratePeriod: WholeHistorySystem['ratePeriod'] = (matches, states) => {
    const befores = new Map<string, PlayerState>();
    let untimedDay: number | undefined;
    for (const match of matches) {
      for (const team of match.teams) {
        for (const { id } of team.players) if (!befores.has(id)) befores.set(id, states.get(id) ?? stateOf(id) ?? initial());
      }
      if (match.at === undefined) untimedDay ??= history.dayOf(undefined);
      history.addMatch(match, 0, match.at === undefined ? untimedDay : history.dayOf(match.at));
    }
    return matches.map(
      (match): MatchRating => ({
        ...(match.id !== undefined ? { matchId: match.id } : {}),
        players: match.teams.flatMap((team, t) =>
          team.players.map(({ id }) => {
            const after = stateOf(id)!;
            const before = befores.get(id)!;
            return { id, team: t, before, after, terms: { change: after.rating - before.rating } };
          }),
        ),
      }),
    );
  };
  const toSkill = (state: PlayerState): [number, number] => [(state.rating - o.rating) / WHR_SCALE, ((state.rd ?? Math.sqrt(o.priorVariance) * WHR_SCALE) / WHR_SCALE) ** 2];
  return {
    name: 'whr',
    options: o,
    history,
    initial,
    ratePeriod,
    rateMatch: (match, states) => ratePeriod([match], states)[0]!,
    predict: (teams) => {
      const skills = teams.map((team) => {
        let mean = 0;
        let variance = 0;
        for (const player of team) {
          const [m, v] = toSkill(player);
          mean += m;
          variance += v;
        }
        return [mean / team.length, variance / (team.length * team.length)] as const;
      });
      return predictFromPairs(teams.length, (a, b) => whrWinProbability(skills[a]![0] - skills[b]![0], o.integrate ? skills[a]![1] + skills[b]![1] : 0, o.link));
    },
    idle: (state, periods) => {
      if (!(periods > 0)) return state;
      const rd = state.rd ?? Math.sqrt(o.priorVariance) * WHR_SCALE;
      return { ...state, rd: Math.sqrt(rd * rd + o.dailyVariance * periods * WHR_SCALE * WHR_SCALE) };
    },
    states: () => {
      const out = new Map<string, PlayerState>();
      for (const id of history.playerIds()) out.set(id, stateOf(id)!);
      return out;
    },
    takeMoved: () => {
      const out = new Map<string, PlayerState>();
      for (const id of history.takeMoved()) out.set(id, stateOf(id)!);
      return out;
    },
  };
}

/** Whole-History Rating in the registry. */
export const WHR = defineSystem({
  name: 'whr',
  label: 'Whole-History Rating',
  summary: "Coulom's Whole-History Rating: Gaussian skills drifting as a Wiener process, every player's whole timeline smoothed by Newton's method.",
  options: WHR_OPTIONS,
  capabilities: {
    teams: true,
    draws: true,
    multiTeam: true,
    ratingPeriods: false,
    idleGrowth: true,
    homeAdvantage: true,
    fastPath: false,
    needsScores: false,
    rounds: false,
    wholeHistory: true,
    deviation: true,
  },
  display: { quantity: 'rating', decimals: 1, scale: 'elo' },
  fit: {
    parameters: [
      { name: 'dailyVariance', min: 0.0002, max: 0.05, initial: 0.0025 },
      { name: 'priorVariance', min: 0.05, max: 5, initial: 0.6 },
    ],
    byDefault: ['dailyVariance', 'priorVariance'],
  },
  dashboard: {
    terms: [],
    explanation:
      "Whole-History Rating re-estimates the past: each new result also corrects the earlier estimates of the players in it and of their opponents, so a rating can move between a player's own matches.",
    performanceRuns: false,
  },
  // A whr ladder keeps every match in memory and re-smooths each of its players' windows when the day
  // closes: a match's cost and memory grow with its players (a 64-player free-for-all: about 6 KB).
  ladder: { teamSize: 1, matchLimits: { teams: 64, playersPerTeam: 64, players: 256 } },
  create: createWhrSystem,
  // The whole log at once: every match added, then every timeline smoothed to the MAP.
  rateLog: (matches, options) => {
    const system = createWhrSystem(options);
    system.history.addMatches(matches);
    system.history.converge();
    return system.states();
  },
  // Each match predicted from the skills as they stand (every earlier match
  // learnt, the day's earlier matches included), then added. The
  // RatingSystem view would give the same predictions for the match's
  // players, but the re-smoothing of a closed day moves players outside
  // the match, whose states a Replay would not see.
  online: (options, homeAdvantage) => {
    const history = new WhrHistory(options);
    const homeOffset = homeAdvantage / WHR_SCALE;
    return {
      predict: (match) => {
        // A new day closes the previous one first, so the prediction sees it smoothed.
        history.prepare(match);
        return history.predictMatch(match, homeOffset);
      },
      learn: (match) => history.addMatch(match, homeOffset),
      known: (id) => history.has(id),
    };
  },
});
