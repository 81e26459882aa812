/** The service's domain errors. Each carries its data as properties; only the HTTP layer turns them into statuses. */
export { BackfillClosedError } from './backfill-closed-error.js';
export { ConflictError } from './conflict-error.js';
export { ForbiddenError } from './forbidden-error.js';
export { JobCancelledError } from './job-cancelled-error.js';
export { JobTimeoutError } from './job-timeout-error.js';
export { JobsBusyError } from './jobs-busy-error.js';
export { NotFoundError } from './not-found-error.js';
export { PlayerBusyError } from './player-busy-error.js';
export { RateLimitedError } from './rate-limited-error.js';
export { TicketLostError } from './ticket-lost-error.js';
export { UnauthorizedError } from './unauthorized-error.js';
export { UnavailableError } from './unavailable-error.js';
export { LadderNotAllowedError } from './ladder-not-allowed-error.js';
export { QuotaExceededError } from './quota-exceeded-error.js';
export { StreamsFullError } from './streams-full-error.js';
