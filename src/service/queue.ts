/**
 * The matchmaking queue as the API sees it: creating a ticket (the players'
 * standings read from the ladder), cancelling one, and the queue's figures.
 *
 * A ticket costs one validation (the request schema, then the rules it
 * cannot express), at most one batched read of its players' standings and
 * one pipelined write to the ticket store; the figures are counters, so
 * reading them does not depend on how many tickets wait.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { parseMode } from 'ladder-core/matchmaking';
import { type AttributeSource, parseRuleSetTicket, type RuleSet } from 'ladder-core/matchmaking/rule-set/index.js';
import { ConflictError, NotFoundError, PlayerBusyError, QuotaExceededError } from './errors/index.js';
import { type Ladder, type LadderAttributeSource, ruleSetOf } from './ladders.js';
import type { LookedUp } from './player-lookup.js';
import type { PlayerLookup } from './player-lookup.js';
import type { ticketSchema } from './schemas.js';
import { FIGURES_EPOCH, MAX_QUEUE_REGIONS, type QueuedPlayer, type QueuedTicket, type StoredTicket, type TicketStore, type TicketWhy } from './tickets/store.js';

export interface QueueContext {
  tickets: TicketStore;
  players: PlayerLookup;
}

/** A ticket as the API shows it; `why` (a waiting ticket of a rule-set queue): the rule that held it in the last pass, null when not known yet. */
export function ticketJson(t: StoredTicket, why?: TicketWhy | null) {
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
    ...(why !== undefined ? { why: why === null ? null : { rule: why.rule, passAt: new Date(why.at).toISOString() } } : {}),
  };
}

/**
 * The ticket rules the request schema cannot express. On a rule-set queue,
 * the players' attributes (defaults applied) and roles, as checked against
 * the rule set.
 */
function checkTicket(ladder: Ladder, raw: z.infer<typeof ticketSchema>): Array<Pick<QueuedPlayer, 'attributes' | 'roles'>> | undefined {
  const ruleSet = ruleSetOf(ladder.matchmaking);
  if (ruleSet !== undefined) {
    checkRegions(ladder, raw);
    return checkRuleSetTicket(ladder, ruleSet, raw);
  }
  raw.players.forEach((player, index) => {
    for (const field of ['attributes', 'roles'] as const)
      if (player[field] !== undefined) throw new InvalidInputError(`ladder ${ladder.id}'s queue has no rule set to match ${field} by`, { field: `players[${index}].${field}` });
  });
  const teamSize = ladder.matchmaking.teamSize;
  if (raw.mode !== undefined) {
    const size = parseMode(raw.mode);
    if (size !== teamSize) throw new InvalidInputError(`ladder ${ladder.id} matches teams of ${teamSize}, not ${raw.mode}`, { field: 'mode' });
  }
  if (raw.players.length > teamSize) throw new InvalidInputError(`party of ${raw.players.length} is larger than a team of ${teamSize}`, { field: 'players' });
  checkRegions(ladder, raw);
  return undefined;
}

/** Players named once, each with a region, and only the regions the queue declares. */
function checkRegions(ladder: Ladder, raw: z.infer<typeof ticketSchema>): void {
  raw.players.forEach((player, index) => {
    for (let k = 0; k < index; k++)
      if (raw.players[k]!.id === player.id) throw new InvalidInputError(`player "${player.id}" appears twice in the ticket`, { field: `players[${index}].id` });
    if (Object.keys(player.pings).length === 0) throw new InvalidInputError('must name at least one region', { field: `players[${index}].pings` });
    const declared = ladder.matchmaking.regions;
    if (declared !== undefined) {
      for (const region of Object.keys(player.pings)) {
        if (!declared.includes(region))
          throw new InvalidInputError(`ladder ${ladder.id}'s queue has the regions ${declared.join(', ')}, not ${JSON.stringify(region)}`, {
            field: `players[${index}].pings.${region}`,
          });
      }
    }
  });
}

