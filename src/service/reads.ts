/**
 * The read side: a player's standing, history, the leaderboard (with search)
 * and the match list, composed from the store (states, matches) and the
 * rankings (order, percentiles). Plain records out; the HTTP layer only
 * passes them through.
 */
import { type Match, teamPlacements } from '../core/match.js';
import type { Database } from '../store/database.js';
import { historyOf, listMatches } from '../store/matches.js';
import { findPlayer, findPlayers, searchPlayers } from '../store/players.js';
import type { PlayerRow } from '../store/rows.js';
import { NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import type { Rankings } from './rankings.js';

export interface ReadContext {
  db: Database;
  rankings: Rankings;
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

export async function playerView(ctx: ReadContext, ladder: Ladder, id: string) {
  const row = await findPlayer(ctx.db, ladder.id, id);
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
  };
}

export async function historyView(ctx: ReadContext, ladder: Ladder, player: string, limit: number, offset: number, before?: number) {
  const rows = await historyOf(ctx.db, ladder.id, player, limit, offset, before);
  if (rows.length === 0 && offset === 0 && !(await findPlayer(ctx.db, ladder.id, player))) throw playerNotFound(ladder, player);
  return {
    player,
    history: rows.map((row) => ({
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
  };
}

export async function matchesView(ctx: ReadContext, ladder: Ladder, limit: number, offset: number) {
  const rows = await listMatches(ctx.db, ladder.id, limit, offset);
  return {
    matches: rows.map((row) => ({
      id: row.id,
      seq: row.seq,
      at: iso(row.at),
      ...(row.round !== null ? { round: row.round } : {}),
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

export async function leaderboardView(ctx: ReadContext, ladder: Ladder, query: LeaderboardQuery) {
  const { limit } = query;
  let offset = query.offset;
  let total: number;
  let entries: Array<{ id: string; rating: number; rank: number | null; percentile: number | null; division?: string | null }>;
  const details = new Map<string, PlayerRow>();
  if (query.search !== undefined) {
    const found = await searchPlayers(ctx.db, ladder.id, query.search, limit, offset);
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
    for (const row of await findPlayers(ctx.db, ladder.id, entries.map((e) => e.id))) details.set(row.id, row);
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
