/**
 * Whole-History Rating as a rating system: the RatingSystem wrapper, and the
 * registry entry with its whole-log (`rateLog`) and online evaluation
 * (`online`) hooks.
 */
import { defineSystem } from '../descriptor.js';
import { type ContextOffset, contextOf, type MatchRating, type PlayerState, predictFromPairs, type WholeHistorySystem } from '../rating-system.js';
import { WhrHistory } from './inference.js';
import { whrWinProbability } from './link.js';
import { type ResolvedWhrOptions, WHR_OPTIONS, WHR_SCALE, type WhrOptions } from './options.js';

/** The `whr` rating system: a RatingSystem that keeps the whole history inside it. */
export interface WhrSystem extends WholeHistorySystem {
  readonly options: ResolvedWhrOptions;
  /** Every match rated so far, and the skills. */
  readonly history: WhrHistory;
}

/**
 * Wraps a WhrHistory as a RatingSystem. Unlike the other systems, it is
 * stateful: each `ratePeriod`/`rateMatch` call adds its matches to the
 * system's own history, so one system object rates one log, in time order,
 * and `states` is read only for each player's `before`. A period of matches
 * without `at` is one day of the Wiener process (one period).
 */
export function createWhrSystem(options: WhrOptions = {}): WhrSystem {
  const history = new WhrHistory(options);
  const o = history.options;
  const contextual = o.contextPriorVariance > 0;
  const initial = (): PlayerState => ({ rating: o.rating, rd: Math.sqrt(o.priorVariance) * WHR_SCALE, matches: 0 });
  const stateOf = (id: string): PlayerState | undefined => {
    const estimate = history.estimate(id);
    if (!estimate) return undefined;
    const state: PlayerState = { rating: o.rating + estimate.mean * WHR_SCALE, rd: Math.sqrt(estimate.variance) * WHR_SCALE, matches: estimate.matches };
    if (estimate.lastAt !== undefined) state.lastAt = estimate.lastAt;
    if (contextual) {
      // Each context deviation as an offset on the rating's scale, with its own deviation.
      const contexts: Record<string, ContextOffset> = {};
      let any = false;
      for (const [context, deviation] of history.contextEstimates(id)) {
        contexts[context] = { offset: deviation.mean * WHR_SCALE, rd: Math.sqrt(deviation.variance) * WHR_SCALE, matches: deviation.matches };
        // Estimated jointly with the general skill (contextInference 'joint'): their covariance, which the variance of the sum counts.
        if (deviation.covariance !== undefined) contexts[context]!.covariance = deviation.covariance * WHR_SCALE * WHR_SCALE;
        any = true;
      }
      if (any) state.contexts = contexts;
    }
    return state;
  };
  const ratePeriod: WholeHistorySystem['ratePeriod'] = (matches, states) => {
    const befores = new Map<string, PlayerState>();
    let untimedDay: number | undefined;
    for (const match of matches) {
      for (const team of match.teams) {
        for (const { id } of team.players) if (!befores.has(id)) befores.set(id, states.get(id) ?? stateOf(id) ?? initial());
      }
      if (match.at === undefined) untimedDay ??= history.dayOf(undefined);
      history.addMatch(match, 0, match.at === undefined ? untimedDay : history.dayOf(match.at));
    }
    return matches.map(
      (match): MatchRating => ({
        ...(match.id !== undefined ? { matchId: match.id } : {}),
        players: match.teams.flatMap((team, t) =>
          team.players.map(({ id }) => {
            const after = stateOf(id)!;
            const before = befores.get(id)!;
            return { id, team: t, before, after, terms: { change: after.rating - before.rating } };
          }),
        ),
      }),
    );
  };
  const toSkill = (state: PlayerState): [number, number] => [(state.rating - o.rating) / WHR_SCALE, ((state.rd ?? Math.sqrt(o.priorVariance) * WHR_SCALE) / WHR_SCALE) ** 2];
  return {
    name: 'whr',
    options: o,
    history,
    initial,
    ratePeriod,
    rateMatch: (match, states) => ratePeriod([match], states)[0]!,
    // As ratePeriod adds a match of its own.
    absorb: (match) => history.addMatch(match, 0, history.dayOf(match.at)),
    reserve: (matches) => history.reserve(matches),
    predict: (teams, context) => {
      const skills = teams.map((team) => {
        let mean = 0;
        let variance = 0;
        for (const player of team) {
          const [m, v] = toSkill(player);
          mean += m;
          variance += v;
          if (contextual && context !== undefined) {
            // Skill in the context: plus the deviation in it (its prior for a context not yet played).
            const deviation = contextOf(player, context);
            mean += (deviation?.offset ?? 0) / WHR_SCALE;
            variance += deviation === undefined ? o.contextPriorVariance : ((deviation.rd ?? 0) / WHR_SCALE) ** 2 + (2 * (deviation.covariance ?? 0)) / (WHR_SCALE * WHR_SCALE);
          }
        }
        return [mean / team.length, variance / (team.length * team.length)] as const;
      });
      return predictFromPairs(teams.length, (a, b) => whrWinProbability(skills[a]![0] - skills[b]![0], o.integrate ? skills[a]![1] + skills[b]![1] : 0, o.link));
    },
    idle: (state, periods) => {
      if (!(periods > 0)) return state;
      const rd = state.rd ?? Math.sqrt(o.priorVariance) * WHR_SCALE;
      const idled: PlayerState = { ...state, rd: Math.sqrt(rd * rd + o.dailyVariance * periods * WHR_SCALE * WHR_SCALE) };
      if (state.contexts !== undefined) {
        // The deviations drift too, by wc² a period.
        const contexts: Record<string, ContextOffset> = {};
        for (const [context, deviation] of Object.entries(state.contexts)) {
          const deviationRd = deviation.rd ?? 0;
          contexts[context] = { ...deviation, rd: Math.sqrt(deviationRd * deviationRd + o.contextDailyVariance * periods * WHR_SCALE * WHR_SCALE) };
        }
        idled.contexts = contexts;
      }
      return idled;
    },
    states: () => {
      const out = new Map<string, PlayerState>();
      for (const id of history.playerIds()) out.set(id, stateOf(id)!);
      return out;
    },
    takeMoved: () => {
      const out = new Map<string, PlayerState>();
      for (const id of history.takeMoved()) out.set(id, stateOf(id)!);
      return out;
    },
    closeAhead: (at) => history.closeAhead(history.dayOf(at)),
    closeHolds: (at) => history.closeHolds(history.dayOf(at)),
    ...(o.horizon > 0
      ? {
          horizon: {
            freezes: () => history.freezes,
            frozen: () => history.frozen(),
            frozenDay: () => history.lastFrozenDay(),
            restoreFrozen: (past) => history.restoreFrozen(past),
            onOrBefore: (at, day) => history.dayOf(at) <= day,
            dayOf: (at) => history.dayOf(at),
            timeOf: (day) => day * o.periodMs,
            freezeAhead: (at) => history.freezeAhead(history.dayOf(at)),
            refusedThrough: () => history.refusedThrough(),
            freezePending: () => history.freezePending,
            advanceFreeze: (games) => history.advanceFreeze(games),
          },
        }
      : {}),
  };
}

