/**
 * A horizon for the whole history (option `horizon`, in periods; 0: off):
 * nodes older than the horizon freeze into one prior per player, so that a
 * history's memory grows with its players and the horizon, not with its
 * matches.
 *
 * Freezes happen at fixed points, multiples of a step of ⌈horizon / 4⌉
 * periods: when the latest day reaches a point F + horizon, the history is
 * frozen at F. Each player's skill on day F (the filtered estimate at their
 * last node on or before F, drifted to F: under expectation propagation the
 * Kalman filter's mean and variance, so the games after F, which stay in
 * the history, are not counted twice; under `map`, the mode and the forward
 * precision) becomes the prior of their next node, and the history is
 * rebuilt from those priors and the games added on days after F (the day
 * each match was given, also for a late match folded into a player's later
 * node), replayed on those days in the order they were added. The state
 * after a freeze is then a function of the priors and the matches of days
 * after F only: a history restored from the priors (`restoreFrozen`) and
 * fed those matches, then every later one, reaches the same numbers to the
 * last bit, and a replay of a whole log freezes at the same points.
 *
 * With context deviations (contextPriorVariance > 0), each deviation
 * timeline freezes the same way, by its own drift wc²: a frozen player
 * carries a prior per context (mean, variance, matches and last match time)
 * for each deviation with a node on or before F (or a prior), and the
 * replayed games keep their contexts. The timelines are rebuilt in the
 * frozen order, each player's general skill followed by their frozen
 * deviations, so a restore recreates them in the same order. Under
 * `contextInference: 'joint'` (joint.ts) a player's skill and deviations
 * freeze together: the joint filter on F gives the marginals and each
 * deviation's covariances (with the skill, then with each earlier context),
 * and the rebuilt player's state starts from that whole Gaussian.
 *
 * A rebuild replays the whole live window: seconds on a large history (22 s
 * at 447,000 live games), during which a writer's next match must wait.
 * With `freezeLag` L > 0 (the default, 1) the match that reaches a freeze
 * point takes the priors as above, from the history as it stands, but
 * builds the frozen history beside this one (`startingFreeze`): a new history
 * restored from the priors replays the live games, then every later match
 * of a day after F as the history takes it in (`advanceFreeze` does a slice
 * of that work at a time, whenever its owner chooses). Meanwhile this
 * history goes on unfrozen and rates as the whole history does. The first
 * match of a day at least L periods after the reaching one (or of the next
 * freeze point's day, if sooner, so a rebuild never freezes itself) puts
 * the rebuilt history in place of this one (`settleFreeze`), before it is
 * rated: from then on every number is the one a freeze in the reaching
 * match gives, since the rebuilt history was given exactly what that freeze
 * would have been given, in the same order. Only the matches in between
 * are rated differently (by the unfrozen history). A match of a day on or
 * before F taken in meanwhile stays out of the rebuilt history, as a
 * restart from the stored freeze (whose trigger is the match of effect)
 * skips it; a writer refuses such matches from the reaching match on
 * (`refusedThrough`). For that day both histories are held, so memory
 * peaks at about twice the live window's.
 */
import type { Match, MatchTeam } from '../match.js';
import { WhrJoint } from './joint.js';
import type { WhrConvergeOptions } from './history.js';
import type { ResolvedWhrOptions } from './options.js';

/** Games a freeze replays between two of its steps (freezeAhead): a few milliseconds of work. */
const FREEZE_SLICE = 64;
/** Timelines or players a freeze's plan (or a rebuild's install) reads between two of its steps: well under a millisecond. */
const PLAN_SLICE = 1024;
/** Games a freeze's plan reads between two of its steps. */
const GAME_SLICE = 16_384;
/** A player's deviation in a context, frozen: N(mean, variance) on the freeze day, and its matches and last match time up to the freeze. */
export interface WhrFrozenContext {
  context: string;
  mean: number;
  variance: number;
  matches: number;
  lastAt?: number;
  /**
   * `contextInference: 'joint'`: the deviation's covariance on the freeze day with the general skill, then with each
   * earlier context of the player's list, in order (length 1 + its place in the list). Absent: independent (a freeze
   * made without them reads as before).
   */
  covariance?: number[];
}

/**
 * A player's frozen past: their skill N(mean, variance) on the freeze day, and their matches and last match time up to the freeze;
 * with context deviations, those frozen with it, in the order the player first played in them (absent: none).
 */
export interface WhrFrozenPlayer {
  id: string;
  mean: number;
  variance: number;
  matches: number;
  lastAt?: number;
  contexts?: WhrFrozenContext[];
  /** With `newcomerTrend`: the day of the player's first node ever, which the learning curve counts from. */
  firstDay?: number;
}

/** With `newcomerMean`: an entry group's entrants frozen so far, the sum of their first nodes' means and their number. */
export interface WhrFrozenEntrants {
  /** The group's key: the context of its entrants' first match ('' for none, and for the one group of `entrants`). */
  group: string;
  sum: number;
  count: number;
}

/** A timeline's frozen past as a rebuild installs it (lastAt NaN: none; start: the first node's day, for the learning curve). */
interface FrozenTimeline {
  mean: number;
  variance: number;
  matches: number;
  lastAt: number;
  start?: number;
  /** A deviation under joint inference: its covariances (see WhrFrozenContext.covariance). */
  covariance?: number[];
}

/** A history's last freeze: the day, and the players' frozen pasts in the history's order. */
export interface WhrFrozen {
  day: number;
  players: WhrFrozenPlayer[];
  /** With `newcomerMean`: the frozen entrants of each entry group, in the order the groups were made. */
  entrants?: WhrFrozenEntrants[];
}

