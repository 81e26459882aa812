/**
 * How the service turns stored matches into ratings. The writer (live) and
 * `ladder rebuild` (replay) both go through `rateUnit`, so a replay of the
 * stored matches in sequence order reproduces the stored states exactly.
 *
 * A unit is either one match, rated on arrival in continuous time (a
 * Glicko-2 player's RD first grows for the time since their last match), or
 * one World-vs-World round, whose matches form one rating period rated from
 * the ratings before the round (no continuous growth: the round is the period).
 *
 * A system that keeps whole histories rates a match from the whole log
 * before it, not from stored states: its ladders are rated through a
 * `LadderHistory` (whole-history.ts), which the writer and the replay
 * (replay.ts) fill with the same `add`, one match at a time in sequence order.
 */
import type { Match } from 'ladder-core/core/match.js';
import type { MatchRating, PlayerChange, PlayerState, RatingSystem } from 'ladder-core/core/systems.js';

export interface StoredMatch {
  seq: number;
  id: string;
  /** Epoch ms: the match's own time or the server's receive time. */
  at: number;
  /** Round name for matches posted as part of a World-vs-World round. */
  round: string | null;
  body: Match;
  /** A voided match stays in the log and never counts. */
  voided?: boolean;
}

export function rateUnit(system: RatingSystem, matches: readonly Match[], states: ReadonlyMap<string, PlayerState>, round: boolean): MatchRating[] {
  if (round) return system.ratePeriod(matches, states, { timeIdle: false });
  return matches.map((match) => system.rateMatch(match, states, { timeIdle: true }));
}

/** The public form of a player state: rating, RD and volatility where the system has them, matches played. */
export function publicState(state: PlayerState): { rating: number; rd?: number; volatility?: number; matches: number } {
  const out: { rating: number; rd?: number; volatility?: number; matches: number } = { rating: state.rating, matches: state.matches };
  if (state.rd !== undefined) out.rd = state.rd;
  if (state.volatility !== undefined) out.volatility = state.volatility;
  return out;
}

/**
 * `JSON.stringify(publicState(state))`, written directly: the writer makes two
 * for every player of every match (a quarter of the cost, measured; JavaScript
 * writes a finite number as JSON does). A value JSON has no number for goes
 * through JSON.stringify.
 */
export function publicStateJson(state: PlayerState): string {
  const { rating, matches, rd, volatility } = state;
  if (!Number.isFinite(rating) || !Number.isFinite(matches) || (rd !== undefined && !Number.isFinite(rd)) || (volatility !== undefined && !Number.isFinite(volatility))) {
    return JSON.stringify(publicState(state));
  }
  let text = `{"rating":${rating},"matches":${matches}`;
  if (rd !== undefined) text += `,"rd":${rd}`;
  if (volatility !== undefined) text += `,"volatility":${volatility}`;
  return `${text}}`;
}

/**
 * One player's change as an entry of its match's history (`ChangeEntry`,
 * JSON text), with the JSON texts of its parts, so an answer can reuse them
 * byte for byte. `prev`: the sequence number of the player's previous entry.
 */
export function changeEntry(change: PlayerChange, prev: number | null): { entry: string; before: string; after: string; terms: string } {
  const before = publicStateJson(change.before);
  const after = publicStateJson(change.after);
  const terms = JSON.stringify(change.terms);
  const entry = `{"player":${JSON.stringify(change.id)},"team":${change.team},"before":${before},"after":${after},"terms":${terms},"lastAtBefore":${change.before.lastAt ?? null},"lastAtAfter":${change.after.lastAt ?? null},"prev":${prev}}`;
  return { entry, before, after, terms };
}

/** The history of one match (its `changes` JSON array); `prev` gives the chain link of each player. */
export function matchChanges(changes: readonly PlayerChange[], prev: (id: string) => number | null = () => null): string {
  return `[${changes.map((change) => changeEntry(change, prev(change.id)).entry).join(',')}]`;
}
