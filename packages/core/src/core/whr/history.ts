/**
 * The history a Whole-History Rating keeps: players, their nodes (one per
 * player per day), the games between sides of nodes and the adjacency from
 * nodes to games; adding matches, closing days, and reading estimates and
 * predictions. How the skills are inferred is left to the layers above:
 * mode.ts (Newton's method to the posterior's mode), ep.ts (expectation
 * propagation), and inference.ts, whose WhrHistory picks one of them.
 */
import { InvalidInputError } from '../errors.js';
import { type Match, pairScore, teamPlacements } from '../match.js';
import { whrWinProbability } from './link.js';
import { type ResolvedWhrOptions, resolveWhrOptions, type WhrOptions } from './options.js';

/** Timelines a stepped close of a day (`closingDay`) smooths between two of its steps: a fraction of a millisecond. */
const CLOSE_SLICE = 16;

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
  /** A context deviation under `contextInference: 'joint'`: its covariance with the player's general skill (natural units²). */
  covariance?: number;
}

/**
 * `array`, or a copy a quarter as long again (at least `needed`): a history's
 * arrays are most of its memory, and doubling would leave up to half of them
 * unused (a fifth at most here, for a copy every quarter's growth).
 */
export function grow<T extends Float64Array | Int32Array | Uint8Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const size = Math.max(needed, Math.ceil(array.length * 1.25));
  const bigger = new (array.constructor as { new (n: number): T })(size);
  bigger.set(array);
  return bigger;
}

/** A timeline's frozen past (see horizon.ts): the skill, or a context deviation, N(mean, variance) on `day`, the prior of its first node after it. */
export interface WhrPrior {
  mean: number;
  variance: number;
  day: number;
}

export interface Player {
  /**
   * The timeline's nodes (global node ids) in time order: timelineNodes[nodeStart … nodeStart + nodeLength), with room
   * for nodeRoom (see `appendNode`; `nodeAt` and `lastNode` read them).
   */
  nodeStart: number;
  nodeLength: number;
  nodeRoom: number;
  matches: number;
  lastAt: number | undefined;
  /** Mark: the day on which the player was last put on the touched list. */
  touchedDay: number;
  /** The day for which the player's timeline was last brought up to date before a match (see `prepare`). */
  preparedDay: number;
  /** The timeline's prior variance and drift per period: σ0² and w² for a general skill, σc² and wc² for a context deviation. */
  priorVariance: number;
  w2: number;
  /** A context deviation's player (the index of their general timeline); −1 for a general skill. */
  owner: number;
  /** A general skill's deviation timelines by context (their indices), once the player has played in one. */
  contexts?: Map<string, number>;
  /** A context deviation's context (undefined for a general skill). */
  context: string | undefined;
  /** The prior of the first node: N(0, σ0²) when undefined, else the player's frozen past drifted to the node's day. */
  prior: WhrPrior | undefined;
  /** With `newcomerMean` (a general skill only): the entry group the player entered in, whose mean first skill their first node adds to. */
  entry?: number;
  /** The day of the timeline's first node ever (kept through a freeze): `newcomerTrend` counts from it. */
  start?: number;
  /**
   * `contextInference: 'joint'`, a context deviation: its posterior covariance with its player's general skill at the
   * general timeline's last node (a later day adds independent drift to each, so the covariance holds on). Absent: 0.
   */
  lastCov?: number;
  /**
   * `contextInference: 'joint'`, a deviation of a frozen joint prior with no node since: its posterior on the general
   * timeline's last node's day (games in other contexts move it through the covariances), which estimates and
   * predictions read instead of the prior.
   */
  lastState?: WhrPrior;
  /**
   * `contextInference: 'joint'`, a general skill with deviations: the joint Kalman filter (mean and covariance of the
   * general skill and the deviations) at every JOINT_CHECKPOINT-th node of the last `window` or so, by node position
   * (see joint.ts): a smoother over the last nodes starts its forward pass from the one before them.
   */
  checkpoints?: Map<number, Float64Array>;
  /**
   * `contextInference: 'joint'`, a general skill frozen with deviations (horizon.ts): the frozen state of the general
   * skill and those deviations on the freeze `day`, mean and covariance (row-major, general skill first), of which
   * `prior` and each deviation's `prior` are the marginals.
   */
  jointPrior?: { day: number; components: number[]; mean: Float64Array; cov: Float64Array };
}

/**
 * The whole history of a population: nodes (one per player per day), games
 * between sides of nodes, and each node's skill (nodeR) and forward
 * precision (nodeF). `smooth` is the inference's one pass over a timeline.
 */
