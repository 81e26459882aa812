/**
 * Response schemas: what every operation answers. The same zod objects go
 * into /openapi.json (so generated clients get real types) and are checked
 * against live answers in the tests (test/service/openapi.test.ts), so the
 * document cannot drift from the server.
 */
import { z } from 'zod';
import { CAPABILITY_MEANINGS } from 'ladder-core/core/descriptor.js';
import type { OptionSpec } from 'ladder-core/core/options.js';
import type { PairEntry, QuitEntry, ResultsEntry } from 'ladder-core/integrity';
import type { MatchQuality } from 'ladder-core/matchmaking';
import type { RegisteredDescriptor } from 'ladder-core/core/registry.js';
import type { TeamRankOutcome } from 'ladder-core/core/teamrank.js';
import type { ladderJson } from './ladders.js';
import type { SeasonReset } from './seasons.js';
import { HOSTED_SYSTEMS } from './systems.js';

export const errorResponse = z.object({ error: z.object({ code: z.string(), message: z.string(), field: z.string().optional(), reason: z.string().optional() }) });

const isoTime = z.string().describe('ISO 8601 time');

export const healthResponse = z.object({ ok: z.literal(true) });

export const apiKeyResponse = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(['admin', 'correct', 'write', 'read'])),
  ladders: z.array(z.string()).nullable().describe('The ladders the key may act on; null: every ladder.'),
  createdAt: isoTime,
  revokedAt: isoTime.nullable(),
});
export const createdKeyResponse = apiKeyResponse.extend({ key: z.string().describe('The key itself, shown only in this answer.') });
export const keyListResponse = z.object({ keys: z.array(apiKeyResponse) });

/** One rating option's value as a ladder answers it (the request schema in systems.ts also carries its range). */
function optionValue(spec: OptionSpec): z.ZodType {
  const described = (schema: z.ZodType) => schema.describe(`${spec.description}. Default ${JSON.stringify(spec.default)}.`);
  switch (spec.type) {
    case 'number':
      return described(spec.integer ? z.number().int() : z.number());
    case 'choice':
      return described(z.enum(spec.values as [string, ...string[]]));
    case 'boolean':
      return described(z.boolean());
  }
}

/** A system's options: as given (each optional) or resolved (each present), read from its descriptor. */
function optionsOf(descriptor: RegisteredDescriptor, resolved: boolean) {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, spec] of Object.entries(descriptor.options)) shape[name] = resolved ? optionValue(spec) : optionValue(spec).optional();
  return z.object(shape);
}

const standingsResponse = z
  .object({
    windowMs: z.number().describe('A player is ranked while their last match is at most this old (ms).'),
    placementMatches: z.number().int().describe('Matches before a player is ranked.'),
    countPlacementPlayers: z.boolean().describe('Whether players still in placement count in percentiles.'),
    divisions: z.array(z.object({ name: z.string(), minPercentile: z.number().describe('Lowest percentile in the division (inclusive).') })),
  })
  .describe('The standings settings in force, defaults filled in.');

const matchmakingResponse = z
  .object({
    teamSize: z.number().int(),
    teams: z.number().int(),
    widening: z.object({ steps: z.array(z.number()), everySeconds: z.number() }).describe('Widths (percentiles) a loose filter widens through, one step every `everySeconds`.'),
    filterDefaults: z.object({ within: z.number(), strict: z.boolean(), maxPing: z.number() }).describe('Filter values for players whose ticket sends none.'),
    maxCandidates: z.number().int(),
    ticketTtlSeconds: z.number(),
    backfillTtlSeconds: z.number(),
    maxWaiting: z.number().int(),
    maxWaitingPerKey: z.number().int(),
    regions: z.array(z.string()).optional().describe('The regions the queue accepts; absent: any.'),
    ruleSet: z.record(z.string(), z.unknown()).optional().describe('The FlexMatch rule set the queue forms matches by, as given; absent: team size and percentile ranges.'),
    attributesFromLadder: z
      .record(z.string(), z.enum(['rating', 'percentile']))
      .optional()
      .describe("Rule-set queues: attributes the ladder fills in at intake from the player's stored rating or percentile (a ticket may not send them)."),
  })
  .describe("Settings of the ladder's matchmaker in force, defaults filled in (see docs/MATCHMAKING.md).");

