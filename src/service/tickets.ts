/**
 * Matchmaking tickets, queues and assignments, and what the matchmaking
 * lock holder needs to follow a queue without reading it back.
 *
 * Two implementations of one interface: in process (one instance; this
 * file) and in Redis (several instances; tickets-redis.ts). Both keep, per
 * ladder:
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
import { EventEmitter } from 'node:events';
import type { BackfillInput, FormedMatch, Ticket } from '../matchmaking/index.js';

export interface TicketAssignment {
  id: string;
  region: string;
  /** The ticket's team index. */
  team: number;
  /** Ticket ids per team. */
  teams: string[][];
  /** Player ids per team. */
  players: string[][];
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
  ticket: Ticket;
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
  request: BackfillInput;
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
  | { kind: 'backfill'; backfill: BackfillInput; at: number }
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
  /** The figures and the recent matches together (one read). */
  summary(ladder: string): Promise<{ figures: QueueFigures; recent: RecentMatch[] }>;
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
  snapshot(ladder: string, onBatch: (tickets: Ticket[]) => void | Promise<void>, onBackfills?: (backfills: BackfillInput[]) => void | Promise<void>): Promise<string>;
  /** Up to `max` events after `cursor`. */
  readEvents(ladder: string, cursor: string, max: number): Promise<EventBatch>;
  /** Drops the events up to `cursor` (read); only while holding the lock. */
  trimEvents(ladder: string, cursor: string): Promise<void>;
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

function emptyFigures(): QueueFigures {
  return { waiting: 0, byRegion: new Map(), byBand: new Array<number>(10).fill(0), createdSum: 0, oldestCreatedAt: null };
}

interface MemoryQueue {
  /** Waiting tickets in arrival order (see `ordered`). */
  waiting: Map<string, StoredTicket>;
  /** False once a ticket arrived with a createdAt older than the newest: the oldest is then found by a scan. */
  ordered: boolean;
  newest: number;
  players: Set<string>;
  /** Region → waiting tickets naming it (a region leaves when none does). */
  regions: Map<string, number>;
  /** Key id → its waiting tickets. */
  owners: Map<string, number>;
  figures: QueueFigures;
  /** events[i] is at position base + i. */
  events: QueueEvent[];
  base: number;
  recent: RecentMatch[];
  held: boolean;
  /** Open backfills. */
  backfills: Map<string, StoredBackfill>;
  /** Player → the open backfill whose match they are in. */
  playing: Map<string, string>;
}

/** Every player on a backfill request's teams. */
export function backfillPlayers(request: BackfillInput): string[] {
  return request.teams.flat();
}

/** Tickets in process: correct for one instance. */
export class MemoryTicketStore implements TicketStore {
  private readonly tickets = new Map<string, StoredTicket>();
  private readonly queuesByLadder = new Map<string, MemoryQueue>();
  /** Finished tickets in the order they finished, dropped after FINISHED_TTL_MS. */
  private readonly finished: Array<{ id: string; endedAt: number; backfill?: true }> = [];
  private finishedHead = 0;
  private readonly backfills = new Map<string, StoredBackfill>();
  /** Matches formed, by id, while their tickets stay readable. */
  private readonly formed = new Map<string, FormedMatchRecord & { at: number }>();
  private readonly formedOrder: Array<{ id: string; at: number }> = [];
  private formedHead = 0;
  readonly events = new EventEmitter();

  constructor() {
    this.events.setMaxListeners(0);
  }

  private queue(ladder: string): MemoryQueue {
    let queue = this.queuesByLadder.get(ladder);
    if (!queue) {
      queue = { waiting: new Map(), ordered: true, newest: -Infinity, players: new Set(), regions: new Map(), owners: new Map(), figures: emptyFigures(), events: [], base: 0, recent: [], held: false, backfills: new Map(), playing: new Map() };
      this.queuesByLadder.set(ladder, queue);
    }
    return queue;
  }