export abstract class WhrHistoryBase {
  readonly options: ResolvedWhrOptions;
  protected readonly index = new Map<string, number>();
  /** The player of each timeline (a context deviation's is its player's). */
  protected readonly ids: string[] = [];
  /** The players, each once, in the order first seen, and the index of each one's general timeline. */
  protected readonly generalIds: string[] = [];
  protected readonly generalTimelines: number[] = [];
  protected readonly players: Player[] = [];
  // Nodes.
  protected nodeCount = 0;
  /**
   * The timelines' node lists, each a run of this pool (Player.nodeStart): kept in JavaScript arrays, one per
   * timeline, they were about 13 bytes a node of the collected heap; here 4 to 8 outside it.
   */
  protected timelineNodes = new Int32Array(4096);
  /** Where the pool's unused tail starts, and how much room before it lists that moved left behind. */
  protected timelineNodesEnd = 0;
  protected timelineNodesUnused = 0;
  protected nodeR = new Float64Array(1024);
  /** The node's period (an integer, within 32 bits: `dayOf` refuses any other). */
  protected nodeDay = new Int32Array(1024);
  /** Forward (filter) precision: the node's games plus the message from the player's past. */
  protected nodeF = new Float64Array(1024);
  protected nodeHead = new Int32Array(1024);
  /**
   * Expectation propagation only (empty under `map`, where they would be
   * two fifths of a node's memory): the filter's mean, and the smoothed
   * (posterior) precision 1/v; nodeR is then the posterior mean. The
   * cavities read the precision and precision × mean, and estimates the
   * variance: precision × mean is computed where it is read (a product),
   * and so is the variance (a division: estimates, and a game's pair of
   * nodes in a context), since keeping all three was 16 bytes more a node.
   */
  protected nodeMF = new Float64Array(1024);
  protected nodeP = new Float64Array(1024);
  /**
   * `contextInference: 'joint'` only (empty otherwise): a deviation node's posterior covariance with its player's
   * general node of the same day, so that a game's cavity of the skill in its context, general + deviation, has the
   * variance of the sum.
   */
  protected nodeCov = new Float64Array(0);
  // Adjacency entries: node → (game, side), a linked list. Entry e is game slot e (gameNodes[e]): `addEntry` keeps them in step.
  protected entryCount = 0;
  protected entryGame = new Int32Array(4096);
  protected entrySide = new Int32Array(4096);
  protected entryNext = new Int32Array(4096);
  /**
   * One-against-one games: the opponent's node (else −1). The side's score
   * and home offset are its game's, turned for side B (`entryScore`,
   * `entryOffset`), not kept per entry: an entry is 16 bytes.
   */
  protected entryOpp = new Int32Array(4096);
  /** Whether any game has a home offset (until then every game's is 0, gameOffset is empty and the hot loops read none). */
  protected offsets = false;
  // Games: side A = gameNodes[start, split), side B = gameNodes[split, end).
  // A ranked game (a match of three or more teams, see addRankedGame) holds
  // its teams in rank order in gameNodes[start, end); its entries' side is
  // the team's place in that order.
  protected gameCount = 0;
  protected gameStart = new Int32Array(1024);
  protected gameSplit = new Int32Array(1024);
  protected gameEnd = new Int32Array(1024);
  protected gameScore = new Float64Array(1024);
  /** Each game's home offset, from the first game that has one (`offsets`): empty before, since most histories have none and it is 8 bytes a game. Read through `gameOffsetOf`. */
  protected gameOffset = new Float64Array(0);
  /** A ranked game's first index into rankBound/rankScore/rankOffset; −1 for a game of two sides. */
  protected gameRank = new Int32Array(1024);
  /** Nodes per player in the game: 2 for a game in a context (each player's general node and deviation node), else 1. */
  protected gamePerPlayer = new Uint8Array(1024);
  /** With `newcomerMean`: the entry groups (by the context of a player's first match; one group for `entrants`), and each group's sum and count of first-node means. */
  protected readonly entryGroups = new Map<string, number>();
  protected entrySum: number[] = [];
  protected entrants: number[] = [];
  /**
   * With a horizon only (empty otherwise): the day each game was added on (the day its match was
   * given, which a late match's folded nodes may not show): a freeze keeps the games of days after
   * it and replays them on these days (horizon.ts).
   */
  protected gameDay = new Int32Array(0);
  /**
   * With a horizon and `newcomerMean: 'context'` but no context deviations (whose games keep their context in
   * their deviation nodes): each game's match context, so that a freeze replays its newcomers into the same entry groups.
   */
  protected readonly gameContext: (string | undefined)[] = [];
  protected gameNodeCount = 0;
  protected gameNodes = new Int32Array(4096);
  /**
   * Ranked games, team by team in rank order: where team t starts in
   * gameNodes (and, one past the last team, where the game ends), and
   * whether team t is tied with team t + 1 (a draw; else team t won). A
   * ranked game's home team (its place in rank order, −1 for none) is kept
   * in gameScore and the home offset in gameOffset.
   */
  protected rankCount = 0;
  protected rankBound = new Int32Array(256);
  protected rankTie = new Uint8Array(256);
  /** The team at each place's index in the match as given (a replay after a freeze, horizon.ts, gives the teams back in that order). */
  protected rankOrigin = new Int32Array(256);
  /**
   * Expectation propagation only: each game slot's Gaussian message to its
   * node, as precision and precision × mean. In a ranked game, siteTau/siteNu
   * hold the message of the comparison with the team below and siteTauUp/siteNuUp
   * that of the comparison with the team above.
   */
  protected siteTau = new Float64Array(4096);
  protected siteNu = new Float64Array(4096);
  protected siteTauUp = new Float64Array(0);
  protected siteNuUp = new Float64Array(0);
  /** The latest period seen. */
  protected day = -Infinity;
  /** Players whose skills moved since the last `takeMoved` (a flag per player, and the list in order). */
  protected movedFlag = new Uint8Array(64);
  protected movedList: number[] = [];
  protected touched: number[] = [];
  // Scratch for the tridiagonal solve.
  protected a = new Float64Array(256);
  protected b = new Float64Array(256);
  protected c = new Float64Array(256);
  protected dp = new Float64Array(256);
  protected y = new Float64Array(256);
  protected scratchR = new Float64Array(256);
  protected readonly probit: boolean;
  protected readonly ep: boolean;
  protected readonly priorPrecision: number;
  protected readonly w2: number;
  /** Whether a match's `context` adds each player's deviation in it (contextPriorVariance > 0). */
  protected readonly contextual: boolean;
  /** Whether the deviations are smoothed jointly with their player's general skill (contextual and `contextInference: 'joint'`). */
  protected readonly joint: boolean;

