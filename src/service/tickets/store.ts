/**
 * Matchmaking tickets, queues and assignments, and what the matchmaking
 * lock holder needs to follow a queue without reading it back.
 *
 * The contract (`TicketStore`), its types and constants, and the helpers
 * both implementations use: in process (one instance; memory.ts) and in
 * Redis (several instances; redis.ts). Both keep, per ladder:
 *
 * - the waiting tickets, at most one per player;
 * - the queue's figures as counters (tickets, by region, players by
 *   percentile band, the sum of arrival times), changed together with the
 *   queue itself, so reading them costs O(regions + bands);
 * - a log of queue events (a ticket added, a ticket cancelled) that the
 *   matchmaking lock holder reads from its last position and trims;
 * - the matchmaking lock, and assignment: a match is placed only if every
 *   one of its tickets is still waiting and the caller still holds the lock,
 *   so a ticket is matched or cancelled, never both, never twice;
 * - backfill requests (a match in progress asking for players): the open
 *   ones, the players they hold (who may not queue meanwhile), their events
 *   in the same log as the tickets' (opened, cancelled), and their fills,
 *   placed like matches: only while the caller holds the lock, every added
 *   ticket still waits and the backfill is still open as the caller saw it,
 *   so a ticket is added to a backfill, matched or cancelled, only one of
 *   these, once.
 */
import type { EventEmitter } from 'node:events';
import type { BackfillInput, BackfillPlayerInput, FormedMatch, Ticket, TicketPlayer } from 'ladder-core/matchmaking';
import type { AttributeValue } from 'ladder-core/matchmaking/rule-set/index.js';

/** A queued player: the matcher's form, plus what a rule-set queue matches on. */
export interface QueuedPlayer extends TicketPlayer {
  /** Rule-set queues: the player's attributes, defaults applied. */
  attributes?: Record<string, AttributeValue>;
  /** Rule-set queues with role slots: the roles the player accepts. */
  roles?: string[];
}

/** A queued ticket (a `Ticket`, whose players may carry rule-set attributes and roles). */
export interface QueuedTicket extends Ticket {
  players: QueuedPlayer[];
}

/** A match player of a backfill: the team-rank form, plus what a rule-set queue matches on. */
export interface QueuedBackfillPlayer extends BackfillPlayerInput {
  /** Rule-set queues: the player's attributes, defaults applied. */
  attributes?: Record<string, AttributeValue>;
  /** Rule-set queues: the player's pings by region (a latency rule judges them). */
  pings?: Record<string, number>;
  /** Rule-set queues with role slots: the roles the player accepts (after a fill: the one seated). */
  roles?: string[];
}

/** A backfill request as the queue keeps it (a `BackfillInput`, whose players may carry rule-set fields). */
export interface QueuedBackfill extends BackfillInput {
  players?: Record<string, QueuedBackfillPlayer>;
  /** Rule-set queues: the rule set's team names, aligned with `teams`. */
  teamNames?: string[];
  /** Rule-set queues with role slots: player id → role, as of the last fill. */
  roles?: Record<string, string>;
}

export interface TicketAssignment {
  id: string;
  region: string;
  /** The ticket's team index. */
  team: number;
  /** Ticket ids per team. */
  teams: string[][];
  /** Player ids per team. */
  players: string[][];
  /** Rule-set queues: the rule set's team names, aligned with `teams`. */
  teamNames?: string[];
  /** Rule-set queues with role slots: player id → role. */
  roles?: Record<string, string>;
  at: number;
  /**
   * Set when the ticket filled a backfill: the backfill's id. `id` is then
   * the backfill's match, `teams` the tickets the backfill has added per team
   * and `players` the match's players per team after this ticket joined.
   */
  backfill?: string;
}

