/**
 * The only code that changes ratings. Submissions for one ladder queue up in
 * this process and are written in groups (group commit): while one
 * transaction is in flight, new submissions wait; the next transaction takes
 * them all. Each transaction
 *
 *   1. locks the ladder row (SELECT ... FOR UPDATE), which serialises writers
 *      of that ladder across every instance sharing the database;
 *   2. answers submissions whose Idempotency-Key is already stored (same body:
 *      the stored answer; different body: 409) without rating again;
 *   3. reads the players' states, rates the submissions one after another in
 *      arrival order (each sees the states the previous one left), and
 *   4. writes matches, player states, history rows, idempotency rows and the
 *      ladder's counters, then commits.
 *
 * A submission is answered only after its transaction commits, so a 2xx
 * means the match is durable; if the transaction fails, every submission in
 * it gets a 503 and nothing of the group was written, so retrying with the
 * same key is always safe.
 */
import { createHash, randomUUID } from 'node:crypto';
import { InvalidInputError } from '../core/errors.js';
import type { Match } from '../core/match.js';
import type { MatchRating, PlayerState } from '../core/systems.js';
import { wvwGroups } from '../core/wvw.js';
import type { Database, Queryable } from '../store/database.js';
import { ConflictError, HttpError } from './errors.js';
import type { Ladder, Ladders } from './ladders.js';
import { publicState, rateUnit } from './rating.js';

/** An answer: `body` is an object, or the exact JSON text stored for an idempotent repeat. */
export type Outcome = { status: number; body: unknown };

interface Job {
  kind: 'match' | 'round';
  key: string | undefined;
  hash: string;
  matches: Match[];
  roundName?: string;
  /** Epoch ms of the round (rounds only). */
  roundAt?: number;
  receivedAt: number;
  resolve: (outcome: Outcome) => void;
  reject: (error: unknown) => void;
}

export interface CommittedPlayer {
  id: string;
  state: PlayerState;
  seq: number;
}

export interface WriterHooks {
  /** After a commit: the players whose state changed and how many matches were rated. */
  onCommit?: (ladder: Ladder, players: CommittedPlayer[], matchesRated: number, lastSeq: number) => Promise<void> | void;
  /** How many submissions one transaction carried (metrics). */
  onBatch?: (ladder: Ladder, size: number, seconds: number) => void;
}

export interface WriterOptions {
  /** Submissions per transaction at most. @default 256 */
  maxBatch?: number;
}

interface PlayerRow {
  id: string;
  rating: number;
  rd: number | null;
  volatility: number | null;
  matches: number;
  last_at: number | null;
}

function rowToState(row: PlayerRow): PlayerState {
  const state: PlayerState = { rating: row.rating, matches: row.matches };
  if (row.rd !== null) state.rd = row.rd;
  if (row.volatility !== null) state.volatility = row.volatility;
  if (row.last_at !== null) state.lastAt = row.last_at;
  return state;
}

