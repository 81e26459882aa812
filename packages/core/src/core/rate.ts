/**
 * One match in, every player's new state out: the one-call form of the
 * rating systems (openskill's `rate`), for callers that keep their own store
 * of states and want none of the replay machinery.
 */
import { InvalidInputError } from './errors.js';
import { type Match, type MatchInput, parseContext, parseMatch } from './match.js';
import type { PlayerState, RatingSystem } from './systems.js';

/** Players' states by id: a Map, or a plain object such as one read from JSON. */
export type PlayerStates = ReadonlyMap<string, PlayerState> | Readonly<Record<string, PlayerState>>;

/** A Map or any map-like store (a record's values are states, never functions). */
function isMap(states: PlayerStates): states is ReadonlyMap<string, PlayerState> {
  return typeof (states as ReadonlyMap<string, PlayerState>).get === 'function';
}

export interface RateOptions {
  /** Return a copy of every state in `states` with the match's players updated, not only the match's players. @default false */
  all?: boolean;
}

/**
 * Rates one match and returns the new state of each of its players, by id
 * (with `{ all: true }`, every player of `states` too, so the answer can
 * replace the caller's map).
 * `match` may be in its wire form (bare ids, ISO times): it is validated, and
 * a bad one is an InvalidInputError naming the field. A player missing from
 * `states` starts as the system's new player. With Glicko-2 the match is a
 * rating period of its own; `states` is not changed.
 */
export function rate(system: RatingSystem, match: MatchInput | Match, states: PlayerStates = new Map(), options: RateOptions = {}): Map<string, PlayerState> {
  const known = isMap(states) ? states : new Map(Object.entries(states));
  const rating = system.rateMatch(parseMatch(match), known);
  const result = options.all ? new Map(known) : new Map<string, PlayerState>();
  for (const change of rating.players) result.set(change.id, change.after);
  return result;
}

export interface PredictOptions {
  /** The match's context (map, mode, level): used by systems with per-context offsets switched on. */
  context?: string;
}

/**
 * Each team's chance of winning a match between `teams` (lists of player
 * ids), from the players' states; a player missing from `states` counts as
 * the system's new player. A player on two teams, or a team with no
 * players, is an InvalidInputError naming the field.
 */
export function predict(system: RatingSystem, teams: ReadonlyArray<readonly string[]>, states: PlayerStates = new Map(), options: PredictOptions = {}): number[] {
  const context = options.context === undefined ? undefined : parseContext(options.context, 'context');
  if (teams.length < 2) throw new InvalidInputError('a prediction needs at least two teams', { field: 'teams' });
  const known = isMap(states) ? states : new Map(Object.entries(states));
  const seen = new Set<string>();
  const initial = system.initial();
  return system.predict(
    teams.map((team, t) => {
      if (team.length === 0) throw new InvalidInputError('a team needs at least one player', { field: `teams[${t}]` });
      return team.map((id, p) => {
        if (typeof id !== 'string' || id.length === 0) throw new InvalidInputError('must be a non-empty player id', { field: `teams[${t}][${p}]` });
        if (seen.has(id)) throw new InvalidInputError(`player ${JSON.stringify(id)} is on more than one team`, { field: `teams[${t}][${p}]` });
        seen.add(id);
        return known.get(id) ?? initial;
      });
    }),
    context,
  );
}
