/**
 * Ladder definitions: which rating system, its options, standings and
 * matchmaking settings, and whether reads are public. Each instance caches
 * them for a few seconds: a change (PATCH, a new season) is seen at once by
 * the instance that made it and by the others within `CACHE_MS`.
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { describeSystem } from 'ladder-core/core/registry.js';
import { createSystem, type RatingSystem, type SystemName } from 'ladder-core/core/systems.js';
import { type FilterDefaults, type MatchmakerOptions, type PlayerFilter, type ResolvedWidening, resolveWidening, type WideningOptions } from 'ladder-core/matchmaking';
import { parseRuleSet, type RuleSet } from 'ladder-core/matchmaking/rule-set/index.js';
import { resolveFilterDefaults } from 'ladder-core/matchmaking/ticket.js';
import { type LeaderboardOptions, resolveLeaderboardOptions, type ResolvedLeaderboardOptions } from 'ladder-core/standings';
import type { Database, Queryable } from '../store/database.js';
import { deleteLadder, findLadder, insertLadder, type LadderCounts, ladderCounts, type LadderRow, listLadders, lockLadder, updateLadder } from '../store/ladders.js';
import { ConflictError, NotFoundError } from './errors/index.js';
import { HOSTED_SYSTEMS, hostedByService } from './systems.js';

export interface MatchmakingSettings {
  /** Players per team. @default the system's (`ladder.teamSize` of its descriptor: 6 for team rank, else 1) */
  teamSize: number;
  /** Teams per match. @default 2 */
  teams: number;
  /** Loose-filter widening schedule. @default {steps: [5, 10, 20, 50, 100], everySeconds: 30} */
  widening: ResolvedWidening;
  /** Filter values for players whose ticket sends none. @default {within: 10, strict: false, maxPing: 150} */
  filterDefaults: PlayerFilter;
  /** Candidate tickets a pass examines per anchor and region. @default 256 */
  maxCandidates: number;
  /** Seconds a ticket may wait before it expires (status `expired`). @default 600 */
  ticketTtlSeconds: number;
  /** Seconds a backfill may stay open before it expires. @default 600 */
  backfillTtlSeconds: number;
  /** Waiting tickets in the ladder's queue at most (past it: 429). @default 1000000 */
  maxWaiting: number;
  /** Waiting tickets one API key may hold in the ladder's queue at most (past it: 429). @default 100000 */
  maxWaitingPerKey: number;
  /** The regions the queue accepts (a ping naming another is refused); absent: any, at most 31 named by waiting tickets at once. */
  regions?: string[];
  /**
   * A FlexMatch rule set (JSON object, as given): when present the queue forms
   * matches by it instead of by team size and percentile ranges.
   */
  ruleSet?: Record<string, unknown>;
  /**
   * Rule-set queues: player attributes the ladder fills in from its
   * standings at intake (attribute name → `rating` or `percentile`), which
   * a ticket may not send.
   */
  attributesFromLadder?: Record<string, LadderAttributeSource>;
}

/** Where an attribute taken from the ladder comes from: the player's stored rating, or percentile in the standings. */
export type LadderAttributeSource = 'rating' | 'percentile';

/** Matchmaking settings as a ladder definition gives them (any field may be left out). */
export interface MatchmakingInput {
  teamSize?: number;
  teams?: number;
  widening?: WideningOptions;
  filterDefaults?: FilterDefaults;
  maxCandidates?: number;
  ticketTtlSeconds?: number;
  backfillTtlSeconds?: number;
  maxWaiting?: number;
  maxWaitingPerKey?: number;
  regions?: string[];
  ruleSet?: Record<string, unknown>;
  attributesFromLadder?: Record<string, LadderAttributeSource>;
}

const MAX_CANDIDATES_DEFAULT = 256;
/** Time-to-live of tickets and backfills: the default, and the longest allowed (a day). */
export const TTL_DEFAULT_SECONDS = 600;
/** Regions a queue may declare: the matchmaker's limit. */
const MAX_DECLARED_REGIONS = 31;
export const TTL_MAX_SECONDS = 86_400;
export const MAX_WAITING_DEFAULT = 1_000_000;
export const MAX_WAITING_PER_KEY_DEFAULT = 100_000;

/**
 * Complete settings from what a definition gives (or a row stored before
 * the widening, filter and candidate settings existed). Throws
 * InvalidInputError naming the field under `matchmaking`.
 */
