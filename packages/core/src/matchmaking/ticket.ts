/**
 * Matchmaking tickets: the wire form, validation, and the compiled form the
 * matcher works on.
 *
 * A ticket is one solo player or one party that must play on the same team.
 * Each player brings a skill coordinate (`percentile`, 1–100; optional
 * `rating` for team balance), pings per region and a filter.
 */
import { InvalidInputError } from '../core/errors.js';
import { identifierProblem, isIdentifier } from '../core/ids.js';

export interface PlayerFilter {
  /** Accept players within this many percentiles of me. */
  within: number;
  /** Strict filters never widen. */
  strict: boolean;
  /** Highest ping (ms) I accept for the region the match is placed in. */
  maxPing: number;
}

export interface TicketPlayer {
  id: string;
  /** Standing percentile, 1–100 (the filter works on it). */
  percentile: number;
  /**
   * Hidden rating used to balance teams (the team-rank write-up's OA/YA); the percentile
   * stands in when absent.
   */
  rating?: number;
  /** Round-trip ms per region id, e.g. {"eu":35,"na":120}. */
  pings: Record<string, number>;
  filter: PlayerFilter;
}

export interface Ticket {
  id: string;
  /** Second the ticket entered the queue. */
  at: number;
  players: TicketPlayer[];
}

/**
 * A ticket as a caller sends it: `filter` and each of its fields may be left
 * out (the matchmaker's `filterDefaults` fill them in), ids may be numbers.
 * Every `Ticket` is a `TicketInput`. The matchmaker validates at run time
 * whatever it is given, so untrusted input may be passed in as this type.
 */
export interface TicketInput {
  id: string | number;
  at: number;
  players: TicketPlayerInput[];
}

export interface TicketPlayerInput {
  id: string | number;
  percentile: number;
  rating?: number;
  pings: Record<string, number>;
  filter?: Partial<PlayerFilter>;
}

/** Defaults for a player who sends no filter (or only part of one). */
export interface FilterDefaults {
  /** @default 10 — wide enough to match quickly at launch-size queues, close enough that a 6v6 stays within a tenth of the ladder. */
  within?: number;
  /** @default false — loose: most players prefer a game to a perfect game. */
  strict?: boolean;
  /** @default 150 — above this, action games become unpleasant for everyone in the lobby. */
  maxPing?: number;
}

export const FILTER_DEFAULTS: Readonly<PlayerFilter> = Object.freeze({ within: 10, strict: false, maxPing: 150 });

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value;
}

export function fail(field: string, message: string): never {
  throw new InvalidInputError(message, { field });
}

export function parseNumber(value: unknown, field: string, min: number, max = Infinity): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(field, `must be a finite number, got ${describe(value)}`);
  if (value < min || value > max) fail(field, max === Infinity ? `must be at least ${min}, got ${value}` : `must be from ${min} to ${max}, got ${value}`);
  return value;
}

export function parseId(value: unknown, field: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.length === 0) fail(field, `must be a non-empty string id, got ${describe(value)}`);
  const problem = identifierProblem(value);
  if (problem !== undefined) fail(field, problem);
  return value;
}

/**
 * One validated ticket as flat columns, reused from ticket to ticket: the
 * matchmaker reads these straight into its own typed arrays, so queueing a
 * ticket allocates no objects per player (at a million waiting tickets the
 * garbage collector, not the validation, was most of the queueing time).
 */
export class TicketColumns {
  id = '';
  at = 0;
  /** Players in the ticket. */
  count = 0;
  playerIds: string[] = [];
  percentiles: number[] = [];
  /** NaN when the player sent no rating. */
  ratings: number[] = [];
  within: number[] = [];
  strict: boolean[] = [];
  maxPing: number[] = [];
  /** Player k's pings are `pingRegions`/`pingValues` [pingStart[k], pingStart[k + 1]), in the order sent. */
  pingStart: number[] = [0];
  pingRegions: string[] = [];
  pingValues: number[] = [];
}

/** `FILTER_DEFAULTS` overridden by the given defaults. */
export function resolveFilterDefaults(defaults: FilterDefaults = {}): PlayerFilter {
  return {
    within: defaults.within ?? FILTER_DEFAULTS.within,
    strict: defaults.strict ?? FILTER_DEFAULTS.strict,
    maxPing: defaults.maxPing ?? FILTER_DEFAULTS.maxPing,
  };
}

/**
 * Validates one ticket from untrusted input into `out` (see `parseTicket`
 * for the rules and errors). On error `out` holds a partial ticket.
 */