/** Where a waiting ticket is counted in its queue's figures, and what leaving the queue undoes. */
export interface TicketFigures {
  /** The region of the first player's lowest ping. */
  region: string;
  /** Each player's percentile band, 0 (1–10) to 9 (91–100). */
  bands: number[];
  /** The players' ids (they leave the queue's set of waiting players with the ticket). */
  players: string[];
  /** Every region the ticket's pings name (each counted once per waiting ticket; a region none names leaves the queue's set). */
  regions?: string[];
  /** The key that queued it (its waiting tickets are counted against the per-key cap). */
  owner?: string;
}

export interface StoredTicket {
  id: string;
  ladder: string;
  status: 'waiting' | 'matched' | 'cancelled' | 'expired';
  /** Epoch ms of entry. */
  createdAt: number;
  /** Epoch ms the ticket left the queue. */
  endedAt?: number;
  mode?: string;
  /** Id of the API key that queued it (counted against the ladder's per-key cap while it waits). */
  owner?: string;
  /** The matcher's form (its `at` is in seconds). */
  ticket: QueuedTicket;
  match?: TicketAssignment;
  /** Filled in by the store. */
  figures?: TicketFigures;
}

export interface RecentMatch {
  matchId: string;
  region: string;
  /** Ticket ids per team (of a backfill: the tickets it added now, per team of the match). */
  teams: string[][];
  /** Player ids per team (of a backfill: every player of the match after the fill). */
  players: string[][];
  /** Rule-set queues: the rule set's team names, aligned with `teams`. */
  teamNames?: string[];
  /** Rule-set queues with role slots: player id → role. */
  roles?: Record<string, string>;
  winProbability: number | null;
  waitSeconds: { p50: number; max: number };
  /** Of a match the matchmaker formed (a backfill has none). */
  quality?: FormedMatch['quality'];
  /** Set when this is a backfill's fill: the backfill's id (`matchId` is its match). */
  backfill?: string;
  at: string;
}

/** One ticket a backfill took. */
export interface BackfillAddition {
  ticket: string;
  /** Team index in the backfill's teams. */
  team: number;
  players: string[];
  /** Epoch ms. */
  at: number;
}

export interface StoredBackfill {
  id: string;
  ladder: string;
  status: 'waiting' | 'filled' | 'cancelled' | 'expired';
  /** Epoch ms the request was made. */
  createdAt: number;
  /** Epoch ms it was filled or cancelled. */
  endedAt?: number;
  /** The match's id: one the ladder's matchmaker formed, or (`declared`) the game server's own. */
  match: string;
  /** The game server formed the match itself. */
  declared?: boolean;
  region: string;
  /** Fills placed so far (the store places a fill only if this is still what the caller saw). */
  fills: number;
  /** The request as the matchmaker keeps it: its `teams` hold the match's players and the newcomers so far. */
  request: QueuedBackfill;
  /** Tickets added so far, in the order they joined. */
  added: BackfillAddition[];
  /** Slots still open per team. */
  open: number[];
}

/** Why a backfill was not opened. */
export type BackfillAddOutcome =
  | { ok: true }
  /** A backfill with this id exists (open or finished). */
  | { ok: false; reason: 'id' }
  /** Player `index` of team `team` waits in a ticket of the ladder. */
  | { ok: false; reason: 'waiting'; team: number; index: number }
  /** Player `index` of team `team` is in another open backfill of the ladder. */
  | { ok: false; reason: 'playing'; team: number; index: number; backfill: string };

export interface AssignmentEvent {
  ladder: string;
  match: RecentMatch;
}

/** Why a ticket was not queued. */
export type AddOutcome =
  | { ok: true }
  /** A ticket with this id exists (waiting or finished). */
  | { ok: false; reason: 'id' }
  /** Player `index` of the ticket already waits in another ticket of the ladder. */
  | { ok: false; reason: 'player'; index: number }
  /** Player `index` of the ticket is in a match that an open backfill of the ladder is filling. */
  | { ok: false; reason: 'playing'; index: number; backfill: string }
  /** The ladder's queue would know more than MAX_QUEUE_REGIONS regions. */
  | { ok: false; reason: 'regions' }
  /** The ladder's queue (`ladder`) or the key's tickets in it (`key`) are at their cap. */
  | { ok: false; reason: 'cap'; cap: 'ladder' | 'key' };

