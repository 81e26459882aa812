/** What every Redis-backed part of the service shares: how a failed call reaches the client. */
import { UnavailableError } from './errors/index.js';

/** Turns a failed Redis call into UnavailableError; the driver's message stays in `cause`. */
export async function redisCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw new UnavailableError('redis', 'shared state (Redis) is unavailable; retry shortly', 1, { cause: error });
  }
}