export function resolveMatchmaking(system: string, input: MatchmakingInput = {}): MatchmakingSettings {
  const settings: MatchmakingSettings = {
    teamSize: input.teamSize ?? describeSystem(system).ladder.teamSize,
    teams: input.teams ?? 2,
    widening: { steps: [], everySeconds: 0 },
    filterDefaults: resolveFilterDefaults(input.filterDefaults),
    maxCandidates: input.maxCandidates ?? MAX_CANDIDATES_DEFAULT,
    // Rows stored before these settings existed get the defaults.
    ticketTtlSeconds: input.ticketTtlSeconds ?? TTL_DEFAULT_SECONDS,
    backfillTtlSeconds: input.backfillTtlSeconds ?? TTL_DEFAULT_SECONDS,
    maxWaiting: input.maxWaiting ?? MAX_WAITING_DEFAULT,
    maxWaitingPerKey: input.maxWaitingPerKey ?? MAX_WAITING_PER_KEY_DEFAULT,
    ...(input.regions !== undefined ? { regions: [...input.regions] } : {}),
    ...(input.ruleSet !== undefined ? { ruleSet: input.ruleSet } : {}),
    ...(input.attributesFromLadder !== undefined ? { attributesFromLadder: { ...input.attributesFromLadder } } : {}),
  };
  for (const field of ['teamSize', 'maxCandidates', 'maxWaiting', 'maxWaitingPerKey'] as const) {
    if (!Number.isInteger(settings[field]) || settings[field] < 1)
      throw new InvalidInputError(`must be a positive integer, got ${settings[field]}`, { field: `matchmaking.${field}` });
  }
  for (const field of ['ticketTtlSeconds', 'backfillTtlSeconds'] as const) {
    if (!(settings[field] >= 1 && settings[field] <= TTL_MAX_SECONDS))
      throw new InvalidInputError(`must be between 1 and ${TTL_MAX_SECONDS} seconds, got ${settings[field]}`, { field: `matchmaking.${field}` });
  }
  if (settings.regions !== undefined) {
    if (settings.regions.length < 1 || settings.regions.length > MAX_DECLARED_REGIONS)
      throw new InvalidInputError(`must list 1 to ${MAX_DECLARED_REGIONS} regions`, { field: 'matchmaking.regions' });
    settings.regions.forEach((region, i) => {
      if (settings.regions!.indexOf(region) !== i) throw new InvalidInputError(`region ${JSON.stringify(region)} is listed twice`, { field: `matchmaking.regions[${i}]` });
    });
  }
  if (settings.ruleSet !== undefined) ruleSetOf(settings);
  if (settings.attributesFromLadder !== undefined) checkAttributesFromLadder(settings);
  try {
    settings.widening = resolveWidening(input.widening);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const field = error.field ?? '';
    const step = /^widen\[(\d+)\]$/.exec(field);
    const named = step ? `widening.steps[${step[1]}]` : field === 'widenEvery' ? 'widening.everySeconds' : field;
    throw new InvalidInputError(error.detail, { field: named === '' ? 'matchmaking' : `matchmaking.${named}` });
  }
  return settings;
}

/** Each attribute taken from the ladder is a numeric attribute the rule set declares, from `rating` or `percentile`. */
function checkAttributesFromLadder(settings: MatchmakingSettings): void {
  const sources = settings.attributesFromLadder!;
  const ruleSet = ruleSetOf(settings);
  if (ruleSet === undefined)
    throw new InvalidInputError('attributes come from the ladder only for a rule-set queue: set matchmaking.ruleSet too (or remove both)', {
      field: 'matchmaking.attributesFromLadder',
    });
  for (const [name, source] of Object.entries(sources)) {
    const field = `matchmaking.attributesFromLadder.${name}`;
    const declared = ruleSet.playerAttributes.find((a) => a.name === name);
    if (declared === undefined)
      throw new InvalidInputError(`the rule set declares no attribute ${JSON.stringify(name)}; declared: ${ruleSet.playerAttributes.map((a) => a.name).join(', ') || 'none'}`, {
        field,
      });
    if (declared.type !== 'number')
      throw new InvalidInputError(`attribute ${JSON.stringify(name)} is of type ${declared.type}; a rating or percentile fills only a number`, { field });
    if (source !== 'rating' && source !== 'percentile') throw new InvalidInputError(`must be "rating" or "percentile", got ${JSON.stringify(source)}`, { field });
  }
}

/** Rule sets parsed, by the settings object that holds them (a cached ladder definition parses its rule set once). */
const parsedRuleSets = new WeakMap<object, RuleSet>();

/**
 * The queue's rule set, parsed; undefined when it has none. Throws
 * InvalidInputError naming the JSON path under `matchmaking.ruleSet`.
 */
