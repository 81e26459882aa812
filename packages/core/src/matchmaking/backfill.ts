/**
 * Backfill requests: a match in progress that lost players asks the
 * matchmaker for waiting tickets to fill its open slots.
 *
 * The match's players take part in the skill rule as solo tickets would:
 * each one's filter must hold every newcomer, and every newcomer's filter
 * must hold each of them and every other newcomer (a newcomer party's range
 * spans its players, as a ticket's does). The match's players need not hold
 * each other — they are already playing. Their loose filters widen with the
 * time since the request's `at`, on the matchmaker's schedule (set `at` to
 * the match's oldest ticket's to carry on from the widening the match was
 * formed at). Newcomers must be able to play in the match's region (their
 * ping there within their own maxPing, and within the request's
 * `filter.maxPing` when it sets one); newcomers then count as the match's
 * players for later passes.
 */
import { fail, isRecord, parseId, parseNumber, type PlayerFilter } from './ticket.js';
import { effectiveWithin, type ResolvedWidening } from './widening.js';

/** One player already in the match. */
export interface BackfillPlayerInput {
  /** Standing percentile, 1–100. */
  percentile: number;
  /** Rating for team balance; the percentile stands in without it. */
  rating?: number;
  /** The player's filter (`within`, `strict`); missing fields come from the request's `filter`, then the matchmaker's defaults. */
  filter?: Partial<Pick<PlayerFilter, 'within' | 'strict'>>;
}

export interface BackfillInput {
  /** The request's id (one open request per id). */
  id: string;
  /** The match being filled (the game server's id). */
  match: string;
  /** Region the match is hosted in. */
  region: string;
  /** Second the request was made (same clock as tickets' `at`): widening and the order requests are served in. */
  at: number;
  /** Player ids per team, as the match stands now (a team may be empty). */
  teams: string[][];
  /** Players each team should have. @default the matchmaker's team size */
  teamSize?: number;
  /** Percentile (and optional rating and filter) of every player on `teams`, by id. */
  players?: Record<string, BackfillPlayerInput>;
  /**
   * Filter defaults for the match's players (`within`, `strict`), and
   * `maxPing`: the worst ping in the region a newcomer may have (no limit
   * beyond each newcomer's own maxPing when absent).
   */
  filter?: Partial<PlayerFilter>;
}

/** A match player of a validated request. */
export interface BackfillPlayer {
  percentile: number;
  rating?: number;
  filter: { within: number; strict: boolean };
}

/**
 * A validated request as the matchmaker keeps it: players in a Map (an
 * object with thousands of distinct keys costs V8 a hidden-class transition
 * per new key, microseconds each).
 */
export interface ParsedBackfill extends Omit<Backfill, 'players'> {
  players: Map<string, BackfillPlayer>;
}

/** A validated request, as `Matchmaker.backfills()` returns it (teams include newcomers). */
export interface Backfill {
  id: string;
  match: string;
  region: string;
  at: number;
  teams: string[][];
  teamSize: number;
  players: Record<string, BackfillPlayer>;
  /** Worst ping a newcomer may have in the region (Infinity: only their own maxPing). */
  maxPing: number;
}

/** What one pass did for one request. */
export interface BackfillResult {
  id: string;
  match: string;
  region: string;
  /** Ticket ids added in this pass, per team (request's team order). */
  added: string[][];
  /** Player ids per team now, the match's players first, then newcomers. */
  players: string[][];
  /** Slots still open per team. */
  open: number[];
  /** Every slot filled: the request has left the matchmaker. */
  filled: boolean;
  /**
   * When not filled: the request as it stands now, newcomers on its teams
   * with their percentile, rating and filter — what a caller of the one-shot
   * `matchmake` stores and sends with its next pass. (A newcomer party is
   * carried as solo players there, so its players must each hold later
   * newcomers, a little stricter than the party's span that a long-lived
   * `Matchmaker` keeps.)
   */
  remaining?: BackfillInput;
}

