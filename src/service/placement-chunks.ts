/** How a matchmaking turn cuts the matches it places into the store's atomic steps. */
/**
 * Matches placed per round trip: at most this many, and no more tickets than PLACE_CHUNK_TICKETS. The
 * store places a chunk in one atomic step (one Lua script on Redis), during which every other client's
 * intake waits: chunks of up to 250 six-against-six matches held Redis for up to 25–40 ms, and set the
 * intake's p99 (docs/BENCHMARKS.md, "Intake on a rule-set queue").
 */
export const PLACE_CHUNK = 250;
export const PLACE_CHUNK_TICKETS = 200;

/** Consecutive chunks of matches, each of at most PLACE_CHUNK matches and (unless one match alone exceeds it) PLACE_CHUNK_TICKETS tickets. */
export function placementChunks<T extends { teams: string[][] }>(matches: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let tickets = 0;
  for (const match of matches) {
    let size = 0;
    for (const team of match.teams) size += team.length;
    if (chunk.length > 0 && (chunk.length >= PLACE_CHUNK || tickets + size > PLACE_CHUNK_TICKETS)) {
      chunks.push(chunk);
      chunk = [];
      tickets = 0;
    }
    chunk.push(match);
    tickets += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