/** A ladder of one system: `options` and `resolvedOptions` are that system's. */
const ladderOf = (descriptor: RegisteredDescriptor) =>
  z.object({
    id: z.string(),
    system: z.literal(descriptor.name),
    options: optionsOf(descriptor, false).describe(`Rating options of ${descriptor.label} as given (defaults not filled in).`),
    resolvedOptions: optionsOf(descriptor, true).describe(`Every rating option of ${descriptor.label}, defaults filled in.`),
    public: z.boolean(),
    standings: standingsResponse,
    matchmaking: matchmakingResponse,
    season: z.string().describe("Name of the first season (the ladder definition's `season`)."),
    players: z.number().int(),
    matches: z.number().int(),
    createdAt: isoTime,
  });
const [firstLadder, ...otherLadders] = HOSTED_SYSTEMS.map(ladderOf);
/** A ladder, told apart by `system`. */
export const ladderResponse = z.discriminatedUnion('system', [firstLadder!, ...otherLadders]);
export const ladderListResponse = z.object({ ladders: z.array(ladderResponse) });

export const playerStateResponse = z.object({ rating: z.number(), rd: z.number().optional(), volatility: z.number().optional(), matches: z.number().int() });

/** Team rank's outcomes, checked against the core's type: a new outcome fails to compile here. */
const TEAM_RANK_OUTCOMES = ['win', 'loss', 'draw', 'quit', 'walkover'] as const satisfies readonly TeamRankOutcome[];
type MissingOutcome = Exclude<TeamRankOutcome, (typeof TEAM_RANK_OUTCOMES)[number]>;
const everyOutcome: [MissingOutcome] extends [never] ? true : MissingOutcome = true;
void everyOutcome;

/**
 * The terms that moved a rating (packages/core/src/core/rating-system.ts, PlayerChange):
 * which keys appear depends on the ladder's system, so each is optional.
 * The systems' `dashboard.terms` columns are all among them (checked in
 * test/service/openapi.test.ts).
 */
export const termsResponse = z
  .object({
    score: z.number().optional().describe("Elo, Glicko-2, World vs World: what happened (1 win, ½ draw, 0 loss; the mean over a round's battles)."),
    expected: z.number().optional().describe('Elo, Glicko-2, World vs World: the chance of winning the ratings gave before the match.'),
    surprise: z.number().optional().describe('Elo, Glicko-2, World vs World: score − expected.'),
    idlePeriods: z.number().optional().describe('Glicko-2, World vs World: rating periods the player sat out before this match.'),
    rdBeforeMatch: z.number().optional().describe('Glicko-2, World vs World: the RD the match was rated from, after idle growth.'),
    outcome: z.enum(TEAM_RANK_OUTCOMES).optional().describe('Team rank: how the match counted for the player.'),
    averageModifier: z.number().optional().describe('Team rank: the average-rank modifier.'),
    quitterModifier: z.number().optional().describe('Team rank: the quitter modifier.'),
    change: z.number().optional().describe('Whole-history rating: after − before.'),
  })
  .describe("Why the rating moved; the keys are the ladder's system's (GET /v1/systems: `dashboard.terms`).");

const ratingChange = z.object({ id: z.string(), team: z.number().int(), before: playerStateResponse, after: playerStateResponse, terms: termsResponse });

export const ratedMatchResponse = z.object({
  match: z.object({ id: z.string(), seq: z.number().int(), at: isoTime }),
  winProbability: z.array(z.number()),
  players: z.array(ratingChange),
});

/** The keyset cursor of the next page, or null on the last page. */
const nextCursor = (items: string) =>
  z
    .number()
    .int()
    .nullable()
    .describe(`The \`seq\` of this page's last ${items}: send it as \`before\` for the next page (which costs what the first does); null when no ${items} follows.`);

export const matchListResponse = z.object({
  next: nextCursor('match'),
  matches: z.array(
    z.object({
      id: z.string(),
      seq: z.number().int(),
      at: isoTime.nullable(),
      round: z.string().optional(),
      context: z.string().optional().describe('Where or how the match was played (a map, a mode, a level), as posted.'),
      teams: z.array(z.object({ players: z.array(z.string()), rank: z.number().optional(), score: z.number().optional(), quitters: z.array(z.string()).optional() })),
      winProbability: z.array(z.number()).nullable(),
      void: z.object({ at: isoTime, reason: z.string() }).optional().describe('Present when the match was voided: it stays listed and never counts.'),
    }),
  ),
});

const standing = {
  rank: z.number().int().nullable(),
  percentile: z.number().int().nullable(),
  division: z.string().nullable(),
  placementRemaining: z.number().int(),
};

