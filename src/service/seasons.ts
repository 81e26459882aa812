/**
 * Seasons. Opening a season closes the current one: its final standings are
 * frozen (rank, rating, RD, percentile, division, matches of every player),
 * then every player's state gets the soft reset
 *
 *   rating → toward + keep · (rating − toward)        (team rank: at least 1.00, in cents)
 *   RD     → max(RD, rd)                              (Glicko systems, when `rd` is given)
 *   matches → 0                                       (only with `restartPlacement`)
 *
 * with `toward` defaulting to the system's starting rating. The new season
 * starts at the next sequence number; replays (rebuild, corrections) apply
 * the reset where a player's history crosses that point. Leaderboards and
 * percentiles count only players who have played in the current season.
 *
 * A whole-history ladder (Whole-History Rating) opens no seasons: its states
 * are derived from the whole match log, not carried from stored states, so a
 * soft reset has nothing to act on (400 naming `ladder`).
 */
import type { z } from 'zod';
import type { PlayerState, RatingSystem } from 'ladder-core/core/systems.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { Leaderboard, softReset } from 'ladder-core/standings';
import type { Database } from '../store/database.js';
import { adjustLadder, countCorrection, lockLadder, updateLadder } from '../store/ladders.js';
import { playerPages, upsertPlayers } from '../store/players.js';
import { rowToState } from '../store/rows.js';
import { closeSeason, type FrozenStanding, insertSeason, insertStandings, listSeasons, type SeasonRow, standingOf, standingsPage } from '../store/seasons.js';
import { randomInt } from 'node:crypto';
import { ConflictError, NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import { beingCorrected } from './correction-state.js';
import type { seasonSchema } from './schemas.js';
import { sortInSlices } from './sort-in-slices.js';
import { Turns } from './turns.js';
import { refuseSeasons } from './whole-history.js';

export interface SeasonReset {
  /** @default the system's starting rating */
  toward?: number;
  /** Share of the distance from `toward` kept, 0 (full reset) to 1 (none). */
  keep: number;
  /** RD floor (Glicko systems). */
  rd?: number;
  /** Players play their placement matches again. @default false */
  restartPlacement?: boolean;
}

/** One player's state after a season's reset (the standings library's `softReset`). */
export function applyReset(system: RatingSystem, reset: SeasonReset, state: PlayerState): PlayerState {
  return softReset(new Map([['', state]]), reset, system).get('')!;
}

/** Checks a reset's options before anything is written, naming the field under `reset`. */
function checkReset(system: RatingSystem, reset: SeasonReset): void {
  try {
    softReset(new Map(), reset, system);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.detail, { field: `reset.${error.field ?? ''}`.replace(/\.$/, '') });
    throw error;
  }
}

/** The state carried from after sequence number `fromSeq` to just before `toSeq`: every season that opened in between resets it. */
export function resetAt(system: RatingSystem, seasons: readonly SeasonRow[], fromSeq: number, toSeq: number, state: PlayerState): PlayerState {
  let out = state;
  for (const season of seasons) {
    if (season.reset !== null && season.reset !== undefined && fromSeq < season.firstSeq && season.firstSeq <= toSeq) out = applyReset(system, season.reset as SeasonReset, out);
  }
  return out;
}

/** The ladder's seasons; a ladder that never opened one is in its first, named by its `season` setting. */
export async function seasonsOf(db: Database, ladder: Ladder): Promise<SeasonRow[]> {
  const rows = await listSeasons(db, ladder.id);
  if (rows.length > 0) return rows;
  return [{ number: 1, name: ladder.season, startedAt: ladder.createdAt, firstSeq: 1, closedAt: null, reset: null }];
}

export function seasonJson(season: SeasonRow) {
  return {
    number: season.number,
    name: season.name,
    startedAt: new Date(season.startedAt).toISOString(),
    closedAt: season.closedAt === null ? null : new Date(season.closedAt).toISOString(),
    ...(season.reset !== null && season.reset !== undefined ? { reset: season.reset } : {}),
  };
}

/** A season by name, or NotFoundError. */
export async function findSeason(db: Database, ladder: Ladder, name: string): Promise<SeasonRow> {
  const season = (await seasonsOf(db, ladder)).find((s) => s.name === name);
  if (!season) throw new NotFoundError(`no season ${JSON.stringify(name.slice(0, 80))} in ladder ${ladder.id}`, 'season');
  return season;
}

/** Items handled between two checks of `Turns.pause()` in a season's close: a few milliseconds of work. */
const CLOSE_SLICE = 1024;

/**
 * Final standings of every player, ranked ones first in rank order, then the rest by rating. Every step over the
 * players runs in slices with turns of the loop between them (`turns`): at a million players each was a second or
 * more in one piece.
 */