/** The games of the live window, copied out of the history before it is rebuilt (one entry per game, in the order added). */
interface LiveGames {
  count: number;
  day: Int32Array;
  /** The game's players (history indices before the rebuild) in slots [start[g], start[g + 1]). */
  start: Int32Array;
  slots: Int32Array;
  /**
   * Two sides: where side B starts (≥ 0), side A's score and home offset. A ranked game: −1 − r, where r is where its
   * teams start in rankBound, rankTie and rankOrigin; the home team's place (−1: none) and offset.
   */
  split: Int32Array;
  score: Float64Array;
  /** Empty when no game of the history has a home offset (every offset 0): the window of a freeze is then smaller. */
  offset: Float64Array;
  /** A ranked game's team bounds (slot indices, one past the last team too), ties and the teams' indices in the match as given. */
  rankBound: Int32Array;
  rankTie: Uint8Array;
  rankOrigin: Int32Array;
  /** The game's context (undefined: none); its slots hold the players' general timelines only. Empty when no game has one. */
  context: (string | undefined)[];
}

/** What a freeze takes from the history before it is rebuilt: the frozen pasts, the live games, and what the replay puts back. */
interface FreezePlan {
  frozen: Array<{ id: string; past: FrozenTimeline; contexts: Map<string, FrozenTimeline> }>;
  entrants: WhrFrozenEntrants[];
  live: LiveGames;
  /** The history's timelines before the rebuild: ids, last match times, each deviation's player and context. */
  ids: string[];
  lastAt: (number | undefined)[];
  owner: number[];
  contextOf: (string | undefined)[];
}

/** A match the history took in while a freeze was being rebuilt beside it, for the rebuild to take in too. */
interface QueuedMatch {
  match: Match;
  homeOffset: number;
  day: number;
}

/** A freeze started and not in effect yet (`freezeLag`): the rebuilt history beside this one, and the work it has left. */
interface PendingFreeze {
  /** The freeze day. */
  day: number;
  /** The first day whose match puts the rebuilt history in effect. */
  effectDay: number;
  rebuilt: WhrHorizon;
  /** The replay of the live games into `rebuilt`, a game a step; then the queue. */
  replay: Iterator<void>;
  replayed: boolean;
  queue: (QueuedMatch | undefined)[];
  next: number;
  /** The close of `rebuilt`'s latest day, in steps, before the queued match of a later day (`closeAhead`). */
  closing?: Iterator<void>;
}

/** The history with a horizon (see the module's comment); WhrHistory extends it. */
export abstract class WhrHorizon extends WhrJoint {
  /** The day of the last freeze (−∞: none yet). */
  protected frozenDay = -Infinity;
  /** Timelines 0 … frozenCount − 1 carry a frozen past (a rebuild recreates them first, in order: each player, then their frozen deviations). */
  protected frozenCount = 0;
  /** The day of the first match, before any freeze: the first freeze point is on or after it. */
  protected firstDay = Infinity;
  /** Freezes since the history was made (or restored). */
  freezes = 0;

  abstract converge(tolerance?: number, maxSweeps?: number, options?: WhrConvergeOptions): number;

  /** Periods between two freeze points. */
  get freezeStep(): number {
    return Math.max(1, Math.ceil(this.options.horizon / 4));
  }

  /** The freeze point the latest day `day` calls for, if it is later than the last freeze. */
  protected freezeDue(day: number): number | undefined {
    const horizon = this.options.horizon;
    if (!(horizon > 0) || !Number.isFinite(day)) return undefined;
    const step = this.freezeStep;
    if (!Number.isFinite(this.firstDay)) this.firstDay = day;
    const point = Math.floor((day - horizon) / step) * step;
    // Before the first freeze, only a point on or after the first day has a past to freeze.
    if (!(point > this.frozenDay) || (!Number.isFinite(this.frozenDay) && point < this.firstDay)) return undefined;
    return point;
  }

  /** Adds matches without smoothing (WhrHistoryBase.addMatches), a pending freeze put in effect first. */
  override addMatches(matches: Iterable<Match>, homeOffset = 0): void {
    this.settleFreeze();
    super.addMatches(matches, homeOffset);
  }

  /** A freeze being rebuilt beside the history (`freezeLag`), not in effect yet. */
  private pending: PendingFreeze | undefined;

  /**
   * Called by `prepare` for a match of a later day: a pending freeze whose
   * day of effect this is takes effect first; a freeze point passed freezes
   * the history, at once (`freezeLag` 0) or by starting the rebuild beside it.
   */
  protected override beforeDay(day: number): void {
    if (this.pending !== undefined) {
      if (day < this.pending.effectDay) return;
      this.settleFreeze();
    }
    const point = this.freezeDue(day);
    if (point === undefined) return;
    if (this.options.freezeLag > 0) for (const _ of this.startingFreeze(point, day));
    else this.freezeAt(point);
  }

  /**
   * Adds a match (WhrHistoryBase.addMatch); while a freeze is being rebuilt,
   * the rebuild takes it in too (a match of a day on or before the freeze's
   * is in no rebuilt history: the priors hold that past, as a restart skips it).
   */
  override addMatch(match: Match, homeOffset = 0, day = this.dayOf(match.at)): void {
    super.addMatch(match, homeOffset, day);
    const pending = this.pending;
    if (pending !== undefined && day > pending.day) pending.queue.push({ match, homeOffset, day });
  }

