/**
 * What a correction writes: the corrected rows computed from the stored
 * (uncorrected) ones, each write handed on in order as a `Step`. How the
 * steps reach the database (one transaction, or staged and copied in
 * phases) is corrections.ts's concern; what a correction computes, and why
 * it equals a replay of the corrected log, is told at the top of that file.
 */
import type { Match } from 'ladder-core/core/match.js';
import type { PlayerState } from 'ladder-core/core/systems.js';
import type { Queryable } from '../store/database.js';
import { type ChangeEntry, type ChangeRecord, lastChangesBefore, lastEntriesBefore, logPage, type LogRow, type MatchRecord } from '../store/matches.js';
import { findPlayers, playersAfter } from '../store/players.js';
import { rowToState } from '../store/rows.js';
import { listSeasons } from '../store/seasons.js';
import type { Ladder } from './ladders.js';
import { matchChanges, publicState, rateUnit } from './rating.js';
import { resetAt } from './seasons.js';
import type { StoredFreeze } from '../store/frozen.js';
import { FREEZE_SLICE_MS, keepsWholeHistory, LadderHistory } from './whole-history.js';
import type { LadderHead } from '../store/ladders.js';
import type { CommittedPlayer } from './writer/plan.js';
import { Turns } from './turns.js';
import { randomInt } from 'node:crypto';

export type Correction = { kind: 'void'; reason: string } | { kind: 'replace'; match: Match };

export interface CorrectionResult {
  match: { id: string; seq: number; void: boolean };
  /** False when nothing changed (a match voided again). */
  changed: boolean;
  /** Every player whose stored state changed: before and after (null: not in the ladder). */
  players: Array<{ id: string; before: ReturnType<typeof publicState> | null; after: ReturnType<typeof publicState> | null }>;
  /** Matches rated again, besides the corrected one. */
  rerated: number;
  /** For the rankings. */
  committed: CommittedPlayer[];
  removed: string[];
  lastSeq: number;
}

function stateOfRecord(values: ChangeRecord['after'], lastAt: number | null): PlayerState {
  const state: PlayerState = { rating: values.rating, matches: values.matches };
  if (values.rd !== undefined) state.rd = values.rd;
  if (values.volatility !== undefined) state.volatility = values.volatility;
  if (lastAt !== null) state.lastAt = lastAt;
  return state;
}

function same(a: number | undefined, b: number | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)));
}

function sameState(a: PlayerState | undefined, b: PlayerState | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return same(a.rating, b.rating) && same(a.rd, b.rd) && same(a.volatility, b.volatility) && a.matches === b.matches && a.lastAt === b.lastAt;
}

function playersOf(match: Match): string[] {
  return match.teams.flatMap((t) => t.players.map((p) => p.id));
}

export function newVersion(): number {
  return randomInt(1, 2 ** 48 - 1);
}

/** A page of the log, read ahead; a failure is handled where it is awaited (or by the transaction's end). */
function prefetch(tx: Queryable, ladder: string, afterSeq: number, chunk: number): Promise<LogRow[]> {
  const page = logPage(tx, ladder, afterSeq, chunk);
  page.catch(() => {});
  return page;
}

/** A moved player's state (undefined: not in the ladder), carried through the season resets up to just before `at`. */
interface Moved {
  state: PlayerState | undefined;
  at: number;
}

/** One write of a correction: run at once in the transaction, or staged (as JSON) and applied later. */
export type Step =
  | { op: 'void'; seq: number; reason: string; at: number }
  | { op: 'replace'; seq: number; at: number; body: string; winProbability: string }
  | { op: 'history'; seq: number[]; changes: string[]; winProbability: (string | null)[] }
  | { op: 'lastSeqs'; ids: string[]; seqs: (number | null)[] }
  | { op: 'upsert'; players: CommittedPlayer[] }
  | { op: 'delete'; ids: string[] }
  | { op: 'adjust'; matches: number; players: number; version: number; logEpoch?: number }
  /** A whole history with a horizon: its last freeze under the corrected log (null: none, the stored one dropped). */
  | { op: 'freeze'; freeze: StoredFreeze | null };

/** How a correction reads the ladder as it was and where its writes go. */
export interface Work {
  reads: Queryable;
  write: (step: Step) => Promise<void>;
  chunk: number;
  playerBatch: number;
  turns: Turns;
}

/** Computes the correction from the stored (uncorrected) rows, handing every write to `work.write` in order. */
export function compute(work: Work, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  if (keepsWholeHistory(ladder.system)) return correctWholeHistory(work, ladder, head, target, correction, now);
  return correctIn(work, ladder, head, target, correction, now);
}