/** A rule-set queue's ticket: attributes and roles by the rule set (the rule-set engine's own check, so intake and pass agree). */
function checkRuleSetTicket(ladder: Ladder, ruleSet: RuleSet, raw: z.infer<typeof ticketSchema>): Array<Pick<QueuedPlayer, 'attributes' | 'roles'>> {
  if (raw.mode !== undefined) throw new InvalidInputError(`ladder ${ladder.id}'s teams come from its rule set; a ticket names no mode`, { field: 'mode' });
  const sources = Object.values(ladder.matchmaking.attributesFromLadder ?? {});
  raw.players.forEach((player, index) => {
    if (player.filter !== undefined) throw new InvalidInputError(`ladder ${ladder.id} matches by its rule set, not by percentile filters`, { field: `players[${index}].filter` });
    // A client that could send the rating or percentile an attribute is filled from could still say what it likes.
    for (const field of ['rating', 'percentile'] as const)
      if (player[field] !== undefined && sources.includes(field))
        throw new InvalidInputError(`ladder ${ladder.id} takes each player's ${field} from its standings (matchmaking.attributesFromLadder); a ticket sends none`, {
          field: `players[${index}].${field}`,
        });
  });
  // Attributes from the ladder are refused when sent (the rule-set engine's own check); the values are filled in once the players are looked up.
  const placeholder: AttributeSource = Object.fromEntries(Object.keys(ladder.matchmaking.attributesFromLadder ?? {}).map((name) => [name, () => 0]));
  const checked = parseRuleSetTicket(
    {
      id: raw.id ?? 'new',
      at: 0,
      players: raw.players.map((p) => ({
        id: p.id,
        pings: p.pings,
        ...(p.attributes !== undefined ? { attributes: p.attributes } : {}),
        ...(p.roles !== undefined ? { roles: p.roles } : {}),
      })),
    },
    ruleSet,
    placeholder,
  );
  return checked.players.map((p) => ({ attributes: p.attributes, ...(p.roles.length > 0 ? { roles: [...p.roles] } : {}) }));
}

/**
 * An attribute the ladder fills in (`matchmaking.attributesFromLadder`), for tickets and backfills alike: the player's rating as
 * the standings hold it (the rating system's initial one for a player they do not list yet), or their percentile (50 before placement).
 */
export function attributeFromLadder(ladder: Ladder, source: LadderAttributeSource, known: LookedUp | undefined): number {
  return source === 'rating' ? (known?.ladderRating ?? ladder.rating.initial().rating) : (known?.percentile ?? 50);
}

/** Queues a ticket; `owner` is the id of the API key that sends it (counted against the ladder's per-key cap). */
export async function createTicket(ctx: QueueContext, ladder: Ladder, raw: z.infer<typeof ticketSchema>, owner?: string): Promise<StoredTicket> {
  const ruleSetFields = checkTicket(ladder, raw);
  const unknown = raw.players.filter((p) => p.percentile === undefined || p.rating === undefined).map((p) => p.id);
  const facts = unknown.length > 0 ? await ctx.players.lookup(ladder, unknown) : undefined;
  const defaults = ladder.matchmaking.filterDefaults;
  const fromLadder = ruleSetFields !== undefined && ladder.matchmaking.attributesFromLadder !== undefined ? Object.entries(ladder.matchmaking.attributesFromLadder) : undefined;
  const now = Date.now();
  const players = raw.players.map((p, index): QueuedPlayer => {
    const known = facts?.get(p.id);
    const player: QueuedPlayer = {
      id: p.id,
      // Unknown or unplaced players sit in the middle until the ladder knows better.
      percentile: p.percentile ?? known?.percentile ?? 50,
      pings: p.pings,
      filter: { within: p.filter?.within ?? defaults.within, strict: p.filter?.strict ?? defaults.strict, maxPing: p.filter?.maxPing ?? defaults.maxPing },
    };
    const rating = p.rating ?? known?.rating ?? undefined;
    if (rating !== undefined && rating !== null) player.rating = rating;
    if (ruleSetFields !== undefined) Object.assign(player, ruleSetFields[index]);
    if (fromLadder !== undefined) {
      // Ratings and percentiles as the standings hold them now; a player they do not list yet starts where the system starts everyone.
      for (const [name, source] of fromLadder) player.attributes![name] = attributeFromLadder(ladder, source, known);
    }
    return player;
  });
  const id = raw.id ?? ctx.tickets.newTicketId?.() ?? randomUUID();
  const ticket: QueuedTicket = { id, at: now / 1000, players };
  const stored: StoredTicket = {
    id,
    ladder: ladder.id,
    status: 'waiting',
    createdAt: now,
    ...(raw.mode !== undefined ? { mode: raw.mode } : {}),
    ...(owner !== undefined ? { owner } : {}),
    ticket,
  };
  const { maxWaiting, maxWaitingPerKey } = ladder.matchmaking;
  const outcome = await ctx.tickets.add(stored, { maxWaiting, maxWaitingPerKey });
  if (!outcome.ok) {
    if (outcome.reason === 'id') throw new ConflictError(`ticket ${JSON.stringify(id)} already exists`, 'id');
    if (outcome.reason === 'player') {
      const player = players[outcome.index]!.id;
      throw new ConflictError(`player ${JSON.stringify(player)} already has a waiting ticket in ladder ${ladder.id}`, `players[${outcome.index}].id`);
    }
    if (outcome.reason === 'playing') throw new PlayerBusyError(players[outcome.index]!.id, `players[${outcome.index}].id`, { kind: 'playing', backfill: outcome.backfill });
    if (outcome.reason === 'cap') {
      if (outcome.cap === 'key')
        throw new QuotaExceededError(
          'matchmaking.maxWaitingPerKey',
          maxWaitingPerKey,
          `this key already has ${maxWaitingPerKey} waiting tickets in ladder ${ladder.id} (matchmaking.maxWaitingPerKey); retry once some are matched, cancelled or expired`,
        );
      throw new QuotaExceededError(
        'matchmaking.maxWaiting',
        maxWaiting,
        `ladder ${ladder.id}'s queue already holds ${maxWaiting} waiting tickets (matchmaking.maxWaiting); retry once some are matched, cancelled or expired`,
      );
    }
    throw new InvalidInputError(
      `the ladder's waiting tickets name ${MAX_QUEUE_REGIONS} regions already (the most a queue holds at once); use one of those, or wait until no waiting ticket names some of them`,
      { field: 'players[].pings' },
    );
  }
  return stored;
}

