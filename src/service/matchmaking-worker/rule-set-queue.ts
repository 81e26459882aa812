/**
 * A rule-set queue behind the surface the matchmaking loop drives a
 * `Matchmaker` by (add, cancel, pass, the backfill calls), so a ladder whose
 * `matchmaking.ruleSet` is set runs the rule-set engine where the team-rank
 * matchmaker would run: in the matchmakers' thread, fed by the same queue
 * events, its matches placed the same way.
 *
 * Backfill requests go to the engine's backfill (filled under the rule set,
 * when its `backfillPriority` says); their fills come back in the loop's
 * `BackfillResult` form plus the team names and roles. A request in the
 * team-rank form (one opened before the rule set was set) is refused like
 * any other malformed one.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import {
  type Backfill,
  type BackfillInput,
  type BackfillResult,
  type FormedMatch,
  Matchmaker,
  type MatchmakerOptions,
  type ResolvedWidening,
  type TicketInput,
} from 'ladder-core/matchmaking';
import {
  type AttributeValue,
  type RuleSet,
  type RuleSetBackfillInput,
  type RuleSetBackfillResult,
  RuleSetMatchmaker,
  type RuleSetPlayerInput,
} from 'ladder-core/matchmaking/rule-set/index.js';
import type { QueuedBackfill } from '../tickets/store.js';

/** What a ladder's matchmaker is built from: the team-rank options, and the rule set when the queue has one. */
export type QueueMatchmakerOptions = MatchmakerOptions & { ruleSet?: Record<string, unknown> };

/** A match a rule-set queue formed. */
export interface RuleSetFormedMatch {
  /** The region every player reaches best (see RuleSetMatch), else the oldest ticket's first player's nearest. */
  region: string;
  /** Ticket ids per team, aligned with teamNames. */
  teams: string[][];
  players: string[][];
  teamNames: string[];
  /** Player id → role, when the teams declare role slots. */
  roles?: Record<string, string>;
  /** Seconds each ticket waited, per team, in `teams` order. */
  waits: number[][];
}

/** A match either kind of queue formed. */
export type PassMatch = FormedMatch | RuleSetFormedMatch;

/** Seconds each ticket of a match waited, per team. */
export function waitsOf(match: PassMatch): number[][] {
  return 'quality' in match ? match.quality.waits : match.waits;
}

/** A backfill's fill, as either kind of queue reports it (a rule-set queue's names its teams and roles). */
export type PassBackfill = BackfillResult & { teamNames?: string[]; roles?: Record<string, string> };

export interface RuleSetQueuePassResult {
  matches: RuleSetFormedMatch[];
  waiting: string[];
  backfills: PassBackfill[];
  /** Rule name → waiting tickets it held most often in this pass (the engine's "why waiting"). */
  why: Record<string, number>;
}

interface Waiting {
  at: number;
  /** The first player's nearest region. */
  region: string;
}

export class RuleSetQueue {
  /** Players of the largest team. */
  readonly teamSize: number;
  /** Rule sets widen by their expansions, not by a widening schedule. */
  readonly widening: ResolvedWidening = { steps: [], everySeconds: 0 };
  readonly maxCandidates: number;
  /** Seconds after a ticket's arrival at which the last expansion step applies (its match options stop changing). */
  readonly expansionSeconds: number;
  readonly ruleSet: RuleSet;
  private readonly engine: RuleSetMatchmaker;
  private readonly tickets = new Map<string, Waiting>();
  /** Open backfill id → the region its match is hosted in. */
  private readonly regions = new Map<string, string>();

  constructor(ruleSet: unknown) {
    this.engine = new RuleSetMatchmaker(ruleSet);
    this.ruleSet = this.engine.ruleSet;
    this.teamSize = Math.max(...this.ruleSet.teams.map((t) => t.maxPlayers));
    const size = this.ruleSet.teams.reduce((sum, t) => sum + t.maxPlayers * t.quantity, 0);
    this.maxCandidates = Math.max(1000, 5 * size);
    this.expansionSeconds = Math.max(0, ...this.ruleSet.expansions.flatMap((e) => e.steps.map((s) => s.waitTimeSeconds)));
  }

  get size(): number {
    return this.tickets.size;
  }

  has(id: string): boolean {
    return this.tickets.has(id);
  }

  /** Queues a stored ticket (its players' `attributes` and `roles` as intake checked them); InvalidInputError naming the field when the rule set refuses it. */
  add(ticket: TicketInput): void {
    const players = ticket.players.map((p): RuleSetPlayerInput => {
      const extra = p as { attributes?: Record<string, AttributeValue>; roles?: string[] };
      return {
        id: String(p.id),
        pings: p.pings,
        ...(extra.attributes !== undefined ? { attributes: extra.attributes } : {}),
        ...(extra.roles !== undefined ? { roles: extra.roles } : {}),
      };
    });
    const id = String(ticket.id);
    this.engine.add({ id, at: ticket.at, players });
    const pings = Object.entries(ticket.players[0]?.pings ?? {});
    let region = pings[0]?.[0] ?? '';
    let best = pings[0]?.[1] ?? Infinity;
    for (const [name, ms] of pings) if (ms < best) [region, best] = [name, ms];
    this.tickets.set(id, { at: ticket.at, region });
  }

