/**
 * Backfill for rule-set queues: a match in progress asks for players to fill
 * its open slots under the same rule set it was formed by.
 *
 * A request names the match, the players still in it per team (with their
 * attributes, pings and roles, as a ticket's players send them), and
 * optionally the region it is hosted in. A pass fills it from waiting
 * tickets as it builds a new match from an anchor, except that the match's
 * players are seated from the start: each candidate goes to the team
 * FlexMatch fills next (below its minimum first, then most open slots) and
 * stays when every rule judged on a forming match holds for the whole match,
 * the players already in it included; whenever the teams reach their
 * minimums and the rules judged on a complete match hold too, the match so
 * far is remembered, and the largest remembered one is the fill. Batch
 * distance rules span the match's players and the newcomers; a latency rule
 * is judged in the request's region when it names one (else in some region
 * every player reaches). Expansions apply at the age of the request (the
 * seconds since its `at`) combined with the newcomers' ages as the rule set's
 * `expansionAgeSelection` says: the youngest with `newest`, the oldest with
 * `oldest`. Parties join whole; a ticket is placed once.
 *
 * `algorithm.backfillPriority` says when in a pass requests are served:
 * `high` before any new match forms, `low` after every anchor has been tried,
 * `normal` by age among the anchors (a request whose `at` is not after an
 * anchor's ticket is served before that anchor). Requests are served oldest
 * first (`at`, then id).
 */
import { InvalidInputError } from '../../core/errors.js';
import type { MatchView } from './expression.js';
import { RoleAssignment } from './roles.js';
import { type AttributeSource, parseRuleSetTicket, type RuleSetPlayer, type RuleSetPlayerInput, type RuleSetTicket } from './ticket.js';
import type { BatchDistanceRule, LatencyRule, Rule, RuleSet, TeamDef } from './types.js';

/** One player already in the match: what a ticket's player sends, without the id (the key names the player). */
export type RuleSetBackfillPlayerInput = Omit<RuleSetPlayerInput, 'id'>;

export interface RuleSetBackfillInput {
  /** The request's id (one open request per id). */
  id: string;
  /** The match being filled. @default the request's id */
  match?: string;
  /** Seconds on the pass clock when the request was made: its age drives the expansions, and requests are served oldest first. */
  at: number;
  /** Region the match is hosted in: a latency rule is judged there. Absent: in any region every player reaches. */
  region?: string;
  /** Player ids per team, as the match stands now (a team may be empty), aligned with `teamNames`. */
  teams: string[][];
  /** The rule set's team names (`NAME_1` … for a team with quantity), each once, in the order of `teams`. @default the rule set's order */
  teamNames?: string[];
  /** Attributes, pings and roles of every player on `teams`, by id (absent attributes take the rule set's defaults). */
  players?: Record<string, RuleSetBackfillPlayerInput>;
}

/** An open request as `RuleSetMatchmaker.backfills()` gives it: teams include the newcomers so far. */
export interface RuleSetBackfill {
  id: string;
  match: string;
  at: number;
  region: string | null;
  teamNames: string[];
  /** Player ids per team, the match's players first, then newcomers. */
  teams: string[][];
  /** Slots still open per team (the teams' maxPlayers, or their role slots, at the request's age in the last pass; before one, without expansions). */
  open: number[];
}

/** What one pass did for one request. */
export interface RuleSetBackfillResult {
  id: string;
  match: string;
  /** The request's region; else the region every player reaches best (as a match's), or null without pings. */
  region: string | null;
  /** Aligned with `added`, `players` and `open`: the request's team order. */
  teamNames: string[];
  /** Ticket ids added in this pass, per team. */
  added: string[][];
  /** Player ids per team now, the match's players first, then newcomers. */
  players: string[][];
  /** Player id → role, for every player of the match, when teams declare role slots. */
  roles?: Record<string, string>;
  /** Slots still open per team. */
  open: number[];
  /** Every slot filled: the request has left the matchmaker. */
  filled: boolean;
}