export function parseTicketInto(raw: unknown, teamSize: number, filterDefaults: PlayerFilter, out: TicketColumns): void {
  if (!isRecord(raw)) fail('ticket', `must be a JSON object, got ${describe(raw)}`);
  out.id = parseId(raw.id, 'id');
  out.at = parseNumber(raw.at, 'at', -Infinity);
  const rawPlayers = raw.players;
  if (!Array.isArray(rawPlayers)) fail('players', `must be an array of players, got ${describe(rawPlayers)}`);
  if (rawPlayers.length === 0) fail('players', 'must hold at least one player');
  if (rawPlayers.length > teamSize) fail('players', `party of ${rawPlayers.length} is larger than a team of ${teamSize}`);
  const count = rawPlayers.length;
  out.count = 0;
  let pings = 0;
  // Field names (`players[3].pings.eu`) are only built on the error path: the
  // queue validates millions of players, and a name per field was most of
  // the garbage it made.
  for (let index = 0; index < count; index++) {
    const player: unknown = rawPlayers[index];
    if (!isRecord(player)) fail(`players[${index}]`, `must be an object, got ${describe(player)}`);
    const rawId = player.id;
    const playerId = typeof rawId === 'string' && isIdentifier(rawId) ? rawId : parseId(rawId, `players[${index}].id`);
    // Parties are small: a scan beats building a Set per ticket.
    for (let k = 0; k < index; k++) if (out.playerIds[k] === playerId) fail(`players[${index}].id`, `player "${playerId}" appears twice in the ticket`);
    out.playerIds[index] = playerId;
    const percentile = player.percentile;
    out.percentiles[index] = typeof percentile === 'number' && percentile >= 1 && percentile <= 100 ? percentile : parseNumber(percentile, `players[${index}].percentile`, 1, 100);
    const rating = player.rating;
    out.ratings[index] = rating === undefined ? NaN : isFiniteAtLeast(rating, 0) ? rating : parseNumber(rating, `players[${index}].rating`, 0);
    const rawPings = player.pings;
    if (!isRecord(rawPings)) fail(`players[${index}].pings`, `must be an object of region → ping ms, got ${describe(rawPings)}`);
    out.pingStart[index] = pings;
    for (const region in rawPings) {
      if (!Object.hasOwn(rawPings, region)) continue;
      if (region.length === 0) fail(`players[${index}].pings`, 'region names must not be empty');
      const ping = rawPings[region];
      out.pingRegions[pings] = region;
      out.pingValues[pings] = isFiniteAtLeast(ping, 0) ? ping : parseNumber(ping, `players[${index}].pings.${region}`, 0);
      pings++;
    }
    if (pings === out.pingStart[index]) fail(`players[${index}].pings`, 'must name at least one region');
    const rawFilter = player.filter === undefined ? {} : player.filter;
    if (!isRecord(rawFilter)) fail(`players[${index}].filter`, `must be an object, got ${describe(rawFilter)}`);
    const within = rawFilter.within;
    out.within[index] =
      within === undefined
        ? filterDefaults.within
        : typeof within === 'number' && within >= 0 && within <= 100
          ? within
          : parseNumber(within, `players[${index}].filter.within`, 0, 100);
    if (rawFilter.strict !== undefined && typeof rawFilter.strict !== 'boolean')
      fail(`players[${index}].filter.strict`, `must be true or false, got ${describe(rawFilter.strict)}`);
    out.strict[index] = rawFilter.strict === undefined ? filterDefaults.strict : (rawFilter.strict as boolean);
    const maxPing = rawFilter.maxPing;
    out.maxPing[index] = maxPing === undefined ? filterDefaults.maxPing : isFiniteAtLeast(maxPing, 0) ? maxPing : parseNumber(maxPing, `players[${index}].filter.maxPing`, 0);
    out.count = index + 1;
  }
  out.pingStart[count] = pings;
}

/** The fast path's check; anything else goes through `parseNumber` for the error. */
function isFiniteAtLeast(value: unknown, min: number): value is number {
  return typeof value === 'number' && value >= min && value !== Infinity;
}

/**
 * Validates one ticket from untrusted input. `teamSize` bounds the party.
 * Errors name the field (`players[1].pings`); callers add the line.
 */
export function parseTicket(raw: unknown, teamSize: number, defaults: FilterDefaults = {}): Ticket {
  const columns = new TicketColumns();
  parseTicketInto(raw, teamSize, resolveFilterDefaults(defaults), columns);
  const players: TicketPlayer[] = [];
  for (let k = 0; k < columns.count; k++) {
    const pings: Record<string, number> = {};
    for (let p = columns.pingStart[k]; p < columns.pingStart[k + 1]; p++) pings[columns.pingRegions[p]] = columns.pingValues[p];
    const player: TicketPlayer = {
      id: columns.playerIds[k],
      percentile: columns.percentiles[k],
      pings,
      filter: { within: columns.within[k], strict: columns.strict[k], maxPing: columns.maxPing[k] },
    };
    if (!Number.isNaN(columns.ratings[k])) player.rating = columns.ratings[k];
    players.push(player);
  }
  return { id: columns.id, at: columns.at, players };
}
