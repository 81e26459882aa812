/**
 * Ladder's rating core: pure functions on plain records, no I/O.
 */
export { ConvergenceError, InvalidInputError, LadderError, UnboundedRatingError } from './errors.js';
export { type Match, type MatchInput, type MatchPlayer, type MatchTeam, pairScore, parseMatch, parseTime, teamPlacements } from './match.js';
export {
  GLICKO2_DEFAULTS,
  GLICKO2_SCALE,
  type Glicko2Game,
  type Glicko2Options,
  type Glicko2Rating,
  glicko2Composite,
  glicko2G,
  glicko2Idle,
  glicko2IdleRd,
  glicko2Initial,
  glicko2Step,
  glicko2Update,
  glicko2WinProbability,
  resolveGlicko2Options,
} from './glicko2.js';
export {
  mulberry32,
  WVW_DEFAULTS,
  type WvwGroupOptions,
  type WvwOptions,
  type WvwWorld,
  wvwExpectedScores,
  wvwGlickoScore,
  wvwGroups,
  wvwRateMatch,
} from './wvw.js';
export {
  roundHalfUp,
  TEAM_RANK_DEFAULTS,
  type TeamRankChange,
  type TeamRankOptions,
  type TeamRankOutcome,
  type TeamRankPlayer,
  type TeamRankResult,
  teamRankMatch,
  teamRankWinProbability,
} from './teamrank.js';
export { ELO_DEFAULTS, type EloGame, type EloOptions, type EloRating, eloExpected, eloInitial, eloUpdate, eloWinProbability } from './elo.js';
export {
  createSystem,
  type MatchRating,
  type PlayerChange,
  type PlayerState,
  type RatePeriodOptions,
  type RatingSystem,
  type OptionsFor,
  SYSTEM_NAMES,
  type SystemName,
  type SystemOptionsByName,
} from './systems.js';
export { type PlayerStates, rate } from './rate.js';
export {
  createWhrSystem,
  normalCdf,
  resolveWhrOptions,
  type ResolvedWhrOptions,
  WHR_DEFAULTS,
  WHR_SCALE,
  type WhrEstimate,
  WhrHistory,
  type WhrLink,
  type WhrOptions,
  type WhrSystem,
  whrWinProbability,
} from './whr.js';
export { Replay, replay, replayWithout, type StartingState, type VoidPlan, voidPlan } from './replay.js';
export {
  algo400,
  eloReplayRule,
  type GameResult,
  glicko2ReplayRule,
  type Glicko2ReplayOptions,
  maxLikelihood,
  netzero,
  netzeroUnordered,
  parsePerformanceGame,
  PERFORMANCE_METHODS,
  type PerformanceGame,
  type PerformanceMethod,
  type PerformanceOptions,
  performanceRating,
  performanceRatings,
  type PerformanceRatings,
  type RatingUpdate,
  type ReplayRule,
  type StatefulRatingUpdate,
  type UnboundedPolicy,
} from './performance.js';
export {
  conservativeRating,
  DEFAULT_TIER_TABLE,
  DISPLAY_DIGITS,
  displayTier,
  roundForDisplay,
  type Tier,
  type TierDisplay,
  type TierTable,
  validateTierTable,
} from './display.js';
export {
  eloReplayPairwise,
  glicko2RatePairwise,
  glicko2ReplayPairwise,
  initialGlicko2Ratings,
  type PairwiseLog,
  PairwiseLogBuilder,
  type PairwiseRatings,
} from './pairwise.js';