  private expireFinished(now: number): void {
    const cutoff = now - FINISHED_TTL_MS;
    while (this.finishedHead < this.finished.length && this.finished[this.finishedHead]!.endedAt < cutoff) {
      const { id, endedAt, backfill } = this.finished[this.finishedHead++]!;
      if (backfill) {
        if (this.backfills.get(id)?.endedAt === endedAt) this.backfills.delete(id);
      } else if (this.tickets.get(id)?.endedAt === endedAt) this.tickets.delete(id);
    }
    if (this.finishedHead > 4096 && this.finishedHead * 2 > this.finished.length) {
      this.finished.splice(0, this.finishedHead);
      this.finishedHead = 0;
    }
    while (this.formedHead < this.formedOrder.length && this.formedOrder[this.formedHead]!.at < cutoff) {
      const { id, at } = this.formedOrder[this.formedHead++]!;
      if (this.formed.get(id)?.at === at) this.formed.delete(id);
    }
    if (this.formedHead > 4096 && this.formedHead * 2 > this.formedOrder.length) {
      this.formedOrder.splice(0, this.formedHead);
      this.formedHead = 0;
    }
  }

  private leave(queue: MemoryQueue, ticket: StoredTicket): void {
    queue.waiting.delete(ticket.id);
    for (const p of ticket.ticket.players) queue.players.delete(p.id);
    const f = queue.figures;
    const counted = ticket.figures!;
    f.waiting--;
    f.createdSum -= ticket.createdAt - FIGURES_EPOCH;
    const left = (f.byRegion.get(counted.region) ?? 0) - 1;
    if (left > 0) f.byRegion.set(counted.region, left);
    else f.byRegion.delete(counted.region);
    for (const band of counted.bands) f.byBand[band]!--;
    for (const region of counted.regions ?? []) {
      const naming = (queue.regions.get(region) ?? 0) - 1;
      if (naming > 0) queue.regions.set(region, naming);
      else queue.regions.delete(region);
    }
    if (counted.owner !== undefined) {
      const owned = (queue.owners.get(counted.owner) ?? 0) - 1;
      if (owned > 0) queue.owners.set(counted.owner, owned);
      else queue.owners.delete(counted.owner);
    }
    if (queue.waiting.size === 0) {
      queue.ordered = true;
      queue.newest = -Infinity;
    }
  }

  private finish(ticket: StoredTicket): void {
    this.finished.push({ id: ticket.id, endedAt: ticket.endedAt! });
  }

  async add(input: StoredTicket, limits?: IntakeLimits): Promise<AddOutcome> {
    this.expireFinished(Date.now());
    if (this.tickets.has(input.id)) return { ok: false, reason: 'id' };
    const queue = this.queue(input.ladder);
    const players = input.ticket.players;
    for (let i = 0; i < players.length; i++) if (queue.players.has(players[i]!.id)) return { ok: false, reason: 'player', index: i };
    for (let i = 0; i < players.length; i++) {
      const backfill = queue.playing.get(players[i]!.id);
      if (backfill !== undefined) return { ok: false, reason: 'playing', index: i, backfill };
    }
    if (limits !== undefined) {
      if (queue.figures.waiting >= limits.maxWaiting) return { ok: false, reason: 'cap', cap: 'ladder' };
      if (input.owner !== undefined && (queue.owners.get(input.owner) ?? 0) >= limits.maxWaitingPerKey) return { ok: false, reason: 'cap', cap: 'key' };
    }
    const figures = figuresOf(input.ticket);
    const regions = figures.regions!;
    const fresh = regions.filter((r) => !queue.regions.has(r));
    if (queue.regions.size + fresh.length > MAX_QUEUE_REGIONS) return { ok: false, reason: 'regions' };
    for (const r of regions) queue.regions.set(r, (queue.regions.get(r) ?? 0) + 1);
    if (input.owner !== undefined) {
      figures.owner = input.owner;
      queue.owners.set(input.owner, (queue.owners.get(input.owner) ?? 0) + 1);
    }
    const ticket: StoredTicket = { ...input, status: 'waiting', figures };
    this.tickets.set(ticket.id, ticket);
    queue.waiting.set(ticket.id, ticket);
    if (ticket.createdAt < queue.newest) queue.ordered = false;
    else queue.newest = ticket.createdAt;
    for (const p of players) queue.players.add(p.id);
    const f = queue.figures;
    f.waiting++;
    f.createdSum += ticket.createdAt - FIGURES_EPOCH;
    f.byRegion.set(ticket.figures!.region, (f.byRegion.get(ticket.figures!.region) ?? 0) + 1);
    for (const band of ticket.figures!.bands) f.byBand[band]!++;
    queue.events.push({ kind: 'add', ticket: ticket.ticket, at: Date.now() });
    this.events.emit('queued', ticket.ladder);
    return { ok: true };
  }