  constructor(options: WhrOptions = {}) {
    this.options = resolveWhrOptions(options);
    this.probit = this.options.link === 'probit';
    this.ep = this.options.inference === 'ep';
    this.contextual = this.options.contextPriorVariance > 0;
    this.joint = this.contextual && this.options.contextInference === 'joint';
    if (this.joint) this.nodeCov = new Float64Array(this.nodeR.length);
    if (this.contextual && !this.ep) {
      throw new InvalidInputError("whr: contextPriorVariance needs inference 'ep' (the posterior's mode has no context deviations); set contextPriorVariance 0 or inference 'ep'", {
        field: 'contextPriorVariance',
      });
    }
    if (this.options.newcomerTrend > 0 && !this.ep) {
      throw new InvalidInputError("whr: newcomerTrend needs inference 'ep'; set newcomerTrend 0 or inference 'ep'", { field: 'newcomerTrend' });
    }
    if (this.options.newcomerMean !== 'zero' && !this.ep) {
      throw new InvalidInputError("whr: newcomerMean needs inference 'ep'; set newcomerMean 'zero' or inference 'ep'", { field: 'newcomerMean' });
    }
    this.priorPrecision = 1 / this.options.priorVariance;
    this.w2 = this.options.dailyVariance;
    if (!this.ep) {
      // Only expectation propagation reads these: without them a node costs 24 bytes, not 40.
      this.nodeMF = new Float64Array(0);
      this.nodeP = new Float64Array(0);
      this.siteTau = new Float64Array(0);
      this.siteNu = new Float64Array(0);
    }
  }

  get playerCount(): number {
    return this.generalIds.length;
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
    return this.generalIds;
  }

  /** The period a match falls in: from `at`, else the period after the latest one. */
  dayOf(at: number | undefined): number {
    if (at === undefined) return Number.isFinite(this.day) ? this.day + 1 : 0;
    const day = Math.floor(at / this.options.periodMs);
    // Periods are kept in 32 bits (4 bytes a node and a game less than a double): 2^31 days, or seconds to 2038.
    if (!(day >= -0x80000000 && day <= 0x7fffffff)) {
      throw new InvalidInputError(`whr: a match's time ${at} is period ${day} of ${this.options.periodMs} ms, beyond the ±2^31 periods a history keeps; use a longer periodMs`, {
        field: 'at',
      });
    }
    return day;
  }

