/**
 * The loose filter's widening schedule (team rank seed, MATCHMAKING: "a loose
 * rank filter of within 2 percentiles … may widen to within 5 percentiles,
 * 10 percentiles, etc.").
 *
 * A player's schedule is their own `within`, then every step of the global
 * schedule wider than it, one step per `everySeconds` of waiting. So a
 * filter never gets narrower than the player asked for, and a strict filter
 * stays at its own value forever.
 */
import { InvalidInputError } from '../core/errors.js';

export interface WideningOptions {
  /** Widths (percentiles) a loose filter widens through. @default [5, 10, 20, 50, 100] */
  steps?: readonly number[];
  /** Seconds between steps. @default 30 */
  everySeconds?: number;
}

export interface ResolvedWidening {
  steps: readonly number[];
  everySeconds: number;
}

export const WIDENING_DEFAULTS: ResolvedWidening = Object.freeze({ steps: Object.freeze([5, 10, 20, 50, 100]), everySeconds: 30 });

export function resolveWidening(options: WideningOptions = {}): ResolvedWidening {
  const steps = options.steps ?? WIDENING_DEFAULTS.steps;
  const everySeconds = options.everySeconds ?? WIDENING_DEFAULTS.everySeconds;
  steps.forEach((step, index) => {
    if (typeof step !== 'number' || !Number.isFinite(step) || step < 0 || step > 100) {
      throw new InvalidInputError(`must be a number from 0 to 100, got ${step}`, { field: `widen[${index}]` });
    }
    if (index > 0 && step <= steps[index - 1]) throw new InvalidInputError('steps must increase', { field: `widen[${index}]` });
  });
  if (!(typeof everySeconds === 'number' && Number.isFinite(everySeconds) && everySeconds > 0)) {
    throw new InvalidInputError(`must be a positive number of seconds, got ${everySeconds}`, { field: 'widenEvery' });
  }
  return { steps: [...steps], everySeconds };
}

/** Steps waited: 0 for the first `everySeconds`, then one more per period. */
export function wideningStep(waitedSeconds: number, widening: ResolvedWidening): number {
  return waitedSeconds <= 0 ? 0 : Math.floor(waitedSeconds / widening.everySeconds);
}

/**
 * Effective `within` of a filter after `step` steps: the step-th entry of
 * [own, ...global steps wider than own], saturating at the last.
 */
export function effectiveWithin(own: number, strict: boolean, step: number, widening: ResolvedWidening): number {
  if (strict || step <= 0) return own;
  let taken = 0;
  let width = own;
  for (const candidate of widening.steps) {
    if (candidate <= own) continue;
    width = candidate;
    taken++;
    if (taken === step) break;
  }
  return width;
}