/** Caps the store enforces on a ticket's intake (absent: none). */
export interface IntakeLimits {
  /** Waiting tickets in the ladder's queue at most. */
  maxWaiting: number;
  /** Waiting tickets of one key (the ticket's `owner`) in the ladder's queue at most. */
  maxWaitingPerKey: number;
}

/** What is past its time-to-live: waiting tickets and open backfills created at or before these (epoch ms). */
export interface ExpiryCutoffs {
  tickets: number;
  backfills: number;
}

/** What one expiry sweep ended. */
export interface ExpiredEvent {
  ladder: string;
  tickets: string[];
  backfills: string[];
}

/** A match the ladder's matchmaker formed (kept as long as finished tickets), which a backfill may name. */
export interface FormedMatchRecord {
  ladder: string;
  /** Teams of the match. */
  teams: number;
}

/** What held a rule-set queue's waiting tickets in the lock holder's last pass (its "why waiting" summary). */
export interface WhyWaiting {
  /** Epoch ms of the pass. */
  at: number;
  /** Rule name → waiting tickets it kept out of candidate matches most often in that pass. */
  heldBy: Record<string, number>;
}

/** One waiting ticket's reason, as the last pass that wrote it saw it. */
export interface TicketWhy {
  /** The rule that most often kept the ticket out of candidate matches ("minPlayers" when too few tickets fitted at all). */
  rule: string;
  /** Epoch ms of that pass. */
  at: number;
}

/** The queue's figures, kept as counters. */
export interface QueueFigures {
  waiting: number;
  /** Waiting tickets by the region of their first player's lowest ping (regions with none left out). */
  byRegion: Map<string, number>;
  /** Waiting players by percentile band (10 bands). */
  byBand: number[];
  /** Sum over waiting tickets of (createdAt − FIGURES_EPOCH), ms. */
  createdSum: number;
  /** Epoch ms of the oldest waiting ticket, or null. */
  oldestCreatedAt: number | null;
}

export type QueueEvent =
  /** `at`: epoch ms the event was appended (on the log's clock). */
  | { kind: 'add'; ticket: Ticket; at: number }
  | { kind: 'cancel'; id: string; at: number }
  /** A backfill was opened (the request as made). */
  | { kind: 'backfill'; backfill: QueuedBackfill; at: number }
  /** A backfill was cancelled. */
  | { kind: 'unbackfill'; id: string; at: number };

export interface EventBatch {
  events: QueueEvent[];
  /** Position after the last event returned. */
  cursor: string;
  /** Waiting tickets at the moment the batch was read. */
  waiting: number;
  /** Open backfills at the moment the batch was read. */
  backfills: number;
  /** No event after `cursor` existed when the batch was read (so `waiting` describes the queue after these events). */
  complete: boolean;
  /** Events after the given cursor were dropped unread: follow from a rebuild. */
  gap: boolean;
}

/** A match to place: every ticket gets `match` with its own team index. */
export interface Placement {
  recent: RecentMatch;
  match: Omit<TicketAssignment, 'team'>;
  tickets: Array<{ id: string; team: number }>;
}

/** A backfill's fill to place: every added ticket gets `match` with its own team index. */
export interface BackfillPlacement {
  backfill: string;
  /** The backfill's `fills` the caller saw: the fill is placed only if it is still so (and the backfill open). */
  fills: number;
  /** The backfill after the fill (every open slot filled: `filled`). */
  after: Omit<StoredBackfill, 'status' | 'fills' | 'endedAt'> & { filled: boolean };
  /** Players who joined the match now. */
  newcomers: string[];
  recent: RecentMatch;
  match: Omit<TicketAssignment, 'team'>;
  tickets: Array<{ id: string; team: number }>;
}

/** placed; gone: a ticket had left the queue (or the backfill was closed or changed), nothing changed; lost: the caller no longer holds the lock, nothing changed. */
export type PlacementOutcome = 'placed' | 'gone' | 'lost';