/** Whole-History Rating in the registry. */
export const WHR = defineSystem({
  name: 'whr',
  label: 'Whole-History Rating',
  summary:
    "Coulom's Whole-History Rating: Gaussian skills drifting as a Wiener process, every player's whole timeline smoothed by expectation propagation (or Newton's method to the mode).",
  options: WHR_OPTIONS,
  capabilities: {
    teams: true,
    draws: true,
    multiTeam: true,
    ratingPeriods: false,
    idleGrowth: true,
    homeAdvantage: true,
    fastPath: false,
    needsScores: false,
    rounds: false,
    wholeHistory: true,
    deviation: true,
  },
  display: { quantity: 'rating', decimals: 1, scale: 'elo' },
  fit: {
    parameters: [
      { name: 'dailyVariance', min: 0.0002, max: 0.05, initial: 0.0025 },
      { name: 'priorVariance', min: 0.05, max: 5, initial: 0.6 },
      // The context deviations' variances: fitted only when asked (--fit contextPriorVariance,contextDailyVariance).
      { name: 'contextPriorVariance', min: 0.001, max: 5, initial: 0.05 },
      { name: 'contextDailyVariance', min: 0.000001, max: 0.05, initial: 0.0001 },
      // A newcomer's learning curve (newcomerTrend a, newcomerTrendPeriods τ): fitted only when asked.
      { name: 'newcomerTrend', min: 0.001, max: 0.01, initial: 0.003 },
      { name: 'newcomerTrendPeriods', min: 200, max: 3000, initial: 730 },
    ],
    byDefault: ['dailyVariance', 'priorVariance'],
  },
  dashboard: {
    terms: [],
    explanation:
      "Whole-History Rating re-estimates the past: each new result also corrects the earlier estimates of the players in it and of their opponents, so a rating can move between a player's own matches.",
    performanceRuns: false,
  },
  // A whr ladder keeps every match in memory and re-smooths each of its players' windows when the day
  // closes: a match's cost and memory grow with its players (a 64-player free-for-all: about 6 KB).
  ladder: { teamSize: 1, matchLimits: { teams: 64, playersPerTeam: 64, players: 256 } },
  create: createWhrSystem,
  // The whole log at once: every match added, then every timeline smoothed to the fixed point.
  rateLog: (matches, options) => {
    const system = createWhrSystem(options);
    system.history.addLog(matches);
    system.history.converge();
    return system.states();
  },
  // Each match predicted from the skills as they stand (every earlier match
  // learnt, the day's earlier matches included), then added. The
  // RatingSystem view would give the same predictions for the match's
  // players, but the re-smoothing of a closed day moves players outside
  // the match, whose states a Replay would not see.
  online: (options, homeAdvantage) => {
    const history = new WhrHistory(options);
    const homeOffset = homeAdvantage / WHR_SCALE;
    return {
      predict: (match) => {
        // A new day closes the previous one first, so the prediction sees it smoothed.
        history.prepare(match);
        return history.predictMatch(match, homeOffset);
      },
      learn: (match) => history.addMatch(match, homeOffset),
      known: (id) => history.has(id),
    };
  },
});