/** A waiting ticket as the pass keeps it (the fields a fill reads). */
export interface PoolEntry {
  ticket: RuleSetTicket;
  taken: boolean;
  /** Party value per numeric batchDistance rule. */
  batch: number[];
  /** Key of the string batchDistance values; null when a party disagrees. */
  key: string | null;
  /** The regions every member of the party reports; the party's worst, best and summed ping in each, aligned with them. */
  regionNames: string[];
  regionPing: number[];
  regionMin: number[];
  regionSum: number[];
}

/** What the matchmaker lends the fills: its rule set, compiled once. */
export interface FillContext {
  ruleSet: RuleSet;
  attributes: AttributeSource;
  slots: ReadonlyArray<{ name: string; def: TeamDef }>;
  numericBatch: readonly BatchDistanceRule[];
  stringBatch: readonly BatchDistanceRule[];
  latency: LatencyRule | undefined;
  searchWindow: number;
  teamMin(slot: number, age: number): number;
  teamMax(slot: number, age: number): number;
  batchLimit(rule: number, age: number): number;
  latencyLimits(age: number): { maxLatency: number; maxSpread: number | undefined };
  /** The first rule judged on a forming match (or, `complete`, on a complete one) that fails at this age. */
  judge(view: MatchView, age: number, complete: boolean): Rule | undefined;
  /** The ticket a player waits in. */
  waitingTicket(playerId: string): string | undefined;
}

/** A pass's waiting tickets, as the fills take them. */
export interface FillPool<E extends PoolEntry> {
  /** Untaken tickets of the batch with this string key, in candidate order (nearest `centre` in the ordering value when it is a number), at most `limit`. */
  candidates(key: string, centre: number, limit: number): E[];
  /** Takes a ticket out of the pass. */
  take(entry: E): void;
}

interface Request {
  id: string;
  match: string;
  at: number;
  region: string | null;
  teamNames: string[];
  /** Request team t is slot slotOf[t]. */
  slotOf: number[];
  /** Per slot: players in seating order (the match's first, then newcomers). */
  players: RuleSetPlayer[][];
  open: number[];
}

const fail = (field: string, message: string): never => {
  throw new InvalidInputError(message, { field });
};

export class RuleSetBackfills {
  private readonly open = new Map<string, Request>();
  /** Player → the open request whose match they are in. */
  private readonly playing = new Map<string, string>();
  /** Open requests oldest first (`at`, then id); rebuilt lazily. */
  private order: Request[] | undefined;

  constructor(private readonly ctx: FillContext) {}

  get size(): number {
    return this.open.size;
  }

  has(id: string): boolean {
    return this.open.has(id);
  }

  /** The open request a player's match belongs to. */
  playingIn(playerId: string): string | undefined {
    return this.playing.get(playerId);
  }

