/**
 * The pure plan of a write batch: rates each submission of the batch, in
 * order, against the player states the caller read (or cached), and collects
 * the rows to write and the answer of each submission. Nothing here reads or
 * writes the database; the same plan feeds the one-statement fast path and
 * the locked transaction.
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import type { Match } from 'ladder-core/core/match.js';
import type { MatchRating, PlayerState } from 'ladder-core/core/systems.js';
import { wvwGroups } from 'ladder-core/core/wvw.js';
import { emptyIdempotencyRows, type IdempotencyRows } from '../../store/idempotency.js';
import { emptyMatchRows, type MatchRows } from '../../store/matches.js';
import type { RoundRow } from '../../store/rounds.js';
import { ConflictError } from '../errors/index.js';
import type { Ladder } from '../ladders.js';
import { Turns } from '../turns.js';
import { changeEntry, publicState, rateUnit } from '../rating.js';
import type { HistoryStep, LadderHistory } from '../whole-history.js';

/**
 * What the writer gives back for a submission: the JSON text of the records it
 * wrote (the match or round, and the rating changes). Serialised once, here,
 * because the same bytes are stored with an Idempotency-Key and replayed.
 * `status` is set only for a repeat: the status stored with its key.
 */
export interface Written {
  body: string;
  status?: number;
}

/** An Idempotency-Key with its request's fingerprint and the status the caller answers a fresh write with (stored for repeats). */
export interface Idempotency {
  key: string;
  hash: string;
  status: number;
}

/** One submission waiting to be written: a match, or a World-vs-World round of several. */
export interface Job {
  kind: 'match' | 'round';
  idempotency: Idempotency | undefined;
  matches: Match[];
  roundName?: string;
  /** Epoch ms of the round (rounds only). */
  roundAt?: number;
  receivedAt: number;
  resolve: (written: Written) => void;
  reject: (error: unknown) => void;
}

/** A player's state after a committed batch, with the sequence number of the last match that moved it. */
export interface CommittedPlayer {
  id: string;
  state: PlayerState;
  seq: number;
  /** The sequence number of its newest history entry (null or absent: unchanged by this write). */
  lastSeq?: number | null;
}

/** What the plan starts from. */
export interface BatchStart {
  nextSeq: number;
  roundCount: number;
  /** Stored Idempotency-Keys of the batch. */
  stored: Map<string, { hash: string; written: Written }>;
  takenIds: Set<string>;
  takenRounds: Set<string>;
  /** States of the batch's players that exist (others start from the system's initial state); updated as the batch is rated. */
  working: Map<string, PlayerState>;
  /** The sequence number of the newest history entry of the batch's players that have one; updated as the batch is rated. */
  lastSeqs: Map<string, number>;
  /**
   * A whole-history ladder's history, up to date with the log (its last
   * match is `nextSeq - 1`): each match is added to it and rated from it,
   * not from `working`, and every player it moves is written.
   */
  history?: LadderHistory;
}

