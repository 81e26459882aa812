/**
 * SQL of phased corrections: the journal row of a ladder under correction
 * (`pending_corrections`, with `ladders.correcting` set while it exists) and
 * its staged writes (`correction_steps`, numbered from 0). Every statement
 * that changes either names the run's token and locks the journal row, so a
 * run another one took over stops at its next step.
 */
import type { Queryable } from './database.js';

export interface PendingCorrection {
  ladder: string;
  phase: 'compute' | 'apply';
  matchId: string;
  correction: unknown;
  at: number;
  token: number;
  applied: number;
}

interface JournalRow {
  ladder: string;
  phase: 'compute' | 'apply';
  match_id: string;
  correction: unknown;
  at: number;
  token: number;
  applied: number;
}

function fromRow(row: JournalRow): PendingCorrection {
  return { ladder: row.ladder, phase: row.phase, matchId: row.match_id, correction: row.correction, at: row.at, token: row.token, applied: row.applied };
}

/** Opens the journal and sets the ladder's flag (the caller holds the ladder lock); the version moves so cached states are not used. */
export async function openJournal(tx: Queryable, entry: { ladder: string; matchId: string; correction: unknown; at: number; token: number; version: number }): Promise<void> {
  await tx.query(`INSERT INTO pending_corrections (ladder, phase, match_id, correction, at, token, applied, started_at) VALUES ($1, 'compute', $2, $3::json, $4, $5, 0, $6)`, [
    entry.ladder,
    entry.matchId,
    JSON.stringify(entry.correction),
    entry.at,
    entry.token,
    Date.now(),
  ]);
  await tx.query('UPDATE ladders SET correcting = true, version = $2 WHERE id = $1', [entry.ladder, entry.version]);
}

/** The journal row, locked until the transaction ends, if `token` still runs it (undefined: taken over or finished). */
export async function holdJournal(tx: Queryable, ladder: string, token: number): Promise<PendingCorrection | undefined> {
  const rows = await tx.query<JournalRow>('SELECT ladder, phase, match_id, correction, at, token, applied FROM pending_corrections WHERE ladder = $1 AND token = $2 FOR UPDATE', [
    ladder,
    token,
  ]);
  return rows[0] && fromRow(rows[0]);
}

/** Every correction left unfinished. */
export async function pendingCorrections(db: Queryable): Promise<PendingCorrection[]> {
  const rows = await db.query<JournalRow>('SELECT ladder, phase, match_id, correction, at, token, applied FROM pending_corrections ORDER BY ladder');
  return rows.map(fromRow);
}

/** Takes the journal over with a new token; the row as it is now (undefined: none). */
export async function takeOverJournal(tx: Queryable, ladder: string, token: number): Promise<PendingCorrection | undefined> {
  const rows = await tx.query<JournalRow>('UPDATE pending_corrections SET token = $2 WHERE ladder = $1 RETURNING ladder, phase, match_id, correction, at, token, applied', [
    ladder,
    token,
  ]);
  return rows[0] && fromRow(rows[0]);
}

export async function setJournalPhase(tx: Queryable, ladder: string, phase: 'compute' | 'apply'): Promise<void> {
  await tx.query('UPDATE pending_corrections SET phase = $2, applied = 0 WHERE ladder = $1', [ladder, phase]);
}

export async function setApplied(tx: Queryable, ladder: string, applied: number): Promise<void> {
  await tx.query('UPDATE pending_corrections SET applied = $2 WHERE ladder = $1', [ladder, applied]);
}

/** Closes the journal and clears the flag; the version moves so every cached state is reloaded. */
export async function closeJournal(tx: Queryable, ladder: string, version: number): Promise<void> {
  await tx.query('DELETE FROM pending_corrections WHERE ladder = $1', [ladder]);
  await tx.query('UPDATE ladders SET correcting = false, version = $2 WHERE id = $1', [ladder, version]);
}

/** Stages writes numbered `first`, `first + 1`, … (each a JSON text). */
export async function stageSteps(tx: Queryable, ladder: string, first: number, steps: readonly string[]): Promise<void> {
  if (steps.length === 0) return;
  await tx.query('INSERT INTO correction_steps (ladder, n, step) SELECT $1, $2::int4 + o - 1, s::json FROM unnest($3::text[]) WITH ORDINALITY AS u(s, o)', [ladder, first, steps]);
}

/** Up to `limit` staged writes from the one numbered `from`, in order, as JSON texts (none: all applied). */
export async function stagedSteps(db: Queryable, ladder: string, from: number, limit: number): Promise<string[]> {
  // A bounded range of the key, so the plan is the key's range however the table's statistics stand
  // (PGlite gathers none by itself): an open-ended `n >= from ORDER BY n LIMIT` was planned as a sort of
  // every staged write, each turned into text, 160 ms a read at 860 staged writes.
  const rows = await db.query<{ step: string }>('SELECT step::text AS step FROM correction_steps WHERE ladder = $1 AND n >= $2 AND n < $2::int4 + $3::int4 ORDER BY n', [
    ladder,
    from,
    limit,
  ]);
  return rows.map((row) => row.step);
}

/** Deletes up to `limit` staged writes of the ladder; how many it deleted. */
export async function dropSteps(db: Queryable, ladder: string, limit: number): Promise<number> {
  const rows = await db.query('DELETE FROM correction_steps WHERE ladder = $1 AND n IN (SELECT n FROM correction_steps WHERE ladder = $1 ORDER BY n LIMIT $2) RETURNING n', [
    ladder,
    limit,
  ]);
  return rows.length;
}