/** A copy of a kept request in the public form. */
export function copyBackfill(request: ParsedBackfill): Backfill {
  const players: Record<string, BackfillPlayer> = {};
  for (const [id, p] of request.players) players[id] = { ...p, filter: { ...p.filter } };
  return { ...request, teams: request.teams.map((team) => [...team]), players };
}

/** A kept request back in the input form (every player's filter spelled out). */
export function backfillInput(request: ParsedBackfill): BackfillInput {
  const { maxPing, ...rest } = copyBackfill(request);
  return { ...rest, ...(maxPing === Infinity ? {} : { filter: { maxPing } }) };
}

/**
 * Validates a backfill request. `teamSize` and `defaults` are the
 * matchmaker's; `isQueued` tells whether a player waits in a ticket (a player
 * cannot be in a match and in the queue at once). Errors name the field.
 */
export function parseBackfill(raw: unknown, teamSize: number, defaults: PlayerFilter, isQueued: (playerId: string) => string | undefined): ParsedBackfill {
  if (!isRecord(raw)) fail('backfill', 'must be a JSON object');
  const id = parseId(raw.id, 'id');
  const match = parseId(raw.match, 'match');
  const region = parseId(raw.region, 'region');
  const at = parseNumber(raw.at, 'at', -Infinity);
  const size = raw.teamSize === undefined ? teamSize : parseNumber(raw.teamSize, 'teamSize', 1);
  if (!Number.isInteger(size)) fail('teamSize', `must be a whole number, got ${size}`);
  const rawFilter = raw.filter === undefined ? {} : raw.filter;
  if (!isRecord(rawFilter)) fail('filter', 'must be an object');
  const within = rawFilter.within === undefined ? defaults.within : parseNumber(rawFilter.within, 'filter.within', 0, 100);
  if (rawFilter.strict !== undefined && typeof rawFilter.strict !== 'boolean') fail('filter.strict', 'must be true or false');
  const strict = rawFilter.strict === undefined ? defaults.strict : (rawFilter.strict as boolean);
  const maxPing = rawFilter.maxPing === undefined ? Infinity : parseNumber(rawFilter.maxPing, 'filter.maxPing', 0);
  if (!Array.isArray(raw.teams) || raw.teams.length < 2) fail('teams', 'must be an array of at least two teams (arrays of player ids)');
  const rawPlayers = raw.players === undefined ? {} : raw.players;
  if (!isRecord(rawPlayers)) fail('players', 'must be an object of player id → {percentile, rating?, filter?}');
  const seen = new Set<string>();
  const players = new Map<string, BackfillPlayer>();
  let open = 0;
  const teams = raw.teams.map((team: unknown, t: number) => {
    if (!Array.isArray(team)) fail(`teams[${t}]`, 'must be an array of player ids');
    if (team.length > size) fail(`teams[${t}]`, `has ${team.length} players, more than a team of ${size}`);
    open += size - team.length;
    return team.map((rawId: unknown, i: number) => {
      const field = `teams[${t}][${i}]`;
      const playerId = parseId(rawId, field);
      if (seen.has(playerId)) fail(field, `player "${playerId}" is listed twice`);
      seen.add(playerId);
      const ticket = isQueued(playerId);
      if (ticket !== undefined) fail(field, `player "${playerId}" is waiting in ticket "${ticket}"`);
      const entry = rawPlayers[playerId];
      const at = `players.${playerId}`;
      if (!isRecord(entry)) fail(at, "must give the player's percentile (an object {percentile, rating?, filter?})");
      const player: BackfillPlayer = {
        percentile: parseNumber(entry.percentile, `${at}.percentile`, 1, 100),
        filter: { within, strict },
      };
      if (entry.rating !== undefined) player.rating = parseNumber(entry.rating, `${at}.rating`, 0);
      if (entry.filter !== undefined) {
        if (!isRecord(entry.filter)) fail(`${at}.filter`, 'must be an object');
        if (entry.filter.within !== undefined) player.filter.within = parseNumber(entry.filter.within, `${at}.filter.within`, 0, 100);
        if (entry.filter.strict !== undefined) {
          if (typeof entry.filter.strict !== 'boolean') fail(`${at}.filter.strict`, 'must be true or false');
          player.filter.strict = entry.filter.strict;
        }
      }
      players.set(playerId, player);
      return playerId;
    });
  });
  for (const key of Object.keys(rawPlayers)) if (!seen.has(key)) fail(`players.${key}`, 'is not on any team');
  if (open === 0) fail('teams', 'every team is full: nothing to fill');
  return { id, match, region, at, teams, teamSize: size, players, maxPing };
}

