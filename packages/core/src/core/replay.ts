/**
 * Replays a match log through a rating system, with Glicko-2 rating periods.
 *
 * - Consecutive matches with the same `period` form one rating period, all
 *   rated from the states at its start. A player who has played before (or
 *   was given as a starting state) and sits a period out gets step 6 alone for
 *   it: their RD grows, rating and volatility stay.
 * - A match without `period` is a period of its own. When it carries `at`, a
 *   player's RD first grows for the idle time since their last match (one
 *   step 6 per `periodMs`, continuous); without `at` nothing grows.
 */
import type { Match } from './match.js';
import type { MatchRating, PlayerState, RatingSystem } from './systems.js';

export interface StartingState {
  id: string;
  rating: number;
  rd?: number;
  volatility?: number;
}

export class Replay {
  readonly system: RatingSystem;
  /** Current state of every player seen or given. */
  readonly players = new Map<string, PlayerState>();
  private readonly seenAtPeriod = new Map<string, number>();
  private pending: Match[] = [];
  private pendingPeriod: string | undefined;
  private periodsDone = 0;
  private matchCount = 0;
  /** Time of the latest match, epoch ms. */
  lastAt: number | undefined;

  constructor(system: RatingSystem, starting: readonly StartingState[] = []) {
    this.system = system;
    for (const start of starting) {
      const initial = system.initial();
      const state: PlayerState = { ...initial, rating: start.rating };
      if (start.rd !== undefined) state.rd = start.rd;
      if (start.volatility !== undefined) state.volatility = start.volatility;
      this.players.set(start.id, state);
      this.seenAtPeriod.set(start.id, 0);
    }
  }

  get matches(): number {
    return this.matchCount;
  }

  /** Adds a match; it is rated once its rating period is complete (or at `finish`). */
  push(match: Match, onRated?: (rating: MatchRating) => void): void {
    if (this.pending.length > 0 && (match.period === undefined || match.period !== this.pendingPeriod)) this.flush(onRated);
    this.pending.push(match);
    this.pendingPeriod = match.period;
    this.matchCount++;
    if (match.at !== undefined && (this.lastAt === undefined || match.at > this.lastAt)) this.lastAt = match.at;
    if (match.period === undefined) this.flush(onRated);
  }

  /** Rates what is pending and brings every player's idle RD growth up to the last period. */
  finish(onRated?: (rating: MatchRating) => void): Map<string, PlayerState> {
    this.flush(onRated);
    if (this.periodsDone > 0) {
      for (const [id, seen] of this.seenAtPeriod) {
        const missed = this.periodsDone - seen;
        if (missed > 0) {
          this.players.set(id, this.system.idle(this.players.get(id)!, missed));
          this.seenAtPeriod.set(id, this.periodsDone);
        }
      }
    }
    return this.players;
  }

  private flush(onRated?: (rating: MatchRating) => void): void {
    if (this.pending.length === 0) return;
    const matches = this.pending;
    const tagged = this.pendingPeriod !== undefined;
    this.pending = [];
    this.pendingPeriod = undefined;
    if (tagged) {
      // Step 6 for each period a known player sat out before this one.
      for (const match of matches) {
        for (const team of match.teams) {
          for (const { id } of team.players) {
            const seen = this.seenAtPeriod.get(id);
            if (seen === undefined) continue;
            const missed = this.periodsDone - seen;
            if (missed > 0) {
              this.players.set(id, this.system.idle(this.players.get(id)!, missed));
              this.seenAtPeriod.set(id, this.periodsDone);
            }
          }
        }
      }
    }
    const ratings = this.system.ratePeriod(matches, this.players, { timeIdle: !tagged });
    if (tagged) this.periodsDone++;
    for (const rating of ratings) {
      for (const change of rating.players) {
        this.players.set(change.id, change.after);
        this.seenAtPeriod.set(change.id, this.periodsDone);
      }
      onRated?.(rating);
    }
  }
}

/** Replays a whole log and returns the final states. */
export function replay(system: RatingSystem, matches: Iterable<Match>, starting: readonly StartingState[] = []): Map<string, PlayerState> {
  const run = new Replay(system, starting);
  for (const match of matches) run.push(match);
  return run.finish();
}

/** What voiding matches by id does to a log. */
export interface VoidPlan {
  /** The log without the voided matches, in order. */
  kept: Match[];
  /**
   * Index in `kept` (and in the original log: nothing before it is removed)
   * of the first match whose rating may change: the first match of the
   * rating period that held the earliest voided match. Every match before it
   * rates exactly as before, so a replay may resume from the states at that
   * point. `kept.length` when nothing is voided.
   */
  restartAt: number;
  /** Ids asked for that name at least one match of the log (every match with the id is removed). */
  voided: string[];
  /** Ids asked for that name no match of the log. */
  missing: string[];
}

/** Splits a log into what stays after voiding `voidedIds` and where its ratings first change. */
export function voidPlan(matches: readonly Match[], voidedIds: Iterable<string>): VoidPlan {
  const wanted = new Set(voidedIds);
  const found = new Set<string>();
  const kept: Match[] = [];
  let first = -1;
  matches.forEach((match, index) => {
    if (match.id !== undefined && wanted.has(match.id)) {
      found.add(match.id);
      if (first === -1) first = index;
    } else {
      kept.push(match);
    }
  });
  let restartAt = kept.length;
  if (first !== -1) {
    // Back to the start of the rating period (consecutive matches of one `period`).
    restartAt = first;
    const period = matches[first].period;
    while (period !== undefined && restartAt > 0 && matches[restartAt - 1].period === period) restartAt--;
  }
  return { kept, restartAt, voided: [...wanted].filter((id) => found.has(id)), missing: [...wanted].filter((id) => !found.has(id)) };
}

/**
 * The states after replaying the log without the matches whose id is in
 * `voidedIds` — what a voided match leaves behind. Ids that name no match
 * are ignored (see `voidPlan` for which ids matched and where a replay may
 * resume).
 */
export function replayWithout(system: RatingSystem, matches: readonly Match[], voidedIds: Iterable<string>, starting: readonly StartingState[] = []): Map<string, PlayerState> {
  return replay(system, voidPlan(matches, voidedIds).kept, starting);
}