export const playerResponse = z.object({
  id: z.string(),
  rating: z.number(),
  rd: z.number().optional(),
  volatility: z.number().optional(),
  matches: z.number().int(),
  ...standing,
  lastAt: isoTime.nullable(),
  contexts: z
    .record(
      z.string(),
      z.object({
        offset: z.number(),
        rd: z.number().optional(),
        covariance: z
          .number()
          .optional()
          .describe(
            "The offset's covariance with the rating (rating points²), where they are estimated jointly: the variance in the context is rd² + offset rd² + 2 · covariance.",
          ),
        matches: z.number().int(),
      }),
    )
    .optional()
    .describe(
      'Per-context offsets, on ladders whose system has them switched on: skill in a context is `rating` + its `offset` (a context not listed: 0). Absent when the player has none.',
    ),
});

export const historyResponse = z.object({
  player: z.string(),
  history: z.array(
    z.object({
      matchId: z.string(),
      seq: z.number().int(),
      at: isoTime.nullable(),
      team: z.number().int(),
      result: z.enum(['win', 'loss', 'draw']),
      before: playerStateResponse,
      after: playerStateResponse,
      terms: termsResponse,
      teams: z.array(z.array(z.string())),
      void: z.boolean().optional().describe('True when the match was voided: this change no longer counts.'),
    }),
  ),
  next: nextCursor('entry'),
});

export const leaderboardResponse = z.object({
  total: z.number().int().describe('Ranked players in all (with `search`: every player whose id starts with it).'),
  offset: z.number().int().describe('Offset of this page (with `around`: the page centred on the player).'),
  limit: z.number().int(),
  entries: z.array(z.object({ id: z.string(), rating: z.number(), rd: z.number().optional(), matches: z.number().int(), ...standing })),
});

export const ratedRoundResponse = z.object({
  round: z.string(),
  matches: z.array(z.object({ id: z.string(), seq: z.number().int(), at: isoTime })),
  ratings: z.array(z.object({ id: z.string(), before: playerStateResponse, after: playerStateResponse, terms: termsResponse })),
  groups: z.array(z.array(z.string())),
});

export const roundListResponse = z.object({
  rounds: z.array(
    z.object({
      round: z.string(),
      at: isoTime,
      groups: z.array(z.array(z.string())),
      matches: z.array(z.object({ id: z.string(), worlds: z.record(z.string(), z.number()), shares: z.record(z.string(), z.number()) })),
      ratings: z.record(z.string(), z.object({ rating: z.number(), rd: z.number().optional() })),
    }),
  ),
});

const recentMatch = z.object({
  matchId: z.string(),
  region: z.string(),
  teams: z.array(z.array(z.string())),
  players: z.array(z.array(z.string())),
  winProbability: z.number().nullable(),
  waitSeconds: z.object({ p50: z.number(), max: z.number() }),
  quality: z
    .object({
      averages: z.array(z.number()).describe('Average rank (rating, or percentile when none) of each team.'),
      balance: z.number().describe('Larger team average ÷ smaller (at least 1).'),
      percentileSpread: z.number().describe('Highest minus lowest percentile among the players.'),
      worstPing: z.number().describe('Worst ping of any player in the chosen region (ms).'),
      wideningStep: z.number().int().describe('Largest widening step any ticket in the match had reached (0: its own filters).'),
      waits: z.array(z.array(z.number())).describe('Seconds each ticket waited, per team.'),
    })
    .optional()
    .describe('Of a match the team-rank matchmaker formed; a backfill and a rule-set match have none.'),
  teamNames: z.array(z.string()).optional().describe("Rule-set queues: the rule set's team names, aligned with `teams`."),
  roles: z.record(z.string(), z.string()).optional().describe('Rule-set queues with role slots: player id → role.'),
  backfill: z.string().optional().describe("Set when this is a backfill's fill: the backfill's id (`matchId` is its match, `teams` the tickets added now per team)."),
  at: isoTime,
});

