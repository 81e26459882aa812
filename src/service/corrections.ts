/**
 * Voiding and correcting a stored match. Matches are the source of truth, so
 * a correction is a partial replay: starting from each affected player's
 * state just before the match (one history entry each), every later match that
 * involves a player whose state changed is rated again, in sequence order;
 * a player whose new state equals the stored one drops out of the replay.
 * Matches that involve no changed player are not touched. The result equals a
 * replay of the corrected log from the start (test/service/corrections.test.ts
 * checks it, and `ladder rebuild` confirms it).
 *
 * It runs in one transaction holding the ladder lock: submissions that
 * arrive meanwhile wait for it, and the version it writes makes every
 * writer's cached states stale, so they are rated on the corrected states.
 * The stored answers of Idempotency-Keys are left as first sent.
 *
 * A whole-history ladder (Whole-History Rating) has no state just before a
 * match to start from: a correction derives the ladder's whole history again
 * from the corrected log, as `ladder rebuild` would, rewrites the history
 * and win probabilities of the corrected match and of every counted
 * match after it, and writes every player whose state changed. It moves the
 * ladder's log epoch, so every writer derives its history again.
 */
import type { Match } from '../core/match.js';
import type { MatchRating, PlayerState } from '../core/systems.js';
import type { Database, Queryable } from '../store/database.js';
import { adjustLadder, lockLadder } from '../store/ladders.js';
import {
  type ChangeRecord,
  changesFrom,
  matchesAfter,
  countingMatchesAfter,
  findMatch,
  lastChangesBefore,
  type MatchRecord,
  markVoid,
  replaceChanges,
  replaceMatchBody,
  updateWinProbabilities,
} from '../store/matches.js';
import { allPlayers, deletePlayers, findPlayers, upsertPlayers } from '../store/players.js';
import { rowToState } from '../store/rows.js';
import { listSeasons } from '../store/seasons.js';
import { ConflictError, NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import { matchChanges, publicState, rateUnit } from './rating.js';
import { resetAt } from './seasons.js';
import { keepsWholeHistory, LadderHistory } from './whole-history.js';
import type { LadderHead } from '../store/ladders.js';
import type { CommittedPlayer } from './writer/plan.js';
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

function newVersion(): number {
  return randomInt(1, 2 ** 48 - 1);
}

export async function correctMatch(db: Database, ladder: Ladder, matchId: string, correction: Correction, now = Date.now()): Promise<CorrectionResult> {
  return db.transaction((tx) => correctIn(tx, ladder, matchId, correction, now));
}

async function correctIn(tx: Queryable, ladder: Ladder, matchId: string, correction: Correction, now: number): Promise<CorrectionResult> {
  const head = await lockLadder(tx, ladder.id);
  if (!head) throw new NotFoundError(`no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
  const target = await findMatch(tx, ladder.id, matchId);
  if (!target) throw new NotFoundError(`no match ${JSON.stringify(matchId.slice(0, 80))} in ladder ${ladder.id}`, 'match');
  const unchanged: CorrectionResult = { match: { id: target.id, seq: target.seq, void: target.voidedAt !== null }, changed: false, players: [], rerated: 0, committed: [], removed: [], lastSeq: head.nextSeq - 1 };
  if (target.voidedAt !== null) {
    if (correction.kind === 'void') return unchanged;
    throw new ConflictError(`match ${JSON.stringify(target.id)} is void; a voided match cannot be corrected`, 'match');
  }
  if (target.round !== null) throw new ConflictError(`match ${JSON.stringify(target.id)} is part of round ${JSON.stringify(target.round)}; World-vs-World rounds are rated as one period and cannot be corrected match by match`, 'match');
  if (keepsWholeHistory(ladder.system)) return correctWholeHistory(tx, ladder, head, target, correction, now);

  const system = ladder.rating;
  const seasons = await listSeasons(tx, ladder.id);
  // A correction without `at` keeps the stored time.
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  const touched = [...new Set([...playersOf(target.body), ...(replacement ? playersOf(replacement) : [])])];

  // The affected players' states just before the match (season resets applied up to it).
  const current = new Map<string, PlayerState | undefined>();
  const previous = await lastChangesBefore(tx, ladder.id, touched, target.seq);
  for (const id of touched) {
    const last = previous.get(id);
    current.set(id, last ? resetAt(system, seasons, last.seq, target.seq, stateOfRecord(last.after, last.lastAtAfter)) : undefined);
  }
  const stored = new Map((await findPlayers(tx, ladder.id, touched)).map((row) => [row.id, rowToState(row)]));

  const history = await changesFrom(tx, ladder.id, target.seq);
  // The new history of each match rated again, linked into the players' chains by replaceChanges.
  const rows: { seq: number[]; changes: string[] } = { seq: [], changes: [] };
  const reratedSeqs: number[] = [];
  const winProbabilities: string[] = [];
  const record = (seq: number, rating: MatchRating) => {
    rows.seq.push(seq);
    rows.changes.push(matchChanges(rating.players));
  };
  const rate = (match: Match, states: Map<string, PlayerState>) => {
    const probabilities = system.predict(match.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())));
    return { rating: rateUnit(system, [match], states, false)[0]!, probabilities };
  };
  const statesFor = (ids: readonly string[]) => {
    const states = new Map<string, PlayerState>();
    for (const id of ids) {
      const state = current.get(id);
      if (state) states.set(id, state);
    }
    return states;
  };

  if (replacement) {
    const { rating, probabilities } = rate(replacement, statesFor(touched));
    for (const change of rating.players) current.set(change.id, change.after);
    record(target.seq, rating);
    await replaceMatchBody(tx, ladder.id, target.seq, { at: replacement.at!, body: JSON.stringify(replacement), winProbability: JSON.stringify(probabilities) });
  } else {
    await markVoid(tx, ladder.id, target.seq, correction.kind === 'void' ? correction.reason : '', now);
  }

  // Later matches, in order; only those with a player whose state moved are rated again.
  let rerated = 0;
  let lastSeen = target.seq;
  for (const match of await countingMatchesAfter(tx, ladder.id, target.seq)) {
    const ids = playersOf(match.body);
    if (!ids.some((id) => current.has(id))) continue;
    // Season boundaries between the last match looked at and this one reset the moved states.
    for (const [id, state] of current) if (state) current.set(id, resetAt(system, seasons, lastSeen, match.seq, state));
    lastSeen = match.seq;
    const storedRows = history.get(match.seq) ?? [];
    const states = new Map<string, PlayerState>();
    for (const id of ids) {
      if (current.has(id)) {
        const state = current.get(id);
        if (state) states.set(id, state);
        continue;
      }
      const row = storedRows.find((r) => r.player === id);
      if (row) states.set(id, stateOfRecord(row.before, row.lastAtBefore));
    }
    const { rating, probabilities } = rate(match.body, states);
    for (const change of rating.players) {
      const row = storedRows.find((r) => r.player === change.id);
      const storedAfter = row ? stateOfRecord(row.after, row.lastAtAfter) : undefined;
      if (sameState(change.after, storedAfter)) current.delete(change.id);
      else current.set(change.id, change.after);
    }
    record(match.seq, rating);
    reratedSeqs.push(match.seq);
    winProbabilities.push(JSON.stringify(probabilities));
    rerated++;
  }
  // Moved states carried past the last season boundary.
  for (const [id, state] of current) if (state) current.set(id, resetAt(system, seasons, lastSeen, head.nextSeq, state));

  const lastSeqs = await replaceChanges(tx, ladder.id, rows.seq, rows.changes, history);
  await updateWinProbabilities(tx, ladder.id, reratedSeqs, winProbabilities);

  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  const finalIds = [...current.keys()];
  const storedFinal = new Map((await findPlayers(tx, ladder.id, finalIds.filter((id) => !stored.has(id)))).map((row) => [row.id, rowToState(row)]));
  for (const id of finalIds) {
    const after = current.get(id);
    const before = stored.get(id) ?? storedFinal.get(id);
    if (sameState(after, before)) continue;
    players.push({ id, before: before ? publicState(before) : null, after: after ? publicState(after) : null });
    if (after) finals.push({ id, state: after, seq: head.nextSeq - 1, lastSeq: lastSeqs.get(id) });
    else removed.push(id);
  }
  const added = finals.filter((p) => !stored.has(p.id) && !storedFinal.has(p.id)).length;
  await upsertPlayers(tx, ladder.id, finals);
  await deletePlayers(tx, ladder.id, removed);
  await adjustLadder(tx, ladder.id, { matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion() });
  return { match: { id: target.id, seq: target.seq, void: !replacement }, changed: true, players, rerated, committed: finals, removed, lastSeq: head.nextSeq - 1 };
}

/** Counted matches read per query while the history is derived again. */
const PAGE = 20_000;

/** A correction of a whole-history ladder: the log corrected, then the whole history derived again from it. */
async function correctWholeHistory(tx: Queryable, ladder: Ladder, head: LadderHead, target: MatchRecord, correction: Correction, now: number): Promise<CorrectionResult> {
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  if (replacement) {
    // Its win probability is set below with the others, once the history before it is known.
    await replaceMatchBody(tx, ladder.id, target.seq, { at: replacement.at!, body: JSON.stringify(replacement), winProbability: 'null' });
  } else {
    await markVoid(tx, ladder.id, target.seq, correction.kind === 'void' ? correction.reason : '', now);
  }
  const logEpoch = newVersion();
  const history = new LadderHistory(ladder.system, ladder.options, logEpoch);
  const changes: string[] = [];
  const seqs: number[] = [];
  const winProbabilities: string[] = [];
  for (let after = 0; ; ) {
    const page = await matchesAfter(tx, ladder.id, after, PAGE);
    for (const row of page) {
      const voided = row.voided_at !== null;
      if (voided || row.seq < target.seq) {
        // Before the corrected match, history and probabilities stay as they are: the same steps give the same states.
        history.add(row.seq, row.body, voided);
        continue;
      }
      const probabilities = history.predict(row.body);
      const step = history.add(row.seq, row.body)!;
      changes.push(matchChanges(step.rating.players));
      seqs.push(row.seq);
      winProbabilities.push(JSON.stringify(probabilities));
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  const lastSeqs = await replaceChanges(tx, ladder.id, seqs, changes);
  await updateWinProbabilities(tx, ladder.id, seqs, winProbabilities);

  const stored = new Map((await allPlayers(tx, ladder.id)).map((row) => [row.id, rowToState(row)]));
  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  for (const [id, after] of history.states) {
    const before = stored.get(id);
    if (sameState(after, before)) continue;
    players.push({ id, before: before ? publicState(before) : null, after: publicState(after) });
    finals.push({ id, state: after, seq: head.nextSeq - 1, lastSeq: lastSeqs.get(id) });
  }
  for (const [id, before] of stored) {
    if (history.states.has(id)) continue;
    players.push({ id, before: publicState(before), after: null });
    removed.push(id);
  }
  const added = finals.filter((p) => !stored.has(p.id)).length;
  await upsertPlayers(tx, ladder.id, finals);
  await deletePlayers(tx, ladder.id, removed);
  await adjustLadder(tx, ladder.id, { matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion(), logEpoch });
  return {
    match: { id: target.id, seq: target.seq, void: !replacement },
    changed: true,
    players,
    rerated: seqs.length - (replacement ? 1 : 0),
    committed: finals,
    removed,
    lastSeq: head.nextSeq - 1,
  };
}