export interface BatchPlan {
  /** Per submission: its answer, or the error it gets (the others are written regardless). */
  outcomes: Array<Written | Error>;
  /** The matches, each with its history (`changes`). */
  matchRows: MatchRows;
  idemRows: IdempotencyRows;
  roundRows: RoundRow[];
  changed: Map<string, CommittedPlayer>;
  rated: number;
  nextSeq: number;
  roundCount: number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export async function planBatch(ladder: Ladder, batch: readonly Job[], start: BatchStart): Promise<BatchPlan> {
  const system = ladder.rating;
  const { stored, takenIds, takenRounds, working, lastSeqs, history } = start;
  let nextSeq = start.nextSeq;
  let roundCount = start.roundCount;
  const matchRows = emptyMatchRows();
  const idemRows = emptyIdempotencyRows();
  const roundRows: RoundRow[] = [];
  const changed = new Map<string, CommittedPlayer>();
  const batchKeys = new Map<string, { hash: string; written: Written }>();
  let rated = 0;

  // A whole history's freeze (a horizon) runs in slices with turns of the event loop between them.
  const turns = new Turns(20);
  const planJob = async (job: Job): Promise<Written | Error> => {
    const idem = job.idempotency;
    if (idem !== undefined) {
      const previous = stored.get(idem.key) ?? batchKeys.get(idem.key);
      if (previous) {
        if (previous.hash === idem.hash) return previous.written;
        return new ConflictError('this Idempotency-Key was already used with a different body', 'Idempotency-Key');
      }
    }
    for (const [m, match] of job.matches.entries()) {
      if (match.id !== undefined && takenIds.has(match.id)) {
        return new ConflictError(`match id ${JSON.stringify(match.id)} is already rated in this ladder`, job.kind === 'round' ? `matches[${m}].id` : 'id');
      }
    }
    let roundName = job.roundName;
    if (job.kind === 'round') {
      if (roundName === undefined) {
        roundName = `r${roundCount + 1}`;
        while (takenRounds.has(roundName)) roundName = `${roundName}'`;
      } else if (takenRounds.has(roundName)) {
        return new ConflictError(`round ${JSON.stringify(roundName)} is already rated in this ladder`, 'round');
      }
    }
    let ratings: MatchRating[];
    let winProbabilities: number[][];
    let steps: HistoryStep[] | undefined;
    try {
      if (history) {
        // One match at a time, each predicted from the history before it, then added to it.
        winProbabilities = [];
        // Checked for every match before any is added, so a refusal leaves the history as it was.
        for (const match of job.matches) history.refuseFrozen(match);
        steps = [];
        for (let m = 0; m < job.matches.length; m++) {
          const match = job.matches[m]!;
          // A freeze the match makes runs first (as the prediction would run it), giving the loop turns.
          await history.freezeAhead(match, turns);
          winProbabilities.push(history.predict(match));
          steps.push(history.add(nextSeq + m, match)!);
        }
        ratings = steps.map((step) => step.rating);
      } else {
        winProbabilities = job.matches.map((match) =>
          system.predict(
            match.teams.map((team) => team.players.map((p) => working.get(p.id) ?? system.initial())),
            match.context,
          ),
        );
        ratings = rateUnit(system, job.matches, working, job.kind === 'round');
      }
    } catch (error) {
      // A history that failed half-way cannot rate the rest of the batch: the batch fails and the history is derived again.
      if (error instanceof InvalidInputError && !history?.broken) return error;
      throw error;
    }
    const players: unknown[] = [];
    const firstSeq = nextSeq;
    const matchesOut: Array<{ id: string; seq: number; at: string }> = [];
    job.matches.forEach((match, m) => {
      const seq = nextSeq++;
      const id = match.id ?? randomUUID();
      takenIds.add(id);
      const at = match.at!;
      const body: Match = { ...match, id };
      matchRows.seq.push(seq);
      matchRows.id.push(id);
      matchRows.at.push(at);
      matchRows.receivedAt.push(job.receivedAt);
      matchRows.round.push(job.kind === 'round' ? roundName! : null);
      matchRows.body.push(JSON.stringify(body));
      matchRows.winProbability.push(JSON.stringify(winProbabilities[m]));
      matchesOut.push({ id, seq, at: iso(at) });
      rated++;
      const entries: string[] = [];
      for (const change of ratings[m]!.players) {
        // Serialised once: the same text goes into the history entry and the answer.
        const { entry, before, after, terms } = changeEntry(change, lastSeqs.get(change.id) ?? null);
        lastSeqs.set(change.id, seq);
        entries.push(entry);
        players.push(`{"id":${JSON.stringify(change.id)},"team":${change.team},"before":${before},"after":${after},"terms":${terms}}`);
      }
      matchRows.changes.push(`[${entries.join(',')}]`);
    });
    // States move only after the whole unit is rated (a round rates from the states before it).
    job.matches.forEach((_, m) => {
      for (const change of ratings[m]!.players) {
        working.set(change.id, change.after);
        changed.set(change.id, { id: change.id, state: change.after, seq: nextSeq - 1 });
      }
      // A whole history also moves players outside the match: each is written with the match that moved it.
      for (const [id, state] of steps?.[m]?.changed ?? []) {
        working.set(id, state);
        changed.set(id, { id, state, seq: firstSeq + m });
      }
    });
    let text: string;
    if (job.kind === 'match') {
      text = `{"match":${JSON.stringify(matchesOut[0])},"winProbability":${JSON.stringify(winProbabilities[0])},"players":[${players.join(',')}]}`;
    } else {
      roundCount++;
      const worlds = [...working].map(([id, s]) => ({ id, rating: s.rating, rd: s.rd ?? 0 }));
      const groups = wvwGroups(worlds);
      const ratingsOut = ratings.flatMap((r) => r.players.map((c) => ({ id: c.id, before: publicState(c.before), after: publicState(c.after), terms: c.terms })));
      const summary = {
        round: roundName,
        at: iso(job.roundAt!),
        groups,
        matches: job.matches.map((match, m) => {
          const total = match.teams.reduce((sum, t) => sum + t.score!, 0);
          return {
            id: matchesOut[m]!.id,
            worlds: Object.fromEntries(match.teams.map((t) => [t.players[0]!.id, t.score!])),
            shares: Object.fromEntries(match.teams.map((t) => [t.players[0]!.id, total > 0 ? t.score! / total : 1 / match.teams.length])),
          };
        }),
        ratings: Object.fromEntries([...working].map(([id, s]) => [id, { rating: s.rating, rd: s.rd }])),
      };
      roundRows.push({ number: roundCount, name: roundName!, at: job.roundAt!, firstSeq, lastSeq: nextSeq - 1, summary: JSON.stringify(summary) });
      takenRounds.add(roundName!);
      text = JSON.stringify({ round: roundName, matches: matchesOut, ratings: ratingsOut, groups });
    }
    if (idem !== undefined) {
      // A repeat within the batch answers as a later batch would: with the stored status.
      batchKeys.set(idem.key, { hash: idem.hash, written: { body: text, status: idem.status } });
      idemRows.key.push(idem.key);
      idemRows.hash.push(idem.hash);
      idemRows.status.push(idem.status);
      idemRows.response.push(text);
    }
    return { body: text };
  };
  const outcomes: Array<Written | Error> = [];
  for (const job of batch) outcomes.push(await planJob(job));
  for (const player of changed.values()) player.lastSeq = lastSeqs.get(player.id) ?? null;
  return { outcomes, matchRows, idemRows, roundRows, changed, rated, nextSeq, roundCount };
}
