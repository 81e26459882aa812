/** Standings: percentiles over active players, placement, divisions and a live leaderboard. */
export {
  DEFAULT_DIVISIONS,
  type Division,
  divisionOf,
  percentileOf,
  percentiles,
  scalePercentile,
  validateDivisions,
} from './percentile.js';
export {
  DAY_MS,
  LEADERBOARD_DEFAULTS,
  Leaderboard,
  type LeaderboardEntry,
  type LeaderboardOptions,
  type PlayerRecord,
  type ResolvedLeaderboardOptions,
  type Standing,
  type StandingInput,
  resolveLeaderboardOptions,
  standingsAt,
} from './leaderboard.js';
export { RankTree } from './rank-tree.js';
export { type FrozenStanding, freezeStandings, softReset, type SoftResetOptions } from './season.js';
