/**
 * A whole-history ladder's last freeze (migration 12, `frozen_priors`): the
 * priors a history with a horizon froze its past into, and where in the log
 * the matches after the freeze start. One row per ladder, replaced whole.
 * With context deviations the priors carry each player's frozen deviations
 * too (`contexts`; inferred jointly with the general skill, with their
 * covariances), with a learning curve each player's first day
 * (`firstDay`), and with a newcomer's prior mean from earlier entrants the
 * frozen entrants of each group (`entrants`); each is absent otherwise, so
 * rows written before them read as they were.
 */
import type { FrozenContext, FrozenEntrants, FrozenPast, FrozenPlayer } from 'ladder-core/core/systems.js';
import type { Queryable } from './database.js';

/** A stored freeze: the priors, the log they were made from (epoch and system options), and where the live matches start. */
export interface StoredFreeze {
  logEpoch: number;
  /** The system's options (defaults filled in) the history was made with. */
  options: object;
  /** The first match of the log the restored history takes in (the earliest live one at the freeze). */
  fromSeq: number;
  /** The match whose day made the history freeze: before it, a match of a day on or before the freeze is in the priors; from it on, every match is live. */
  triggerSeq: number;
  past: FrozenPast;
  /** When it was stored (read back only). */
  writtenAt?: number;
}

/** The priors as stored: parallel arrays, about a third of the size of an object per player. */
interface PriorsJson {
  ids: string[];
  mean: number[];
  variance: number[];
  matches: number[];
  /** null: no match time. */
  lastAt: (number | null)[];
  /** With context deviations only (absent: none, as every freeze stored before them): one entry per frozen deviation, by player then in the player's order. */
  contexts?: ContextPriorsJson;
  /** With a learning curve (`newcomerTrend`) only: each player's first day, parallel to `ids`. */
  firstDay?: number[];
  /** With a newcomer's prior mean from earlier entrants (`newcomerMean`) only: the frozen entrants of each group. */
  entrants?: FrozenEntrants[];
}

/** The frozen deviations as parallel arrays: the player's place in `ids`, the context, and the prior. */
interface ContextPriorsJson {
  player: number[];
  context: string[];
  mean: number[];
  variance: number[];
  matches: number[];
  lastAt: (number | null)[];
  /** Deviations frozen jointly with the general skill only (absent in rows stored before them): each one's covariances, null for none. */
  covariance?: (number[] | null)[];
}

function toJson(past: FrozenPast): string {
  const out: PriorsJson = { ids: [], mean: [], variance: [], matches: [], lastAt: [] };
  // A learning curve gives every player a first day, or none.
  if (past.players.some((p) => p.firstDay !== undefined)) out.firstDay = [];
  if (past.entrants !== undefined) out.entrants = past.entrants.map(({ group, sum, count }) => ({ group, sum, count }));
  past.players.forEach((p, i) => {
    out.ids.push(p.id);
    out.mean.push(p.mean);
    out.variance.push(p.variance);
    out.matches.push(p.matches);
    out.lastAt.push(p.lastAt ?? null);
    if (out.firstDay !== undefined) {
      if (p.firstDay === undefined) throw new Error(`frozen priors: players[${i}] (${p.id}) has no firstDay where others have one`);
      out.firstDay.push(p.firstDay);
    }
    if (p.contexts === undefined) return;
    const contexts = (out.contexts ??= { player: [], context: [], mean: [], variance: [], matches: [], lastAt: [] });
    for (const c of p.contexts) {
      contexts.player.push(i);
      contexts.context.push(c.context);
      contexts.mean.push(c.mean);
      contexts.variance.push(c.variance);
      contexts.matches.push(c.matches);
      contexts.lastAt.push(c.lastAt ?? null);
      if (c.covariance !== undefined) {
        // Parallel to the others: null for each deviation before the first with covariances.
        contexts.covariance ??= contexts.player.slice(0, -1).map(() => null);
        contexts.covariance.push(c.covariance);
      } else contexts.covariance?.push(null);
    }
  });
  // JSON writes each double as the shortest text that reads back as the same double, and json keeps the text as given.
  return JSON.stringify(out);
}