  /** Validates and opens a request; InvalidInputError naming the field. */
  add(raw: RuleSetBackfillInput | unknown): RuleSetBackfill {
    const { ctx } = this;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('backfill', 'must be an object');
    const input = raw as Record<string, unknown>;
    for (const key of Object.keys(input))
      if (!['id', 'match', 'at', 'region', 'teams', 'teamNames', 'players'].includes(key))
        fail(key, 'unknown field; a backfill has id, match, at, region, teams, teamNames and players');
    if (typeof input.id !== 'string' || input.id === '') fail('id', 'must be a non-empty string');
    const id = input.id as string;
    if (this.open.has(id)) fail('id', `backfill ${JSON.stringify(id)} is already open`);
    if (input.match !== undefined && (typeof input.match !== 'string' || input.match === '')) fail('match', 'must be a non-empty string');
    if (typeof input.at !== 'number' || !Number.isFinite(input.at)) fail('at', 'must be a number of seconds');
    if (input.region !== undefined && (typeof input.region !== 'string' || input.region === '')) fail('region', 'must be a non-empty string');
    const slotNames = ctx.slots.map((s) => s.name);
    let teamNames = slotNames;
    if (input.teamNames !== undefined) {
      if (!Array.isArray(input.teamNames)) fail('teamNames', `must list the rule set's teams: ${slotNames.join(', ')}`);
      const given = input.teamNames as unknown[];
      given.forEach((name, t) => {
        if (typeof name !== 'string' || !slotNames.includes(name)) fail(`teamNames[${t}]`, `unknown team ${JSON.stringify(name)}; the rule set's teams: ${slotNames.join(', ')}`);
        if (given.indexOf(name) !== t) fail(`teamNames[${t}]`, `team ${JSON.stringify(name)} is listed twice`);
      });
      if (given.length !== slotNames.length) fail('teamNames', `must list all ${slotNames.length} teams of the rule set: ${slotNames.join(', ')}`);
      teamNames = given as string[];
    }
    if (!Array.isArray(input.teams) || input.teams.length !== slotNames.length)
      fail('teams', `must be ${slotNames.length} lists of player ids, one per team (${teamNames.join(', ')})`);
    const rawPlayers = input.players ?? {};
    if (typeof rawPlayers !== 'object' || rawPlayers === null || Array.isArray(rawPlayers)) fail('players', 'must be an object of player id → {attributes?, pings?, roles?}');
    const given = rawPlayers as Record<string, unknown>;
    const slotOf = teamNames.map((name) => slotNames.indexOf(name));
    const players: RuleSetPlayer[][] = slotNames.map(() => []);
    const seen = new Set<string>();
    (input.teams as unknown[]).forEach((team, t) => {
      if (!Array.isArray(team)) fail(`teams[${t}]`, 'must be a list of player ids');
      const slot = slotOf[t];
      const def = ctx.slots[slot].def;
      const roles = def.roles ? new RoleAssignment(def.roles) : undefined;
      const cap = Math.min(this.widest(slot), def.roles ? Object.values(def.roles).reduce((s, n) => s + n, 0) : Infinity);
      if ((team as unknown[]).length > cap) fail(`teams[${t}]`, `has ${(team as unknown[]).length} players; team ${teamNames[t]} holds at most ${cap}`);
      (team as unknown[]).forEach((playerId, i) => {
        const field = `teams[${t}][${i}]`;
        if (typeof playerId !== 'string' || playerId === '') fail(field, 'must be a non-empty player id');
        const pid = playerId as string;
        if (seen.has(pid)) fail(field, `player ${JSON.stringify(pid)} is listed twice`);
        seen.add(pid);
        const ticket = ctx.waitingTicket(pid);
        if (ticket !== undefined) fail(field, `player ${JSON.stringify(pid)} is waiting in ticket ${JSON.stringify(ticket)}`);
        const other = this.playing.get(pid);
        if (other !== undefined) fail(field, `player ${JSON.stringify(pid)} is in the match of open backfill ${JSON.stringify(other)}`);
        const own = Object.hasOwn(given, pid) ? given[pid] : {};
        if (typeof own !== 'object' || own === null || Array.isArray(own)) fail(`players.${pid}`, 'must be an object {attributes?, pings?, roles?}');
        let player: RuleSetPlayer;
        try {
          player = parseRuleSetTicket({ id: id, at: 0, players: [{ ...(own as object), id: pid }] }, ctx.ruleSet, ctx.attributes).players[0];
        } catch (error) {
          if (!(error instanceof InvalidInputError)) throw error;
          // The ticket parser names `players[0].…`; here the player is keyed by id.
          const where = (error.field ?? '').replace(/^players\[0\]/, `players.${pid}`);
          throw new InvalidInputError(error.detail, { field: where === 'players' ? `players.${pid}` : where });
        }
        if (roles && !roles.add(player.roles)) fail(`players.${pid}.roles`, `no seating of team ${teamNames[t]}'s role slots holds this player with the others`);
        players[slot].push(player);
      });
    });
    for (const key of Object.keys(given)) if (!seen.has(key)) fail(`players.${key}`, 'is not on any team');
    // The string batch rules: the match's players must already agree (else nobody could join).
    for (const rule of ctx.stringBatch) {
      const values = new Set(players.flat().map((p) => p.attributes[rule.batchAttribute]));
      if (values.size > 1) fail('players', `the match's players disagree on ${rule.batchAttribute}, which rule ${rule.name} requires to be the same for everyone`);
    }
    if (seen.size === 0) fail('teams', 'lists no player: queue the players as tickets for a new match instead');
    if (slotNames.every((_, k) => this.widest(k) <= players[k].length)) fail('teams', 'every team is full: nothing to fill');
    const open = slotNames.map((_, k) => ctx.teamMax(k, 0) - players[k].length);
    const request: Request = {
      id,
      match: (input.match as string | undefined) ?? id,
      at: input.at as number,
      region: (input.region as string | undefined) ?? null,
      teamNames,
      slotOf,
      players,
      open: open.map((n) => Math.max(0, n)),
    };
    this.open.set(id, request);
    for (const p of players.flat()) this.playing.set(p.id, id);
    this.order = undefined;
    return this.copy(request);
  }