export function ruleSetOf(settings: MatchmakingSettings): RuleSet | undefined {
  const raw = settings.ruleSet;
  if (raw === undefined) return undefined;
  let parsed = parsedRuleSets.get(raw);
  if (parsed === undefined) {
    try {
      parsed = parseRuleSet(raw);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      const field = error.field === undefined || error.field === 'rule set' ? 'matchmaking.ruleSet' : `matchmaking.ruleSet.${error.field}`;
      throw new InvalidInputError(error.detail, { field });
    }
    parsedRuleSets.set(raw, parsed);
  }
  return parsed;
}

/** What the ladder's matchmaker is built with. */
export function matchmakerOptions(settings: MatchmakingSettings): MatchmakerOptions & { ruleSet?: Record<string, unknown> } {
  return {
    teamSize: settings.teamSize,
    widening: settings.widening,
    filterDefaults: settings.filterDefaults,
    maxCandidates: settings.maxCandidates,
    ...(settings.ruleSet !== undefined ? { ruleSet: settings.ruleSet } : {}),
  };
}

export interface Ladder {
  id: string;
  system: SystemName;
  /** Options as given (defaults not filled in), as stored. */
  options: Record<string, unknown>;
  public: boolean;
  createdAt: number;
  /** Which ladder of this id (ladders.incarnation): a ladder created anew under the id has a greater one. 0 before it is stored. */
  incarnation: number;
  standings: LeaderboardOptions;
  matchmaking: MatchmakingSettings;
  /** Name of the first season. @default '1' */
  season: string;
  /** When the current season started (epoch ms; 0 while the ladder is in its first season): standings count only players who played since. */
  seasonStartedAt: number;
  /** The stored settings object, as is. */
  settings: Record<string, unknown>;
  /** Derived, not stored. */
  rating: RatingSystem;
  resolvedStandings: ResolvedLeaderboardOptions;
}

export interface CreateLadderInput {
  id: string;
  system: SystemName;
  options?: Record<string, unknown>;
  public?: boolean;
  standings?: LeaderboardOptions;
  matchmaking?: MatchmakingInput;
  season?: string;
}

/** How long an instance trusts a cached definition. */
const CACHE_MS = 5000;

/** The definition a stored row holds. */
export function ladderFromRow(row: LadderRow): Ladder {
  const settings = row.settings as { standings?: LeaderboardOptions; matchmaking?: MatchmakingInput; season?: string; currentSeason?: { startedAt: number } };
  const standings = settings.standings ?? {};
  const system = row.system as SystemName;
  return {
    id: row.id,
    system,
    options: row.options,
    public: row.public,
    createdAt: row.created_at,
    incarnation: row.incarnation,
    standings,
    // Stored complete since the widening, filter and candidate settings exist; older rows hold team size and teams only.
    matchmaking: resolveMatchmaking(system, settings.matchmaking),
    season: settings.season ?? '1',
    seasonStartedAt: settings.currentSeason?.startedAt ?? 0,
    settings: row.settings,
    rating: createSystem(system, row.options),
    resolvedStandings: resolveLeaderboardOptions(standings),
  };
}

/** Checks a ladder definition completely (system options included) before anything is stored. */
export function checkLadder(input: CreateLadderInput): Ladder {
  const options = input.options ?? {};
  const descriptor = describeSystem(input.system);
  if (!hostedByService(descriptor)) {
    throw new InvalidInputError(`ladders cannot use ${descriptor.label}; use one of ${HOSTED_SYSTEMS.map((d) => d.name).join(', ')}`, { field: 'system' });
  }
  try {
    // Values against the system's option schema, and names: own keys only (`constructor` is a name like any other, not an option).
    createSystem(input.system, options);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.detail, { field: error.field === undefined ? 'options' : `options.${error.field}` });
    throw error;
  }
  try {
    resolveLeaderboardOptions(input.standings ?? {});
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.detail, { field: error.field === undefined ? 'standings' : `standings.${error.field}` });
    throw error;
  }
  const matchmaking = resolveMatchmaking(input.system, input.matchmaking);
  return ladderFromRow({
    id: input.id,
    system: input.system,
    options,
    settings: { standings: input.standings ?? {}, matchmaking, ...(input.season !== undefined ? { season: input.season } : {}) },
    public: input.public ?? false,
    created_at: Date.now(),
    incarnation: 0,
  });
}

export class Ladders {
  private readonly cache = new Map<string, { ladder: Ladder; until: number }>();
  constructor(readonly db: Database) {}

  async create(input: CreateLadderInput): Promise<Ladder> {
    const ladder = checkLadder(input);
    const incarnation = await insertLadder(this.db, {
      id: ladder.id,
      system: ladder.system,
      options: ladder.options,
      settings: ladder.settings,
      public: ladder.public,
      created_at: ladder.createdAt,
    });
    if (incarnation === undefined) throw new ConflictError(`ladder ${JSON.stringify(ladder.id)} already exists`, 'id');
    const created = { ...ladder, incarnation };
    this.remember(created);
    return created;
  }

