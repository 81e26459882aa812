/**
 * Ladder definitions: which rating system, its options, standings and
 * matchmaking settings, and whether reads are public. Definitions never
 * change after creation, so each instance caches them.
 */
import { InvalidInputError } from '../core/errors.js';
import { createSystem, type RatingSystem, type SystemName } from '../core/systems.js';
import { type FilterDefaults, type MatchmakerOptions, type PlayerFilter, type ResolvedWidening, resolveWidening, type WideningOptions } from '../matchmaking/index.js';
import { resolveFilterDefaults } from '../matchmaking/ticket.js';
import { type LeaderboardOptions, resolveLeaderboardOptions, type ResolvedLeaderboardOptions } from '../standings/index.js';
import type { Database, Queryable } from '../store/database.js';
import { findLadder, insertLadder, type LadderCounts, ladderCounts, type LadderRow, listLadders } from '../store/ladders.js';
import { ConflictError, NotFoundError } from './errors/index.js';

export interface MatchmakingSettings {
  /** Players per team. @default 6 for teamrank, else 1 */
  teamSize: number;
  /** Teams per match. @default 2 */
  teams: number;
  /** Loose-filter widening schedule. @default {steps: [5, 10, 20, 50, 100], everySeconds: 30} */
  widening: ResolvedWidening;
  /** Filter values for players whose ticket sends none. @default {within: 10, strict: false, maxPing: 150} */
  filterDefaults: PlayerFilter;
  /** Candidate tickets a pass examines per anchor and region. @default 256 */
  maxCandidates: number;
}

/** Matchmaking settings as a ladder definition gives them (any field may be left out). */
export interface MatchmakingInput {
  teamSize?: number;
  teams?: number;
  widening?: WideningOptions;
  filterDefaults?: FilterDefaults;
  maxCandidates?: number;
}

const MAX_CANDIDATES_DEFAULT = 256;

/**
 * Complete settings from what a definition gives (or a row stored before
 * the widening, filter and candidate settings existed). Throws
 * InvalidInputError naming the field under `matchmaking`.
 */
export function resolveMatchmaking(system: string, input: MatchmakingInput = {}): MatchmakingSettings {
  const settings: MatchmakingSettings = {
    teamSize: input.teamSize ?? (system === 'teamrank' ? 6 : 1),
    teams: input.teams ?? 2,
    widening: { steps: [], everySeconds: 0 },
    filterDefaults: resolveFilterDefaults(input.filterDefaults),
    maxCandidates: input.maxCandidates ?? MAX_CANDIDATES_DEFAULT,
  };
  for (const field of ['teamSize', 'maxCandidates'] as const) {
    if (!Number.isInteger(settings[field]) || settings[field] < 1) throw new InvalidInputError(`must be a positive integer, got ${settings[field]}`, { field: `matchmaking.${field}` });
  }
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

/** What the ladder's matchmaker is built with. */
export function matchmakerOptions(settings: MatchmakingSettings): MatchmakerOptions {
  return { teamSize: settings.teamSize, widening: settings.widening, filterDefaults: settings.filterDefaults, maxCandidates: settings.maxCandidates };
}

export interface Ladder {
  id: string;
  system: SystemName;
  /** Options as given (defaults not filled in), as stored. */
  options: Record<string, unknown>;
  public: boolean;
  createdAt: number;
  standings: LeaderboardOptions;
  matchmaking: MatchmakingSettings;
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
}

function build(row: LadderRow): Ladder {
  const settings = row.settings as { standings?: LeaderboardOptions; matchmaking?: MatchmakingInput };
  const standings = settings.standings ?? {};
  const system = row.system as SystemName;
  return {
    id: row.id,
    system,
    options: row.options,
    public: row.public,
    createdAt: row.created_at,
    standings,
    // Stored complete since the widening, filter and candidate settings exist; older rows hold team size and teams only.
    matchmaking: resolveMatchmaking(system, settings.matchmaking),
    rating: createSystem(system, row.options),
    resolvedStandings: resolveLeaderboardOptions(standings),
  };
}

/** Checks a ladder definition completely (system options included) before anything is stored. */
export function checkLadder(input: CreateLadderInput): Ladder {
  const options = input.options ?? {};
  let system: RatingSystem;
  try {
    system = createSystem(input.system, options);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.detail, { field: error.field === undefined ? 'options' : `options.${error.field}` });
    throw error;
  }
  for (const key of Object.keys(options)) {
    // Own keys only: `constructor` or `hasOwnProperty` are names on every object's prototype, not options.
    if (!Object.hasOwn(system.options, key)) {
      throw new InvalidInputError(`unknown option for ${input.system}; known: ${Object.keys(system.options).join(', ')}`, { field: `options.${key}` });
    }
  }
  try {
    resolveLeaderboardOptions(input.standings ?? {});
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.detail, { field: error.field === undefined ? 'standings' : `standings.${error.field}` });
    throw error;
  }
  const matchmaking = resolveMatchmaking(input.system, input.matchmaking);
  return build({ id: input.id, system: input.system, options, settings: { standings: input.standings ?? {}, matchmaking }, public: input.public ?? false, created_at: Date.now() });
}

export class Ladders {
  private readonly cache = new Map<string, Ladder>();
  constructor(private readonly db: Database) {}

  async create(input: CreateLadderInput): Promise<Ladder> {
    const ladder = checkLadder(input);
    const inserted = await insertLadder(this.db, {
      id: ladder.id,
      system: ladder.system,
      options: ladder.options,
      settings: { standings: ladder.standings, matchmaking: ladder.matchmaking },
      public: ladder.public,
      created_at: ladder.createdAt,
    });
    if (!inserted) throw new ConflictError(`ladder ${JSON.stringify(ladder.id)} already exists`, 'id');
    this.cache.set(ladder.id, ladder);
    return ladder;
  }

  /** The ladder, or NotFoundError. */
  async get(id: string, db: Queryable = this.db): Promise<Ladder> {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const row = await findLadder(db, id);
    if (!row) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
    const ladder = build(row);
    this.cache.set(id, ladder);
    return ladder;
  }

  async list(): Promise<Array<Ladder & LadderCounts>> {
    return (await listLadders(this.db)).map(({ counts, ...row }) => ({ ...build(row), ...counts }));
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
    players: counts.players,
    matches: counts.matches,
    createdAt: new Date(ladder.createdAt).toISOString(),
  };
}