  /**
   * Starts the freeze at `point` that a match of `day` reaches, beside the
   * history: the priors taken now, as a freeze in this match takes them; the
   * live games and every later match replayed into a new history from them.
   * It takes effect at the first match `freezeLag` periods later, and no
   * later than the next freeze point, so the rebuild itself never freezes.
   */
  private *startingFreeze(point: number, day: number): Generator<void> {
    const plan = yield* this.planning(point);
    const rebuilt = new (this.constructor as new (options: ResolvedWhrOptions) => WhrHorizon)(this.options);
    rebuilt.firstDay = this.firstDay;
    rebuilt.freezes = this.freezes + 1;
    // Room for the live games and a quarter more at once, as a derivation reserves it (WhrHistoryBase.reserve).
    yield* rebuilt.reserving(Math.ceil(plan.live.count * 1.25));
    yield* rebuilt.installing(point, plan.frozen, plan.entrants);
    const effectDay = Math.min(day + this.options.freezeLag, point + this.options.horizon + this.freezeStep);
    this.pending = { day: point, effectDay, rebuilt, replay: rebuilt.rebuild(plan, 1), replayed: false, queue: [], next: 0 };
  }

  /**
   * With `freezeSweeps`, the cycle skips the days a freeze replays and then
   * sweeps every timeline, that many passes from the first player, in the
   * first close past them. A history with a frozen past on F replays (or, a
   * restart restored from F, takes in) the games of days before F + horizon
   * first and then, in the match that reached the freeze point, the first
   * of a day on or after it: the days alone say which close is which, so
   * the freeze in place, the rebuild beside the history and a restart from
   * the priors make the same closes.
   */
  protected override cycleSlice(day: number): number {
    const passes = this.options.freezeSweeps;
    if (passes > 0 && Number.isFinite(this.frozenDay)) {
      const replayed = this.frozenDay + this.options.horizon;
      if (day < replayed) return 0;
      // The round robin is still at the first player: the history was emptied (or restored) and the replay moved it not.
      if (this.day < replayed) return this.generalTimelines.length * passes;
    }
    return super.cycleSlice(day);
  }

  /** Whether a freeze is being rebuilt beside the history (`freezeLag`). */
  get freezePending(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Does up to `games` games of a pending freeze's rebuild (the live games,
   * then the matches taken in since); says whether it has caught up with
   * every match taken in so far (true without a pending freeze). Optional:
   * the freeze's day of effect does what is left. Reads and adds nothing of
   * the history's own, so it may run between any two of its calls.
   */
  advanceFreeze(games = FREEZE_SLICE): boolean {
    const pending = this.pending;
    if (pending === undefined) return true;
    for (let done = 0; done < games; done++) {
      if (!pending.replayed) {
        if (pending.replay.next().done) pending.replayed = true;
        continue;
      }
      if (pending.closing !== undefined) {
        if (pending.closing.next().done) pending.closing = undefined;
        continue;
      }
      if (pending.next >= pending.queue.length) break;
      const queued = pending.queue[pending.next]!;
      const closing = pending.rebuilt.closeAhead(queued.day);
      if (closing !== undefined) {
        pending.closing = closing[Symbol.iterator]();
        continue;
      }
      pending.queue[pending.next++] = undefined;
      pending.rebuilt.addMatch(queued.match, queued.homeOffset, queued.day);
    }
    if (!pending.replayed || pending.closing !== undefined || pending.next < pending.queue.length) return false;
    pending.queue = [];
    pending.next = 0;
    return true;
  }

  /**
   * Puts a pending freeze in effect now: the rest of its rebuild, then the
   * rebuilt history in place of this one (the players this one moved since
   * the last `takeMoved` stay moved).
   */
  protected settleFreeze(): void {
    const pending = this.pending;
    if (pending === undefined) return;
    while (!this.advanceFreeze(1 << 20));
    const moved = this.takeMoved();
    this.pending = undefined;
    // Every field of the history, the rebuilt one's: as if it had frozen in place.
    Object.assign(this, pending.rebuilt);
    for (const id of moved) {
      const p = this.index.get(id);
      if (p !== undefined) this.noteMoved(p);
    }
  }

  /** The latest freeze day, pending or in effect (undefined before the first): a new match on or before it is not taken. */
  refusedThrough(): number | undefined {
    return this.pending?.day ?? this.lastFrozenDay();
  }

  /**
   * Adds a whole log without smoothing (as `addMatches`; then call
   * `converge`), honouring the horizon: at each freeze point the history so
   * far is converged, then frozen. The freeze replays its live window match
   * by match, as any freeze does: added at once, with every message back at
   * zero and the priors far apart (a strong player's precise prior, a weak
   * one's win over them), expectation propagation from there diverged on the
   * ATP file (means of 100–300 logits from 1996 on, at a horizon of 730 days),
   * where the incremental replay leaves each window 30–40 sweeps from its
   * fixed point.
   */
  addLog(matches: readonly Match[], homeOffset = 0): void {
    this.settleFreeze();
    if (!(this.options.horizon > 0)) {
      this.addMatches(matches, homeOffset);
      return;
    }
    let from = 0;
    let latest = this.day;
    for (let i = 0; i < matches.length; i++) {
      const day = this.dayOf(matches[i]!.at);
      if (!(day > latest)) continue;
      latest = day;
      const point = this.freezeDue(day);
      if (point === undefined) continue;
      this.addMatches(matches.slice(from, i), homeOffset);
      from = i;
      this.converge();
      this.freezeAt(point);
    }
    this.addMatches(from === 0 ? matches : matches.slice(from), homeOffset);
  }

