/**
 * The one row model of a player's rating state, and the conversions between
 * rows and the rating core's `PlayerState`, written once for the writer,
 * `ladder rebuild` and the routes.
 */
import type { ContextOffset, PlayerState } from 'ladder-core/core/systems.js';

/** A row of the players table as every query selects it (`PLAYER_COLUMNS`). */
export interface PlayerRow {
  id: string;
  rating: number;
  rd: number | null;
  volatility: number | null;
  matches: number;
  last_at: number | null;
  /** The sequence number of the player's newest history entry (null: none). */
  last_seq: number | null;
  /** Per-context offsets (a json column; null: none). */
  contexts: Record<string, ContextOffset> | null;
}

/** The select list that yields a PlayerRow. */
export const PLAYER_COLUMNS = 'id, rating, rd, volatility, matches, last_at, last_seq, contexts';

export function rowToState(row: PlayerRow): PlayerState {
  const state: PlayerState = { rating: row.rating, matches: row.matches };
  if (row.rd !== null) state.rd = row.rd;
  if (row.volatility !== null) state.volatility = row.volatility;
  if (row.last_at !== null) state.lastAt = row.last_at;
  if (row.contexts !== null && row.contexts !== undefined) state.contexts = typeof row.contexts === 'string' ? JSON.parse(row.contexts) : row.contexts;
  return state;
}

/** A player's id with its state, as written. */
export interface PlayerStateRecord {
  id: string;
  state: PlayerState;
  /** The sequence number of its newest history entry; absent or null keeps the stored one. */
  lastSeq?: number | null;
}

/** Column arrays of player states, the parameters of an unnest() insert. */
export function stateColumns(players: readonly PlayerStateRecord[]) {
  return {
    id: players.map((p) => p.id),
    rating: players.map((p) => p.state.rating),
    rd: players.map((p) => p.state.rd ?? null),
    volatility: players.map((p) => p.state.volatility ?? null),
    matches: players.map((p) => p.state.matches),
    lastAt: players.map((p) => p.state.lastAt ?? null),
    lastSeq: players.map((p) => p.lastSeq ?? null),
    contexts: players.map((p) => (p.state.contexts === undefined ? null : JSON.stringify(p.state.contexts))),
  };
}

/**
 * A text[] parameter as a PostgreSQL array literal built by JSON.stringify:
 * node-postgres escapes array elements one by one in JavaScript, which costs
 * about 2 % of the server's time in the load profile. JSON's `\"` and `\\` mean the same in an array
 * literal; any other escape (control characters, lone surrogates) has no
 * equivalent there, so such arrays go to node-postgres unchanged.
 */
export function textArray(values: readonly (string | null)[]): string | readonly (string | null)[] {
  const json = JSON.stringify(values);
  if (/\\[^"\\]/.test(json)) return values;
  return `{${json.slice(1, -1)}}`;
}

/**
 * A numeric array parameter (int4[], int8[], float8[]) as an array literal,
 * for the same reason as `textArray`. Exact: a JS number's shortest
 * round-trip text reads back as the same double in PostgreSQL. Integers past
 * 1e21 (which JS would write in exponent form, invalid for int8) are never
 * stored: sequence numbers, counts and epoch milliseconds.
 */
export function numberArray(values: readonly (number | null)[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ',';
    const value = values[i];
    literal += value === null ? 'NULL' : String(value);
  }
  return `${literal}}`;
}