export const ticketResponse = z.object({
  id: z.string(),
  ladder: z.string(),
  status: z.enum(['waiting', 'matched', 'cancelled', 'expired']),
  mode: z.string().optional(),
  players: z.array(z.string()),
  createdAt: isoTime,
  waitedSeconds: z.number(),
  match: z
    .object({
      id: z.string(),
      region: z.string(),
      team: z.number().int(),
      teams: z.array(z.array(z.string())).describe('Ticket ids per team (for a backfill: the tickets it added).'),
      players: z.array(z.array(z.string())),
      teamNames: z.array(z.string()).optional().describe("Rule-set queues: the rule set's team names, aligned with `teams`."),
      roles: z.record(z.string(), z.string()).optional().describe('Rule-set queues with role slots: player id → role.'),
      at: isoTime,
      backfill: z.string().optional().describe('Set when the ticket filled a backfill: its id (`id` is then the backfill’s match).'),
    })
    .optional(),
  why: z
    .object({
      rule: z.string().describe('The rule that most often kept the ticket out of candidate matches ("minPlayers" when too few tickets fitted at all).'),
      passAt: isoTime.describe('When the pass that saw it ran.'),
    })
    .nullable()
    .optional()
    .describe(
      'Read of a waiting ticket of a rule-set queue: why it still waits, as of the last pass. Null until a pass has run since the ticket was first asked about (asking marks it; the matchmaker answers within about a second).',
    ),
});
export const createdTicketResponse = z.object({ ticket: ticketResponse });
export const cancelledTicketResponse = z.object({ id: z.string(), status: z.enum(['waiting', 'matched', 'cancelled', 'expired']) });

export const backfillResponse = z.object({
  id: z.string(),
  ladder: z.string(),
  status: z.enum(['waiting', 'filled', 'cancelled', 'expired']),
  match: z.string(),
  declared: z.boolean().describe("The game server formed the match itself (else the ladder's matchmaker formed it)."),
  region: z.string(),
  teams: z.array(z.array(z.string())).describe("The match's players per team now: those it was opened with, then the newcomers."),
  open: z.array(z.number().int()).describe('Slots still open per team.'),
  teamNames: z.array(z.string()).optional().describe("Rule-set ladders: the rule set's team names, aligned with `teams`."),
  roles: z.record(z.string(), z.string()).optional().describe('Rule-set ladders with role slots: player id → role, as of the last fill.'),
  added: z
    .array(z.object({ ticket: z.string(), team: z.number().int(), players: z.array(z.string()), at: isoTime }))
    .describe('Tickets added, in the order they joined, each with its team index.'),
  createdAt: isoTime,
  endedAt: isoTime.optional().describe('When it was filled, cancelled or expired.'),
});
export const cancelledBackfillResponse = z.object({ id: z.string(), status: z.enum(['waiting', 'filled', 'cancelled', 'expired']) });

export const queueResponse = z.object({
  waiting: z.number().int(),
  byRegion: z.record(z.string(), z.number().int()),
  byBand: z.array(z.object({ band: z.string(), count: z.number().int() })),
  waitSeconds: z.object({ mean: z.number(), max: z.number() }).describe('Of the tickets waiting now: the mean and the longest wait so far, in seconds (0 when none waits).'),
  recent: z.array(recentMatch),
  whyWaiting: z
    .object({
      passAt: isoTime.describe('When the last pass ran.'),
      heldBy: z.record(z.string(), z.number().int()).describe('Rule name → waiting tickets it kept out of candidate matches most often in that pass, most first.'),
    })
    .nullable()
    .optional()
    .describe('Rule-set queues: what held the waiting tickets in the last pass (null before the first).'),
});

export const performanceResponse = z.object({
  algo400: z.number(),
  maxLikelihood: z.number(),
  netzero: z.number(),
  netzeroUnordered: z.number(),
  clamped: z
    .enum(['above', 'below'])
    .nullable()
    .describe(
      '"above" when every game of positive weight is a win: maxLikelihood and both netzeros are then stand-ins at least the best opponent + 800; "below" for only losses; null otherwise.',
    ),
  path: z.array(z.number()),
});

export const correctionResponse = z.object({
  match: z.object({ id: z.string(), seq: z.number().int(), void: z.boolean() }),
  changed: z.boolean().describe('False when nothing changed (a match voided twice).'),
  rerated: z.number().int().describe('Later matches rated again.'),
  players: z.array(z.object({ id: z.string(), before: playerStateResponse.nullable(), after: playerStateResponse.nullable() })),
});

const seasonReset = z
  .object({
    toward: z.number().optional().describe("Default: the system's starting rating."),
    keep: z.number().describe('Share of the distance from `toward` kept: 0 resets fully, 1 not at all.'),
    rd: z.number().optional().describe('RD floor for Glicko systems: RD → max(RD, rd).'),
    restartPlacement: z.boolean().optional().describe('Players play their placement matches again.'),
  })
  .describe('The soft reset the season opened with; absent on the first season.');
