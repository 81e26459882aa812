/**
 * Ladder definitions: which rating system, its options, standings and
 * matchmaking settings, and whether reads are public. Definitions never
 * change after creation, so each instance caches them.
 */
import { InvalidInputError } from '../core/errors.js';
import { createSystem, type RatingSystem, type SystemName } from '../core/systems.js';
import { type LeaderboardOptions, resolveLeaderboardOptions, type ResolvedLeaderboardOptions } from '../standings/index.js';
import type { Database, Queryable } from '../store/database.js';
import { NotFoundError, ConflictError } from './errors.js';

export interface MatchmakingSettings {
  /** Players per team. @default 6 for teamrank, else 1 */
  teamSize: number;
  /** Teams per match. @default 2 */
  teams: number;
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
  matchmaking?: Partial<MatchmakingSettings>;
}

function build(row: { id: string; system: SystemName; options: Record<string, unknown>; settings: { standings?: LeaderboardOptions; matchmaking?: MatchmakingSettings }; public: boolean; created_at: number }): Ladder {
  const standings = row.settings.standings ?? {};
  return {
    id: row.id,
    system: row.system,
    options: row.options,
    public: row.public,
    createdAt: row.created_at,
    standings,
    matchmaking: row.settings.matchmaking ?? { teamSize: row.system === 'teamrank' ? 6 : 1, teams: 2 },
    rating: createSystem(row.system, row.options),
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
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.message.replace(/^field [^:]+: /, ''), { field: `options.${error.field ?? ''}`.replace(/\.$/, '') });
    throw error;
  }
  for (const key of Object.keys(options)) {
    if (!(key in system.options)) {
      throw new InvalidInputError(`unknown option for ${input.system}; known: ${Object.keys(system.options).join(', ')}`, { field: `options.${key}` });
    }
  }
  try {
    resolveLeaderboardOptions(input.standings ?? {});
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.message.replace(/^field [^:]+: /, ''), { field: `standings.${error.field ?? ''}` });
    throw error;
  }
  const matchmaking: MatchmakingSettings = {
    teamSize: input.matchmaking?.teamSize ?? (input.system === 'teamrank' ? 6 : 1),
    teams: input.matchmaking?.teams ?? 2,
  };
  return build({ id: input.id, system: input.system, options, settings: { standings: input.standings ?? {}, matchmaking }, public: input.public ?? false, created_at: Date.now() });
}

export class Ladders {
  private readonly cache = new Map<string, Ladder>();
  constructor(private readonly db: Database) {}

  async create(input: CreateLadderInput): Promise<Ladder> {
    const ladder = checkLadder(input);
    const rows = await this.db.query(
      `INSERT INTO ladders (id, system, options, settings, public, created_at) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6)
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [ladder.id, ladder.system, JSON.stringify(ladder.options), JSON.stringify({ standings: ladder.standings, matchmaking: ladder.matchmaking }), ladder.public, ladder.createdAt],
    );
    if (rows.length === 0) throw new ConflictError(`ladder ${JSON.stringify(ladder.id)} already exists`, 'id');
    this.cache.set(ladder.id, ladder);
    return ladder;
  }

  /** The ladder, or NotFoundError. */
  async get(id: string, db: Queryable = this.db): Promise<Ladder> {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const rows = await db.query<Parameters<typeof build>[0]>('SELECT id, system, options, settings, public, created_at FROM ladders WHERE id = $1', [id]);
    if (rows.length === 0) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
    const ladder = build(rows[0]!);
    this.cache.set(id, ladder);
    return ladder;
  }

  async list(): Promise<Array<Ladder & { players: number; matches: number }>> {
    const rows = await this.db.query<Parameters<typeof build>[0] & { player_count: number; match_count: number }>(
      'SELECT id, system, options, settings, public, created_at, player_count, match_count FROM ladders ORDER BY id',
    );
    return rows.map((row) => ({ ...build(row), players: row.player_count, matches: row.match_count }));
  }

  async counts(id: string): Promise<{ players: number; matches: number; rounds: number }> {
    const rows = await this.db.query<{ player_count: number; match_count: number; round_count: number }>('SELECT player_count, match_count, round_count FROM ladders WHERE id = $1', [id]);
    if (rows.length === 0) throw new NotFoundError(`no ladder ${JSON.stringify(id.slice(0, 80))}`, 'ladder');
    return { players: rows[0]!.player_count, matches: rows[0]!.match_count, rounds: rows[0]!.round_count };
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
