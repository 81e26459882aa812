/**
 * Turns validated request bodies into what the writer rates: a match with
 * its time, or a World-vs-World round of matches. Everything a database
 * statement could refuse is checked here, before the submission joins a
 * write batch, so one client's bad submission never fails another's.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { type Match, parseMatch, parseTime } from 'ladder-core/core/match.js';
import type { z } from 'zod';
import type { matchSchema, roundSchema } from './schemas.js';
import { checkMatchLimits } from './systems.js';

export interface SubmissionClock {
  now: number;
  /** How far in the future `at` may lie (clock skew of game servers). */
  maxFutureMs: number;
}

function checkAt(at: number, field: string, clock: SubmissionClock): number {
  if (at < 0 || at > clock.now + clock.maxFutureMs) throw new InvalidInputError(`must lie between 1970 and ${Math.round(clock.maxFutureMs / 3_600_000)} hours from now`, { field });
  return at;
}

/**
 * A match as the writer rates it: validated, within the bounds of the
 * ladder's `system` when given (systems.ts, `matchLimitsOf`), `at` filled
 * in (the receive time when absent), no period (the service rates each
 * match as it arrives).
 */
export function matchSubmission(raw: z.infer<typeof matchSchema>, clock: SubmissionClock, system?: string): Match {
  const match = parseMatch(raw);
  if (system !== undefined) checkMatchLimits(system, match);
  delete match.period;
  match.at = checkAt(match.at ?? clock.now, 'at', clock);
  return match;
}

/** The matches of a round, each a match of its worlds' scores, all at the round's time. */
export function roundSubmission(raw: z.infer<typeof roundSchema>, clock: SubmissionClock): { at: number; matches: Match[] } {
  const at = checkAt(raw.at === undefined ? clock.now : parseTime(raw.at, 'at'), 'at', clock);
  const seenWorlds = new Map<string, number>();
  const seenIds = new Map<string, number>();
  const matches = raw.matches.map((m, i) => {
    const worlds = Object.entries(m.worlds);
    if (worlds.length < 2) throw new InvalidInputError(`a match needs at least two worlds, got ${worlds.length}`, { field: `matches[${i}].worlds` });
    for (const [world] of worlds) {
      const other = seenWorlds.get(world);
      if (other !== undefined)
        throw new InvalidInputError(`world ${JSON.stringify(world)} plays in matches[${other}] and matches[${i}] of one round`, { field: `matches[${i}].worlds.${world}` });
      seenWorlds.set(world, i);
    }
    if (m.id !== undefined) {
      const other = seenIds.get(m.id);
      if (other !== undefined) throw new InvalidInputError(`match id ${JSON.stringify(m.id)} is also the id of matches[${other}]`, { field: `matches[${i}].id` });
      seenIds.set(m.id, i);
    }
    return parseMatch({ ...(m.id !== undefined ? { id: m.id } : {}), at, teams: worlds.map(([world, score]) => ({ players: [world], score })) });
  });
  return { at, matches };
}