  /** The last freeze's day (undefined before the first freeze), without building the frozen pasts. */
  lastFrozenDay(): number | undefined {
    return Number.isFinite(this.frozenDay) ? this.frozenDay : undefined;
  }

  /** The last freeze's day and frozen pasts (undefined before the first freeze): what a restart needs besides the matches after that day. */
  frozen(): WhrFrozen | undefined {
    if (!Number.isFinite(this.frozenDay)) return undefined;
    const players: WhrFrozenPlayer[] = [];
    for (let p = 0; p < this.frozenCount; p++) {
      const timeline = this.players[p]!;
      const prior = timeline.prior!;
      const lastAt = this.frozenLastAt[p]!;
      if (timeline.owner >= 0) {
        // A deviation: it follows its player.
        const out: WhrFrozenContext = { context: timeline.context!, mean: prior.mean, variance: prior.variance, matches: this.frozenMatches[p]! };
        if (!Number.isNaN(lastAt)) out.lastAt = lastAt;
        // Jointly frozen: its row of the frozen covariance, up to itself.
        const joint = this.players[timeline.owner]!.jointPrior;
        const place = joint === undefined ? -1 : joint.components.indexOf(p);
        if (joint !== undefined && place >= 0) {
          const J = joint.components.length + 1;
          out.covariance = [];
          for (let i = 0; i <= place; i++) out.covariance.push(joint.cov[(place + 1) * J + i]!);
        }
        (players[players.length - 1]!.contexts ??= []).push(out);
        continue;
      }
      const out: WhrFrozenPlayer = { id: this.ids[p]!, mean: prior.mean, variance: prior.variance, matches: this.frozenMatches[p]! };
      if (!Number.isNaN(lastAt)) out.lastAt = lastAt;
      if (this.options.newcomerTrend > 0) out.firstDay = timeline.start!;
      players.push(out);
    }
    const out: WhrFrozen = { day: this.frozenDay, players };
    if (this.options.newcomerMean !== 'zero') out.entrants = this.frozenEntrants.map((group) => ({ ...group }));
    return out;
  }

  /** With `newcomerMean`: the entrants frozen so far, by entry group (the last freeze's). */
  protected frozenEntrants: WhrFrozenEntrants[] = [];

  /** Each frozen timeline's matches and last match time (NaN: none) at the freeze. */
  protected frozenMatches = new Int32Array(0);
  protected frozenLastAt = new Float64Array(0);

  /**
   * Starts an empty history from a freeze (as `frozen` gave it): the
   * players with their frozen pasts, in order. Then add the matches after
   * the freeze day, in the order they were first added.
   */
  restoreFrozen(frozen: WhrFrozen): void {
    if (this.players.length > 0 || this.gameCount > 0) throw new Error('restoreFrozen: the history is not empty');
    if (!Number.isFinite(frozen.day)) throw new Error(`restoreFrozen: day must be finite (got ${frozen.day})`);
    const check = (past: WhrFrozenPlayer | WhrFrozenContext, field: string): FrozenTimeline => {
      if (!Number.isFinite(past.mean)) throw new Error(`restoreFrozen: ${field}.mean must be finite (got ${past.mean})`);
      if (!(past.variance > 0) || !Number.isFinite(past.variance)) throw new Error(`restoreFrozen: ${field}.variance must be positive (got ${past.variance})`);
      if (!Number.isInteger(past.matches) || past.matches < 0) throw new Error(`restoreFrozen: ${field}.matches must be a count (got ${past.matches})`);
      return { mean: past.mean, variance: past.variance, matches: past.matches, lastAt: past.lastAt ?? Number.NaN };
    };
    const ids = new Set<string>();
    const players = frozen.players.map((player, i) => {
      const field = `players[${i}]`;
      const past = check(player, field);
      if (this.options.newcomerTrend > 0) {
        if (!Number.isFinite(player.firstDay))
          throw new Error(`restoreFrozen: ${field}.firstDay must be a day (the learning curve, newcomerTrend, counts from it; got ${player.firstDay})`);
        past.start = player.firstDay!;
      }
      if (ids.has(player.id)) throw new Error(`restoreFrozen: ${field}.id ${player.id} is repeated`);
      ids.add(player.id);
      const contexts = new Map<string, FrozenTimeline>();
      if (player.contexts !== undefined) {
        if (!this.contextual) throw new Error(`restoreFrozen: ${field}.contexts needs context deviations (contextPriorVariance > 0)`);
        if (!Array.isArray(player.contexts)) throw new Error(`restoreFrozen: ${field}.contexts must be an array`);
        player.contexts.forEach((deviation, k) => {
          const at = `${field}.contexts[${k}]`;
          if (typeof deviation.context !== 'string') throw new Error(`restoreFrozen: ${at}.context must be a string`);
          if (contexts.has(deviation.context)) throw new Error(`restoreFrozen: ${at}.context ${deviation.context} is repeated`);
          const timeline = check(deviation, at);
          if (deviation.covariance !== undefined && this.joint) {
            const c = deviation.covariance;
            if (!Array.isArray(c) || c.length !== k + 1 || !c.every(Number.isFinite))
              throw new Error(`restoreFrozen: ${at}.covariance must be ${k + 1} finite numbers (with the general skill, then each earlier context)`);
            timeline.covariance = c.slice();
          }
          contexts.set(deviation.context, timeline);
        });
        const given = [...contexts.values()].filter((c) => c.covariance !== undefined).length;
        if (given > 0 && given < contexts.size) throw new Error(`restoreFrozen: ${field}.contexts: a covariance for every context or for none`);
        if (given > 0 && !positiveDefinite(past, [...contexts.values()]))
          throw new Error(`restoreFrozen: ${field}.contexts[].covariance with the variances is no covariance matrix (not positive definite)`);
      }
      return { id: player.id, past, contexts };
    });
    const entrants: WhrFrozenEntrants[] = [];
    if (this.options.newcomerMean !== 'zero') {
      if (!Array.isArray(frozen.entrants)) throw new Error("restoreFrozen: entrants must be an array (newcomerMean takes a newcomer's prior mean from them)");
      const groups = new Set<string>();
      frozen.entrants.forEach((group, k) => {
        const field = `entrants[${k}]`;
        if (typeof group.group !== 'string') throw new Error(`restoreFrozen: ${field}.group must be a string`);
        if (groups.has(group.group)) throw new Error(`restoreFrozen: ${field}.group ${JSON.stringify(group.group)} is repeated`);
        groups.add(group.group);
        if (!Number.isFinite(group.sum)) throw new Error(`restoreFrozen: ${field}.sum must be finite (got ${group.sum})`);
        if (!Number.isInteger(group.count) || group.count < 0) throw new Error(`restoreFrozen: ${field}.count must be a count (got ${group.count})`);
        entrants.push({ group: group.group, sum: group.sum, count: group.count });
      });
    }
    this.installFrozen(frozen.day, players, entrants);
  }

