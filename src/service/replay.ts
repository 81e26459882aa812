/**
 * Replays a ladder's stored matches from nothing: what `ladder rebuild` and
 * the corrections check the stored states against. It rates each unit with
 * the same `rateUnit` as the writer (rating.ts), and a whole-history ladder
 * through a fresh `LadderHistory` (whole-history.ts), so it reproduces the
 * stored states exactly.
 */
import type { Match } from 'ladder-core/core/match.js';
import type { MatchRating, PlayerState, RatingSystem } from 'ladder-core/core/systems.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { rateUnit, type StoredMatch } from './rating.js';
import { keepsWholeHistory, LadderHistory } from './whole-history.js';

/** A whole-history system's matches (in seq order) through a fresh `LadderHistory`, as the writer fills its own; `logEpoch` is the one its freeze is stamped with. */
export function replayHistory(system: RatingSystem, matches: Iterable<StoredMatch>, logEpoch = 0): LadderHistory {
  const history = new LadderHistory(system.name, system.options as Record<string, unknown>, logEpoch);
  history.addStored(matches);
  return history;
}

/** A season boundary: before the first match with seq ≥ `firstSeq`, every player's state is reset. */
export interface SeasonBoundary {
  firstSeq: number;
  reset(state: PlayerState): PlayerState;
}

/**
 * Replays stored matches (in seq order) from nothing and returns every
 * player's final state (a whole-history system: through a fresh
 * `LadderHistory`, as the writer rated them). Consecutive matches of the same round form one unit;
 * voided matches are skipped; at each season boundary every state is reset
 * (a boundary after the last match resets the final states).
 */
export function replayStored(system: RatingSystem, matches: Iterable<StoredMatch>, seasons: readonly SeasonBoundary[] = []): Map<string, PlayerState> {
  if (keepsWholeHistory(system.name)) {
    // A fresh history (never `system` itself, which may have rated before), filled as the writer fills its own.
    if (seasons.length > 0) throw new InvalidInputError(`${system.name} ladders have no seasons`, { field: 'seasons' });
    return new Map(replayHistory(system, matches).states);
  }
  const states = new Map<string, PlayerState>();
  const boundaries = [...seasons].sort((a, b) => a.firstSeq - b.firstSeq);
  let nextBoundary = 0;
  const crossTo = (seq: number) => {
    while (nextBoundary < boundaries.length && boundaries[nextBoundary]!.firstSeq <= seq) {
      const boundary = boundaries[nextBoundary++]!;
      for (const [id, state] of states) states.set(id, boundary.reset(state));
    }
  };
  let roundName: string | null = null;
  let roundMatches: Match[] = [];
  const apply = (ratings: MatchRating[]) => {
    for (const rating of ratings) for (const change of rating.players) states.set(change.id, change.after);
  };
  const flushRound = () => {
    if (roundMatches.length > 0) apply(rateUnit(system, roundMatches, states, true));
    roundMatches = [];
    roundName = null;
  };
  for (const stored of matches) {
    if (stored.voided) continue;
    if (nextBoundary < boundaries.length && boundaries[nextBoundary]!.firstSeq <= stored.seq) {
      flushRound();
      crossTo(stored.seq);
    }
    if (stored.round !== null) {
      if (stored.round !== roundName) flushRound();
      roundName = stored.round;
      roundMatches.push(stored.body);
      continue;
    }
    flushRound();
    // One match at a time: each sees the states left by the one before.
    apply(rateUnit(system, [stored.body], states, false));
  }
  flushRound();
  crossTo(Infinity);
  return states;
}
