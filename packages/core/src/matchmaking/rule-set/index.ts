/** Rule-set matchmaking: FlexMatch rule sets (plus role slots) parsed, checked and run. */
export { parseRuleSet, MAX_PLAYERS, LARGE_MATCH_ABOVE } from './parse.js';
export { parseTolerantJson } from './tolerant-json.js';
export { RuleSetMatchmaker, type RuleSetMatch, type RuleSetMatchmakerOptions, type RuleSetPassResult } from './matchmaker.js';
export { parseRuleSetTicket, type AttributeSource, type RuleSetPlayer, type RuleSetPlayerInput, type RuleSetTicket, type RuleSetTicketInput } from './ticket.js';
export { RoleAssignment } from './roles.js';
export type { RuleSetBackfill, RuleSetBackfillInput, RuleSetBackfillPlayerInput, RuleSetBackfillResult } from './backfill.js';
export type * from './types.js';