  /** Creates the frozen players (the history is empty), each followed by their frozen deviations, and sets their frozen pasts. */
  private installFrozen(
    day: number,
    frozen: ReadonlyArray<{ id: string; past: FrozenTimeline; contexts: ReadonlyMap<string, FrozenTimeline> }>,
    entrants: readonly WhrFrozenEntrants[],
  ): void {
    for (const _ of this.installing(day, frozen, entrants));
  }

  /** `installFrozen` as steps, a pause (a yield) after every PLAN_SLICE players. */
  private *installing(
    day: number,
    frozen: ReadonlyArray<{ id: string; past: FrozenTimeline; contexts: ReadonlyMap<string, FrozenTimeline> }>,
    entrants: readonly WhrFrozenEntrants[],
  ): Generator<void> {
    // newcomerMean: the entry groups start from their frozen entrants, in the order they were made.
    this.frozenEntrants = entrants.map((group) => ({ ...group }));
    for (const group of entrants) {
      this.entryGroups.set(group.group, this.entrySum.length);
      this.entrySum.push(group.sum);
      this.entrants.push(group.count);
    }
    let count = 0;
    for (const player of frozen) count += 1 + player.contexts.size;
    this.frozenDay = day;
    this.frozenCount = count;
    this.frozenMatches = new Int32Array(count);
    this.frozenLastAt = new Float64Array(count);
    const install = (p: number, f: FrozenTimeline): void => {
      const timeline = this.players[p]!;
      timeline.prior = { mean: f.mean, variance: f.variance, day };
      if (f.start !== undefined) timeline.start = f.start;
      timeline.matches = f.matches;
      if (!Number.isNaN(f.lastAt)) timeline.lastAt = f.lastAt;
      this.frozenMatches[p] = f.matches;
      this.frozenLastAt[p] = f.lastAt;
    };
    let installed = 0;
    for (const player of frozen) {
      if (++installed % PLAN_SLICE === 0) yield;
      const p = this.playerIndex(player.id);
      install(p, player.past);
      const deviations: number[] = [];
      for (const [context, past] of player.contexts) {
        const d = this.deviationIndex(p, context);
        install(d, past);
        deviations.push(d);
      }
      // Jointly frozen (each deviation with its covariances): the frozen state as a whole.
      const pasts = [...player.contexts.values()];
      if (this.joint && pasts.length > 0 && pasts.every((past) => past.covariance !== undefined)) {
        const { mean, cov } = jointMatrix(player.past, pasts);
        this.players[p]!.jointPrior = { day, components: deviations, mean, cov };
        // Drift adds to the variances only: each covariance with the general skill holds until the next node.
        deviations.forEach((d, k) => {
          this.players[d]!.lastCov = cov[k + 1]!;
        });
      }
    }
  }

  /**
   * Freezes the history at `day`: each player's skill on that day becomes
   * their prior, and the history is rebuilt from the priors and the games
   * after `day`, replayed by `addMatch`.
   */
  protected freezeAt(day: number): void {
    for (const _ of this.freezing(day));
  }

  /**
   * The freeze a match of `day` would make first, when it would make one
   * (its day is later than the history's and passes a freeze point), as
   * steps: each step replays a slice of the live games, so a caller can give
   * other work turns between them. Run to the end, then `addMatch` the match:
   * the history is the one `addMatch` alone reaches, to the last bit (the
   * freeze is the first thing a match of a new day does). Between steps the
   * history is half rebuilt: nothing else may read or add to it until the
   * steps end. With `freezeLag`, a freeze point's steps take the priors and
   * start the rebuild beside the history (which they leave as it was), and a
   * pending freeze's day of effect makes the steps that bring its rebuild up
   * to date; between either's steps the history may be read but not added to.
   */
  freezeAhead(day: number): Iterable<void> | undefined {
    if (this.deferred || !(day > this.day)) return undefined;
    if (this.pending !== undefined) return day >= this.pending.effectDay ? this.catchingUp(day) : undefined;
    const point = this.freezeDue(day);
    if (point === undefined) return undefined;
    return this.options.freezeLag > 0 ? this.startingFreeze(point, day) : this.freezingBefore(point, day);
  }

