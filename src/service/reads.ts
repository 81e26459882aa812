/**
 * The read side: a player's standing, history, the leaderboard (with search)
 * and the match list, composed from the store (states, matches) and the
 * rankings (order, percentiles). Plain records out; the HTTP layer only
 * passes them through.
 *
 * Every read anyone may ask for is bounded: its statements run through
 * `Database.read` (a statement timeout and cancellation when the client
 * goes away, on PostgreSQL), offsets are capped where each skipped row costs
 * work (schemas.ts), and the lists page on through keyset cursors (`before`,
 * answered as `next`) whose every page costs what the first does.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { type Match, teamPlacements } from 'ladder-core/core/match.js';
import type { Database, ReadOptions } from '../store/database.js';
import { historyOf, listMatches } from '../store/matches.js';
import { findPlayer, findPlayers, searchPlayers } from '../store/players.js';
import { type PlayerRow, rowToState } from '../store/rows.js';
import { NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import type { Rankings } from './rankings.js';
import { HISTORY_MAX_OFFSET, SEARCH_MAX_OFFSET } from './schemas.js';

export interface ReadContext {
  db: Database;
  rankings: Rankings;
}

/** A page of a list with a keyset cursor. */
export interface CursorPage {
  limit: number;
  offset: number;
  /** Only items of matches before this sequence number. */
  before?: number;
}

function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

function resultOf(match: Match, team: number): 'win' | 'loss' | 'draw' {
  const placements = teamPlacements(match);
  const own = placements[team]!;
  const best = Math.min(...placements);
  if (own > best) return 'loss';
  return placements.filter((p) => p === best).length > 1 ? 'draw' : 'win';
}

/** The ladder's (already validated) division table at a percentile. */
function divisionName(ladder: Ladder, percentile: number): string {
  const table = ladder.resolvedStandings.divisions;
  let found = table[0]!;
  for (const d of table) if (d.minPercentile <= percentile) found = d;
  return found.name;
}

function playerNotFound(ladder: Ladder, id: string): NotFoundError {
  return new NotFoundError(`no player ${JSON.stringify(id.slice(0, 80))} in ladder ${ladder.id}`, 'player');
}

export async function playerView(ctx: ReadContext, ladder: Ladder, id: string, options: ReadOptions = {}) {
  const row = await ctx.db.read((db) => findPlayer(db, ladder.id, id), options);
  if (!row) throw playerNotFound(ladder, id);
  const standing = await ctx.rankings.standing(ladder, { id: row.id, rating: row.rating, matches: row.matches, lastAt: row.last_at });
  return {
    id: row.id,
    rating: row.rating,
    ...(row.rd !== null ? { rd: row.rd } : {}),
    ...(row.volatility !== null ? { volatility: row.volatility } : {}),
    matches: row.matches,
    ...standing,
    lastAt: iso(row.last_at),
    ...(row.contexts !== null ? { contexts: rowToState(row).contexts } : {}),
  };
}

export async function historyView(ctx: ReadContext, ladder: Ladder, player: string, page: CursorPage, options: ReadOptions = {}) {
  const { rows, tooFarBack, known } = await ctx.db.read(async (db) => {
    // One entry more than the page: whether another page follows, for `next`.
    const found = await historyOf(db, ladder.id, player, { limit: page.limit + 1, offset: page.offset, before: page.before, maxSkipped: HISTORY_MAX_OFFSET });
    const known = found.rows.length > 0 || found.tooFarBack || page.offset > 0 || (await findPlayer(db, ladder.id, player)) !== undefined;
    return { ...found, known };
  }, options);
  if (!known) throw playerNotFound(ladder, player);
  if (tooFarBack) {
    throw new InvalidInputError(
      `more than ${HISTORY_MAX_OFFSET} of this player's entries are from sequence number ${page.before} on, and it is none of theirs; pass the \`seq\` of one of their entries (an answer's \`next\`)`,
      { field: 'before' },
    );
  }
  const shown = rows.slice(0, page.limit);
  return {
    player,
    history: shown.map((row) => ({
      matchId: row.id,
      seq: row.seq,
      at: iso(row.at),
      team: row.team,
      result: resultOf(row.body, row.team),
      before: row.before,
      after: row.after,
      terms: row.terms,
      teams: row.body.teams.map((t) => t.players.map((p) => p.id)),
      ...(row.voided_at !== null ? { void: true } : {}),
    })),
    next: rows.length > page.limit ? shown[shown.length - 1]!.seq : null,
  };
}

