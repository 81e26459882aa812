/**
 * One match in, every player's new state out: the one-call form of the
 * rating systems (openskill's `rate`), for callers that keep their own store
 * of states and want none of the replay machinery.
 */
import { type Match, type MatchInput, parseMatch } from './match.js';
import type { PlayerState, RatingSystem } from './systems.js';

/** Players' states by id: a Map, or a plain object such as one read from JSON. */
export type PlayerStates = ReadonlyMap<string, PlayerState> | Readonly<Record<string, PlayerState>>;

/** A Map or any map-like store (a record's values are states, never functions). */
function isMap(states: PlayerStates): states is ReadonlyMap<string, PlayerState> {
  return typeof (states as ReadonlyMap<string, PlayerState>).get === 'function';
}

/**
 * Rates one match and returns the new state of each of its players, by id.
 * `match` may be in its wire form (bare ids, ISO times): it is validated, and
 * a bad one is an InvalidInputError naming the field. A player missing from
 * `states` starts as the system's new player. With Glicko-2 the match is a
 * rating period of its own; `states` is not changed.
 */
export function rate(system: RatingSystem, match: MatchInput | Match, states: PlayerStates = new Map()): Map<string, PlayerState> {
  const known = isMap(states) ? states : new Map(Object.entries(states));
  const rating = system.rateMatch(parseMatch(match), known);
  return new Map(rating.players.map((change) => [change.id, change.after]));
}