  async get(id: string) {
    const ticket = this.tickets.get(id);
    if (ticket && ticket.endedAt !== undefined && ticket.endedAt < Date.now() - FINISHED_TTL_MS) {
      this.tickets.delete(id);
      return undefined;
    }
    return ticket;
  }

  async getMany(ids: readonly string[]) {
    return Promise.all(ids.map((id) => this.get(id)));
  }

  async cancel(input: StoredTicket) {
    const ticket = this.tickets.get(input.id);
    if (!ticket) return undefined;
    if (ticket.status === 'waiting') {
      const queue = this.queue(ticket.ladder);
      ticket.status = 'cancelled';
      ticket.endedAt = Date.now();
      this.leave(queue, ticket);
      this.finish(ticket);
      queue.events.push({ kind: 'cancel', id: ticket.id, at: Date.now() });
    }
    return ticket;
  }

  async figures(ladder: string): Promise<QueueFigures> {
    const queue = this.queuesByLadder.get(ladder);
    if (!queue) return emptyFigures();
    const f = queue.figures;
    let oldest: number | null = null;
    if (queue.ordered) oldest = queue.waiting.values().next().value?.createdAt ?? null;
    else for (const t of queue.waiting.values()) if (oldest === null || t.createdAt < oldest) oldest = t.createdAt;
    return { waiting: f.waiting, byRegion: new Map(f.byRegion), byBand: [...f.byBand], createdSum: f.createdSum, oldestCreatedAt: oldest };
  }

  async summary(ladder: string) {
    return { figures: await this.figures(ladder), recent: await this.recent(ladder) };
  }

  async waitingByQueue(): Promise<Array<[string, number]>> {
    return [...this.queuesByLadder].map(([ladder, queue]) => [ladder, queue.figures.waiting]);
  }

  async queues() {
    return [...this.queuesByLadder.keys()];
  }

  async recent(ladder: string) {
    return this.queuesByLadder.get(ladder)?.recent ?? [];
  }

  async claim(ladder: string): Promise<Claim> {
    const queue = this.queue(ladder);
    if (queue.held) return 'held';
    queue.held = true;
    return 'acquired';
  }

  async release(ladder: string) {
    const queue = this.queuesByLadder.get(ladder);
    if (queue) queue.held = false;
  }

  async snapshot(ladder: string, onBatch: (tickets: Ticket[]) => void | Promise<void>, onBackfills?: (backfills: BackfillInput[]) => void | Promise<void>): Promise<string> {
    const queue = this.queue(ladder);
    const cursor = String(queue.base + queue.events.length);
    if (onBackfills && queue.backfills.size > 0) await onBackfills([...queue.backfills.values()].sort((a, b) => a.createdAt - b.createdAt).map((b) => structuredClone(b.request)));
    const all = [...queue.waiting.values()].map((t) => t.ticket);
    for (let i = 0; i < all.length; i += 10_000) await onBatch(all.slice(i, i + 10_000));
    return cursor;
  }

  async readEvents(ladder: string, cursor: string, max: number): Promise<EventBatch> {
    const queue = this.queue(ladder);
    const from = Number(cursor) - queue.base;
    if (!(from >= 0)) return { events: [], cursor, waiting: queue.figures.waiting, backfills: queue.backfills.size, complete: true, gap: true };
    const events = queue.events.slice(from, from + max);
    const next = from + events.length;
    return { events, cursor: String(queue.base + next), waiting: queue.figures.waiting, backfills: queue.backfills.size, complete: next >= queue.events.length, gap: false };
  }

