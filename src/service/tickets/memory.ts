/**
 * The ticket store in process (store.ts states the contract): correct for
 * one instance. Every operation is synchronous under its promise, so each
 * runs alone and the contract's "together" holds without locks.
 */
import { EventEmitter } from 'node:events';
import type { BackfillInput, Ticket } from 'ladder-core/matchmaking';
import {
  type AddOutcome,
  type AssignmentEvent,
  type BackfillAddOutcome,
  type BackfillPlacement,
  backfillPlayers,
  type Claim,
  emptyFigures,
  type EventBatch,
  type ExpiredEvent,
  type ExpiryCutoffs,
  FIGURES_EPOCH,
  FINISHED_TTL_MS,
  type FormedMatchRecord,
  figuresOf,
  type IntakeLimits,
  MAX_QUEUE_REGIONS,
  MAX_WHY_ASKED,
  type Placement,
  type PlacementOutcome,
  type QueueEvent,
  type QueueFigures,
  RECENT,
  type RecentMatch,
  type StoredBackfill,
  type StoredTicket,
  type TicketStore,
  type TicketWhy,
  WHY_ASKED_MS,
  type WhyWaiting,
} from './store.js';

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
  /** The last pass's why-waiting summary, and the reasons it wrote for the tickets asked about. */
  why: WhyWaiting | undefined;
  whyReasons: Map<string, string>;
  /** Ticket → epoch ms it was last asked about, least recently asked first. */
  asked: Map<string, number>;
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
      queue = {
        waiting: new Map(),
        ordered: true,
        newest: -Infinity,
        players: new Set(),
        regions: new Map(),
        owners: new Map(),
        figures: emptyFigures(),
        events: [],
        base: 0,
        recent: [],
        held: false,
        backfills: new Map(),
        playing: new Map(),
        why: undefined,
        whyReasons: new Map(),
        asked: new Map(),
      };
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
    const why = this.queuesByLadder.get(ladder)?.why;
    return { figures: await this.figures(ladder), recent: await this.recent(ladder), ...(why !== undefined ? { why: structuredClone(why) } : {}) };
  }

  async askWhy(ladder: string, id: string): Promise<TicketWhy | undefined> {
    const queue = this.queuesByLadder.get(ladder);
    if (!queue) return undefined;
    // Last asked last: the map's order is the order of asking.
    queue.asked.delete(id);
    queue.asked.set(id, Date.now());
    if (queue.asked.size > MAX_WHY_ASKED) queue.asked.delete(queue.asked.keys().next().value!);
    const rule = queue.whyReasons.get(id);
    return rule !== undefined && queue.why !== undefined ? { rule, at: queue.why.at } : undefined;
  }

  async whyAsked(ladder: string): Promise<string[]> {
    const queue = this.queuesByLadder.get(ladder);
    if (!queue) return [];
    const cutoff = Date.now() - WHY_ASKED_MS;
    for (const [id, at] of queue.asked) {
      if (at > cutoff) break;
      queue.asked.delete(id);
    }
    return [...queue.asked.keys()].reverse();
  }

  async setWhy(ladder: string, why: WhyWaiting, reasons: Readonly<Record<string, string>>): Promise<boolean> {
    const queue = this.queuesByLadder.get(ladder);
    if (!queue?.held) return false;
    queue.why = structuredClone(why);
    queue.whyReasons = new Map(Object.entries(reasons).slice(0, MAX_WHY_ASKED));
    return true;
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