function fromJson(json: PriorsJson): FrozenPlayer[] {
  const players = json.ids.map((id, i) => {
    const player: FrozenPlayer = { id, mean: json.mean[i]!, variance: json.variance[i]!, matches: json.matches[i]! };
    const lastAt = json.lastAt[i];
    if (lastAt !== null && lastAt !== undefined) player.lastAt = lastAt;
    const firstDay = json.firstDay?.[i];
    if (firstDay !== undefined) player.firstDay = firstDay;
    return player;
  });
  const contexts = json.contexts;
  if (contexts !== undefined) {
    contexts.player.forEach((p, k) => {
      const deviation: FrozenContext = { context: contexts.context[k]!, mean: contexts.mean[k]!, variance: contexts.variance[k]!, matches: contexts.matches[k]! };
      const lastAt = contexts.lastAt[k];
      if (lastAt !== null && lastAt !== undefined) deviation.lastAt = lastAt;
      const covariance = contexts.covariance?.[k];
      if (covariance !== null && covariance !== undefined) deviation.covariance = covariance;
      const player = players[p];
      if (player === undefined) throw new Error(`frozen priors: contexts.player[${k}] is not a player (${p})`);
      (player.contexts ??= []).push(deviation);
    });
  }
  return players;
}

function pastFromJson(day: number, json: PriorsJson): FrozenPast {
  const past: FrozenPast = { day, players: fromJson(json) };
  if (json.entrants !== undefined) past.entrants = json.entrants;
  return past;
}

/** Stores `freeze` as the ladder's last one (in the transaction of the write that made it). */
export async function writeFreeze(tx: Queryable, ladder: string, freeze: StoredFreeze, now: number): Promise<void> {
  await tx.query(
    `INSERT INTO frozen_priors (ladder, log_epoch, options, day, from_seq, trigger_seq, players, priors, written_at)
     VALUES ($1, $2, $3::json, $4, $5, $6, $7, $8::json, $9)
     ON CONFLICT (ladder) DO UPDATE SET log_epoch = excluded.log_epoch, options = excluded.options, day = excluded.day, from_seq = excluded.from_seq,
       trigger_seq = excluded.trigger_seq, players = excluded.players, priors = excluded.priors, written_at = excluded.written_at`,
    [ladder, freeze.logEpoch, JSON.stringify(freeze.options), freeze.past.day, freeze.fromSeq, freeze.triggerSeq, freeze.past.players.length, toJson(freeze.past), now],
  );
}

/** The ladder's last stored freeze, if any. */
export async function readFreeze(db: Queryable, ladder: string): Promise<StoredFreeze | undefined> {
  const rows = await db.query<{ log_epoch: number; options: unknown; day: number; from_seq: number; trigger_seq: number; priors: unknown; written_at: number }>(
    'SELECT log_epoch, options, day, from_seq, trigger_seq, priors, written_at FROM frozen_priors WHERE ladder = $1',
    [ladder],
  );
  const row = rows[0];
  if (!row) return undefined;
  // json columns arrive parsed from both drivers; a string is parsed here in case one does not.
  const parse = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
  return {
    logEpoch: row.log_epoch,
    options: parse<object>(row.options),
    fromSeq: row.from_seq,
    triggerSeq: row.trigger_seq,
    past: pastFromJson(row.day, parse<PriorsJson>(row.priors)),
    writtenAt: row.written_at,
  };
}

/** Which freeze the ladder has stored (its log epoch and the match that made it), without the priors. */
export async function storedFreezeMark(db: Queryable, ladder: string): Promise<{ logEpoch: number; triggerSeq: number } | undefined> {
  const rows = await db.query<{ log_epoch: number; trigger_seq: number }>('SELECT log_epoch, trigger_seq FROM frozen_priors WHERE ladder = $1', [ladder]);
  const row = rows[0];
  return row && { logEpoch: row.log_epoch, triggerSeq: row.trigger_seq };
}

/** Forgets the ladder's stored freeze (its log was rewritten and no history froze since). */
export async function deleteFreeze(tx: Queryable, ladder: string): Promise<void> {
  await tx.query('DELETE FROM frozen_priors WHERE ladder = $1', [ladder]);
}