/** acquired: the lock is now ours (rebuild, then follow); held: still ours (renewed); busy: another instance holds it. */
export type Claim = 'acquired' | 'held' | 'busy';

export interface TicketStore {
  /** Queues a waiting ticket (the store fills in `figures`), within `limits` when given. */
  add(ticket: StoredTicket, limits?: IntakeLimits): Promise<AddOutcome>;
  /**
   * Ends every waiting ticket and open backfill of the ladder created at or
   * before its cutoff (status `expired`), as its cancellation would (out of
   * the queue and its figures, its players freed, a cancel event in the
   * log), and announces them ('expired' on `events`). Resolves to what it
   * ended and the creation times of the oldest ticket and backfill left
   * (null when none), so a caller knows when the next one is due.
   */
  expire(ladder: string, cutoffs: ExpiryCutoffs, now: number): Promise<{ tickets: string[]; backfills: string[]; oldestTicket: number | null; oldestBackfill: number | null }>;
  /** A match this ladder's matchmaker formed, while its tickets stay readable. */
  formedMatch(id: string): Promise<FormedMatchRecord | undefined>;
  /** An id for a ticket the client did not name (a random UUID when absent; Redis adds its epoch). */
  newTicketId?(): string;
  /** The ticket; undefined when unknown (Redis: TicketLostError when it was lost with the queue's state). */
  get(id: string): Promise<StoredTicket | undefined>;
  getMany(ids: readonly string[]): Promise<Array<StoredTicket | undefined>>;
  /** Cancels a waiting ticket; returns it with its final status, or undefined when unknown. */
  cancel(ticket: StoredTicket): Promise<StoredTicket | undefined>;
  figures(ladder: string): Promise<QueueFigures>;
  /** The figures, the recent matches and (rule-set queues, once a pass wrote it) the why-waiting summary together (one read). */
  summary(ladder: string): Promise<{ figures: QueueFigures; recent: RecentMatch[]; why?: WhyWaiting }>;
  /** Every ladder that has had tickets, with its waiting tickets (one read). */
  waitingByQueue(): Promise<Array<[string, number]>>;
  /** Ladders that have had tickets. */
  queues(): Promise<string[]>;
  recent(ladder: string): Promise<RecentMatch[]>;

  /** Takes or renews the ladder's matchmaking lock. */
  claim(ladder: string): Promise<Claim>;
  /** Gives the lock up (another instance may take it at once). */
  release(ladder: string): Promise<void>;
  /**
   * Every open backfill (as it stands, first) and every waiting ticket (in
   * batches), and the event position they are as of (a new lock holder's
   * rebuild). Backfills come first: a ticket of a match player read in the
   * snapshot is always one queued after that backfill closed.
   */
  snapshot(ladder: string, onBatch: (tickets: Ticket[]) => void | Promise<void>, onBackfills?: (backfills: QueuedBackfill[]) => void | Promise<void>): Promise<string>;
  /** Up to `max` events after `cursor`. */
  readEvents(ladder: string, cursor: string, max: number): Promise<EventBatch>;
  /** Drops the events up to `cursor` (read); only while holding the lock. */
  trimEvents(ladder: string, cursor: string): Promise<void>;
  /**
   * Why waiting, per ticket, without a write per waiting ticket per pass:
   * a reader asks about one ticket, which marks it as asked about for
   * WHY_ASKED_MS (at most MAX_WHY_ASKED tickets per ladder, the most
   * recently asked), and gets its reason as the last pass that wrote one saw
   * it (undefined before that). The lock holder reads the asked-about ids
   * (`whyAsked`) and writes the pass's summary with their reasons (`setWhy`).
   */
  askWhy(ladder: string, id: string): Promise<TicketWhy | undefined>;
  /** Ids asked about in the last WHY_ASKED_MS, at most MAX_WHY_ASKED (the most recently asked); older ones are forgotten. */
  whyAsked(ladder: string): Promise<string[]>;
  /**
   * Replaces the ladder's why-waiting with a pass's: its summary and the
   * reasons of the given tickets (at most MAX_WHY_ASKED; those not named lose
   * theirs), only while the caller holds the lock. False when it does not
   * (nothing changed).
   */
  setWhy(ladder: string, why: WhyWaiting, reasons: Readonly<Record<string, string>>): Promise<boolean>;
  /** Places each match whose tickets all still wait, while the caller holds the lock; publishes each placed one. */
  assign(ladder: string, placements: readonly Placement[]): Promise<PlacementOutcome[]>;

