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
 * Bounded work per step: the later matches are read a page at a time (keyset
 * on seq, `chunk` matches), rated, and the page's new history written before
 * the next is read, so memory holds one page plus the moved players' states
 * (at most the ladder's players), never the log. Between rows the event loop
 * gets a turn whenever `sliceMs` has passed, so no synchronous stretch is
 * longer than about one slice (plus one match): the work is mostly database
 * round trips and JSON, which a worker thread would not make cheaper, and a
 * worker could not share the transaction. Season resets are carried to each
 * moved state lazily (each keeps the seq it was last carried to), so a step
 * costs the match's players, not every moved player.
 *
 * Chains: a correction that takes a player out of the match or puts one in
 * changes that player's chain of history entries; only the player's first
 * entry after the match (or `players.last_seq`, when there is none) needs
 * its link moved, so the correction tracks just those players.
 *
 * A whole-history ladder (Whole-History Rating) has no state just before a
 * match to start from: a correction derives the ladder's whole history again
 * from the corrected log, as `ladder rebuild` would, rewrites the history
 * and win probabilities of the corrected match and of every counted
 * match after it (page by page, as above), and writes every player whose
 * state changed. The derived history itself is held in memory while it runs
 * (the system needs all of it; about 140 bytes per match). It moves the
 * ladder's log epoch, so every writer derives its history again.
 *
 * Every correction adds one to the ladder's `corrections` count in the same
 * transaction: a shared leaderboard compares it with the count it was loaded
 * at (rankings.ts), since a correction moves states but no sequence number.
 */
import type { Match } from '../core/match.js';
import type { PlayerState } from '../core/systems.js';
import type { Database, Queryable } from '../store/database.js';
import { adjustLadder, countCorrection, lockLadder } from '../store/ladders.js';
import {
  type ChangeEntry,
  type ChangeRecord,
  findMatch,
  lastChangesBefore,
  lastEntriesBefore,
  logPage,
  type LogRow,
  type MatchRecord,
  markVoid,
  replaceMatchBody,
  rewriteHistory,
  setLastSeqs,
} from '../store/matches.js';
import { deletePlayers, findPlayers, playersAfter, upsertPlayers } from '../store/players.js';
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

export interface CorrectionOptions {
  /** Matches read, rated and written per page. @default 1000 (200 on PGlite) */
  chunk?: number;
  /** Longest stretch of work before the event loop gets a turn, in ms. @default 20 */
  sliceMs?: number;
}

/** Gives the event loop a turn once `sliceMs` has passed since the last one. */
class Turns {
  private since = performance.now();
  constructor(private readonly sliceMs: number) {}

  async pause(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
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

export async function correctMatch(
  db: Database,
  ladder: Ladder,
  matchId: string,
  correction: Correction,
  now = Date.now(),
  options: CorrectionOptions = {},
): Promise<CorrectionResult> {
  // PGlite runs one statement at a time for every ladder: smaller pages keep each one short.
  const chunk = Math.max(1, Math.floor(options.chunk ?? (db.kind === 'pglite' ? 200 : 1000)));
  const turns = new Turns(options.sliceMs ?? 20);
  return db.transaction((tx) => correctIn(tx, ladder, matchId, correction, now, chunk, turns));
}

/** Players read or written per statement at the end of a correction. */
const PLAYER_BATCH = 5000;

async function correctIn(tx: Queryable, ladder: Ladder, matchId: string, correction: Correction, now: number, chunk: number, turns: Turns): Promise<CorrectionResult> {
  const head = await lockLadder(tx, ladder.id);
  if (!head) throw new NotFoundError(`no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
  const target = await findMatch(tx, ladder.id, matchId);
  if (!target) throw new NotFoundError(`no match ${JSON.stringify(matchId.slice(0, 80))} in ladder ${ladder.id}`, 'match');
  const unchanged: CorrectionResult = {
    match: { id: target.id, seq: target.seq, void: target.voidedAt !== null },
    changed: false,
    players: [],
    rerated: 0,
    committed: [],
    removed: [],
    lastSeq: head.nextSeq - 1,
  };
  if (target.voidedAt !== null) {
    if (correction.kind === 'void') return unchanged;
    throw new ConflictError(`match ${JSON.stringify(target.id)} is void; a voided match cannot be corrected`, 'match');
  }
  if (target.round !== null)
    throw new ConflictError(
      `match ${JSON.stringify(target.id)} is part of round ${JSON.stringify(target.round)}; World-vs-World rounds are rated as one period and cannot be corrected match by match`,
      'match',
    );
  await countCorrection(tx, ladder.id);
  if (keepsWholeHistory(ladder.system)) return correctWholeHistory(tx, ladder, head, target, correction, now, chunk, turns);

  const system = ladder.rating;
  const seasons = await listSeasons(tx, ladder.id);
  // A correction without `at` keeps the stored time.
  const replacement = correction.kind === 'replace' ? { ...correction.match, id: target.id, at: correction.match.at ?? target.at } : undefined;
  const touched = [...new Set([...playersOf(target.body), ...(replacement ? playersOf(replacement) : [])])];
  const carried = (moved: Moved, toSeq: number): PlayerState | undefined => moved.state && resetAt(system, seasons, moved.at, toSeq, moved.state);

  // The affected players' states just before the match (season resets applied up to it).
  const moved = new Map<string, Moved>();
  const previous = await lastChangesBefore(tx, ladder.id, touched, target.seq);
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
    const probabilities = system.predict(replacement.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())));
    const rating = rateUnit(system, [replacement], states, false)[0]!;
    for (const change of rating.players) moved.set(change.id, { state: change.after, at: target.seq });
    await replaceMatchBody(tx, ladder.id, target.seq, { at: replacement.at!, body: JSON.stringify(replacement), winProbability: JSON.stringify(probabilities) });
    await rewriteHistory(tx, ladder.id, { seq: [target.seq], changes: [matchChanges(rating.players, (id) => storedPrev.get(id) ?? null)], winProbability: [null] });
  } else {
    await markVoid(tx, ladder.id, target.seq, correction.kind === 'void' ? correction.reason : '', now);
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
        const probabilities = system.predict(body.teams.map((team) => team.players.map((p) => states.get(p.id) ?? system.initial())));
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
    await rewriteHistory(tx, ladder.id, out);
    if (!more) break;
  }
  // Players with no entry after the match: their newest entry is the link kept for them.
  await setLastSeqs(tx, ladder.id, [...relink.keys()], [...relink.values()]);

  // Moved states carried past the last season boundary, compared with the stored ones.
  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  let added = 0;
  const ids = [...moved.keys()];
  for (let i = 0; i < ids.length; i += PLAYER_BATCH) {
    const batch = ids.slice(i, i + PLAYER_BATCH);
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
    await upsertPlayers(tx, ladder.id, written);
    await deletePlayers(tx, ladder.id, gone);
    finals.push(...written);
    removed.push(...gone);
  }
  await adjustLadder(tx, ladder.id, { matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion() });
  return { match: { id: target.id, seq: target.seq, void: !replacement }, changed: true, players, rerated, committed: finals, removed, lastSeq: head.nextSeq - 1 };
}

/**
 * A correction of a whole-history ladder: the log corrected, then the whole
 * history derived again from it, page by page; the history of the corrected
 * match and of every counted match after it is rewritten a page at a time.
 */
async function correctWholeHistory(
  tx: Queryable,
  ladder: Ladder,
  head: LadderHead,
  target: MatchRecord,
  correction: Correction,
  now: number,
  chunk: number,
  turns: Turns,
): Promise<CorrectionResult> {
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
    await replaceMatchBody(tx, ladder.id, target.seq, { at: replacement.at!, body: JSON.stringify(replacement), winProbability: 'null' });
  } else {
    await markVoid(tx, ladder.id, target.seq, correction.kind === 'void' ? correction.reason : '', now);
  }
  const takeLink = (id: string, stored: number | null): number | null => {
    if (!relink.has(id)) return stored;
    const link = relink.get(id)!;
    relink.delete(id);
    return link;
  };
  const logEpoch = newVersion();
  const history = new LadderHistory(ladder.system, ladder.options, logEpoch);
  let rewritten = 0;
  for (let next = prefetch(tx, ladder.id, 0, chunk); ; ) {
    const page = await next;
    const more = page.length === chunk;
    if (more) next = prefetch(tx, ladder.id, page[page.length - 1]!.seq, chunk);
    const out: { seq: number[]; changes: string[]; winProbability: (string | null)[] } = { seq: [], changes: [], winProbability: [] };
    for (const row of page) {
      await turns.pause();
      // The corrected match is read as corrected above (same transaction).
      const body = JSON.parse(row.body) as Match;
      const voided = row.voided;
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
    await rewriteHistory(tx, ladder.id, out);
    if (!more) break;
  }
  await setLastSeqs(tx, ladder.id, [...relink.keys()], [...relink.values()]);

  const finals: CommittedPlayer[] = [];
  const removed: string[] = [];
  const players: CorrectionResult['players'] = [];
  let added = 0;
  // Every stored player, a batch at a time (keyset on id), then the derived players the table does not hold.
  const seen = new Set<string>();
  for (let from = ''; ; ) {
    const rows = await playersAfter(tx, ladder.id, from, PLAYER_BATCH);
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
    await upsertPlayers(tx, ladder.id, written);
    await deletePlayers(tx, ladder.id, gone);
    finals.push(...written);
    removed.push(...gone);
    if (rows.length < PLAYER_BATCH) break;
    from = rows[rows.length - 1]!.id;
  }
  const fresh: CommittedPlayer[] = [];
  for (const [id, after] of history.states) {
    if (seen.has(id)) continue;
    players.push({ id, before: null, after: publicState(after) });
    fresh.push(lastSeqOf({ id, state: after, seq: head.nextSeq - 1 }, relink));
    added++;
  }
  for (let i = 0; i < fresh.length; i += PLAYER_BATCH) await upsertPlayers(tx, ladder.id, fresh.slice(i, i + PLAYER_BATCH));
  finals.push(...fresh);
  await adjustLadder(tx, ladder.id, { matches: replacement ? 0 : -1, players: added - removed.length, version: newVersion(), logEpoch });
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