export async function matchesView(ctx: ReadContext, ladder: Ladder, page: CursorPage, options: ReadOptions = {}) {
  // One match more than the page: whether another page follows, for `next`.
  const rows = await ctx.db.read((db) => listMatches(db, ladder.id, { limit: page.limit + 1, offset: page.offset, before: page.before }), options);
  const shown = rows.slice(0, page.limit);
  return {
    next: rows.length > page.limit ? shown[shown.length - 1]!.seq : null,
    matches: shown.map((row) => ({
      id: row.id,
      seq: row.seq,
      at: iso(row.at),
      ...(row.round !== null ? { round: row.round } : {}),
      ...(row.body.context !== undefined ? { context: row.body.context } : {}),
      teams: row.body.teams.map((team) => ({
        players: team.players.map((p) => p.id),
        ...(team.rank !== undefined ? { rank: team.rank } : {}),
        ...(team.score !== undefined ? { score: team.score } : {}),
        ...(team.players.some((p) => p.quit) ? { quitters: team.players.filter((p) => p.quit).map((p) => p.id) } : {}),
      })),
      winProbability: row.win_probability,
      ...(row.voided_at !== null ? { void: { at: new Date(row.voided_at).toISOString(), reason: row.void_reason ?? '' } } : {}),
    })),
  };
}

export interface LeaderboardQuery {
  limit: number;
  offset: number;
  /** Centre the page on this player. */
  around?: string;
  /** Only players whose id starts with this; `total` counts all of them. */
  search?: string;
}

export async function leaderboardView(ctx: ReadContext, ladder: Ladder, query: LeaderboardQuery, options: ReadOptions = {}) {
  const { limit } = query;
  let offset = query.offset;
  let total: number;
  let entries: Array<{ id: string; rating: number; rank: number | null; percentile: number | null; division?: string | null }>;
  const details = new Map<string, PlayerRow>();
  if (query.search !== undefined) {
    // The rankings page at any depth for the cost of a first page; a search is an SQL page that reads every row it skips.
    if (offset > SEARCH_MAX_OFFSET)
      throw new InvalidInputError(`offset is capped at ${SEARCH_MAX_OFFSET} with \`search\`; narrow the search with a longer prefix`, { field: 'offset' });
    const search = query.search;
    const found = await ctx.db.read((db) => searchPlayers(db, ladder.id, search, limit, offset), options);
    total = found.total;
    entries = [];
    for (const row of found.rows) {
      details.set(row.id, row);
      const s = await ctx.rankings.standing(ladder, { id: row.id, rating: row.rating, matches: row.matches, lastAt: row.last_at });
      entries.push({ id: row.id, rating: row.rating, rank: s.rank, percentile: s.percentile, division: s.division });
    }
  } else {
    if (query.around !== undefined) {
      const position = await ctx.rankings.positionOf(ladder, query.around);
      if (position === null) throw new NotFoundError(`player ${JSON.stringify(query.around.slice(0, 80))} is not ranked in ladder ${ladder.id}`, 'around');
      offset = Math.max(0, position - Math.floor(limit / 2));
    }
    const page = await ctx.rankings.page(ladder, offset, limit);
    total = page.total;
    entries = page.entries;
    const ids = entries.map((e) => e.id);
    for (const row of await ctx.db.read((db) => findPlayers(db, ladder.id, ids), options)) details.set(row.id, row);
  }
  const placement = ladder.resolvedStandings.placementMatches;
  return {
    total,
    offset,
    limit,
    entries: entries.map((e) => {
      const row = details.get(e.id);
      const matches = row?.matches ?? 0;
      return {
        rank: e.rank,
        id: e.id,
        rating: e.rating,
        ...(row?.rd !== null && row?.rd !== undefined ? { rd: row.rd } : {}),
        matches,
        percentile: e.percentile,
        division: e.division !== undefined ? e.division : e.percentile === null ? null : divisionName(ladder, e.percentile),
        placementRemaining: Math.max(0, placement - matches),
      };
    }),
  };
}