  /** Of the given tickets, those the last pass kept waiting: id → the rule that most often held it. */
  whyWaiting(ids: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const id of ids) {
      const rule = this.engine.whyWaiting(id);
      if (rule !== undefined) out[id] = rule;
    }
    return out;
  }

  cancel(id: string): boolean {
    this.tickets.delete(id);
    return this.engine.cancel(id);
  }

  get backfillCount(): number {
    return this.engine.backfillCount;
  }

  hasBackfill(id: string): boolean {
    return this.engine.hasBackfill(id);
  }

  /** Opens a stored backfill request; InvalidInputError naming the field when the rule set refuses it. */
  addBackfill(backfill: BackfillInput): void {
    const request = backfill as QueuedBackfill;
    if (request.teamNames === undefined) throw new InvalidInputError('a rule-set queue takes backfill requests that name their teams', { field: 'teamNames' });
    this.engine.addBackfill(ruleSetBackfillInput(request));
    this.regions.set(request.id, request.region);
  }

  removeBackfill(id: string): boolean {
    this.regions.delete(id);
    return this.engine.removeBackfill(id);
  }

  /** The open requests (their teams with the newcomers so far), in the team-rank form the loop reads: only ids and teams are meaningful. */
  backfills(): Backfill[] {
    return this.engine
      .backfills()
      .map((b) => ({ id: b.id, match: b.match, region: b.region ?? '', at: b.at, teams: b.teams, teamSize: this.teamSize, players: {}, maxPing: Infinity }));
  }

  pass(now: number): RuleSetQueuePassResult {
    const result = this.engine.pass(now);
    const matches = result.matches.map((m): RuleSetFormedMatch => {
      const waits = m.teams.map((team) => team.map((id) => Math.max(0, now - this.tickets.get(id)!.at)));
      const first = m.teams.flat()[0];
      const region = m.region ?? (first !== undefined ? this.tickets.get(first)!.region : '');
      for (const id of m.teams.flat()) this.tickets.delete(id);
      return { region, teams: m.teams, players: m.players, teamNames: m.teamNames, ...(m.roles !== undefined ? { roles: m.roles } : {}), waits };
    });
    const why: Record<string, number> = {};
    for (const rule of Object.values(result.why)) why[rule] = (why[rule] ?? 0) + 1;
    const backfills = result.backfills.map((fill) => this.backfillResult(fill));
    return { matches, waiting: result.waiting, backfills, why };
  }

  /** A fill in the loop's form: the request's region stands (a rule-set fill of a request that names one keeps it). */
  private backfillResult(fill: RuleSetBackfillResult): PassBackfill {
    for (const id of fill.added.flat()) this.tickets.delete(id);
    const region = this.regions.get(fill.id) ?? fill.region ?? '';
    if (fill.filled) this.regions.delete(fill.id);
    return {
      id: fill.id,
      match: fill.match,
      region,
      added: fill.added,
      players: fill.players,
      open: fill.open,
      filled: fill.filled,
      teamNames: fill.teamNames,
      ...(fill.roles !== undefined ? { roles: fill.roles } : {}),
    };
  }
}

/** Waiting ticket id → the rule that most often kept it out of candidate matches in the last pass, for those of `ids` it knows (none for a team-rank matchmaker). */
export function whyOf(matchmaker: Matchmaker | RuleSetQueue, ids: readonly string[]): Record<string, string> {
  return matchmaker instanceof RuleSetQueue ? matchmaker.whyWaiting(ids) : {};
}

/** The matchmaker a ladder's options ask for. */
export function newQueueMatchmaker(options: QueueMatchmakerOptions): Matchmaker | RuleSetQueue {
  const { ruleSet, ...rest } = options;
  return ruleSet !== undefined ? new RuleSetQueue(ruleSet) : new Matchmaker(rest);
}

/** A stored backfill request in the rule-set engine's form: the match players' attributes, pings and roles. */
export function ruleSetBackfillInput(request: QueuedBackfill): RuleSetBackfillInput {
  // Built from entries, not by assignment: a player may be named `__proto__`.
  const players = Object.entries(request.players ?? {}).map(([id, p]) => [
    id,
    {
      ...(p.attributes !== undefined ? { attributes: p.attributes } : {}),
      ...(p.pings !== undefined ? { pings: p.pings } : {}),
      ...(p.roles !== undefined ? { roles: p.roles } : {}),
    },
  ]);
  return {
    id: request.id,
    match: request.match,
    at: request.at,
    region: request.region,
    teams: request.teams,
    ...(request.teamNames !== undefined ? { teamNames: request.teamNames } : {}),
    players: Object.fromEntries(players),
  };
}