async function correctIn(work: Work, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  const { reads: tx, write, chunk, turns } = work;

  const system = ladder.rating;
  const seasons = await listSeasons(tx, ladder.id);
  // A correction without `at` keeps the stored time.
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  const touched = [...new Set([...playersOf(target.body), ...(replacement ? playersOf(replacement) : [])])];
  const carried = (moved: Moved, toSeq: number): PlayerState | undefined => moved.state && resetAt(system, seasons, moved.at, toSeq, moved.state);

  // The affected players' states just before the match (season resets applied up to it).
  const moved = new Map<string, Moved>();
  // A walk of `chunk` entries per statement at most (a page's worth of matches).
  const previous = await lastChangesBefore(tx, ladder.id, touched, target.seq, chunk, () => turns.pause());
  for (const id of touched) {
    const last = previous.get(id);
    moved.set(id, { state: last ? resetAt(system, seasons, last.seq, target.seq, stateOfRecord(last.after, last.lastAtAfter)) : undefined, at: target.seq });
  }
  const statesAt = (ids: readonly string[], seq: number, stored: ReadonlyMap<string, ChangeEntry>) => {
    const states = new Map<string, PlayerState>();
    for (const id of ids) {
      const entry = moved.get(id);
      if (entry) {
        const state = carried(entry, seq);
        if (state) states.set(id, state);
        continue;
      }
      const row = stored.get(id);
      if (row) states.set(id, stateOfRecord(row.before, row.lastAtBefore));
    }
    return states;
  };

  // Players a correction takes out of the match or puts into it: the link their next entry after it must carry.
  const relink = new Map<string, number | null>();
  const takeLink = (id: string, stored: number | null): number | null => {
    if (!relink.has(id)) return stored;
    const link = relink.get(id)!;
    relink.delete(id);
    return link;
  };

  if (replacement) {
    const [targetRow] = await logPage(tx, ladder.id, target.seq - 1, 1);
    const storedPrev = new Map((targetRow?.changes ?? []).map((entry) => [entry.player, entry.prev]));
    const now = new Set(playersOf(replacement));
    const added = playersOf(replacement).filter((id) => !storedPrev.has(id));
    const before = await lastEntriesBefore(tx, ladder.id, added, target.seq);
    for (const [id, prev] of storedPrev) if (!now.has(id)) relink.set(id, prev);
    for (const id of added) {
      storedPrev.set(id, before.get(id) ?? null);
      relink.set(id, target.seq);
    }
    const states = statesAt(touched, target.seq, new Map());
    const probabilities = system.predict(
      replacement.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())),
      replacement.context,
    );
    const rating = rateUnit(system, [replacement], states, false)[0]!;
    for (const change of rating.players) moved.set(change.id, { state: change.after, at: target.seq });
    await write({ op: 'replace', seq: target.seq, at: replacement.at!, body: JSON.stringify(replacement), winProbability: JSON.stringify(probabilities) });
    await write({ op: 'history', seq: [target.seq], changes: [matchChanges(rating.players, (id) => storedPrev.get(id) ?? null)], winProbability: [null] });
  } else {
    await write({ op: 'void', seq: target.seq, reason: correction.kind === 'void' ? correction.reason : '', at: now });
  }

  // Later matches, in order, a page at a time; only those with a player whose state moved are rated again.
  let rerated = 0;
  for (let next = prefetch(tx, ladder.id, target.seq, chunk); ; ) {
    const page = await next;
    // The next page is read while this one is rated: this page's writes touch none of its rows.
    const more = page.length === chunk;
    if (more) next = prefetch(tx, ladder.id, page[page.length - 1]!.seq, chunk);
    const out: { seq: number[]; changes: string[]; winProbability: (string | null)[] } = { seq: [], changes: [], winProbability: [] };
    for (const row of page) {
      await turns.pause();
      const entries = row.changes ?? [];
      if (!row.voided && (entries.length === 0 ? playersOf(JSON.parse(row.body) as Match) : entries.map((e) => e.player)).some((id) => moved.has(id))) {
        const body = JSON.parse(row.body) as Match;
        const stored = new Map(entries.map((entry) => [entry.player, entry]));
        const states = statesAt(playersOf(body), row.seq, stored);
        const probabilities = system.predict(
          body.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())),
          body.context,
        );
        const rating = rateUnit(system, [body], states, false)[0]!;
        for (const change of rating.players) {
          const entry = stored.get(change.id);
          const storedAfter = entry ? stateOfRecord(entry.after, entry.lastAtAfter) : undefined;
          if (sameState(change.after, storedAfter)) moved.delete(change.id);
          else moved.set(change.id, { state: change.after, at: row.seq });
        }
        out.seq.push(row.seq);
        out.changes.push(matchChanges(rating.players, (id) => takeLink(id, stored.get(id)?.prev ?? null)));
        out.winProbability.push(JSON.stringify(probabilities));
        rerated++;
        continue;
      }
      if (relink.size > 0 && entries.some((entry) => relink.has(entry.player))) {
        for (const entry of entries) entry.prev = takeLink(entry.player, entry.prev);
        out.seq.push(row.seq);
        out.changes.push(JSON.stringify(entries));
        out.winProbability.push(null);
      }
    }
    if (out.seq.length > 0) await write({ op: 'history', ...out });
    if (!more) break;
  }
  // Players with no entry after the match: their newest entry is the link kept for them.
  if (relink.size > 0) await write({ op: 'lastSeqs', ids: [...relink.keys()], seqs: [...relink.values()] });

  // Moved states carried past the last season boundary, compared with the stored ones.
  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  let added = 0;
  const ids = [...moved.keys()];
  for (let i = 0; i < ids.length; i += work.playerBatch) {
    const batch = ids.slice(i, i + work.playerBatch);
    const stored = new Map((await findPlayers(tx, ladder.id, batch)).map((row) => [row.id, rowToState(row)]));
    const written: CommittedPlayer[] = [];
    const gone: string[] = [];
    for (const id of batch) {
      await turns.pause();
      const after = carried(moved.get(id)!, head.nextSeq);
      const before = stored.get(id);
      if (sameState(after, before)) continue;
      players.push({ id, before: before ? publicState(before) : null, after: after ? publicState(after) : null });
      if (after) {
        const player: CommittedPlayer = { id, state: after, seq: head.nextSeq - 1 };
        if (relink.has(id)) player.lastSeq = relink.get(id)!;
        written.push(player);
        if (!before) added++;
      } else gone.push(id);
    }
    if (written.length > 0) await write({ op: 'upsert', players: written });
    if (gone.length > 0) await write({ op: 'delete', ids: gone });
    finals.push(...written);
    removed.push(...gone);
  }
  await write({ op: 'adjust', matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion() });
  return { match: { id: target.id, seq: target.seq, void: !replacement }, changed: true, players, rerated, committed: finals, removed, lastSeq: head.nextSeq - 1 };
}