  async trimEvents(ladder: string, cursor: string) {
    const queue = this.queue(ladder);
    if (!queue.held) return;
    const drop = Math.min(Number(cursor) - queue.base, queue.events.length);
    if (drop > 0) {
      queue.events.splice(0, drop);
      queue.base += drop;
    }
  }

  async assign(ladder: string, placements: readonly Placement[]): Promise<PlacementOutcome[]> {
    const queue = this.queue(ladder);
    const now = Date.now();
    this.expireFinished(now);
    return placements.map((placement): PlacementOutcome => {
      if (!queue.held) return 'lost';
      if (!placement.tickets.every((t) => queue.waiting.has(t.id))) return 'gone';
      for (const { id, team } of placement.tickets) {
        const ticket = queue.waiting.get(id)!;
        this.leave(queue, ticket);
        ticket.status = 'matched';
        ticket.endedAt = now;
        ticket.match = { ...placement.match, team };
        this.finish(ticket);
      }
      this.formed.set(placement.match.id, { ladder, teams: placement.match.teams.length, at: now });
      this.formedOrder.push({ id: placement.match.id, at: now });
      this.announce(ladder, queue, placement.recent);
      return 'placed';
    });
  }

  private announce(ladder: string, queue: MemoryQueue, recent: RecentMatch): void {
    queue.recent.unshift(recent);
    if (queue.recent.length > RECENT) queue.recent.length = RECENT;
    this.events.emit('assignment', { ladder, match: recent } satisfies AssignmentEvent);
  }

  async addBackfill(input: StoredBackfill): Promise<BackfillAddOutcome> {
    this.expireFinished(Date.now());
    if (this.backfills.has(input.id)) return { ok: false, reason: 'id' };
    const queue = this.queue(input.ladder);
    const teams = input.request.teams;
    for (let t = 0; t < teams.length; t++) {
      for (let i = 0; i < teams[t]!.length; i++) {
        const player = teams[t]![i]!;
        if (queue.players.has(player)) return { ok: false, reason: 'waiting', team: t, index: i };
        const other = queue.playing.get(player);
        if (other !== undefined) return { ok: false, reason: 'playing', team: t, index: i, backfill: other };
      }
    }
    const backfill: StoredBackfill = { ...structuredClone(input), status: 'waiting', fills: 0 };
    this.backfills.set(backfill.id, backfill);
    queue.backfills.set(backfill.id, backfill);
    for (const player of backfillPlayers(backfill.request)) queue.playing.set(player, backfill.id);
    queue.events.push({ kind: 'backfill', backfill: structuredClone(backfill.request), at: Date.now() });
    return { ok: true };
  }

  async getBackfill(id: string): Promise<StoredBackfill | undefined> {
    const backfill = this.backfills.get(id);
    if (backfill && backfill.endedAt !== undefined && backfill.endedAt < Date.now() - FINISHED_TTL_MS) {
      this.backfills.delete(id);
      return undefined;
    }
    return backfill && structuredClone(backfill);
  }

  async getBackfills(ids: readonly string[]) {
    return Promise.all(ids.map((id) => this.getBackfill(id)));
  }

  /** Takes an open backfill out of its queue's open set and its players out of the playing map. */
  private closeBackfill(queue: MemoryQueue, backfill: StoredBackfill, status: 'filled' | 'cancelled' | 'expired', now: number): void {
    backfill.status = status;
    backfill.endedAt = now;
    queue.backfills.delete(backfill.id);
    for (const player of backfillPlayers(backfill.request)) if (queue.playing.get(player) === backfill.id) queue.playing.delete(player);
    this.finished.push({ id: backfill.id, endedAt: now, backfill: true });
  }

  async cancelBackfill(input: StoredBackfill): Promise<StoredBackfill | undefined> {
    const backfill = this.backfills.get(input.id);
    if (!backfill) return undefined;
    if (backfill.status === 'waiting') {
      const queue = this.queue(backfill.ladder);
      this.closeBackfill(queue, backfill, 'cancelled', Date.now());
      queue.events.push({ kind: 'unbackfill', id: backfill.id, at: Date.now() });
    }
    return structuredClone(backfill);
  }

