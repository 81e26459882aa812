/** Matchmaking: tickets, widening filters and the pass that forms matches. */
export {
  FILTER_DEFAULTS,
  type FilterDefaults,
  parseTicket,
  type PlayerFilter,
  type Ticket,
  type TicketInput,
  type TicketPlayer,
  type TicketPlayerInput,
} from './ticket.js';
export type { Backfill, BackfillInput, BackfillPlayer, BackfillPlayerInput, BackfillResult } from './backfill.js';
export { effectiveWithin, resolveWidening, type ResolvedWidening, WIDENING_DEFAULTS, type WideningOptions, wideningStep } from './widening.js';
export {
  balanceTeams,
  type FormedMatch,
  Matchmaker,
  type MatchmakerOptions,
  type MatchQuality,
  matchmake,
  parseMode,
  type PassResult,
} from './matchmaker.js';
export {
  balance,
  BALANCE_DEFAULTS,
  type BalanceOptions,
  type BalancePlayer,
  type BalanceRequest,
  type BalanceResult,
  imbalanceOf,
  type TeamPredictor,
} from './balance.js';
export {
  type AttributeSource,
  parseRuleSet,
  parseTolerantJson,
  type RuleSet,
  type RuleSetBackfill,
  type RuleSetBackfillInput,
  type RuleSetBackfillResult,
  type RuleSetMatch,
  RuleSetMatchmaker,
  type RuleSetMatchmakerOptions,
  type RuleSetPassResult,
  type RuleSetTicket,
  type RuleSetTicketInput,
} from './rule-set/index.js';