const seasonResponse = z.object({ number: z.number().int(), name: z.string(), startedAt: isoTime, closedAt: isoTime.nullable(), reset: seasonReset.optional() });
export const seasonListResponse = z.object({ seasons: z.array(seasonResponse) });
export const openedSeasonResponse = z.object({ closed: seasonResponse, opened: seasonResponse, players: z.number().int() });
const frozenStanding = z.object({
  position: z.number().int(),
  id: z.string(),
  rank: z.number().int().nullable(),
  rating: z.number(),
  rd: z.number().nullable(),
  percentile: z.number().int().nullable(),
  division: z.string().nullable(),
  matches: z.number().int(),
});
export const seasonLeaderboardResponse = z.object({
  season: z.string(),
  total: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
  entries: z.array(frozenStanding),
});
export const seasonPlayerResponse = frozenStanding.extend({ season: z.string() });

export const predictionResponse = z.object({ probabilities: z.array(z.number()).describe('Each team’s chance of winning (two teams: draws count half).') });
export const deletedLadderResponse = z.object({ id: z.string(), deleted: z.literal(true) });

export const balanceResponse = z.object({
  teams: z.array(z.array(z.string())),
  probabilities: z.array(z.number()),
  imbalance: z.number().describe('Largest distance of a team’s win probability from 1/teams; 0 is perfectly even.'),
  exact: z
    .boolean()
    .describe('Every split was tried (up to 16 players, within the search deadline); otherwise the best split the local-search heuristic of docs/MATCHMAKING.md found by then.'),
});

/** One entry of the integrity report (packages/core/src/integrity/report.ts: PairEntry, QuitEntry, ResultsEntry). */
const integrityEvidence = {
  z: z.number(),
  p: z.number(),
  q: z.number().describe('Benjamini–Hochberg adjusted p-value.'),
  tested: z.number().int(),
};
const integrityEntry = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('pair'),
    players: z.array(z.string()).describe('The two players.'),
    score: z.number().describe('−log10 of the adjusted p-value; higher is more suspicious.'),
    pattern: z.enum(['alternating', 'one-sided']),
    evidence: z.object({
      meetings: z.number().int(),
      expectedMeetings: z.number(),
      meetingZ: z.number(),
      meetingP: z.number(),
      results: z.string().describe('Results of players[0] against players[1] in log order: W, L or D.'),
      wins: z.array(z.number().int()),
      draws: z.number().int(),
      runs: z.number().int(),
      expectedRuns: z.number(),
      runsZ: z.number(),
      alternationP: z.number(),
      expectedWinShare: z.number(),
      winZ: z.number(),
      oneSidedP: z.number(),
      patternP: z.number(),
      q: integrityEvidence.q,
      tested: integrityEvidence.tested,
    }),
  }),
  z.object({
    kind: z.literal('quits'),
    player: z.string(),
    score: z.number(),
    evidence: z.object({ matches: z.number().int(), quits: z.number().int(), expectedQuits: z.number(), populationRate: z.number(), ...integrityEvidence }),
  }),
  z.object({
    kind: z.literal('results'),
    player: z.string(),
    score: z.number(),
    evidence: z.object({
      matches: z.number().int(),
      decisive: z.number().int(),
      wins: z.number().int(),
      expectedWins: z.number(),
      ...integrityEvidence,
      longestWinStreak: z.number().int(),
      distinctOpponents: z.number().int(),
      topOpponent: z.string().nullable(),
      topOpponentShare: z.number(),
    }),
  }),
]);

export const integrityResponse = z.object({
  matches: z.number().int(),
  players: z.number().int(),
  quitRate: z.number(),
  tested: z.object({ pairs: z.number().int(), players: z.number().int() }),
  entries: z.array(integrityEntry).describe('Most suspicious first, each with its evidence (docs/INTEGRITY.md).'),
});

const optionDescription = z.object({
  name: z.string(),
  type: z.enum(['number', 'choice', 'boolean']),
  default: z.union([z.number(), z.string(), z.boolean()]),
  description: z.string(),
  min: z.number().optional(),
  exclusiveMin: z.boolean().optional().describe('`min` itself is refused.'),
  max: z.number().optional(),
  integer: z.boolean().optional(),
  values: z.array(z.string()).optional().describe('The allowed values of a `choice`.'),
});