/** Request fingerprint for idempotency: the kind and the parsed body, canonical JSON. */
export function requestHash(kind: string, body: unknown): string {
  return createHash('sha256').update(kind).update('\0').update(JSON.stringify(body)).digest('hex');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class MatchWriter {
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Set<string>();
  private readonly maxBatch: number;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly ladders: Ladders,
    private readonly hooks: WriterHooks = {},
    options: WriterOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 256;
  }

  /** Rates one match (already validated by parseMatch, `at` filled in). */
  submitMatch(ladder: Ladder, match: Match, key: string | undefined, hash: string): Promise<Outcome> {
    return this.enqueue(ladder, { kind: 'match', key, hash, matches: [match], receivedAt: Date.now() });
  }

  /** Rates one World-vs-World round: its matches form one rating period. */
  submitRound(ladder: Ladder, name: string | undefined, at: number, matches: Match[], key: string | undefined, hash: string): Promise<Outcome> {
    return this.enqueue(ladder, { kind: 'round', key, hash, matches, roundName: name, roundAt: at, receivedAt: Date.now() });
  }

  /** Stops taking work; waits for transactions in flight. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running.size > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private enqueue(ladder: Ladder, job: Omit<Job, 'resolve' | 'reject'>): Promise<Outcome> {
    if (this.closed) return Promise.reject(new HttpError(503, 'unavailable', 'the server is shutting down'));
    return new Promise<Outcome>((resolve, reject) => {
      let queue = this.queues.get(ladder.id);
      if (!queue) this.queues.set(ladder.id, (queue = []));
      queue.push({ ...job, resolve, reject });
      if (!this.running.has(ladder.id)) void this.drain(ladder);
    });
  }

  private async drain(ladder: Ladder): Promise<void> {
    this.running.add(ladder.id);
    try {
      for (;;) {
        const queue = this.queues.get(ladder.id);
        if (!queue || queue.length === 0) break;
        const batch = queue.splice(0, this.maxBatch);
        const started = performance.now();
        try {
          const { outcomes, committed, rated, lastSeq } = await this.db.transaction((tx) => this.write(tx, ladder, batch));
          this.hooks.onBatch?.(ladder, batch.length, (performance.now() - started) / 1000);
          if (committed.length > 0 && this.hooks.onCommit) {
            try {
              await this.hooks.onCommit(ladder, committed, rated, lastSeq);
            } catch {
              // Derived state (leaderboard order) catches up on its own; the matches are committed.
            }
          }
          batch.forEach((job, i) => {
            const outcome = outcomes[i]!;
            if (outcome instanceof Error) job.reject(outcome);
            else job.resolve(outcome);
          });
        } catch (error) {
          const failure = error instanceof HttpError ? error : new HttpError(503, 'unavailable', `could not store the submission, nothing was rated; retry with the same Idempotency-Key (${(error as Error).message})`);
          for (const job of batch) job.reject(failure);
        }
      }
    } finally {
      this.running.delete(ladder.id);
      // A job may have arrived between the last check and the delete.
      const queue = this.queues.get(ladder.id);
      if (queue && queue.length > 0) void this.drain(ladder);
    }
  }

  private async write(tx: Queryable, ladder: Ladder, batch: Job[]) {
    const system = ladder.rating;
    const locked = await tx.query<{ next_seq: number; round_count: number }>('SELECT next_seq, round_count FROM ladders WHERE id = $1 FOR UPDATE', [ladder.id]);
    if (locked.length === 0) throw new HttpError(404, 'not_found', `no ladder ${JSON.stringify(ladder.id)}`, 'ladder');
    let nextSeq = locked[0]!.next_seq;
    let roundCount = locked[0]!.round_count;

    const keys = [...new Set(batch.map((job) => job.key).filter((key): key is string => key !== undefined))];
    const stored = new Map<string, { hash: string; outcome: Outcome }>();
    if (keys.length > 0) {
      const rows = await tx.query<{ key: string; request_hash: string; status: number; response: unknown }>(
        'SELECT key, request_hash, status, response FROM idempotency WHERE ladder = $1 AND key = ANY($2::text[])',
        [ladder.id, keys],
      );
      for (const row of rows) stored.set(row.key, { hash: row.request_hash, outcome: { status: row.status, body: row.response } });
    }
    const givenIds = [...new Set(batch.flatMap((job) => job.matches.map((m) => m.id)).filter((id): id is string => id !== undefined))];
    const takenIds = new Set<string>();
    if (givenIds.length > 0) {
      const rows = await tx.query<{ id: string }>('SELECT id FROM matches WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, givenIds]);
      for (const row of rows) takenIds.add(row.id);
    }
    const roundNames = batch.map((job) => job.roundName).filter((n): n is string => n !== undefined);
    const takenRounds = new Set<string>();
    if (roundNames.length > 0) {
      const rows = await tx.query<{ name: string }>('SELECT name FROM rounds WHERE ladder = $1 AND name = ANY($2::text[])', [ladder.id, roundNames]);
      for (const row of rows) takenRounds.add(row.name);
    }
    const hasRound = batch.some((job) => job.kind === 'round');
    const working = new Map<string, PlayerState>();
    const playerIds = [...new Set(batch.flatMap((job) => job.matches.flatMap((m) => m.teams.flatMap((t) => t.players.map((p) => p.id)))))];
    // A round needs every world for the next round's groups; other writes only their players.
    const rows = hasRound
      ? await tx.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1', [ladder.id])
      : await tx.query<PlayerRow>('SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 AND id = ANY($2::text[])', [ladder.id, playerIds]);
    for (const row of rows) {
      working.set(row.id, rowToState(row));
    }

    const matchRows = { seq: [] as number[], id: [] as string[], at: [] as number[], receivedAt: [] as number[], round: [] as (string | null)[], body: [] as string[], wp: [] as string[] };
    const changeRows = { player: [] as string[], seq: [] as number[], team: [] as number[], before: [] as string[], after: [] as string[], terms: [] as string[] };
    const idemRows = { key: [] as string[], hash: [] as string[], status: [] as number[], response: [] as string[] };
    const roundRows: Array<[number, string, number, number, number, string]> = [];
    const changed = new Map<string, CommittedPlayer>();
    const batchKeys = new Map<string, { hash: string; outcome: Outcome }>();
    let rated = 0;

    const outcomes: Array<Outcome | Error> = batch.map((job) => {
      if (job.key !== undefined) {
        const previous = stored.get(job.key) ?? batchKeys.get(job.key);
        if (previous) {
          if (previous.hash === job.hash) return previous.outcome;
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
      try {
        winProbabilities = job.matches.map((match) => system.predict(match.teams.map((team) => team.players.map((p) => working.get(p.id) ?? system.initial()))));
        ratings = rateUnit(system, job.matches, working, job.kind === 'round');
      } catch (error) {
        if (error instanceof InvalidInputError) return error;
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
        matchRows.wp.push(JSON.stringify(winProbabilities[m]));
        matchesOut.push({ id, seq, at: iso(at) });
        rated++;
        for (const change of ratings[m]!.players) {
          changeRows.player.push(change.id);
          changeRows.seq.push(seq);
          changeRows.team.push(change.team);
          changeRows.before.push(JSON.stringify(publicState(change.before)));
          changeRows.after.push(JSON.stringify(publicState(change.after)));
          changeRows.terms.push(JSON.stringify(change.terms));
          players.push({ id: change.id, team: change.team, before: publicState(change.before), after: publicState(change.after), terms: change.terms });
        }
      });
      // States move only after the whole unit is rated (a round rates from the states before it).
      job.matches.forEach((_, m) => {
        for (const change of ratings[m]!.players) {
          working.set(change.id, change.after);
          changed.set(change.id, { id: change.id, state: change.after, seq: nextSeq - 1 });
        }
      });
      let body: unknown;
      if (job.kind === 'match') {
        body = { match: matchesOut[0], winProbability: winProbabilities[0], players };
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
        roundRows.push([roundCount, roundName!, job.roundAt!, firstSeq, nextSeq - 1, JSON.stringify(summary)]);
        takenRounds.add(roundName!);
        body = { round: roundName, matches: matchesOut, ratings: ratingsOut, groups };
      }
      const text = JSON.stringify(body);
      const outcome: Outcome = { status: 201, body: text };
      if (job.key !== undefined) {
        batchKeys.set(job.key, { hash: job.hash, outcome });
        idemRows.key.push(job.key);
        idemRows.hash.push(job.hash);
        idemRows.status.push(201);
        idemRows.response.push(text);
      }
      return outcome;
    });

    let newPlayers = 0;
    if (rated > 0) {
      await tx.query(
        `INSERT INTO matches (ladder, seq, id, at, received_at, round, body, win_probability)
         SELECT $1, s, i, a, r, rd, b::jsonb, w::jsonb FROM unnest($2::int8[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::text[], $8::text[]) AS u(s, i, a, r, rd, b, w)`,
        [ladder.id, matchRows.seq, matchRows.id, matchRows.at, matchRows.receivedAt, matchRows.round, matchRows.body, matchRows.wp],
      );
      const finals = [...changed.values()];
      const inserted = await tx.query<{ inserted: boolean }>(
        `INSERT INTO players (ladder, id, rating, rd, volatility, matches, last_at)
         SELECT $1, i, r, d, v, m, l FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int4[], $7::int8[]) AS u(i, r, d, v, m, l)
         ON CONFLICT (ladder, id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, matches = excluded.matches, last_at = excluded.last_at
         RETURNING (xmax = 0) AS inserted`,
        [
          ladder.id,
          finals.map((p) => p.id),
          finals.map((p) => p.state.rating),
          finals.map((p) => p.state.rd ?? null),
          finals.map((p) => p.state.volatility ?? null),
          finals.map((p) => p.state.matches),
          finals.map((p) => p.state.lastAt ?? null),
        ],
      );
      newPlayers = inserted.filter((row) => row.inserted).length;
      await tx.query(
        `INSERT INTO rating_changes (ladder, player, seq, team, before, after, terms)
         SELECT $1, p, s, t, b::jsonb, a::jsonb, x::jsonb FROM unnest($2::text[], $3::int8[], $4::int4[], $5::text[], $6::text[], $7::text[]) AS u(p, s, t, b, a, x)`,
        [ladder.id, changeRows.player, changeRows.seq, changeRows.team, changeRows.before, changeRows.after, changeRows.terms],
      );
    }
    if (idemRows.key.length > 0) {
      await tx.query(
        `INSERT INTO idempotency (ladder, key, request_hash, status, response, created_at)
         SELECT $1, k, h, s, r, $6 FROM unnest($2::text[], $3::text[], $4::int4[], $5::text[]) AS u(k, h, s, r)`,
        [ladder.id, idemRows.key, idemRows.hash, idemRows.status, idemRows.response, Date.now()],
      );
    }
    for (const row of roundRows) {
      await tx.query('INSERT INTO rounds (ladder, number, name, at, first_seq, last_seq, summary) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)', [ladder.id, ...row]);
    }
    if (rated > 0) {
      await tx.query('UPDATE ladders SET next_seq = $2, match_count = match_count + $3, player_count = player_count + $4, round_count = $5 WHERE id = $1', [
        ladder.id,
        nextSeq,
        rated,
        newPlayers,
        roundCount,
      ]);
    }
    return { outcomes, committed: [...changed.values()], rated, lastSeq: nextSeq - 1 };
  }
}