/**
 * A correction of a whole-history ladder: the log corrected, then the whole
 * history derived again from it, page by page; the history of the corrected
 * match and of every counted match after it is rewritten a page at a time.
 */
async function correctWholeHistory(work: Work, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  const { reads: tx, write, chunk, turns } = work;
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  // Players a replacement takes out of the match or puts in, with the link their next entry must carry.
  const relink = new Map<string, number | null>();
  let storedPrev = new Map<string, number | null>();
  if (replacement) {
    const [targetRow] = await logPage(tx, ladder.id, target.seq - 1, 1);
    storedPrev = new Map((targetRow?.changes ?? []).map((entry) => [entry.player, entry.prev]));
    const now = new Set(playersOf(replacement));
    const added = playersOf(replacement).filter((id) => !storedPrev.has(id));
    const before = await lastEntriesBefore(tx, ladder.id, added, target.seq);
    for (const [id, prev] of storedPrev) if (!now.has(id)) relink.set(id, prev);
    for (const id of added) {
      storedPrev.set(id, before.get(id) ?? null);
      relink.set(id, target.seq);
    }
    // Its win probability is set below with the others, once the history before it is known.
    await write({ op: 'replace', seq: target.seq, at: replacement.at!, body: JSON.stringify(replacement), winProbability: 'null' });
  } else {
    await write({ op: 'void', seq: target.seq, reason: correction.kind === 'void' ? correction.reason : '', at: now });
  }
  // The log is read as stored; the corrected match is taken as corrected (its write may not be applied yet).
  const correctedBody = replacement ? (JSON.parse(JSON.stringify(replacement)) as Match) : undefined;
  const takeLink = (id: string, stored: number | null): number | null => {
    if (!relink.has(id)) return stored;
    const link = relink.get(id)!;
    relink.delete(id);
    return link;
  };
  const logEpoch = newVersion();
  const history = new LadderHistory(ladder.system, ladder.options, logEpoch);
  // The derivation, and the freezes among it, in slices of 5 ms rather than the correction's 20 (as the writer's freezes,
  // DerivationOptions.freezeSliceMs): a request needs a few turns, and with slices of 20 ms another ladder's writes had p99
  // 97–139 ms during such a correction, with 5 ms 69–82 ms in four runs of five (`whr-void` of `npm run bench -- availability`,
  // PostgreSQL; docs/BENCHMARKS.md).
  const slices = new Turns(FREEZE_SLICE_MS);
  let rewritten = 0;
  for (let next = prefetch(tx, ladder.id, 0, chunk); ; ) {
    const page = await next;
    const more = page.length === chunk;
    if (more) next = prefetch(tx, ladder.id, page[page.length - 1]!.seq, chunk);
    const out: { seq: number[]; changes: string[]; winProbability: (string | null)[] } = { seq: [], changes: [], winProbability: [] };
    for (const row of page) {
      await slices.pause();
      const isTarget = row.seq === target.seq;
      const body = isTarget && correctedBody ? correctedBody : (JSON.parse(row.body) as Match);
      const voided = row.voided || (isTarget && !correctedBody);
      // A freeze (a horizon) the match makes first runs in slices: in one piece it replays the whole live window.
      await history.freezeBefore(row.seq, body, voided, slices);
      if (voided || row.seq < target.seq) {
        // Before the corrected match, history and probabilities stay as they are: the same steps give the same states.
        history.add(row.seq, body, voided);
        if (row.seq > target.seq && relink.size > 0 && (row.changes ?? []).some((entry) => relink.has(entry.player))) {
          const entries = row.changes!;
          for (const entry of entries) entry.prev = takeLink(entry.player, entry.prev);
          out.seq.push(row.seq);
          out.changes.push(JSON.stringify(entries));
          out.winProbability.push(null);
        }
        continue;
      }
      const probabilities = history.predict(body);
      const step = history.add(row.seq, body)!;
      const stored = row.seq === target.seq ? storedPrev : new Map((row.changes ?? []).map((entry) => [entry.player, entry.prev]));
      out.seq.push(row.seq);
      out.changes.push(matchChanges(step.rating.players, (id) => (row.seq === target.seq ? (stored.get(id) ?? null) : takeLink(id, stored.get(id) ?? null))));
      out.winProbability.push(JSON.stringify(probabilities));
      rewritten++;
    }
    if (out.seq.length > 0) await write({ op: 'history', ...out });
    if (!more) break;
  }
  if (relink.size > 0) await write({ op: 'lastSeqs', ids: [...relink.keys()], seqs: [...relink.values()] });

  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  let added = 0;
  // Every stored player, a batch at a time (keyset on id), then the derived players the table does not hold.
  const seen = new Set<string>();
  for (let from = ''; ; ) {
    const rows = await playersAfter(tx, ladder.id, from, work.playerBatch);
    const written: CommittedPlayer[] = [];
    const gone: string[] = [];
    for (const row of rows) {
      await turns.pause();
      seen.add(row.id);
      const before = rowToState(row);
      const after = history.states.get(row.id);
      if (sameState(after, before)) continue;
      players.push({ id: row.id, before: publicState(before), after: after ? publicState(after) : null });
      if (after) written.push(lastSeqOf({ id: row.id, state: after, seq: head.nextSeq - 1 }, relink));
      else gone.push(row.id);
    }
    if (written.length > 0) await write({ op: 'upsert', players: written });
    if (gone.length > 0) await write({ op: 'delete', ids: gone });
    finals.push(...written);
    removed.push(...gone);
    if (rows.length < work.playerBatch) break;
    from = rows[rows.length - 1]!.id;
  }
  const fresh: CommittedPlayer[] = [];
  for (const [id, after] of history.states) {
    if (seen.has(id)) continue;
    players.push({ id, before: null, after: publicState(after) });
    fresh.push(lastSeqOf({ id, state: after, seq: head.nextSeq - 1 }, relink));
    added++;
  }
  for (let i = 0; i < fresh.length; i += work.playerBatch) await write({ op: 'upsert', players: fresh.slice(i, i + work.playerBatch) });
  finals.push(...fresh);
  // The priors of the corrected log, written with the log epoch they belong to, so a start after the correction reads only the matches after them.
  if (history.freezes) await write({ op: 'freeze', freeze: history.freeze() ?? null });
  await write({ op: 'adjust', matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion(), logEpoch });
  return {
    match: { id: target.id, seq: target.seq, void: !replacement },
    changed: true,
    players,
    rerated: rewritten - (replacement ? 1 : 0),
    committed: finals,
    removed,
    lastSeq: head.nextSeq - 1,
  };
}

/** A player written by a correction, with its newest history entry when the correction moved it. */
function lastSeqOf(player: CommittedPlayer, relink: ReadonlyMap<string, number | null>): CommittedPlayer {
  if (relink.has(player.id)) player.lastSeq = relink.get(player.id)!;
  return player;
}
