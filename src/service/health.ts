/** The liveness check behind /healthz. */
import { type Database, ping } from '../store/database.js';
import { UnavailableError } from './errors/index.js';

/** Resolves when the database answers; an UnavailableError naming `database` (503) when it does not. */
export async function databaseHealth(db: Database): Promise<void> {
  try {
    await ping(db);
  } catch (error) {
    throw new UnavailableError('database', 'the database is unavailable', 1, { cause: error });
  }
}