  /** Opens a backfill (status waiting): none of its players may wait in a ticket or be in another open backfill. */
  addBackfill(backfill: StoredBackfill): Promise<BackfillAddOutcome>;
  getBackfill(id: string): Promise<StoredBackfill | undefined>;
  getBackfills(ids: readonly string[]): Promise<Array<StoredBackfill | undefined>>;
  /** Cancels an open backfill; returns it with its final status, or undefined when unknown. */
  cancelBackfill(backfill: StoredBackfill): Promise<StoredBackfill | undefined>;
  /**
   * Places each fill whose backfill is still open with the `fills` the
   * caller saw and whose tickets all still wait, while the caller holds the
   * lock; publishes each placed one as an assignment.
   */
  fill(ladder: string, placements: readonly BackfillPlacement[]): Promise<PlacementOutcome[]>;

  /**
   * Closes a deleted ladder's queue: cancels every waiting ticket and open
   * backfill (each as its own cancellation would), then forgets the queue
   * (its counters, events and recent matches; it leaves the set of queues).
   * Resolves to how many were cancelled.
   */
  closeQueue(ladder: string): Promise<{ tickets: number; backfills: number }>;

  /**
   * Emits 'assignment' (AssignmentEvent) for every match placed by any instance, 'expired'
   * (ExpiredEvent) for every expiry sweep that ended something, and 'queued' (the ladder's id)
   * when tickets were queued through this instance.
   */
  readonly events: EventEmitter;
  close(): Promise<void>;
}

/** Regions one ladder's queue may know: the matchmaker's limit (one bit each in a 31-bit mask). */
export const MAX_QUEUE_REGIONS = 31;
export const RECENT = 50;
/** Tickets per ladder whose why-waiting reason the lock holder writes (the most recently asked about). */
export const MAX_WHY_ASKED = 1000;
/** A ticket asked about has its reason written for this long after the last ask. */
export const WHY_ASKED_MS = 60_000;
/** Finished tickets stay readable this long. */
export const FINISHED_TTL_MS = 3_600_000;
/** Arrival times are summed relative to this (epoch ms of 2023-11-14), so a Redis 64-bit counter holds millions of them. */
export const FIGURES_EPOCH = 1_700_000_000_000;

export function bandOf(percentile: number): number {
  return Math.min(9, Math.max(0, Math.floor((percentile - 1) / 10)));
}

/** Where a ticket is counted: its first player's lowest-ping region (the first such in the ticket's order) and its players' bands. */
export function figuresOf(ticket: Ticket): TicketFigures {
  let region = '';
  let best = Infinity;
  const pings = ticket.players[0]!.pings;
  for (const name in pings) {
    if (!Object.hasOwn(pings, name)) continue;
    if (pings[name]! < best) {
      best = pings[name]!;
      region = name;
    }
  }
  return { region, bands: ticket.players.map((p) => bandOf(p.percentile)), players: ticket.players.map((p) => p.id), regions: regionsOf(ticket) };
}

/** Every region named in a ticket's pings, once. */
export function regionsOf(ticket: Ticket): string[] {
  const seen = new Set<string>();
  for (const player of ticket.players) for (const name in player.pings) if (Object.hasOwn(player.pings, name)) seen.add(name);
  return [...seen];
}

export function emptyFigures(): QueueFigures {
  return { waiting: 0, byRegion: new Map(), byBand: new Array<number>(10).fill(0), createdSum: 0, oldestCreatedAt: null };
}

/** Every player on a backfill request's teams. */
export function backfillPlayers(request: BackfillInput): string[] {
  return request.teams.flat();
}