async function freeze(ladder: Ladder, players: ReadonlyArray<{ id: string; state: PlayerState }>, now: number, seasonStart: number, turns: Turns): Promise<FrozenStanding[]> {
  const board = new Leaderboard(ladder.standings);
  const inSeason = players.filter((p) => (p.state.lastAt ?? 0) >= seasonStart);
  for (let i = 0; i < inSeason.length; i++) {
    const p = inSeason[i]!;
    board.upsert(p.id, p.state.rating, p.state.lastAt ?? 0, p.state.matches);
    if (i % CLOSE_SLICE === CLOSE_SLICE - 1) await turns.pause();
  }
  const rows = new Array<{ id: string; state: PlayerState; rank: number | null; percentile: number | null; division: string | null }>(inSeason.length);
  for (let i = 0; i < inSeason.length; i++) {
    const p = inSeason[i]!;
    const s = board.standing(p.id, now);
    rows[i] = { id: p.id, state: p.state, rank: s?.rank ?? null, percentile: s?.percentile ?? null, division: s?.division ?? null };
    if (i % CLOSE_SLICE === CLOSE_SLICE - 1) await turns.pause();
  }
  const sorted = await sortInSlices(rows, (a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || b.state.rating - a.state.rating || (a.id < b.id ? -1 : 1), turns);
  const standings = new Array<FrozenStanding>(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]!;
    standings[i] = {
      position: i + 1,
      id: r.id,
      rank: r.rank,
      rating: r.state.rating,
      rd: r.state.rd ?? null,
      percentile: r.percentile,
      division: r.division,
      matches: r.state.matches,
    };
    if (i % CLOSE_SLICE === CLOSE_SLICE - 1) await turns.pause();
  }
  return standings;
}

/**
 * Closes the current season and opens the next, in one transaction holding
 * the ladder lock. Returns the closed and the new season.
 */
export async function openSeason(
  db: Database,
  ladder: Ladder,
  input: z.infer<typeof seasonSchema>,
  now = Date.now(),
): Promise<{ closed: SeasonRow; opened: SeasonRow; players: number }> {
  refuseSeasons(ladder.system, ladder.id);
  return db.transaction(async (tx) => {
    const head = await lockLadder(tx, ladder.id);
    if (!head) throw new NotFoundError(`no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
    if (head.correcting) throw beingCorrected(ladder.id);
    const stored = await listSeasons(tx, ladder.id);
    const seasons = stored.length > 0 ? stored : [{ number: 1, name: ladder.season, startedAt: ladder.createdAt, firstSeq: 1, closedAt: null, reset: null }];
    if (stored.length === 0) await insertSeason(tx, ladder.id, seasons[0]!);
    const current = seasons[seasons.length - 1]!;
    if (seasons.some((s) => s.name === input.name)) throw new ConflictError(`season ${JSON.stringify(input.name)} already exists in ladder ${ladder.id}`, 'name');
    // The ladder's lock keeps its players as they are while they are read a page at a time, each page a turn of the loop.
    const turns = new Turns(20);
    const players: Array<{ id: string; state: PlayerState }> = [];
    for await (const rows of playerPages(tx, ladder.id)) for (const row of rows) players.push({ id: row.id, state: rowToState(row) });
    await insertStandings(tx, ladder.id, current.number, await freeze(ladder, players, now, ladder.seasonStartedAt, turns));
    await closeSeason(tx, ladder.id, current.number, now);
    const reset: SeasonReset = {
      keep: input.reset.keep,
      ...(input.reset.toward !== undefined ? { toward: input.reset.toward } : {}),
      ...(input.reset.rd !== undefined ? { rd: input.reset.rd } : {}),
      ...(input.reset.restartPlacement ? { restartPlacement: true } : {}),
    };
    checkReset(ladder.rating, reset);
    const opened: SeasonRow = { number: current.number + 1, name: input.name, startedAt: now, firstSeq: head.nextSeq, closedAt: null, reset };
    await insertSeason(tx, ladder.id, opened);
    // In statements of 5,000 players, each built between turns of the loop.
    for (let start = 0; start < players.length; start += 5000) {
      const chunk = players.slice(start, start + 5000);
      await upsertPlayers(
        tx,
        ladder.id,
        chunk.map((p) => ({ id: p.id, state: applyReset(ladder.rating, reset, p.state) })),
      );
    }
    await updateLadder(tx, ladder.id, {
      options: ladder.options,
      settings: { ...ladder.settings, currentSeason: { number: opened.number, name: opened.name, startedAt: now } },
      public: ladder.public,
    });
    await adjustLadder(tx, ladder.id, { matches: 0, players: 0, version: randomInt(1, 2 ** 48 - 1) });
    // Every state moved without a new sequence number: shared leaderboards load the ladder again.
    await countCorrection(tx, ladder.id);
    return { closed: { ...current, closedAt: now }, opened, players: players.length };
  });
}

/** A page of a closed season's frozen standings, by position (a public read: bounded, cancellable). */
export function frozenStandingsPage(db: Database, ladder: Ladder, season: SeasonRow, limit: number, offset: number, signal?: AbortSignal) {
  return db.read((read) => standingsPage(read, ladder.id, season.number, limit, offset), { signal });
}

/** A player's frozen standing in a closed season; NotFoundError naming `player` when they have none. */
export async function frozenStanding(db: Database, ladder: Ladder, season: SeasonRow, player: string) {
  const standing = await standingOf(db, ladder.id, season.number, player);
  if (!standing) throw new NotFoundError(`player ${JSON.stringify(player.slice(0, 80))} has no standing in season ${season.name}`, 'player');
  return standing;
}