/** One rating system: every field read from the core's registry. */
export const systemResponse = z.object({
  name: z.string().describe('The name ladder definitions use (`system`).'),
  label: z.string(),
  summary: z.string(),
  ladders: z.boolean().describe('A ladder may use it (every system; a whole-history one is kept in the memory of the writer, see docs/SERVICE.md).'),
  options: z.array(optionDescription).describe("Its options (a ladder's `options`), with defaults and ranges."),
  capabilities: z.object(
    Object.fromEntries(Object.entries(CAPABILITY_MEANINGS).map(([name, meaning]) => [name, z.boolean().describe(meaning)])) as Record<
      keyof typeof CAPABILITY_MEANINGS,
      z.ZodBoolean
    >,
  ),
  display: z.object({
    quantity: z
      .enum(['rating'])
      .describe("What the number is called: `rating` for every system, team rank's included (its former `rank` is no longer sent; `rank` is a leaderboard position)."),
    decimals: z.number().int().describe('Decimals shown.'),
    scale: z.enum(['elo', 'glicko', 'multiplicative']).describe("What a difference means: Elo's 400 points for odds of 10, Glicko-2's scale, or ranks as odds."),
  }),
  fit: z
    .object({
      parameters: z.array(z.object({ name: z.string(), min: z.number(), max: z.number(), scale: z.enum(['log', 'linear']).optional(), initial: z.number().optional() })),
      byDefault: z.array(z.string()),
    })
    .describe('What `ladder fit` may tune, and tunes by default.'),
  dashboard: z.object({
    terms: z
      .array(z.object({ key: z.string(), label: z.string(), format: z.enum(['number', 'signed', 'text']), digits: z.number().int().optional() }))
      .describe("Columns of a rating change's `terms` worth showing."),
    explanation: z.string(),
    mixedResult: z.object({ win: z.string(), loss: z.string() }).optional().describe('Notes for a win that lost rating and a loss that gained it.'),
    performanceRuns: z.boolean().describe("`terms.expected` is a win chance on Elo's 400-point scale."),
  }),
  ladder: z.object({ teamSize: z.number().int().describe('Players per team the matchmaker forms by default.') }),
  limits: z
    .object({
      teams: z.number().int().describe('Teams per match at most.'),
      playersPerTeam: z.number().int().describe('Players per team at most.'),
      players: z.number().int().describe('Players per match at most, all teams together.'),
    })
    .describe(
      'Bounds on one match of a ladder of this system (a match beyond them is a 400 naming `teams` or `teams[i].players`); they keep the cost of rating one match bounded.',
    ),
});
export const systemListResponse = z.object({ systems: z.array(systemResponse) });

/**
 * Keys a value of type `Actual` may carry that `Declared` does not declare,
 * at any depth (never when there are none). The schemas are closed
 * (`additionalProperties: false`), so a field added to what the service
 * answers must be declared here too: the checks below stop the build.
 */
type Undeclared<Actual, Declared> = Actual extends readonly (infer Item)[]
  ? Declared extends readonly (infer DeclaredItem)[]
    ? Undeclared<Item, DeclaredItem>
    : never
  : Actual extends object
    ? { [K in keyof Actual]-?: K extends keyof Declared ? Undeclared<Actual[K], NonNullable<Declared[K]>> : K }[keyof Actual]
    : never;
/** True when `Actual` fits `Declared` and carries nothing undeclared; else the offending keys. */
type Declares<Declared, Actual> = [Undeclared<Actual, Declared>] extends [never] ? ([Actual] extends [Declared] ? true : 'does not fit') : Undeclared<Actual, Declared>;

type Output<T extends z.ZodType> = z.output<T>;
type DeclaredEntry<Kind> = Extract<Output<typeof integrityEntry>, { kind: Kind }>;
// A ladder's options are records in the Ladder type (each system's are declared per system above); the rest is checked.
const ladderFields: [Undeclared<Omit<ReturnType<typeof ladderJson>, 'options' | 'resolvedOptions'>, Omit<Output<typeof ladderResponse>, 'options' | 'resolvedOptions'>>] extends [
  never,
]
  ? true
  : false = true;
const responseTypes: [
  Declares<DeclaredEntry<'pair'>, PairEntry>,
  Declares<DeclaredEntry<'quits'>, QuitEntry>,
  Declares<DeclaredEntry<'results'>, ResultsEntry>,
  Declares<NonNullable<Output<typeof recentMatch>['quality']>, MatchQuality>,
  Declares<Output<typeof seasonReset>, SeasonReset>,
] = [true, true, true, true, true];
void ladderFields;
void responseTypes;
