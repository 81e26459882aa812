/**
 * The matchmaking queue as the API sees it: creating a ticket (the players'
 * standings read from the ladder), cancelling one, and the queue's figures.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { InvalidInputError } from '../core/errors.js';
import { parseMode, parseTicket, type Ticket } from '../matchmaking/index.js';
import type { Database } from '../store/database.js';
import { findPlayers } from '../store/players.js';
import { ConflictError, NotFoundError } from './errors/index.js';
import type { Ladder } from './ladders.js';
import type { Rankings } from './rankings.js';
import type { ticketSchema } from './schemas.js';
import type { StoredTicket, TicketStore } from './tickets.js';

export interface QueueContext {
  db: Database;
  rankings: Rankings;
  tickets: TicketStore;
}

export function ticketJson(t: StoredTicket) {
  const end = t.endedAt ?? Date.now();
  return {
    id: t.id,
    ladder: t.ladder,
    status: t.status,
    mode: t.mode,
    players: t.ticket.players.map((p) => p.id),
    createdAt: new Date(t.createdAt).toISOString(),
    waitedSeconds: Math.max(0, (end - t.createdAt) / 1000),
    ...(t.match ? { match: { ...t.match, at: new Date(t.match.at).toISOString() } } : {}),
  };
}

export async function createTicket(ctx: QueueContext, ladder: Ladder, raw: z.infer<typeof ticketSchema>): Promise<StoredTicket> {
  if (raw.mode !== undefined) {
    const size = parseMode(raw.mode);
    if (size !== ladder.matchmaking.teamSize) throw new InvalidInputError(`ladder ${ladder.id} matches teams of ${ladder.matchmaking.teamSize}, not ${raw.mode}`, { field: 'mode' });
  }
  const known = new Map((await findPlayers(ctx.db, ladder.id, raw.players.map((p) => p.id))).map((row) => [row.id, row]));
  const now = Date.now();
  const players = [];
  for (const p of raw.players) {
    const row = known.get(p.id);
    let percentile = p.percentile;
    if (percentile === undefined) {
      // Unknown or unplaced players sit in the middle until the ladder knows better.
      percentile = row ? ((await ctx.rankings.standing(ladder, { id: row.id, rating: row.rating, matches: row.matches, lastAt: row.last_at })).percentile ?? 50) : 50;
    }
    players.push({ ...p, percentile, ...(p.rating === undefined && row ? { rating: row.rating } : {}) });
  }
  const id = raw.id ?? randomUUID();
  const ticket: Ticket = parseTicket({ id, at: now / 1000, players }, ladder.matchmaking.teamSize);
  const stored: StoredTicket = { id, ladder: ladder.id, status: 'waiting', createdAt: now, ticket, ...(raw.mode !== undefined ? { mode: raw.mode } : {}) };
  if (!(await ctx.tickets.add(stored))) throw new ConflictError(`ticket ${JSON.stringify(id)} already exists`, 'id');
  return stored;
}

export async function cancelTicket(ctx: QueueContext, ticket: StoredTicket): Promise<{ id: string; status: StoredTicket['status'] }> {
  const after = await ctx.tickets.cancel(ticket.id);
  if (!after) throw new NotFoundError(`no ticket ${JSON.stringify(ticket.id)}`, 'ticket');
  if (after.status === 'matched') throw new ConflictError('the ticket was already placed in a match', 'ticket');
  return { id: after.id, status: after.status };
}

export async function queueView(ctx: QueueContext, ladder: Ladder) {
  const waiting = await ctx.tickets.waiting(ladder.id);
  // A Map, not an object: a region may be named `toString` or `constructor`.
  const byRegion = new Map<string, number>();
  const bands = Array.from({ length: 10 }, (_, i) => ({ band: `${i * 10 + 1}-${i * 10 + 10}`, count: 0 }));
  for (const t of waiting) {
    const pings = t.ticket.players[0]!.pings;
    const region = Object.entries(pings).sort((a, b) => a[1] - b[1])[0]?.[0];
    if (region !== undefined) byRegion.set(region, (byRegion.get(region) ?? 0) + 1);
    for (const p of t.ticket.players) bands[Math.min(9, Math.floor((p.percentile - 1) / 10))]!.count++;
  }
  return { waiting: waiting.length, byRegion: Object.fromEntries(byRegion), byBand: bands, recent: await ctx.tickets.recent(ladder.id) };
}
