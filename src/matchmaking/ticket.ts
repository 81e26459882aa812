/**
 * Matchmaking tickets: the wire form, validation, and the compiled form the
 * matcher works on.
 *
 * A ticket is one solo player or one party that must play on the same team.
 * Each player brings a skill coordinate (`percentile`, 1–100; optional
 * `rating` for team balance), pings per region and a filter.
 */
import { InvalidInputError } from '../core/errors.js';

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
   * Hidden rating used to balance teams (the seed's OA/YA); the percentile
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value;
}

function fail(field: string, message: string): never {
  throw new InvalidInputError(message, { field });
}

function parseNumber(value: unknown, field: string, min: number, max = Infinity): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(field, `must be a finite number, got ${describe(value)}`);
  if (value < min || value > max) fail(field, max === Infinity ? `must be at least ${min}, got ${value}` : `must be from ${min} to ${max}, got ${value}`);
  return value;
}

function parseId(value: unknown, field: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.length === 0) fail(field, `must be a non-empty string id, got ${describe(value)}`);
  if (value.length > 200) fail(field, 'must be at most 200 characters');
  return value;
}

/**
 * Validates one ticket from untrusted input. `teamSize` bounds the party.
 * Errors name the field (`players[1].pings`); callers add the line.
 */
export function parseTicket(raw: unknown, teamSize: number, defaults: FilterDefaults = {}): Ticket {
  const filterDefaults: PlayerFilter = { ...FILTER_DEFAULTS, ...defaults };
  if (!isRecord(raw)) fail('ticket', `must be a JSON object, got ${describe(raw)}`);
  const id = parseId(raw.id, 'id');
  const at = parseNumber(raw.at, 'at', -Infinity);
  if (!Array.isArray(raw.players)) fail('players', `must be an array of players, got ${describe(raw.players)}`);
  if (raw.players.length === 0) fail('players', 'must hold at least one player');
  if (raw.players.length > teamSize) fail('players', `party of ${raw.players.length} is larger than a team of ${teamSize}`);
  const seen = new Set<string>();
  const players = raw.players.map((player: unknown, index: number): TicketPlayer => {
    const field = `players[${index}]`;
    if (!isRecord(player)) fail(field, `must be an object, got ${describe(player)}`);
    const playerId = parseId(player.id, `${field}.id`);
    if (seen.has(playerId)) fail(`${field}.id`, `player "${playerId}" appears twice in the ticket`);
    seen.add(playerId);
    const percentile = parseNumber(player.percentile, `${field}.percentile`, 1, 100);
    const rating = player.rating === undefined ? undefined : parseNumber(player.rating, `${field}.rating`, 0);
    if (!isRecord(player.pings)) fail(`${field}.pings`, `must be an object of region → ping ms, got ${describe(player.pings)}`);
    const regions = Object.keys(player.pings);
    if (regions.length === 0) fail(`${field}.pings`, 'must name at least one region');
    const pings: Record<string, number> = {};
    for (const region of regions) {
      if (region.length === 0) fail(`${field}.pings`, 'region names must not be empty');
      pings[region] = parseNumber(player.pings[region], `${field}.pings.${region}`, 0);
    }
    const rawFilter = player.filter === undefined ? {} : player.filter;
    if (!isRecord(rawFilter)) fail(`${field}.filter`, `must be an object, got ${describe(rawFilter)}`);
    const within = rawFilter.within === undefined ? filterDefaults.within : parseNumber(rawFilter.within, `${field}.filter.within`, 0, 100);
    if (rawFilter.strict !== undefined && typeof rawFilter.strict !== 'boolean') fail(`${field}.filter.strict`, `must be true or false, got ${describe(rawFilter.strict)}`);
    const strict = rawFilter.strict === undefined ? filterDefaults.strict : (rawFilter.strict as boolean);
    const maxPing = rawFilter.maxPing === undefined ? filterDefaults.maxPing : parseNumber(rawFilter.maxPing, `${field}.filter.maxPing`, 0);
    const parsed: TicketPlayer = { id: playerId, percentile, pings, filter: { within, strict, maxPing } };
    if (rating !== undefined) parsed.rating = rating;
    return parsed;
  });
  return { id, at, players };
}