  /** Withdraws an open request; returns whether it was open. */
  remove(id: string): boolean {
    const request = this.open.get(id);
    if (!request) return false;
    this.open.delete(id);
    for (const team of request.players) for (const p of team) if (this.playing.get(p.id) === id) this.playing.delete(p.id);
    this.order = undefined;
    return true;
  }

  /** The open requests, oldest first. */
  list(): RuleSetBackfill[] {
    return this.sorted().map((r) => this.copy(r));
  }

  /**
   * Serves the open requests of a pass at `now`, oldest first, while
   * `until(at)` holds for the next one's `at`: returns a function to call
   * with the limit, which carries on from where the last call stopped.
   */
  server<E extends PoolEntry>(now: number, pool: FillPool<E>, results: RuleSetBackfillResult[]): (until: number) => void {
    const queue = this.sorted().slice();
    let next = 0;
    return (until: number) => {
      while (next < queue.length && queue[next].at <= until) {
        const request = queue[next++];
        if (!this.open.has(request.id)) continue;
        const result = this.fill(request, now, pool);
        if (result) results.push(result);
      }
    };
  }

  private sorted(): Request[] {
    this.order ??= [...this.open.values()].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.order;
  }

  /** The most players a team slot can hold at any age. */
  private widest(slot: number): number {
    const def = this.ctx.slots[slot].def;
    const steps = this.ctx.ruleSet.expansions.filter((e) => e.kind === 'team' && e.name === def.name && e.property === 'maxPlayers').flatMap((e) => e.steps.map((s) => s.value));
    return Math.max(def.maxPlayers, ...steps);
  }

  private copy(r: Request): RuleSetBackfill {
    return {
      id: r.id,
      match: r.match,
      at: r.at,
      region: r.region,
      teamNames: [...r.teamNames],
      teams: r.slotOf.map((slot) => r.players[slot].map((p) => p.id)),
      open: r.slotOf.map((slot) => r.open[slot]),
    };
  }