/** Ends the ladder's tickets and backfills past their time-to-live now (the matchmaking turn does the same each time one is due). */
export async function expireDue(ctx: QueueContext, ladder: Ladder, now: number): Promise<void> {
  const { ticketTtlSeconds, backfillTtlSeconds } = ladder.matchmaking;
  await ctx.tickets.expire(ladder.id, { tickets: now - ticketTtlSeconds * 1000, backfills: now - backfillTtlSeconds * 1000 }, now);
}

export async function cancelTicket(ctx: QueueContext, ticket: StoredTicket): Promise<{ id: string; status: StoredTicket['status'] }> {
  const after = await ctx.tickets.cancel(ticket);
  if (!after) throw new NotFoundError(`no ticket ${JSON.stringify(ticket.id)}`, 'ticket');
  if (after.status === 'matched') throw new ConflictError('the ticket was already placed in a match', 'ticket');
  return { id: after.id, status: after.status };
}

export async function queueView(ctx: QueueContext, ladder: Ladder) {
  const { figures, recent, why } = await ctx.tickets.summary(ladder.id);
  const now = Date.now();
  // Built from entries, not by assignment: a region may be named `toString` or `constructor`.
  const byRegion = Object.fromEntries([...figures.byRegion].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  const byBand = figures.byBand.map((count, i) => ({ band: `${i * 10 + 1}-${i * 10 + 10}`, count }));
  const meanCreated = figures.waiting > 0 ? FIGURES_EPOCH + figures.createdSum / figures.waiting : now;
  return {
    waiting: figures.waiting,
    byRegion,
    byBand,
    /** Of the tickets waiting now: mean and longest wait so far. */
    waitSeconds: { mean: Math.max(0, (now - meanCreated) / 1000), max: figures.oldestCreatedAt === null ? 0 : Math.max(0, (now - figures.oldestCreatedAt) / 1000) },
    recent,
    // Rule-set queues: what held the waiting tickets in the last pass (null before the first).
    ...(ruleSetOf(ladder.matchmaking) !== undefined ? { whyWaiting: why === undefined ? null : { passAt: new Date(why.at).toISOString(), heldBy: sortedHeldBy(why.heldBy) } } : {}),
  };
}

/** Rules by the tickets they held, most first (then by name), built from entries: a rule may be named `__proto__`. */
function sortedHeldBy(heldBy: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(heldBy).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}