/**
 * The matchmaker's working copy of a request: the intersection, at every
 * widening level, of its groups' ranges (each match player alone, each
 * newcomer ticket as one group whose range spans its players), kept up to
 * date as groups join.
 */
export class BackfillState {
  readonly request: ParsedBackfill;
  /** [low, high] of the intersection at level l: ranges[2l], ranges[2l + 1]. */
  readonly ranges: Float64Array;
  minPercentile = Infinity;
  maxPercentile = -Infinity;
  /** Per team: players, and the sum of their ratings (percentile without one). */
  readonly counts: number[];
  readonly rankSums: number[];
  readonly roster = new Set<string>();
  /** Withdrawn; dropped from the queue at the next pass. */
  removed = false;

  constructor(
    request: ParsedBackfill,
    private readonly widening: ResolvedWidening,
  ) {
    this.request = request;
    const levels = widening.steps.length + 1;
    this.ranges = new Float64Array(2 * levels);
    for (let level = 0; level < levels; level++) {
      this.ranges[2 * level] = -Infinity;
      this.ranges[2 * level + 1] = Infinity;
    }
    this.counts = request.teams.map((team) => team.length);
    this.rankSums = request.teams.map((team) => team.reduce((sum, id) => sum + (request.players.get(id)!.rating ?? request.players.get(id)!.percentile), 0));
    for (const team of request.teams) {
      for (const id of team) {
        const player = request.players.get(id)!;
        this.roster.add(id);
        this.narrow([{ percentile: player.percentile, within: player.filter.within, strict: player.filter.strict }]);
      }
    }
  }

  /** Open slots of team t. */
  open(t: number): number {
    return this.request.teamSize - this.counts[t];
  }

  /** Adds a newcomer ticket's players to team t. */
  join(t: number, players: Array<{ id: string; percentile: number; rating: number; within: number; strict: boolean }>): void {
    const request = this.request;
    for (const p of players) {
      request.teams[t].push(p.id);
      const entry: BackfillPlayer = { percentile: p.percentile, filter: { within: p.within, strict: p.strict } };
      if (!Number.isNaN(p.rating)) entry.rating = p.rating;
      request.players.set(p.id, entry);
      this.roster.add(p.id);
      this.counts[t]++;
      this.rankSums[t] += Number.isNaN(p.rating) ? p.percentile : p.rating;
    }
    this.narrow(players);
  }

  /** Intersects the ranges with one group's span at every level. */
  private narrow(group: ReadonlyArray<{ percentile: number; within: number; strict: boolean }>): void {
    const levels = this.ranges.length / 2;
    for (let level = 0; level < levels; level++) {
      let low = Infinity;
      let high = -Infinity;
      for (const p of group) {
        const width = effectiveWithin(p.within, p.strict, level, this.widening);
        low = Math.min(low, p.percentile - width);
        high = Math.max(high, p.percentile + width);
      }
      this.ranges[2 * level] = Math.max(this.ranges[2 * level], low);
      this.ranges[2 * level + 1] = Math.min(this.ranges[2 * level + 1], high);
    }
    for (const p of group) {
      this.minPercentile = Math.min(this.minPercentile, p.percentile);
      this.maxPercentile = Math.max(this.maxPercentile, p.percentile);
    }
  }
}