  protected playerIndex(id: string): number {
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.newTimeline(id, this.options.priorVariance, this.w2, -1);
      this.index.set(id, i);
      this.generalIds.push(id);
      this.generalTimelines.push(i);
      this.noteMoved(i);
    }
    return i;
  }

  /** The entry group of a match's newcomers (`newcomerMean`), created on first use; −1 with `newcomerMean: 'zero'`. */
  protected entryGroup(context: string | undefined, create: boolean): number {
    const mode = this.options.newcomerMean;
    if (mode === 'zero') return -1;
    const key = mode === 'context' ? (context ?? '') : '';
    let g = this.entryGroups.get(key);
    if (g === undefined) {
      if (!create) return -1;
      g = this.entrySum.length;
      this.entryGroups.set(key, g);
      this.entrySum.push(0);
      this.entrants.push(0);
    }
    return g;
  }

  /** A newcomer's prior mean in entry group g: the mean first skill of the group's earlier entrants (0 for the first). */
  protected entryMean(g: number): number {
    return g >= 0 && this.entrants[g]! > 0 ? this.entrySum[g]! / this.entrants[g]! : 0;
  }

  /**
   * The expected rise of timeline p's skill from period t1 to t2
   * (`newcomerTrend` a, `newcomerTrendPeriods` τ), t counted from its first
   * node's day t0 (before a freeze, for a frozen player): a·τ·(e^(−(t1 − t0)/τ)
   * − e^(−(t2 − t0)/τ)). 0 for a context deviation, a timeline that never
   * had a node, or without a trend.
   */
  protected trend(p: number, t1: number, t2: number): number {
    const a = this.options.newcomerTrend;
    if (a === 0) return 0;
    const timeline = this.players[p]!;
    const t0 = timeline.start;
    if (timeline.owner >= 0 || t0 === undefined || !(t2 > t1)) return 0;
    const tau = this.options.newcomerTrendPeriods;
    return a * tau * (Math.exp(-(t1 - t0) / tau) - Math.exp(-(t2 - t0) / tau));
  }

  private newTimeline(id: string, priorVariance: number, w2: number, owner: number, context?: string): number {
    const i = this.players.length;
    this.ids.push(id);
    this.players.push({
      nodeStart: 0,
      nodeLength: 0,
      nodeRoom: 0,
      matches: 0,
      lastAt: undefined,
      touchedDay: -Infinity,
      preparedDay: -Infinity,
      priorVariance,
      w2,
      owner,
      context,
      prior: undefined,
    });
    if (i >= this.movedFlag.length) {
      const flags = new Uint8Array(this.movedFlag.length * 2);
      flags.set(this.movedFlag);
      this.movedFlag = flags;
    }
    return i;
  }

  /** The timeline of player p's deviation in `context` (created at its prior on first use). */
  protected deviationIndex(p: number, context: string): number {
    const player = this.players[p]!;
    player.contexts ??= new Map();
    let d = player.contexts.get(context);
    if (d === undefined) {
      d = this.newTimeline(this.ids[p]!, this.options.contextPriorVariance, this.options.contextDailyVariance, p, context);
      player.contexts.set(context, d);
    }
    return d;
  }

  /** Marks a timeline's player as moved (a context deviation moves its player's skill in that context). */
  protected noteMoved(timeline: number): void {
    const owner = this.players[timeline]!.owner;
    const p = owner >= 0 ? owner : timeline;
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

  protected noteAllMoved(): void {
    for (let p = 0; p < this.players.length; p++) this.noteMoved(p);
  }

  /** Scratch for `firstPrior`'s mean and variance. */
  protected readonly prior = new Float64Array(2);

  /**
   * The prior of player p's first node, on `day`: mean into out[0] and
   * variance into out[1]. N(0, σ0²), but for a player whose past was frozen
   * (horizon.ts): their frozen skill, drifted from the freeze to `day` (and
   * risen by the learning curve, `newcomerTrend`; for an entrant of
   * `newcomerMean`, whose prior is on their first day, no rise).
   */
  protected firstPrior(p: number, day: number, out: Float64Array): void {
    const timeline = this.players[p]!;
    const prior = timeline.prior;
    if (prior === undefined) {
      // σ0² for a general skill, σc² for a context deviation.
      out[0] = 0;
      out[1] = timeline.priorVariance;
      return;
    }
    out[0] = prior.mean + (day > prior.day ? this.trend(p, prior.day, day) : 0);
    out[1] = prior.variance + (day > prior.day ? timeline.w2 * (day - prior.day) : 0);
  }

  /** The player's node for `day` (a late day is folded into the player's last node). */
  protected nodeFor(p: number, day: number): number {
    const player = this.players[p]!;
    const previous = this.lastNode(player);
    if (previous >= 0 && this.nodeDay[previous]! >= day) return previous;
    const n = this.nodeCount++;
    if (n >= this.nodeR.length) {
      const size = n + 1;
      this.nodeR = grow(this.nodeR, size);
      this.nodeDay = grow(this.nodeDay, size);
      this.nodeF = grow(this.nodeF, size);
      this.nodeHead = grow(this.nodeHead, size);
      this.growEpNodes(this.nodeR.length);
    }
    player.start ??= day;
    if (previous < 0) this.firstPrior(p, day, this.prior);
    // The expected rise since the node before (newcomerTrend; 0 without).
    const rise = previous >= 0 ? this.trend(p, this.nodeDay[previous]!, day) : 0;
    this.nodeR[n] = previous >= 0 ? this.nodeR[previous]! + rise : this.prior[0]!;
    this.nodeDay[n] = day;
    this.nodeF[n] = previous >= 0 ? 1 / (1 / this.nodeF[previous]! + player.w2 * (day - this.nodeDay[previous]!)) : 1 / this.prior[1]!;
    this.nodeHead[n] = -1;
    if (this.ep) {
      // With no message of its own yet, the node's filter and posterior are the past's message.
      this.nodeMF[n] = previous >= 0 ? this.nodeMF[previous]! + rise : this.prior[0]!;
      this.nodeP[n] = this.nodeF[n]!;
      // A deviation's covariance with the general skill carries over from the general timeline's last node.
      if (this.joint) this.nodeCov[n] = player.lastCov ?? 0;
    }
    this.appendNode(player, n);
    return n;
  }

  /** The timeline's j-th node. */
  protected nodeAt(timeline: Player, j: number): number {
    return this.timelineNodes[timeline.nodeStart + j]!;
  }

  /** The timeline's last node (−1: none yet). */
  protected lastNode(timeline: Player): number {
    return timeline.nodeLength > 0 ? this.timelineNodes[timeline.nodeStart + timeline.nodeLength - 1]! : -1;
  }

  /**
   * Appends node n to the timeline's list. A full list moves to the end of
   * the pool with twice the room (a list already at the end grows in place),
   * leaving its old room unused; once a quarter of the pool is unused, every
   * list is packed again (`packNodeLists`).
   */
  private appendNode(timeline: Player, n: number): void {
    if (timeline.nodeLength === timeline.nodeRoom) {
      const room = Math.max(4, 2 * timeline.nodeRoom);
      if (timeline.nodeRoom > 0 && timeline.nodeStart + timeline.nodeRoom === this.timelineNodesEnd) {
        this.timelineNodes = grow(this.timelineNodes, timeline.nodeStart + room);
      } else {
        if (this.timelineNodesUnused > 4096 && 4 * this.timelineNodesUnused > this.timelineNodesEnd) this.packNodeLists();
        this.timelineNodes = grow(this.timelineNodes, this.timelineNodesEnd + room);
        this.timelineNodes.copyWithin(this.timelineNodesEnd, timeline.nodeStart, timeline.nodeStart + timeline.nodeLength);
        this.timelineNodesUnused += timeline.nodeRoom;
        timeline.nodeStart = this.timelineNodesEnd;
      }
      this.timelineNodesEnd = timeline.nodeStart + room;
      timeline.nodeRoom = room;
    }
    this.timelineNodes[timeline.nodeStart + timeline.nodeLength++] = n;
  }

  /** Packs every timeline's list to the front of a new pool, in timeline order, each with its room. */
  private packNodeLists(): void {
    let used = 0;
    for (const timeline of this.players) used += timeline.nodeRoom;
    const pool = new Int32Array(Math.max(4096, Math.ceil(used * 1.25)));
    let at = 0;
    for (const timeline of this.players) {
      pool.set(this.timelineNodes.subarray(timeline.nodeStart, timeline.nodeStart + timeline.nodeLength), at);
      timeline.nodeStart = at;
      at += timeline.nodeRoom;
    }
    this.timelineNodes = pool;
    this.timelineNodesEnd = at;
    this.timelineNodesUnused = 0;
  }

  /** Empties the timelines' lists (the history is cleared), the pool kept for reuse. */
  protected clearNodeLists(): void {
    this.timelineNodesEnd = 0;
    this.timelineNodesUnused = 0;
  }

  /** Room for `size` nodes in the arrays only expectation propagation keeps. */
  protected growEpNodes(size: number): void {
    if (!this.ep) return;
    this.nodeMF = grow(this.nodeMF, size);
    this.nodeP = grow(this.nodeP, size);
    if (this.joint) this.nodeCov = grow(this.nodeCov, size);
  }

  /**
   * Entry e's score in a game of two sides: its game's for side A, 1 − that for side B. Read from the game, not kept per
   * entry: 16 bytes a one-on-one match.
   */
  protected entryScore(e: number): number {
    const score = this.gameScore[this.entryGame[e]!]!;
    return this.entrySide[e] === 0 ? score : 1 - score;
  }

  /** Entry e's home offset: its game's for side A, its negation for side B. */
  protected entryOffset(e: number): number {
    if (!this.offsets) return 0;
    const offset = this.gameOffset[this.entryGame[e]!]!;
    return this.entrySide[e] === 0 ? offset : -offset;
  }

  protected addEntry(node: number, game: number, side: number, slot: number): void {
    const e = this.entryCount++;
    if (e >= this.entryGame.length) {
      const size = e + 1;
      this.entryGame = grow(this.entryGame, size);
      this.entrySide = grow(this.entrySide, size);
      this.entryNext = grow(this.entryNext, size);
      this.entryOpp = grow(this.entryOpp, size);
    }
    this.entryGame[e] = game;
    this.entrySide[e] = side;
    const oneOnOne = this.gameSplit[game]! - this.gameStart[game]! === 1 && this.gameEnd[game]! - this.gameSplit[game]! === 1;
    this.entryOpp[e] = oneOnOne ? this.gameNodes[side === 0 ? this.gameSplit[game]! : this.gameStart[game]!]! : -1;
    // An entry is its slot: every game adds one entry per slot, in slot order, and a freeze empties both lists together.
    if (slot !== e) throw new Error(`whr: entry ${e} added for slot ${slot}`);
    this.entryNext[e] = this.nodeHead[node]!;
    this.nodeHead[node] = e;
  }

  /** Room for the messages of every game slot (zero: no message yet). */
  protected growSites(): void {
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
  protected newGame(): number {
    const g = this.gameCount++;
    if (g >= this.gameStart.length) {
      const size = g + 1;
      this.gameStart = grow(this.gameStart, size);
      this.gameSplit = grow(this.gameSplit, size);
      this.gameEnd = grow(this.gameEnd, size);
      this.gameScore = grow(this.gameScore, size);
      if (this.offsets) this.gameOffset = grow(this.gameOffset, size);
      this.gameRank = grow(this.gameRank, size);
      this.gamePerPlayer = grow(this.gamePerPlayer, size);
    }
    if (this.options.horizon > 0) this.gameDay = grow(this.gameDay, this.gameStart.length);
    this.gameRank[g] = -1;
    this.gamePerPlayer[g] = 1;
    return g;
  }

  /** Game g's home offset (0 while no game has one). */
  protected gameOffsetOf(g: number): number {
    return this.offsets ? this.gameOffset[g]! : 0;
  }

  /** Sets game g's home offset, making the column at the first offset that is not 0. */
  protected setGameOffset(g: number, offset: number): void {
    if (!this.offsets) {
      if (offset === 0) return;
      this.offsets = true;
      // The games before it had none: zeros.
      this.gameOffset = new Float64Array(this.gameStart.length);
    }
    this.gameOffset[g] = offset;
  }

  protected addGame(sideA: readonly number[], sideB: readonly number[], score: number, offset: number, perPlayer = 1): void {
    const g = this.newGame();
    this.gamePerPlayer[g] = perPlayer;
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + sideA.length + sideB.length);
    this.gameStart[g] = this.gameNodeCount;
    for (const n of sideA) this.gameNodes[this.gameNodeCount++] = n;
    this.gameSplit[g] = this.gameNodeCount;
    for (const n of sideB) this.gameNodes[this.gameNodeCount++] = n;
    this.gameEnd[g] = this.gameNodeCount;
    this.gameScore[g] = score;
    this.setGameOffset(g, offset);
    this.growSites();
    for (let i = this.gameStart[g]!; i < this.gameEnd[g]!; i++) this.addEntry(this.gameNodes[i]!, g, i < this.gameSplit[g]! ? 0 : 1, i);
  }

  protected addGame1v1(na: number, nb: number, score: number, offset: number): void {
    const g = this.newGame();
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + 2);
    this.gameStart[g] = this.gameNodeCount;
    this.gameNodes[this.gameNodeCount++] = na;
    this.gameSplit[g] = this.gameNodeCount;
    this.gameNodes[this.gameNodeCount++] = nb;
    this.gameEnd[g] = this.gameNodeCount;
    this.gameScore[g] = score;
    this.setGameOffset(g, offset);
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
  protected addRankedGame(teams: readonly (readonly number[])[], ties: readonly boolean[], home: number, homeOffset: number, origin: readonly number[], perPlayer = 1): void {
    const g = this.newGame();
    this.gamePerPlayer[g] = perPlayer;
    let players = 0;
    for (const team of teams) players += team.length;
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + players);
    const b = this.rankCount;
    this.rankCount += teams.length + 1;
    if (this.rankCount > this.rankBound.length) {
      this.rankBound = grow(this.rankBound, this.rankCount);
      this.rankTie = grow(this.rankTie, this.rankCount);
      this.rankOrigin = grow(this.rankOrigin, this.rankCount);
    }
    this.gameRank[g] = b;
    this.gameStart[g] = this.gameNodeCount;
    // No side A: addEntry then sees no one-against-one game.
    this.gameSplit[g] = this.gameNodeCount;
    this.gameScore[g] = home;
    this.setGameOffset(g, homeOffset);
    for (let t = 0; t < teams.length; t++) {
      this.rankBound[b + t] = this.gameNodeCount;
      this.rankTie[b + t] = ties[t] === true ? 1 : 0;
      this.rankOrigin[b + t] = origin[t]!;
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

  /** The home offset of a ranked game's comparison of team t with team t + 1, from team t's side. */
  protected rankedOffset(g: number, t: number): number {
    const home = this.gameScore[g]!;
    return home === t ? this.gameOffsetOf(g) : home === t + 1 ? -this.gameOffsetOf(g) : 0;
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
      if (!this.deferred) this.closeDay(day);
      this.day = day;
    }
    const placements = teamPlacements(match);
    const context = this.contextual ? match.context : undefined;
    // In a context, each player is two nodes, general skill then deviation, with the same coefficient.
    const perPlayer = context === undefined ? 1 : 2;
    const involved: number[] = [];
    const noteTimeline = (p: number, nodeDay = day): number => {
      const state = this.players[p]!;
      state.matches++;
      if (match.at !== undefined && (state.lastAt === undefined || match.at > state.lastAt)) state.lastAt = match.at;
      if (state.touchedDay !== this.day) {
        state.touchedDay = this.day;
        this.touched.push(p);
      }
      involved.push(p);
      return this.nodeFor(p, nodeDay);
    };
    const teamNodes = match.teams.map((team) => {
      const nodes: number[] = [];
      for (const player of team.players) {
        const entrant = this.options.newcomerMean !== 'zero' && !this.index.has(player.id);
        const p = this.playerIndex(player.id);
        if (entrant) {
          // Enters at the mean first skill of the earlier entrants of the group, and counts in it from now on.
          const g = this.entryGroup(match.context, true);
          this.players[p]!.prior = { mean: this.entryMean(g), variance: this.options.priorVariance, day };
          this.players[p]!.entry = g;
          this.entrySum[g]! += this.entryMean(g);
          this.entrants[g]!++;
        }
        const general = noteTimeline(p);
        nodes.push(general);
        // Jointly smoothed, a deviation's node is on its general node's day (a late match's may be folded into a later one).
        if (context !== undefined) nodes.push(noteTimeline(this.deviationIndex(p, context), this.joint ? this.nodeDay[general]! : day));
      }
      return nodes;
    });
    if (match.teams.length === 2) {
      const offset = match.home === 0 ? homeOffset : match.home === 1 ? -homeOffset : 0;
      this.addGame(teamNodes[0]!, teamNodes[1]!, pairScore(placements, 0, 1), offset, perPlayer);
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
        order,
        perPlayer,
      );
    }
    if (this.gameDay.length > 0) this.gameDay[this.gameCount - 1] = day;
    if (this.gameDay.length > 0 && !this.contextual && this.options.newcomerMean === 'context') this.gameContext[this.gameCount - 1] = match.context;
    if (this.deferred) return;
    for (let round = 0; round < 2; round++) {
      for (const p of involved) this.smooth(p, this.players[p]!.nodeLength - 1);
    }
  }

  /** One pass over nodes [from, end) of player p's timeline: a Newton step (MAP) or the messages and the smoother (EP). */
  protected abstract smooth(p: number, from: number): number;

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
    if (day > this.day) {
      this.beforeDay(day);
      this.closeDay(day);
    }
    const { window, refresh } = this.options;
    if (refresh === 0) return;
    for (const team of match.teams) {
      for (const player of team.players) {
        const p = this.index.get(player.id);
        if (p === undefined) continue;
        this.refreshTimeline(p, day, window, refresh);
        const deviation = this.contextual && match.context !== undefined ? this.players[p]!.contexts?.get(match.context) : undefined;
        if (deviation !== undefined) this.refreshTimeline(deviation, day, window, refresh);
      }
    }
  }

  /** `prepare` for one timeline: its last `window` nodes re-smoothed `refresh` times, once a day, if it has not played on `day` yet. */
  private refreshTimeline(p: number, day: number, window: number, refresh: number): void {
    const state = this.players[p]!;
    if (state.preparedDay >= day) return;
    state.preparedDay = day;
    const count = state.nodeLength;
    const last = this.lastNode(state);
    if (last >= 0 && this.nodeDay[last]! >= day) return;
    for (let s = 0; s < refresh; s++) this.smooth(p, Math.max(0, count - window));
  }

  /** Called before a match of a later day than any yet closes the day before (horizon.ts freezes the history here). */
  protected beforeDay(_day: number): void {}

  /**
   * Re-smooths the last `window` nodes of the players who played in the
   * latest day, `sweeps` times; then, with `cycle`, the whole timelines of
   * the next slice of all players (round robin), but for those who last
   * played more than `cycleHorizon` periods ago. `day` is the day of the
   * match that closes it (a horizon's first close after a freeze's replay
   * differs: `cycleSlice`); left out, a later day than the latest.
   */
  closeDay(day = this.day + 1): void {
    for (const _ of this.closingDay(day));
  }

  /**
   * The close of the latest day that a match of `day` would run first
   * (`addMatch` closes it in one piece: tens of milliseconds on a large
   * history, up to 156 ms at 20,000 players), as steps to run before the
   * match, with other work between them; undefined when the match closes
   * nothing, or when that close may not run ahead (a freeze comes first:
   * horizon.ts). After the steps, a match of a later day (`closeHolds`)
   * finds nothing left to close and reaches, to the last bit, what adding
   * it alone reaches. Until the steps end nothing else may change the
   * history.
   */
  closeAhead(day: number): Iterable<void> | undefined {
    return this.closesBefore(day) ? this.closingDay(day) : undefined;
  }

  /**
   * Whether, once the latest day is closed (`closeAhead`), a match of `day`
   * may come next: a match of the latest day or before would have come
   * before the close.
   */
  closeHolds(day: number): boolean {
    return day > this.day;
  }

  /** Whether a match of `day`, added next, would first close the latest day, and that close may run beforehand. */
  protected closesBefore(day: number): boolean {
    return !this.deferred && day > this.day && this.touched.length > 0;
  }

  /**
   * `closeDay` as steps, a pause (a yield) after every CLOSE_SLICE timelines
   * smoothed: the same smoothing in the same order. On a large history the
   * close is tens of milliseconds in one piece (the cycle's slice alone is
   * 1,250 whole timelines at 20,000 players); a freeze's replay closes each
   * of its days this way (horizon.ts). Nothing else may change the history
   * until the steps are done.
   */
  protected *closingDay(day: number): Generator<void> {
    if (this.touched.length === 0) return;
    const { window, sweeps, cycle, cycleHorizon } = this.options;
    let smoothed = 0;
    for (let s = 0; s < sweeps; s++) {
      for (const p of this.touched) {
        const count = this.players[p]!.nodeLength;
        this.smooth(p, Math.max(0, count - window));
        if (++smoothed % CLOSE_SLICE === 0) yield;
      }
    }
    this.touched = [];
    if (cycle > 0) {
      // A slice of the players, each with their context deviations.
      const players = this.generalTimelines.length;
      const slice = this.cycleSlice(day);
      for (let i = 0; i < slice; i++) {
        if (this.cursor >= players) this.cursor = 0;
        const p = this.generalTimelines[this.cursor]!;
        const player = this.players[p]!;
        const last = this.lastNode(player);
        if (last >= 0 && this.day - this.nodeDay[last]! <= cycleHorizon) {
          this.smooth(p, 0);
          if (player.contexts !== undefined) for (const d of player.contexts.values()) this.smooth(d, 0);
        }
        this.cursor++;
        if (++smoothed % CLOSE_SLICE === 0) yield;
      }
    }
  }

  /** The next player of the round robin of `cycle` (an index into generalTimelines). */
  protected cursor = 0;

  /**
   * How many players' whole timelines the cycle smooths in the close that a
   * match of `day` runs: a `cycle`-th of them (horizon.ts skips the cycle
   * in a freeze's replay and sweeps every timeline after it).
   */
  protected cycleSlice(_day: number): number {
    return Math.ceil(this.generalTimelines.length / this.options.cycle);
  }

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
        if (
          teams.length !== 2 ||
          teams[0]!.players.length !== 1 ||
          teams[1]!.players.length !== 1 ||
          (this.contextual && match.context !== undefined) ||
          this.options.newcomerMean !== 'zero'
        ) {
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
        if (this.gameDay.length > 0) this.gameDay[this.gameCount - 1] = day;
      }
    } finally {
      this.deferred = false;
    }
    this.touched = [];
    if (first < this.unfittedFrom) this.unfittedFrom = first;
  }

  /**
   * Makes room for `count` more one-on-one matches (two nodes, two entries,
   * one game each) at once. Grown match by match, the arrays are copied at
   * every quarter's growth, and a large history's old copies are memory the
   * allocator may keep: a caller that knows how many matches it will add (a
   * derivation from a stored log) reserves them first. Room that is never
   * filled is never written. Matches of more players still grow the arrays
   * as they come.
   */
  reserve(count: number): void {
    for (const _ of this.reserving(count));
  }

  /** `reserve` as steps, a pause (a yield) after each group of arrays: a few milliseconds each at hundreds of thousands of matches. */
  *reserving(count: number): Generator<void> {
    if (!(count > 0)) return;
    const nodes = this.nodeCount + 2 * count;
    if (nodes > this.nodeR.length) {
      this.nodeR = grow(this.nodeR, nodes);
      this.nodeDay = grow(this.nodeDay, nodes);
      this.nodeF = grow(this.nodeF, nodes);
      this.nodeHead = grow(this.nodeHead, nodes);
      this.growEpNodes(nodes);
      yield;
    }
    const entries = this.entryCount + 2 * count;
    if (entries > this.entryGame.length) {
      this.entryGame = grow(this.entryGame, entries);
      this.entrySide = grow(this.entrySide, entries);
      this.entryNext = grow(this.entryNext, entries);
      this.entryOpp = grow(this.entryOpp, entries);
      yield;
    }
    const games = this.gameCount + count;
    if (games > this.gameStart.length) {
      this.gameStart = grow(this.gameStart, games);
      this.gameSplit = grow(this.gameSplit, games);
      this.gameEnd = grow(this.gameEnd, games);
      this.gameScore = grow(this.gameScore, games);
      if (this.offsets) this.gameOffset = grow(this.gameOffset, games);
      this.gameRank = grow(this.gameRank, games);
      this.gamePerPlayer = grow(this.gamePerPlayer, games);
      yield;
    }
    if (this.options.horizon > 0) this.gameDay = grow(this.gameDay, this.gameStart.length);
    this.gameNodes = grow(this.gameNodes, this.gameNodeCount + 2 * count);
    yield;
    this.growSites();
  }

  protected deferred = false;
  /** Nodes from this id on have had no Newton step (added by `addMatches`). */
  protected unfittedFrom = 0;

  /** The player's index, counting the match and its time. */
  protected notePlayer(id: string, at: number | undefined): number {
    const p = this.playerIndex(id);
    const state = this.players[p]!;
    state.matches++;
    if (at !== undefined && (state.lastAt === undefined || at > state.lastAt)) state.lastAt = at;
    this.noteMoved(p);
    return p;
  }

  protected ensureScratch(count: number): void {
    if (this.a.length >= count) return;
    const size = Math.max(count, this.a.length * 2);
    this.a = new Float64Array(size);
    this.b = new Float64Array(size);
    this.c = new Float64Array(size);
    this.dp = new Float64Array(size);
    this.y = new Float64Array(size);
    this.scratchR = new Float64Array(size);
  }

  protected readonly terms = new Float64Array(2);

  /** A player's current skill estimate, or undefined for a player never seen. */
  estimate(id: string): WhrEstimate | undefined {
    const p = this.index.get(id);
    if (p === undefined) return undefined;
    return this.timelineEstimate(this.players[p]!);
  }

  /** A timeline's estimate at its last node, or its frozen past when it has no node since (a player, or a context deviation: horizon.ts). */
  private timelineEstimate(timeline: Player): WhrEstimate {
    let out: WhrEstimate;
    const last = this.lastNode(timeline);
    if (last < 0) {
      const prior = timeline.lastState ?? timeline.prior!;
      out = { mean: prior.mean, variance: prior.variance, day: prior.day, matches: timeline.matches };
    } else {
      out = { mean: this.nodeR[last]!, variance: 1 / (this.ep ? this.nodeP[last]! : this.nodeF[last]!), day: this.nodeDay[last]!, matches: timeline.matches };
    }
    if (timeline.lastAt !== undefined) out.lastAt = timeline.lastAt;
    return out;
  }

  /** A player's deviations by context: mean and variance of each at its last node (empty without contexts). */
  contextEstimates(id: string): Map<string, WhrEstimate> {
    const out = new Map<string, WhrEstimate>();
    const p = this.index.get(id);
    const contexts = p === undefined ? undefined : this.players[p]!.contexts;
    if (contexts === undefined) return out;
    // Deviations exist under expectation propagation only: the variance is the smoothed one, as for the general skill.
    for (const [context, d] of contexts) {
      const estimate = this.timelineEstimate(this.players[d]!);
      if (this.joint) estimate.covariance = this.players[d]!.lastCov ?? 0;
      out.set(context, estimate);
    }
    return out;
  }

  /**
   * Mean and variance of a player's skill on `day` (drifted forward from
   * their last node; the prior for a new player), in `context` when contexts
   * are on: the general skill plus the deviation in it (its prior for a
   * context the player has not played).
   */
  skillAt(id: string, day: number, out: Float64Array, context?: string, entryContext = context): void {
    const p = this.index.get(id);
    if (p === undefined) {
      // A newcomer: at the mean first skill of the entrants of the match's group (0 with newcomerMean 'zero').
      out[0] = this.entryMean(this.entryGroup(entryContext, false));
      out[1] = this.options.priorVariance;
    } else this.timelineAt(p, day, out);
    if (!this.contextual || context === undefined) return;
    const d = p === undefined ? undefined : this.players[p]!.contexts?.get(context);
    if (d === undefined) {
      out[1] += this.options.contextPriorVariance;
      return;
    }
    const mean = out[0]!;
    const variance = out[1]!;
    this.timelineAt(d, day, out);
    out[0] += mean;
    // Jointly smoothed, the variance of the sum counts the covariance of the two.
    out[1] += variance + 2 * (this.players[d]!.lastCov ?? 0);
  }

  /** Mean and variance of timeline p on `day`, drifted forward from its last node. */
  private timelineAt(p: number, day: number, out: Float64Array): void {
    const player = this.players[p]!;
    const last = this.lastNode(player);
    if (last < 0) {
      const state = player.lastState;
      if (state === undefined) this.firstPrior(p, day, out);
      else {
        // A joint state's deviation without a node: its posterior on the general skill's last day, drifted.
        out[0] = state.mean;
        out[1] = state.variance + (day > state.day ? player.w2 * (day - state.day) : 0);
      }
      return;
    }
    const gap = day - this.nodeDay[last]!;
    out[0] = this.nodeR[last]! + (gap > 0 ? this.trend(p, this.nodeDay[last]!, day) : 0);
    out[1] = 1 / (this.ep ? this.nodeP[last]! : this.nodeF[last]!) + (gap > 0 ? player.w2 * gap : 0);
  }

  protected readonly skill = new Float64Array(2);

  /** P(team 0 beats team 1) of a two-team match on the match's day (in its context, when contexts are on), with `homeOffset` for its home team. */
  predictMatch(match: Match, homeOffset = 0): number {
    const day = this.dayOf(match.at);
    const context = this.contextual ? match.context : undefined;
    const strength = [0, 0];
    const variance = [0, 0];
    for (let t = 0; t < 2; t++) {
      const players = match.teams[t]!.players;
      for (const player of players) {
        this.skillAt(player.id, day, this.skill, context, match.context);
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
    const timeline = this.players[p]!;
    const out: Array<{ day: number; mean: number }> = [];
    for (let j = 0; j < timeline.nodeLength; j++) {
      const n = this.nodeAt(timeline, j);
      out.push({ day: this.nodeDay[n]!, mean: this.nodeR[n]! });
    }
    return out;
  }
}