  private remember(ladder: Ladder): void {
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(ladder.id, { ladder, until: Date.now() + CACHE_MS });
  }

  /** Drops a cached definition (after this instance changed it). */
  forget(id: string): void {
    this.cache.delete(id);
  }

  /**
   * Changes a ladder's definition. Rating options can change only while the
   * ladder has no matches (ratings already given were computed with the old
   * ones): else ConflictError naming `options`.
   */
  async update(
    id: string,
    change: {
      public?: boolean;
      standings?: LeaderboardOptions;
      /** `ruleSet: null` removes the rule set. */
      matchmaking?: Partial<Omit<MatchmakingSettings, 'ruleSet' | 'attributesFromLadder'>> & {
        ruleSet?: Record<string, unknown> | null;
        attributesFromLadder?: Record<string, LadderAttributeSource> | null;
      };
      options?: Record<string, unknown>;
    },
  ): Promise<Ladder> {
    const updated = await this.db.transaction(async (tx) => {
      const head = await lockLadder(tx, id);
      if (!head) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
      const current = ladderFromRow((await findLadder(tx, id))!);
      if (change.options !== undefined && head.nextSeq > 1) {
        throw new ConflictError(`ladder ${id} has rated matches; its rating options can change only while it has none (create a new ladder instead)`, 'options');
      }
      const { ruleSet, attributesFromLadder, ...rest } = change.matchmaking ?? {};
      const matchmaking: MatchmakingInput = { ...current.matchmaking, ...rest };
      if (ruleSet === null) delete matchmaking.ruleSet;
      else if (ruleSet !== undefined) matchmaking.ruleSet = ruleSet;
      if (attributesFromLadder === null) delete matchmaking.attributesFromLadder;
      else if (attributesFromLadder !== undefined) matchmaking.attributesFromLadder = attributesFromLadder;
      const next = checkLadder({
        id,
        system: current.system,
        options: change.options ?? current.options,
        public: change.public ?? current.public,
        standings: change.standings ?? current.standings,
        matchmaking,
        ...(current.settings.season !== undefined ? { season: current.season } : {}),
      });
      const settings = { ...current.settings, standings: next.standings, matchmaking: next.matchmaking };
      await updateLadder(tx, id, { options: next.options, settings, public: next.public });
      return ladderFromRow({ id, system: current.system, options: next.options, settings, public: next.public, created_at: current.createdAt, incarnation: current.incarnation });
    });
    this.remember(updated);
    return updated;
  }

  /** Deletes a ladder and all its data. */
  async remove(id: string): Promise<void> {
    const deleted = await this.db.transaction((tx) => deleteLadder(tx, id));
    this.cache.delete(id);
    if (!deleted) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
  }

  /** The ladder, or NotFoundError. */
  async get(id: string, db: Queryable = this.db): Promise<Ladder> {
    const cached = this.cache.get(id);
    if (cached && cached.until > Date.now()) return cached.ladder;
    const row = await findLadder(db, id);
    if (!row) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
    const ladder = ladderFromRow(row);
    this.remember(ladder);
    return ladder;
  }

  /**
   * The definition as stored now, read through `db` (a transaction holding the ladder's lock), and
   * cached: a writer found the one it had was of an earlier incarnation. Undefined when there is none.
   */
  async reload(id: string, db: Queryable): Promise<Ladder | undefined> {
    const row = await findLadder(db, id);
    if (!row) {
      this.cache.delete(id);
      return undefined;
    }
    const ladder = ladderFromRow(row);
    this.remember(ladder);
    return ladder;
  }

  async list(): Promise<Array<Ladder & LadderCounts>> {
    return (await listLadders(this.db)).map(({ counts, ...row }) => ({ ...ladderFromRow(row), ...counts }));
  }

  async counts(id: string): Promise<LadderCounts> {
    const counts = await ladderCounts(this.db, id);
    if (!counts) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
    return counts;
  }
}

export function ladderJson(ladder: Ladder, counts: { players: number; matches: number }) {
  return {
    id: ladder.id,
    system: ladder.system,
    options: ladder.options,
    resolvedOptions: ladder.rating.options,
    public: ladder.public,
    standings: ladder.resolvedStandings,
    matchmaking: ladder.matchmaking,
    season: ladder.season,
    players: counts.players,
    matches: counts.matches,
    createdAt: new Date(ladder.createdAt).toISOString(),
  };
}