  /** One request's fill in this pass, or undefined when no ticket could join. */
  private fill<E extends PoolEntry>(request: Request, now: number, pool: FillPool<E>): RuleSetBackfillResult | undefined {
    const { ctx } = this;
    const newest = ctx.ruleSet.algorithm.expansionAgeSelection === 'newest';
    const slots = ctx.slots;
    const slotCount = slots.length;
    const teams = slots.map((s, k) => ({ name: s.name, definition: s.def.name, players: [...request.players[k]] }));
    const view: MatchView = { teams };
    const roles = slots.map((s, k) => {
      if (!s.def.roles) return undefined;
      const r = new RoleAssignment(s.def.roles);
      for (const p of request.players[k]) r.add(p.roles);
      return r;
    });
    const counts = teams.map((t) => t.players.length);
    const everyone = request.players.flat();
    // Batch rules: the match's players each count as a party of one.
    const batchMin = ctx.numericBatch.map((r) => Math.min(...everyone.map((p) => p.attributes[r.batchAttribute] as number)));
    const batchMax = ctx.numericBatch.map((r) => Math.max(...everyone.map((p) => p.attributes[r.batchAttribute] as number)));
    const keyParts = ctx.stringBatch.map((r) => everyone[0].attributes[r.batchAttribute] as string);
    // Latency: the figures per region every player so far reports (only the request's region when it names one).
    type Figures = { max: number; min: number; sum: number };
    const latency = ctx.latency;
    let regions: Map<string, Figures> | undefined;
    let players = everyone.length;
    if (latency && (request.region !== null || everyone.length > 0)) {
      regions = new Map();
      const names = request.region !== null ? [request.region] : Object.keys(everyone[0].pings ?? {});
      for (const region of names) {
        const pings = everyone.map((p) => p.pings?.[region]);
        if (pings.some((x) => x === undefined)) continue;
        regions.set(region, { max: Math.max(...(pings as number[])), min: Math.min(...(pings as number[])), sum: (pings as number[]).reduce((a, b) => a + b, 0) });
      }
    }
    let age = now - request.at;
    const acceptable = (s: Figures, count: number, a: number): boolean => {
      const { maxLatency, maxSpread } = ctx.latencyLimits(a);
      if (s.max > maxLatency) return false;
      if (maxSpread !== undefined && s.max - (latency!.distanceReference === 'min' ? s.min : s.sum / count) > maxSpread) return false;
      return true;
    };
    /** The regions every player so far and this party report, with their figures. */
    const joined = (e: PoolEntry): Map<string, Figures> => {
      const out = new Map<string, Figures>();
      if (regions === undefined) {
        for (let j = 0; j < e.regionNames.length; j++) out.set(e.regionNames[j], { max: e.regionPing[j], min: e.regionMin[j], sum: e.regionSum[j] });
        return out;
      }
      for (let j = 0; j < e.regionNames.length; j++) {
        const s = regions.get(e.regionNames[j]);
        if (s !== undefined) out.set(e.regionNames[j], { max: Math.max(s.max, e.regionPing[j]), min: Math.min(s.min, e.regionMin[j]), sum: s.sum + e.regionSum[j] });
      }
      return out;
    };

    const placed: Array<{ entry: E; slot: number; size: number }> = [];
    let snapshot: { count: number; regions: Map<string, Figures> | undefined; age: number } | undefined;
    const complete = (): boolean => {
      for (let k = 0; k < slotCount; k++) if (counts[k] < ctx.teamMin(k, age)) return false;
      return ctx.judge(view, age, true) === undefined;
    };
    const full = (): boolean => {
      for (let k = 0; k < slotCount; k++) if (counts[k] < ctx.teamMax(k, age)) return false;
      return true;
    };
    const tryJoin = (e: E, ticketAge: number): boolean => {
      const a = newest ? Math.min(age, ticketAge) : Math.max(age, ticketAge);
      for (let b = 0; b < ctx.numericBatch.length; b++) {
        const v = e.batch[b];
        const lo = Math.min(batchMin[b], v);
        const hi = Math.max(batchMax[b], v);
        if (hi - lo > ctx.batchLimit(b, a)) return false;
      }
      const size = e.ticket.players.length;
      let nextRegions = regions;
      if (latency) {
        nextRegions = joined(e);
        if (![...nextRegions.values()].some((s) => acceptable(s, players + size, a))) return false;
      }
      // Teams in FlexMatch's fill order: below their minimum first, then most open slots, then as listed.
      const order: Array<{ k: number; rank: number }> = [];
      for (let k = 0; k < slotCount; k++) {
        const openSlots = ctx.teamMax(k, a) - counts[k];
        if (openSlots < size) continue;
        order.push({ k, rank: (counts[k] < ctx.teamMin(k, a) ? 1_000_000 : 0) + openSlots });
      }
      order.sort((x, y) => y.rank - x.rank || x.k - y.k);
      for (const { k } of order) {
        const team = teams[k];
        const before = team.players.length;
        const r = roles[k];
        if (r) {
          let ok = true;
          for (const p of e.ticket.players) if (!(ok = r.add(p.roles))) break;
          if (!ok) {
            r.truncate(before);
            continue;
          }
        }
        team.players.push(...e.ticket.players);
        if (ctx.judge(view, a, false) !== undefined) {
          team.players.length = before;
          r?.truncate(before);
          continue;
        }
        counts[k] += size;
        placed.push({ entry: e, slot: k, size });
        age = a;
        players += size;
        for (let b = 0; b < ctx.numericBatch.length; b++) {
          batchMin[b] = Math.min(batchMin[b], e.batch[b]);
          batchMax[b] = Math.max(batchMax[b], e.batch[b]);
        }
        regions = nextRegions;
        return true;
      }
      return false;
    };

    // Candidates: the batch the match's string batch values name, nearest the match's players in the ordering value.
    const key = ctx.stringBatch.length === 0 ? '' : JSON.stringify(keyParts);
    const centre = this.centre(everyone);
    if (!full()) {
      for (const e of pool.candidates(key, centre, ctx.searchWindow)) {
        if (e.taken) continue;
        if (tryJoin(e, now - e.ticket.at) && complete()) snapshot = { count: placed.length, regions, age };
        if (full()) break;
      }
    }
    if (snapshot === undefined || snapshot.count === 0) return undefined;
    const kept = placed.slice(0, snapshot.count);
    for (const { entry } of kept) pool.take(entry);
    // Seat the kept newcomers again (the ones after the snapshot were tentative) and work out the roles.
    const added: string[][] = slots.map(() => []);
    for (const { entry, slot } of kept) {
      added[slot].push(entry.ticket.id);
      for (const p of entry.ticket.players) {
        request.players[slot].push(p);
        this.playing.set(p.id, request.id);
      }
    }
    let rolesOut: Record<string, string> | undefined;
    if (slots.some((s) => s.def.roles)) {
      rolesOut = {};
      slots.forEach((s, k) => {
        if (!s.def.roles) return;
        const r = new RoleAssignment(s.def.roles);
        for (const p of request.players[k]) r.add(p.roles);
        r.roles().forEach((role, j) => (rolesOut![request.players[k][j].id] = role));
      });
    }
    const open = slots.map((_, k) => Math.max(0, ctx.teamMax(k, snapshot!.age) - request.players[k].length));
    request.open = open;
    const filled = open.every((n) => n === 0);
    let region = request.region;
    if (region === null) {
      // As a formed match's: the region every player reaches best (within the latency rule when there is one).
      const all = request.players.flat();
      const figures = snapshot.regions ?? new Map<string, Figures>();
      if (snapshot.regions === undefined && all.every((p) => p.pings !== undefined)) {
        for (const name of Object.keys(all[0].pings!)) {
          const pings = all.map((p) => p.pings![name]);
          if (pings.every((x) => x !== undefined)) figures.set(name, { max: Math.max(...pings), min: Math.min(...pings), sum: pings.reduce((a, b) => a + b, 0) });
        }
      }
      let best: [string, Figures] | undefined;
      for (const r of figures) {
        if (latency && !acceptable(r[1], all.length, snapshot.age)) continue;
        if (!best || r[1].max < best[1].max || (r[1].max === best[1].max && (r[1].sum < best[1].sum || (r[1].sum === best[1].sum && r[0] < best[0])))) best = r;
      }
      region = best ? best[0] : null;
    }
    if (filled) this.remove(request.id);
    return {
      id: request.id,
      match: request.match,
      region,
      teamNames: [...request.teamNames],
      added: request.slotOf.map((slot) => added[slot]),
      players: request.slotOf.map((slot) => request.players[slot].map((p) => p.id)),
      ...(rolesOut ? { roles: rolesOut } : {}),
      open: request.slotOf.map((slot) => open[slot]),
      filled,
    };
  }

  /** The match players' mean of the ordering attribute (the one candidates are taken nearest to), or NaN. */
  private centre(everyone: readonly RuleSetPlayer[]): number {
    const { algorithm } = this.ctx.ruleSet;
    const name =
      algorithm.strategy === 'balanced'
        ? algorithm.balancedAttribute
        : algorithm.batchingPreference === 'sorted'
          ? algorithm.sortByAttributes[0]
          : this.ctx.numericBatch[0]?.batchAttribute;
    if (name === undefined) return NaN;
    const values = everyone.map((p) => p.attributes[name]).filter((v): v is number => typeof v === 'number');
    return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
  }
}