  /**
   * A pending freeze's rebuild brought up to date, a slice a step (`freezeAhead` before its day of effect), then its
   * latest day closed, as the match of `day` would close it once the rebuild is in place.
   */
  private *catchingUp(day: number): Generator<void> {
    while (!this.advanceFreeze(FREEZE_SLICE)) yield;
    // Once the rebuild is in place the match's next work is that close: tens of milliseconds in one piece.
    yield* this.pending!.rebuilt.closeAhead(day) ?? [];
  }

  /** An in-place freeze at `point` in steps (`freezing`), then the close of the rebuilt latest day that the match of `day` runs next. */
  private *freezingBefore(point: number, day: number): Generator<void> {
    yield* this.freezing(point);
    yield* this.closeAhead(day) ?? [];
  }

  /** freezeAt's work, pausing (a yield) after every FREEZE_SLICE replayed games. */
  private *freezing(day: number): Generator<void> {
    const plan = yield* this.planning(day);
    this.clearHistory();
    this.installFrozen(day, plan.frozen, plan.entrants);
    this.freezes++;
    yield* this.rebuild(plan, FREEZE_SLICE);
  }

  /** What a freeze at `day` takes from the history as it stands (which it leaves untouched): the frozen pasts, and the live games to replay. */
  private *planning(day: number): Generator<void, FreezePlan> {
    const { nodeDay, nodeMF, nodeR, nodeF } = this;
    const timelines = this.players.length;
    // Each timeline's live matches (a player's general skill and each of their deviations).
    const nodePlayer = new Int32Array(this.nodeCount);
    for (let p = 0; p < timelines; p++) {
      const timeline = this.players[p]!;
      for (let j = 0; j < timeline.nodeLength; j++) nodePlayer[this.nodeAt(timeline, j)] = p;
      if (p % PLAN_SLICE === PLAN_SLICE - 1) yield;
    }
    const liveMatches = new Int32Array(timelines);
    const live = yield* this.liveGames(day, nodePlayer, liveMatches);
    // Each timeline's skill on `day`: the filter at its last node on or before it, drifted by the timeline's own w².
    const pastOf = (p: number): FrozenTimeline | undefined => {
      const timeline = this.players[p]!;
      let last = -1;
      for (let j = 0; j < timeline.nodeLength && nodeDay[this.nodeAt(timeline, j)]! <= day; j++) last = this.nodeAt(timeline, j);
      let mean: number;
      let variance: number;
      if (last >= 0) {
        // Drifted to the freeze day, and risen by the learning curve (newcomerTrend; 0 without).
        mean = (this.ep ? nodeMF[last]! : nodeR[last]!) + this.trend(p, nodeDay[last]!, day);
        variance = 1 / nodeF[last]! + timeline.w2 * (day - nodeDay[last]!);
      } else if (timeline.prior !== undefined && !(timeline.prior.day > day)) {
        // A frozen past with no node since (an entrant's prior, on a first day after the freeze, is no past).
        mean = timeline.prior.mean + this.trend(p, timeline.prior.day, day);
        variance = timeline.prior.variance + (day > timeline.prior.day ? timeline.w2 * (day - timeline.prior.day) : 0);
      } else return undefined;
      const past: FrozenTimeline = { mean, variance, matches: timeline.matches - liveMatches[p]!, lastAt: timeline.lastAt ?? Number.NaN };
      if (timeline.start !== undefined) past.start = timeline.start;
      return past;
    };
    // The players with a past, in order, each with the deviations that have one (a deviation whose player has none is
    // dropped with the games on or before `day`, as the player's own are).
    const frozen: Array<{ id: string; past: FrozenTimeline; contexts: Map<string, FrozenTimeline> }> = [];
    let planned = 0;
    for (const p of this.generalTimelines) {
      if (++planned % PLAN_SLICE === 0) yield;
      const past = pastOf(p);
      if (past === undefined) continue;
      const contexts = new Map<string, FrozenTimeline>();
      const frozenDeviations: number[] = [];
      for (const [context, d] of this.players[p]!.contexts ?? []) {
        const deviation = pastOf(d);
        if (deviation === undefined) continue;
        contexts.set(context, deviation);
        frozenDeviations.push(d);
      }
      // Joint inference: the player's state on `day` as a whole, each marginal and covariance from the joint filter.
      const joint = this.jointFrozen(p, day);
      if (joint !== undefined) {
        const J = joint.components.length + 1;
        past.mean = joint.mean[0]!;
        past.variance = joint.cov[0]!;
        const places = frozenDeviations.map((d) => joint.components.indexOf(d) + 1);
        [...contexts.values()].forEach((deviation, k) => {
          const place = places[k]!;
          if (place > 0) {
            deviation.mean = joint.mean[place]!;
            deviation.variance = joint.cov[place * J + place]!;
          }
          // With the general skill, then each earlier frozen context (0 where one is outside the joint state).
          const covariance = [place > 0 ? joint.cov[place]! : 0];
          for (let i = 0; i < k; i++) covariance.push(place > 0 && places[i]! > 0 ? joint.cov[place * J + places[i]!]! : 0);
          deviation.covariance = covariance;
        });
      }
      frozen.push({ id: this.ids[p]!, past, contexts });
    }
    // newcomerMean: each group's entrants frozen so far, and the first skills of those who entered on or before `day` (their first
    // node freezes with their past, so their share of the group's mean stops moving); those who entered after it enter again
    // in the replay.
    const entrants = this.frozenEntrants.map((group) => ({ ...group }));
    if (this.options.newcomerMean !== 'zero') {
      const groupKey: string[] = [];
      for (const [key, g] of this.entryGroups) groupKey[g] = key;
      const byKey = new Map(entrants.map((group) => [group.group, group]));
      for (const p of this.generalTimelines) {
        const timeline = this.players[p]!;
        if (timeline.entry === undefined || timeline.nodeLength === 0 || !(nodeDay[this.nodeAt(timeline, 0)]! <= day)) continue;
        const key = groupKey[timeline.entry]!;
        let group = byKey.get(key);
        if (group === undefined) {
          group = { group: key, sum: 0, count: 0 };
          byKey.set(key, group);
          entrants.push(group);
        }
        group.sum += nodeR[this.nodeAt(timeline, 0)]!;
        group.count++;
      }
    }
    // Every timeline's last match time, and each deviation's player and context, to put back after the replay.
    const lastAt = this.players.map((timeline) => timeline.lastAt);
    const owner = this.players.map((timeline) => timeline.owner);
    const contextOf = this.players.map((timeline) => timeline.context);
    return { frozen, entrants, live, ids: this.ids.slice(), lastAt, owner, contextOf };
  }