  async fill(ladder: string, placements: readonly BackfillPlacement[]): Promise<PlacementOutcome[]> {
    const queue = this.queue(ladder);
    const now = Date.now();
    this.expireFinished(now);
    return placements.map((placement): PlacementOutcome => {
      if (!queue.held) return 'lost';
      const backfill = queue.backfills.get(placement.backfill);
      if (backfill === undefined || backfill.fills !== placement.fills) return 'gone';
      if (!placement.tickets.every((t) => queue.waiting.has(t.id))) return 'gone';
      for (const { id, team } of placement.tickets) {
        const ticket = queue.waiting.get(id)!;
        this.leave(queue, ticket);
        ticket.status = 'matched';
        ticket.endedAt = now;
        ticket.match = { ...structuredClone(placement.match), team };
        this.finish(ticket);
      }
      backfill.fills++;
      backfill.request = structuredClone(placement.after.request);
      backfill.added = structuredClone(placement.after.added);
      backfill.open = [...placement.after.open];
      if (placement.after.filled) this.closeBackfill(queue, backfill, 'filled', now);
      else for (const player of placement.newcomers) queue.playing.set(player, backfill.id);
      this.announce(ladder, queue, placement.recent);
      return 'placed';
    });
  }

  async expire(ladder: string, cutoffs: ExpiryCutoffs, now: number) {
    const queue = this.queuesByLadder.get(ladder);
    if (!queue) return { tickets: [], backfills: [], oldestTicket: null, oldestBackfill: null };
    const tickets: string[] = [];
    // In arrival order the expired ones come first; out of order (an arrival older than the newest), a scan.
    // (Deleting the current entry of a Map while iterating it is safe, so no copy of the queue is made.)
    for (const ticket of queue.waiting.values()) {
      if (ticket.createdAt > cutoffs.tickets) {
        if (queue.ordered) break;
        continue;
      }
      ticket.status = 'expired';
      ticket.endedAt = now;
      this.leave(queue, ticket);
      this.finish(ticket);
      queue.events.push({ kind: 'cancel', id: ticket.id, at: now });
      tickets.push(ticket.id);
    }
    const backfills: string[] = [];
    for (const backfill of [...queue.backfills.values()]) {
      if (backfill.createdAt > cutoffs.backfills) continue;
      this.closeBackfill(queue, backfill, 'expired', now);
      queue.events.push({ kind: 'unbackfill', id: backfill.id, at: now });
      backfills.push(backfill.id);
    }
    if (tickets.length > 0 || backfills.length > 0) this.events.emit('expired', { ladder, tickets, backfills } satisfies ExpiredEvent);
    let oldestTicket: number | null = null;
    if (queue.ordered) oldestTicket = queue.waiting.values().next().value?.createdAt ?? null;
    else for (const t of queue.waiting.values()) if (oldestTicket === null || t.createdAt < oldestTicket) oldestTicket = t.createdAt;
    let oldestBackfill: number | null = null;
    for (const b of queue.backfills.values()) if (oldestBackfill === null || b.createdAt < oldestBackfill) oldestBackfill = b.createdAt;
    return { tickets, backfills, oldestTicket, oldestBackfill };
  }

  async formedMatch(id: string): Promise<FormedMatchRecord | undefined> {
    const record = this.formed.get(id);
    if (record === undefined || record.at < Date.now() - FINISHED_TTL_MS) return undefined;
    return { ladder: record.ladder, teams: record.teams };
  }

  async closeQueue(ladder: string) {
    const queue = this.queuesByLadder.get(ladder);
    if (!queue) return { tickets: 0, backfills: 0 };
    const now = Date.now();
    const tickets = [...queue.waiting.values()];
    for (const ticket of tickets) {
      ticket.status = 'cancelled';
      ticket.endedAt = now;
      this.leave(queue, ticket);
      this.finish(ticket);
    }
    const backfills = [...queue.backfills.values()];
    for (const backfill of backfills) this.closeBackfill(queue, backfill, 'cancelled', now);
    this.queuesByLadder.delete(ladder);
    return { tickets: tickets.length, backfills: backfills.length };
  }

  async close() {}
}
