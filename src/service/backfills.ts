/**
 * Backfill requests as the API sees them (docs/SERVICE.md, "Backfill"): a
 * match in progress asks for players, the ladder's matchmaker fills its open
 * slots from waiting tickets before it forms new matches (on a rule-set
 * ladder: when the rule set's `backfillPriority` says, under its rules).
 *
 * Opening one costs one validation (the request schema, then the library's
 * own rules, which name the field), at most one batched read of the match
 * players' standings and one write to the ticket store, which refuses a
 * match player who waits in a ticket or is in another open backfill.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { parseBackfill } from 'ladder-core/matchmaking/backfill.js';
import { RuleSetMatchmaker } from 'ladder-core/matchmaking/rule-set/index.js';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { BackfillClosedError, ConflictError, NotFoundError, PlayerBusyError } from './errors/index.js';
import { type Ladder, ruleSetOf } from './ladders.js';
import { ruleSetBackfillInput } from './matchmaking-worker/rule-set-queue.js';
import { attributeFromLadder, type QueueContext } from './queue.js';
import type { backfillSchema } from './schemas.js';
import type { QueuedBackfill, QueuedBackfillPlayer, StoredBackfill } from './tickets/store.js';

export function backfillJson(b: StoredBackfill) {
  return {
    id: b.id,
    ladder: b.ladder,
    status: b.status,
    match: b.match,
    declared: b.declared === true,
    region: b.region,
    teams: b.request.teams,
    open: b.open,
    ...(b.request.teamNames !== undefined ? { teamNames: b.request.teamNames } : {}),
    ...(b.request.roles !== undefined ? { roles: b.request.roles } : {}),
    added: b.added.map((a) => ({ ticket: a.ticket, team: a.team, players: a.players, at: new Date(a.at).toISOString() })),
    createdAt: new Date(b.createdAt).toISOString(),
    ...(b.endedAt !== undefined ? { endedAt: new Date(b.endedAt).toISOString() } : {}),
  };
}

export async function createBackfill(ctx: QueueContext, ladder: Ladder, raw: z.infer<typeof backfillSchema>): Promise<StoredBackfill> {
  const ruleSet = ruleSetOf(ladder.matchmaking);
  if (ruleSet === undefined) {
    if (raw.teamNames !== undefined) throw new InvalidInputError(`ladder ${ladder.id}'s queue has no rule set to name teams by`, { field: 'teamNames' });
    for (const [player, entry] of Object.entries(raw.players ?? {}))
      for (const field of ['attributes', 'pings', 'roles'] as const)
        if (entry[field] !== undefined) throw new InvalidInputError(`ladder ${ladder.id}'s queue has no rule set to match ${field} by`, { field: `players.${player}.${field}` });
  } else {
    // A rule-set match is filled under its rule set: teams and sizes come from there, not from teamSize and percentile filters.
    if (raw.teamSize !== undefined) throw new InvalidInputError(`ladder ${ladder.id}'s team sizes come from its rule set`, { field: 'teamSize' });
    if (raw.filter !== undefined) throw new InvalidInputError(`ladder ${ladder.id} matches by its rule set, not by percentile filters`, { field: 'filter' });
    const sources = ladder.matchmaking.attributesFromLadder ?? {};
    for (const [player, entry] of Object.entries(raw.players ?? {})) {
      if (entry.filter !== undefined) throw new InvalidInputError(`ladder ${ladder.id} matches by its rule set, not by percentile filters`, { field: `players.${player}.filter` });
      // As on a ticket: what the ladder fills in, a game server does not send (it could say what it likes).
      for (const name of Object.keys(entry.attributes ?? {}))
        if (Object.hasOwn(sources, name))
          throw new InvalidInputError(`ladder ${ladder.id} takes each player's ${name} from its standings (matchmaking.attributesFromLadder); a backfill sends none`, {
            field: `players.${player}.attributes.${name}`,
          });
      for (const field of ['rating', 'percentile'] as const)
        if (entry[field] !== undefined && Object.values(sources).includes(field))
          throw new InvalidInputError(`ladder ${ladder.id} takes each player's ${field} from its standings (matchmaking.attributesFromLadder); a backfill sends none`, {
            field: `players.${player}.${field}`,
          });
    }
  }
  const given = raw.players ?? {};
  const sent = (player: string) => (Object.hasOwn(given, player) ? given[player] : undefined);
  const onTeams = raw.teams.flat();
  // Unknown or unplaced players sit in the middle until the ladder knows better, as in tickets.
  const fromLadder = ruleSet !== undefined && ladder.matchmaking.attributesFromLadder !== undefined ? Object.entries(ladder.matchmaking.attributesFromLadder) : undefined;
  const unknown = fromLadder !== undefined ? onTeams : onTeams.filter((p) => sent(p)?.percentile === undefined || sent(p)?.rating === undefined);
  const facts = unknown.length > 0 ? await ctx.players.lookup(ladder, unknown) : undefined;
  // Built from entries, not by assignment: a player may be named `__proto__`.
  const entries: Array<[string, QueuedBackfillPlayer]> = onTeams.map((id) => {
    const own = sent(id);
    const known = facts?.get(id);
    const rating = own?.rating ?? known?.rating ?? undefined;
    let attributes = own?.attributes;
    if (fromLadder !== undefined) {
      // The match's players as the standings hold them now, as a ticket's (a player they do not list yet starts where the system starts everyone),
      // so the newcomers are judged against the same numbers they would have been matched on.
      attributes = { ...attributes };
      for (const [name, source] of fromLadder) attributes[name] = attributeFromLadder(ladder, source, known);
    }
    return [
      id,
      {
        percentile: own?.percentile ?? known?.percentile ?? 50,
        ...(rating !== undefined && rating !== null ? { rating } : {}),
        ...(own?.filter !== undefined ? { filter: own.filter } : {}),
        ...(attributes !== undefined ? { attributes } : {}),
        ...(own?.pings !== undefined ? { pings: own.pings } : {}),
        ...(own?.roles !== undefined ? { roles: own.roles } : {}),
      },
    ];
  });
  // A player sent in `players` but on no team stays in, for the library to name.
  for (const id of Object.keys(given)) if (!onTeams.includes(id)) entries.push([id, given[id] as QueuedBackfillPlayer]);
  const players = Object.fromEntries(entries);
  const now = Date.now();
  const id = raw.id ?? randomUUID();
  let open: number[];
  let request: QueuedBackfill;
  if (ruleSet === undefined) {
    request = {
      id,
      match: raw.match,
      region: raw.region,
      at: now / 1000,
      teams: raw.teams,
      teamSize: raw.teamSize ?? ladder.matchmaking.teamSize,
      players,
      ...(raw.filter !== undefined ? { filter: raw.filter } : {}),
    };
    // The library's rules (a team larger than teamSize, no open slot, a player twice, a player on no team), named by field.
    parseBackfill(request, ladder.matchmaking.teamSize, ladder.matchmaking.filterDefaults, () => undefined);
    open = raw.teams.map((team) => request.teamSize! - team.length);
  } else {
    request = { id, match: raw.match, region: raw.region, at: now / 1000, teams: raw.teams, players, ...(raw.teamNames !== undefined ? { teamNames: raw.teamNames } : {}) };
    // The rule-set engine's own check (team names and sizes, attributes, pings and roles by the rule set), so intake and pass agree.
    const opened = new RuleSetMatchmaker(ruleSet).addBackfill(ruleSetBackfillInput(request));
    request.teamNames = opened.teamNames;
    open = opened.open;
  }
  // A backfill names a match the ladder's matchmaker formed (known as long as its tickets stay readable),
  // or says the game server formed it: an id nobody formed would otherwise hold players out of the queue.
  if (raw.declared !== true) {
    const formed = await ctx.tickets.formedMatch(raw.match);
    if (formed === undefined || formed.ladder !== ladder.id) {
      throw new NotFoundError(
        `no match ${JSON.stringify(raw.match.slice(0, 80))} formed by ladder ${ladder.id}'s matchmaker in the last hour; for a match the game server formed itself, send "declared": true`,
        'match',
      );
    }
    if (formed.teams !== raw.teams.length)
      throw new InvalidInputError(`match ${JSON.stringify(raw.match.slice(0, 80))} has ${formed.teams} teams, not ${raw.teams.length}`, { field: 'teams' });
  }
  const stored: StoredBackfill = {
    id,
    ladder: ladder.id,
    status: 'waiting',
    createdAt: now,
    match: raw.match,
    ...(raw.declared === true ? { declared: true } : {}),
    region: raw.region,
    fills: 0,
    request,
    added: [],
    open,
  };
  const outcome = await ctx.tickets.addBackfill(stored);
  if (!outcome.ok) {
    if (outcome.reason === 'id') throw new ConflictError(`backfill ${JSON.stringify(id)} already exists`, 'id');
    const player = raw.teams[outcome.team]![outcome.index]!;
    const field = `teams[${outcome.team}][${outcome.index}]`;
    throw new PlayerBusyError(player, field, outcome.reason === 'waiting' ? { kind: 'waiting' } : { kind: 'playing', backfill: outcome.backfill });
  }
  return stored;
}

/**
 * Cancels an open backfill: it leaves the matchmaker at its next turn. A
 * partly filled one keeps its newcomers (they were told their match). A
 * filled one cannot be cancelled (BackfillClosedError); cancelling a
 * cancelled one again answers the same.
 */
export async function cancelBackfill(ctx: QueueContext, backfill: StoredBackfill): Promise<{ id: string; status: StoredBackfill['status'] }> {
  const after = await ctx.tickets.cancelBackfill(backfill);
  if (!after) throw new NotFoundError(`no backfill ${JSON.stringify(backfill.id.slice(0, 80))}`, 'backfill');
  if (after.status === 'filled') throw new BackfillClosedError(after.id, 'filled');
  return { id: after.id, status: after.status };
}