  /**
   * Replays a freeze's live games into this history, which holds the frozen
   * pasts (`installFrozen`) and nothing else yet, pausing (a yield) after
   * every `every` games; then puts back the timelines' last match times.
   */
  private *rebuild(plan: FreezePlan, every: number): Generator<void> {
    const { live, ids, lastAt, owner, contextOf } = plan;
    let replayed = 0;
    for (const { match, homeOffset, day: matchDay } of this.replay(live, ids)) {
      if (++replayed % every === 0) yield;
      // A step of the close is 16 timelines, a fraction of a millisecond: a pause after each.
      yield* this.closeAhead(matchDay) ?? [];
      this.addMatch(match, homeOffset, matchDay);
    }
    // The replayed matches carry no time: the timelines' last match times are those before the rebuild.
    for (let p = 0; p < ids.length; p++) {
      let q = this.index.get(ids[p]!);
      if (q !== undefined && owner[p]! >= 0) q = this.players[q]!.contexts?.get(contextOf[p]!);
      if (q !== undefined) this.players[q]!.lastAt = lastAt[p];
    }
  }

  /**
   * The close may run ahead only when the match's day puts no freeze in
   * effect and reaches no freeze point, since beforeDay, which addMatch runs
   * before the close, then does nothing; addMatch then finds nothing left to
   * close, and the work and its order are the same. A rebuild's replay and
   * its queued matches never reach a freeze point.
   */
  protected override closesBefore(day: number): boolean {
    return super.closesBefore(day) && this.freezesNothing(day);
  }

  override closeHolds(day: number): boolean {
    return super.closeHolds(day) && this.freezesNothing(day);
  }

  /** Whether a first match of `day` would neither put a pending freeze in effect nor reach a freeze point (beforeDay would do nothing). */
  private freezesNothing(day: number): boolean {
    return this.pending !== undefined ? day < this.pending.effectDay : this.freezeDue(day) === undefined;
  }

  /** Empties the history (players, nodes, games, messages) as a new one, its arrays kept for reuse. */
  private clearHistory(): void {
    this.index.clear();
    this.ids.length = 0;
    this.generalIds.length = 0;
    this.generalTimelines.length = 0;
    this.players.length = 0;
    this.clearNodeLists();
    this.nodeCount = 0;
    this.entryCount = 0;
    this.entryGroups.clear();
    this.entrySum.length = 0;
    this.entrants.length = 0;
    this.gameCount = 0;
    this.gameContext.length = 0;
    // A new game's messages start at zero. Slots past the last game's were not written since the last clear, which
    // zeroed those before it: left alone, room reserved ahead (`reserve`) stays unwritten.
    const used = this.gameNodeCount;
    this.siteTau.fill(0, 0, used);
    this.siteNu.fill(0, 0, used);
    this.siteTauUp.fill(0, 0, used);
    this.siteNuUp.fill(0, 0, used);
    this.gameNodeCount = 0;
    this.rankCount = 0;
    this.day = -Infinity;
    this.movedFlag.fill(0);
    this.movedList = [];
    this.touched = [];
    this.cursor = 0;
    this.unfittedFrom = 0;
  }

