/**
 * Matches are the source of truth: `rebuildLadder` replays a ladder's stored
 * matches in sequence order through the rating core and compares the result
 * with the stored player states; with `fix` it rewrites the states that differ
 * (and the player count) in one transaction that holds the ladder lock. For
 * a whole history with a horizon it also compares the stored last freeze
 * with the replay's (and `fix` rewrites it).
 */
import type { PlayerState } from 'ladder-core/core/systems.js';
import type { Database } from '../store/database.js';
import { deleteFreeze, readFreeze, type StoredFreeze, writeFreeze } from '../store/frozen.js';
import { lockLadder, resetLadderCounts } from '../store/ladders.js';
import { matchesAfter } from '../store/matches.js';
import { allPlayers, deletePlayers, upsertPlayers } from '../store/players.js';
import { rowToState } from '../store/rows.js';
import { listSeasons } from '../store/seasons.js';
import { applyReset, type SeasonReset } from './seasons.js';
import type { Ladder } from './ladders.js';
import { beingCorrected } from './correction-state.js';
import type { StoredMatch } from './rating.js';
import { replayHistory, replayStored } from './replay.js';
import { keepsWholeHistory } from './whole-history.js';

export interface PlayerDifference {
  id: string;
  stored: PlayerState | null;
  replayed: PlayerState | null;
}

export interface RebuildReport {
  ladder: string;
  matches: number;
  players: number;
  differences: PlayerDifference[];
  fixed: boolean;
  /**
   * A ladder whose history freezes (a whr horizon): its stored last freeze
   * against the replay's. `same`; `differ` (the same log epoch, other
   * priors or another freeze: rewritten by `fix`); `missing` or `stale` (none
   * stored, or one of another log epoch: the writer's next write stores it,
   * `fix` at once); `none` (the log has not frozen yet).
   */
  frozenPriors?: 'same' | 'differ' | 'missing' | 'stale' | 'none';
}

/** The stored freeze against the replay's (both of the log at `logEpoch`). */
function compareFreeze(stored: StoredFreeze | undefined, replayed: StoredFreeze | undefined, logEpoch: number): NonNullable<RebuildReport['frozenPriors']> {
  if (replayed === undefined) return stored === undefined || stored.logEpoch !== logEpoch ? 'none' : 'differ';
  if (stored === undefined) return 'missing';
  if (stored.logEpoch !== logEpoch) return 'stale';
  const key = (f: StoredFreeze) => JSON.stringify([f.options, f.fromSeq, f.triggerSeq, f.past]);
  return key(stored) === key(replayed) ? 'same' : 'differ';
}

function same(a: number | undefined, b: number | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  // Both sides come from the same code on the same doubles; allow only float noise of the text round trip.
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

function equal(a: PlayerState, b: PlayerState): boolean {
  return (
    same(a.rating, b.rating) &&
    same(a.rd, b.rd) &&
    same(a.volatility, b.volatility) &&
    a.matches === b.matches &&
    same(a.lastAt, b.lastAt) &&
    JSON.stringify(a.contexts ?? null) === JSON.stringify(b.contexts ?? null)
  );
}

export interface RebuildOptions {
  /** Rewrite the stored states that differ from the replay. */
  fix?: boolean;
  /** Matches replayed of the ladder's total (voided ones included), every 1 000 matches and at the end. */
  onProgress?: (done: number, total: number) => void;
}

/** The matches in order, telling `onProgress` how many have been handed out every 1 000. */
export function* counted(matches: readonly StoredMatch[], onProgress: (done: number, total: number) => void): Generator<StoredMatch> {
  for (let i = 0; i < matches.length; i++) {
    if (i % 1000 === 0) onProgress(i, matches.length);
    yield matches[i]!;
  }
  onProgress(matches.length, matches.length);
}

export async function rebuildLadder(db: Database, ladder: Ladder, options: RebuildOptions = {}): Promise<RebuildReport> {
  return db.transaction(async (tx) => {
    // The lock keeps writers out so stored state and match log are read at one point in time.
    // A ladder under a phased correction is part corrected until it finishes.
    const head = await lockLadder(tx, ladder.id);
    if (head?.correcting) throw beingCorrected(ladder.id);
    const matches: StoredMatch[] = [];
    const pageSize = 20_000;
    for (let after = 0; ; ) {
      const rows = await matchesAfter(tx, ladder.id, after, pageSize);
      for (const row of rows) matches.push({ seq: row.seq, id: row.id, at: row.at, round: row.round, body: row.body, voided: row.voided_at !== null });
      if (rows.length < pageSize) break;
      after = rows[rows.length - 1]!.seq;
    }
    const seasons = (await listSeasons(tx, ladder.id))
      .filter((season) => season.reset !== null && season.reset !== undefined)
      .map((season) => ({ firstSeq: season.firstSeq, reset: (state: PlayerState) => applyReset(ladder.rating, season.reset as SeasonReset, state) }));
    const inOrder = options.onProgress ? counted(matches, options.onProgress) : matches;
    // A whole history is kept to compare its last freeze with the stored one.
    const history = keepsWholeHistory(ladder.system) && seasons.length === 0 ? replayHistory(ladder.rating, inOrder, head?.logEpoch ?? 0) : undefined;
    const replayed = history ? new Map(history.states) : replayStored(ladder.rating, inOrder, seasons);
    let frozenPriors: RebuildReport['frozenPriors'];
    let priorsFixed = false;
    if (history?.freezes) {
      const freeze = history.freeze();
      frozenPriors = compareFreeze(await readFreeze(tx, ladder.id), freeze, head?.logEpoch ?? 0);
      if (options.fix && frozenPriors !== 'same' && frozenPriors !== 'none') {
        if (freeze) await writeFreeze(tx, ladder.id, freeze, Date.now());
        else await deleteFreeze(tx, ladder.id);
        priorsFixed = true;
      }
    }
    const stored = new Map<string, PlayerState>();
    for (const row of await allPlayers(tx, ladder.id)) stored.set(row.id, rowToState(row));
    const differences: PlayerDifference[] = [];
    for (const [id, state] of replayed) {
      const have = stored.get(id);
      if (!have || !equal(have, state)) differences.push({ id, stored: have ?? null, replayed: state });
    }
    for (const [id, state] of stored) if (!replayed.has(id)) differences.push({ id, stored: state, replayed: null });
    if (options.fix && differences.length > 0) {
      await deletePlayers(
        tx,
        ladder.id,
        differences.filter((d) => d.replayed === null).map((d) => d.id),
      );
      await upsertPlayers(
        tx,
        ladder.id,
        differences.filter((d) => d.replayed !== null).map((d) => ({ id: d.id, state: d.replayed! })),
      );
      await resetLadderCounts(tx, ladder.id, { players: replayed.size, matches: matches.filter((m) => !m.voided).length });
    }
    return {
      ladder: ladder.id,
      matches: matches.filter((m) => !m.voided).length,
      players: replayed.size,
      differences,
      fixed: (Boolean(options.fix) && differences.length > 0) || priorsFixed,
      ...(frozenPriors !== undefined ? { frozenPriors } : {}),
    };
  });
}