  /**
   * The games added on a day after `day` (the day their match was given, not the day of the nodes a
   * late match was folded into), in the order added, their players as history indices (their general
   * timelines; a game in a context keeps the context). A restart can then tell them from the log: the
   * matches of days after `day`. Counts each timeline's live games into `liveMatches`.
   */
  private *liveGames(day: number, nodePlayer: Int32Array, liveMatches: Int32Array): Generator<void, LiveGames> {
    const { gameStart, gameSplit, gameEnd, gameNodes, gameRank, gameDay, gamePerPlayer } = this;
    let count = 0;
    let slots = 0;
    let ranks = 0;
    for (let g = 0; g < this.gameCount; g++) {
      if (g % GAME_SLICE === GAME_SLICE - 1) yield;
      if (!(gameDay[g]! > day)) continue;
      count++;
      for (let i = gameStart[g]!; i < gameEnd[g]!; i++) liveMatches[nodePlayer[gameNodes[i]!]!]!++;
      slots += (gameEnd[g]! - gameStart[g]!) / gamePerPlayer[g]!;
      if (gameRank[g]! >= 0) ranks += this.rankTeams(g) + 1;
    }
    const live: LiveGames = {
      count,
      day: new Int32Array(count),
      start: new Int32Array(count + 1),
      slots: new Int32Array(slots),
      split: new Int32Array(count),
      score: new Float64Array(count),
      offset: new Float64Array(this.offsets ? count : 0),
      rankBound: new Int32Array(ranks),
      rankTie: new Uint8Array(ranks),
      rankOrigin: new Int32Array(ranks),
      context: this.contextual || this.gameContext.length > 0 ? new Array<string | undefined>(count).fill(undefined) : [],
    };
    let k = 0;
    let s = 0;
    let r = 0;
    for (let g = 0; g < this.gameCount; g++) {
      if (g % GAME_SLICE === GAME_SLICE - 1) yield;
      const first = gameStart[g]!;
      if (!(gameDay[g]! > day)) continue;
      // In a context, each player's slots are their general node, then their deviation node.
      const per = gamePerPlayer[g]!;
      live.day[k] = gameDay[g]!;
      live.start[k] = s;
      for (let i = first; i < gameEnd[g]!; i += per) live.slots[s++] = nodePlayer[gameNodes[i]!]!;
      if (per === 2) live.context[k] = this.players[nodePlayer[gameNodes[first + 1]!]!]!.context;
      else if (this.gameContext.length > 0) live.context[k] = this.gameContext[g];
      live.score[k] = this.gameScore[g]!;
      if (this.offsets) live.offset[k] = this.gameOffset[g]!;
      if (gameRank[g]! >= 0) {
        live.split[k] = -1 - r;
        const teams = this.rankTeams(g);
        const b = gameRank[g]!;
        for (let t = 0; t <= teams; t++) {
          live.rankBound[r + t] = live.start[k]! + (this.rankBound[b + t]! - first) / per;
          live.rankTie[r + t] = this.rankTie[b + t]!;
          live.rankOrigin[r + t] = this.rankOrigin[b + t]!;
        }
        r += teams + 1;
      } else {
        live.split[k] = live.start[k]! + (gameSplit[g]! - first) / per;
      }
      k++;
    }
    live.start[count] = s;
    return live;
  }

  /** The number of teams of ranked game g. */
  private rankTeams(g: number): number {
    const b = this.gameRank[g]!;
    let t = 0;
    while (this.rankBound[b + t]! < this.gameEnd[g]!) t++;
    return t;
  }

  /**
   * The live games as matches that `addMatch` turns back into the same
   * games, the home offset passed alongside: the teams in the order first
   * given (which sets the order of the players' smoothing), ranked so that
   * the stable sort by placement puts them back in the same places.
   */
  private *replay(live: LiveGames, ids: readonly string[]): Generator<{ match: Match; homeOffset: number; day: number }> {
    const offsets = live.offset.length > 0;
    for (let k = 0; k < live.count; k++) {
      const team = (from: number, to: number, rank: number): MatchTeam => {
        const players: MatchTeam['players'] = [];
        for (let i = from; i < to; i++) players.push({ id: ids[live.slots[i]!]! });
        return { players, rank };
      };
      const offset = offsets ? live.offset[k]! : 0;
      let match: Match;
      let homeOffset: number;
      if (live.split[k]! >= 0) {
        const score = live.score[k]!;
        const teams = [team(live.start[k]!, live.split[k]!, score >= 0.5 ? 1 : 2), team(live.split[k]!, live.start[k + 1]!, score <= 0.5 ? 1 : 2)];
        match = offset !== 0 ? { teams, home: 0 } : { teams };
        homeOffset = offset;
      } else {
        const r = -1 - live.split[k]!;
        const teams: MatchTeam[] = [];
        let rank = 1;
        for (let t = 0; live.rankBound[r + t]! < live.start[k + 1]!; t++) {
          if (t > 0 && live.rankTie[r + t - 1] !== 1) rank = t + 1;
          teams[live.rankOrigin[r + t]!] = team(live.rankBound[r + t]!, live.rankBound[r + t + 1]!, rank);
        }
        const home = live.score[k]!;
        match = home >= 0 ? { teams, home: live.rankOrigin[r + home]! } : { teams };
        homeOffset = offset;
      }
      const context = live.context[k];
      if (context !== undefined) match.context = context;
      yield { match, homeOffset, day: live.day[k]! };
    }
  }
}

/** A jointly frozen player's mean and covariance (row-major, general skill first) from the marginals and each deviation's covariances. */
function jointMatrix(general: FrozenTimeline, deviations: readonly FrozenTimeline[]): { mean: Float64Array; cov: Float64Array } {
  const J = deviations.length + 1;
  const mean = new Float64Array(J);
  const cov = new Float64Array(J * J);
  mean[0] = general.mean;
  cov[0] = general.variance;
  deviations.forEach((deviation, k) => {
    const i = k + 1;
    mean[i] = deviation.mean;
    cov[i * J + i] = deviation.variance;
    const row = deviation.covariance ?? [];
    for (let l = 0; l < row.length && l < i; l++) {
      cov[i * J + l] = row[l]!;
      cov[l * J + i] = row[l]!;
    }
  });
  return { mean, cov };
}

/** Whether the frozen state's covariance matrix is positive definite (a Cholesky factorisation succeeds). */
function positiveDefinite(general: FrozenTimeline, deviations: readonly FrozenTimeline[]): boolean {
  const { cov } = jointMatrix(general, deviations);
  const J = deviations.length + 1;
  const L = new Float64Array(J * J);
  for (let i = 0; i < J; i++) {
    for (let l = 0; l <= i; l++) {
      let sum = cov[i * J + l]!;
      for (let r = 0; r < l; r++) sum -= L[i * J + r]! * L[l * J + r]!;
      if (i === l) {
        if (!(sum > 0)) return false;
        L[i * J + i] = Math.sqrt(sum);
      } else L[i * J + l] = sum / L[l * J + l]!;
    }
  }
  return true;
}
