/**
 * Request schemas. The same zod objects validate request bodies and generate
 * /openapi.json (z.toJSONSchema), so the documentation cannot drift from
 * what the server accepts. Semantic checks the shape cannot express (a
 * player on two teams, ranks vs scores) are left to the rating core's
 * parsers, which name the field the same way.
 */
import { z } from 'zod';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { identifierProblem, isIdentifier, MAX_ID_LENGTH } from 'ladder-core/core/ids.js';
import { contextProblem, MAX_CONTEXT_LENGTH } from 'ladder-core/core/match.js';
import type { RegisteredDescriptor, SystemName } from 'ladder-core/core/registry.js';
import { HOSTED_SYSTEMS, optionsSchemaOf } from './systems.js';

/** An identifier as the core defines it (packages/core/src/core/ids.ts): well-formed Unicode, no control characters, 1 to 200 characters. */
export const identifier = z
  .string()
  .min(1)
  .max(MAX_ID_LENGTH)
  .superRefine((value, ctx) => {
    const problem = identifierProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
const id = identifier;

/** A match's context (map, mode, level) as the core defines it (`contextProblem` in match.ts): an identifier of 1 to 64 characters without leading or trailing spaces. */
export const matchContext = z
  .string()
  .min(1)
  .max(MAX_CONTEXT_LENGTH)
  .superRefine((value, ctx) => {
    const problem = contextProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe(
    "Where or how the match is played (a map, a mode, a level). Systems with per-context offsets switched on (Elo's contextK, Glicko-2's contextRd, Whole-History Rating's contextPriorVariance) rate skill in it as rating + the player's offset for it; others ignore it.",
  );
const idOrNumber = z.union([id, z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)]);
const finiteNonNegative = z.number().min(0).max(1e15);

/** The systems a ladder may use, from the core registry. */
export const systemName = z.enum(HOSTED_SYSTEMS.map((d) => d.name) as [SystemName, ...SystemName[]]);

const division = z.object({ name: identifier.pipe(z.string().max(60)), minPercentile: z.number().min(1).max(100) }).strict();

export const standingsOptionsSchema = z
  .object({
    windowMs: z.number().positive().max(1e13).optional().describe('A player is ranked while their last match is at most this old. Default 30 days.'),
    placementMatches: z.number().int().min(0).max(1000).optional().describe('Matches before a player is ranked. Default 10.'),
    countPlacementPlayers: z.boolean().optional(),
    divisions: z.array(division).min(1).max(50).optional(),
  })
  .strict();

/** A FlexMatch rule set: checked by the rule-set parser, whose errors name the JSON path under `matchmaking.ruleSet`. */
const ruleSetSchema = z
  .record(z.string(), z.unknown())
  .describe(
    'A FlexMatch rule set (ruleLanguageVersion "1.0", plus role slots): the queue forms matches by it instead of by team size and percentile ranges (see docs/MATCHMAKING.md).',
  );

/** Rule-set queues: attributes the ladder fills in from its standings; checked against the rule set (400 naming `matchmaking.attributesFromLadder.<name>`). */
const attributesFromLadderSchema = z
  .record(z.string().max(100), z.enum(['rating', 'percentile']))
  .describe(
    "Rule-set queues: numeric player attributes the ladder fills in at intake, attribute name → `rating` (the player's stored rating; the system's initial rating for a player the standings do not list) or `percentile` (in the standings; 50 before placement). A ticket that sends one is refused (400 naming the attribute).",
  );

/** A ladder definition's fields besides `system` and `options`. */
const ladderFields = {
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit'),
  public: z.boolean().optional().describe('Anyone may read the leaderboard, players, history and rounds without a key. Default false.'),
  standings: standingsOptionsSchema.optional(),
  season: identifier.optional().describe('Name of the first season. Default "1".'),
  matchmaking: z
    .object({
      teamSize: z.number().int().min(1).max(16).optional(),
      teams: z.number().int().min(2).max(8).optional(),
      widening: z
        .object({
          steps: z.array(z.number().min(0).max(100)).max(20).optional().describe('Widths (percentiles) a loose filter widens through, increasing. Default [5, 10, 20, 50, 100].'),
          everySeconds: z.number().positive().max(86_400).optional().describe('Seconds of waiting between widening steps. Default 30.'),
        })
        .strict()
        .optional(),
      filterDefaults: z
        .object({
          within: z.number().min(0).max(100).optional().describe('Percentiles either side a player accepts. Default 10.'),
          strict: z.boolean().optional().describe('Strict filters never widen. Default false.'),
          maxPing: z.number().min(0).max(1e6).optional().describe('Highest ping (ms) accepted for the region of the match. Default 150.'),
        })
        .strict()
        .optional()
        .describe('Filter values for players whose ticket sends none.'),
      maxCandidates: z
        .number()
        .int()
        .min(1)
        .max(100_000)
        .optional()
        .describe('Candidate tickets a pass examines per anchor and region before giving up until the next pass. Default 256.'),
      ticketTtlSeconds: z.number().min(1).max(86_400).optional().describe('Seconds a ticket may wait before it expires (status `expired`). Default 600.'),
      backfillTtlSeconds: z.number().min(1).max(86_400).optional().describe('Seconds a backfill may stay open before it expires. Default 600.'),
      maxWaiting: z.number().int().min(1).max(10_000_000).optional().describe('Waiting tickets in the queue at most (past it: 429). Default 1,000,000.'),
      maxWaitingPerKey: z.number().int().min(1).max(10_000_000).optional().describe('Waiting tickets one API key may hold in the queue at most (past it: 429). Default 100,000.'),
      regions: z
        .array(identifier.pipe(z.string().max(40)))
        .min(1)
        .max(31)
        .optional()
        .describe('The regions the queue accepts: a ticket pinging another is refused (400). Absent: any region, at most 31 named by the waiting tickets at once.'),
      ruleSet: ruleSetSchema.optional(),
      attributesFromLadder: attributesFromLadderSchema.optional(),
    })
    .strict()
    .optional()
    .describe("Settings of the ladder's matchmaker (see docs/MATCHMAKING.md)."),
};

/**
 * A ladder definition: one schema per system a ladder may use, told apart
 * by `system`, each with that system's options (derived from the core's
 * option schema: types, ranges, allowed values).
 */
const ladderDefinitionOf = (descriptor: RegisteredDescriptor) =>
  z.object({ ...ladderFields, system: z.literal(descriptor.name), options: optionsSchemaOf(descriptor).optional() }).strict();
const [firstHosted, ...otherHosted] = HOSTED_SYSTEMS.map(ladderDefinitionOf);
export const createLadderSchema = z.discriminatedUnion('system', [firstHosted!, ...otherHosted]);

const matchPlayer = z.union([
  id,
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  z.object({ id: idOrNumber, seconds: finiteNonNegative.optional(), quit: z.boolean().optional() }).strict(),
]);

export const matchSchema = z
  .object({
    id: idOrNumber.optional(),
    at: z
      .union([z.string().max(40), z.number().min(0).max(8.64e15)])
      .optional()
      .describe(
        "ISO 8601 or epoch ms; the server receive time when absent. On a whole-history ladder with a `horizon`, a time on or before the ladder's last freeze is refused (400 naming `at`: that past is frozen).",
      ),
    period: idOrNumber.optional().describe('Accepted for compatibility with match files and ignored: the service rates each match as it arrives.'),
    weight: z.number().min(0).max(1e6).optional(),
    context: matchContext.optional(),
    teams: z
      .array(
        z
          .object({
            players: z.array(matchPlayer).min(1).max(64),
            rank: z.number().min(0).max(1e6).optional(),
            score: finiteNonNegative.optional(),
          })
          .strict(),
      )
      .min(2)
      .max(64),
  })
  .strict();

export const roundSchema = z
  .object({
    round: id.optional().describe('Name of the round, unique in the ladder; "r<number>" when absent.'),
    at: z.union([z.string().max(40), z.number().min(0).max(8.64e15)]).optional(),
    matches: z
      .array(
        z
          .object({
            id: id.optional(),
            worlds: z.record(id, finiteNonNegative).describe('World id → raw score of the round.'),
          })
          .strict(),
      )
      .min(1)
      .max(1000),
  })
  .strict();

/** A rule-set player's attributes: the four FlexMatch attribute types. */
const ruleSetAttributes = z.record(
  z.string().min(1).max(100),
  z.union([
    z.string().max(1000),
    z.number(),
    z.array(z.string().max(1000)).max(1000),
    z.record(z.string().max(1000), z.number()).refine((map) => Object.keys(map).length <= 1000, 'at most 1000 entries'),
  ]),
);
const ruleSetRoles = z.array(z.string().min(1).max(100)).max(32);

export const ticketSchema = z
  .object({
    id: id.optional(),
    mode: identifier.pipe(z.string().max(40)).optional(),
    players: z
      .array(
        z
          .object({
            id,
            percentile: z.number().min(1).max(100).optional().describe('Taken from the ladder when absent.'),
            rating: z.number().min(0).max(1e9).optional(),
            pings: z.record(identifier.pipe(z.string().max(40)), z.number().min(0).max(1e6)),
            filter: z
              .object({ within: z.number().min(0).max(100).optional(), strict: z.boolean().optional(), maxPing: z.number().min(0).max(1e6).optional() })
              .strict()
              .optional(),
            attributes: ruleSetAttributes.optional().describe("Rule-set queues: the player's attributes, as the rule set declares them (absent ones take its defaults)."),
            roles: ruleSetRoles.optional().describe('Rule-set queues with role slots: the roles the player accepts (none: any).'),
          })
          .strict(),
      )
      .min(1)
      .max(16),
  })
  .strict();

const playerFilterShape = {
  within: z.number().min(0).max(100).optional().describe('Percentiles either side the player accepts.'),
  strict: z.boolean().optional().describe('Strict filters never widen.'),
};

export const backfillSchema = z
  .object({
    id: id.optional().describe('A random UUID when absent.'),
    match: id.describe("The match in progress: the `matchId` of a match the ladder's matchmaker formed, or with `declared` the game server's own id."),
    declared: z
      .boolean()
      .optional()
      .describe(
        "true: `match` is a match the game server formed itself (not the matchmaker), with the players in `teams`. Default false: `match` must be a match this ladder's matchmaker formed (404 otherwise).",
      ),
    region: identifier.pipe(z.string().max(40)).describe('Region the match is hosted in: newcomers must be able to play there.'),
    teams: z
      .array(z.array(id).max(16))
      .min(1)
      .max(8)
      .describe('Player ids per team, as the match stands now (a team may be empty): at least two, or on a rule-set ladder one per team of the rule set.'),
    teamSize: z.number().int().min(1).max(16).optional().describe("Players each team should have. Default: the ladder's team size."),
    filter: z
      .object({ ...playerFilterShape, maxPing: z.number().min(0).max(1e6).optional().describe('Worst ping (ms) in the region a newcomer may have.') })
      .strict()
      .optional()
      .describe("Filter of the match's players (default: the ladder's filterDefaults), and the newcomers' ping limit."),
    teamNames: z
      .array(z.string().min(1).max(100))
      .max(8)
      .optional()
      .describe("Rule-set ladders: the rule set's team names (`NAME_1` … for a team with quantity), each once, in the order of `teams`. Default: the rule set's order."),
    players: z
      .record(
        id,
        z
          .object({
            percentile: z.number().min(1).max(100).optional(),
            rating: z.number().min(0).max(1e9).optional(),
            filter: z.object(playerFilterShape).strict().optional(),
            attributes: ruleSetAttributes
              .optional()
              .describe(
                "Rule-set ladders: the player's attributes, as the rule set declares them (absent ones take its defaults); not those the ladder fills in (`matchmaking.attributesFromLadder`: 400).",
              ),
            pings: z
              .record(identifier.pipe(z.string().max(40)), z.number().min(0).max(1e6))
              .optional()
              .describe("Rule-set ladders: the player's pings by region (required when the rule set has a latency rule)."),
            roles: ruleSetRoles.optional().describe('Rule-set ladders with role slots: the roles the player accepts; send the one they play to keep it.'),
          })
          .strict(),
      )
      .optional()
      .describe(
        "Per match player: percentile and rating (taken from the ladder when absent) and filter (the request's when absent); on a rule-set ladder, attributes, pings and roles instead of a filter.",
      ),
  })
  .strict();

export const performanceSchema = z
  .object({
    games: z
      .array(
        z
          .object({
            opponent: z.number().min(-1e6).max(1e6),
            result: z.enum(['win', 'loss', 'draw']),
            weight: z.number().min(0).max(1e6).optional(),
            opponentRd: z.number().positive().max(1e4).optional(),
          })
          .strict(),
      )
      .min(1)
      .max(5000),
    k: z.number().positive().max(1000).optional().describe('Elo K of the netzero replays and of `path`. Default 32.'),
  })
  .strict();

export const createKeySchema = z
  .object({
    name: identifier.pipe(z.string().max(100)),
    scopes: z
      .array(z.enum(['admin', 'correct', 'write', 'read']))
      .min(1)
      .max(4),
    ladders: z
      .array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a ladder id'))
      .min(1)
      .max(100)
      .optional()
      .describe('Limit the key to these ladders (403 on any other); absent: every ladder.'),
  })
  .strict();

export const pageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  offset: z.coerce.number().int().min(0).max(1e9).optional(),
});

/**
 * Deepest `offset` of a ladder's match list: the rows it skips are still
 * read (measured, 20,000 matches, limit 50, a loaded 2-core machine: offset
 * 5,000 about 40 ms on PostgreSQL and 100 ms on PGlite, holding its event
 * loop, against 5–10 ms for a first page), so past this the cursor `before`
 * pages on at the cost of a first page.
 */
export const MATCH_LIST_MAX_OFFSET = 5_000;
/**
 * Deepest `offset` of a player's history: every entry it skips is one step
 * of the walk (a primary-key lookup and a parse of that match's history;
 * measured as above, offset 1,000 about 50 ms on PostgreSQL and 130 ms on
 * PGlite against 18 and 55 ms for a first page, offset 10,000 300 and 600 ms),
 * so the cap is lower than the match list's; `before` pages on.
 */
export const HISTORY_MAX_OFFSET = 1_000;
/** Deepest `offset` of a leaderboard `search` (an SQL page of the players whose id has the prefix). */
export const SEARCH_MAX_OFFSET = 10_000;

const cursor = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const matchListQuerySchema = z.object({
  limit: pageQuerySchema.shape.limit,
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(MATCH_LIST_MAX_OFFSET, `offset is capped at ${MATCH_LIST_MAX_OFFSET}; page with \`before\`=<seq of the last match of a page> (each answer gives it as \`next\`)`)
    .optional(),
  before: cursor
    .optional()
    .describe('Only matches before this sequence number: pass the `next` of an answer (the `seq` of its last match) to get the next page, which costs what the first does.'),
});

export const historyQuerySchema = z.object({
  limit: pageQuerySchema.shape.limit,
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(HISTORY_MAX_OFFSET, `offset is capped at ${HISTORY_MAX_OFFSET}; page with \`before\`=<seq of the last entry of a page> (each answer gives it as \`next\`)`)
    .optional(),
  before: cursor
    .optional()
    .describe(
      'Only entries of matches before this sequence number: pass the `next` of an answer (the `seq` of its last entry) to get the next page, which costs what the first does.',
    ),
});

export const leaderboardQuerySchema = pageQuerySchema.extend({
  around: id.optional(),
  search: id.optional().describe(`Only players whose id starts with this; \`total\` counts all of them. With it, \`offset\` is at most ${SEARCH_MAX_OFFSET}.`),
});

export const ladderParams = z.object({ ladder: id });
export const matchParams = z.object({ ladder: id, match: id });
export const seasonParams = z.object({ ladder: id, season: id });
export const seasonPlayerParams = z.object({ ladder: id, season: id, player: id });

export const updateLadderSchema = z
  .object({
    public: z.boolean().optional(),
    standings: standingsOptionsSchema.optional(),
    matchmaking: z
      .object({
        teamSize: z.number().int().min(1).max(16).optional(),
        teams: z.number().int().min(2).max(8).optional(),
        ruleSet: ruleSetSchema
          .nullable()
          .optional()
          .describe('Set or (null) remove the rule set; only while the queue holds no waiting ticket (else 409 naming `matchmaking.ruleSet`).'),
        attributesFromLadder: attributesFromLadderSchema
          .nullable()
          .optional()
          .describe('Set (replacing the whole) or (null) remove; only while the queue holds no waiting ticket (else 409 naming `matchmaking.attributesFromLadder`).'),
      })
      .strict()
      .optional(),
    options: z
      .record(identifier.pipe(z.string().max(40)), z.union([z.number().min(-1e9).max(1e9), identifier.pipe(z.string().max(40)), z.boolean()]))
      .optional()
      .describe('Rating options; only while the ladder has no matches (else 409 naming `options`).'),
  })
  .strict();

export const voidSchema = z
  .object({
    reason: z
      .string()
      .min(1)
      .max(500)
      .superRefine((value, ctx) => {
        // A free-text reason may hold line breaks and tabs, but no other control characters and no lone surrogates.
        const problem = identifierProblem(value.replace(/[\n\r\t]/g, ' '), 500);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      }),
  })
  .strict();

export const seasonSchema = z
  .object({
    name: identifier,
    reset: z
      .object({
        toward: z.number().min(-1e9).max(1e9).optional().describe("Default: the system's starting rating."),
        keep: z.number().min(0).max(1).describe('Share of the distance from `toward` kept: 0 resets fully, 1 not at all.'),
        rd: z.number().min(0).max(1e4).optional().describe('RD floor for Glicko systems: RD → max(RD, rd).'),
        restartPlacement: z.boolean().optional(),
      })
      .strict(),
  })
  .strict();

export const balanceSchema = z
  .object({
    players: z.array(id).min(2).max(64),
    parties: z.array(z.array(id).min(1).max(16)).max(32).optional().describe('Players who must play on one team.'),
    teams: z.number().int().min(2).max(8).optional().describe('Number of teams. Default 2.'),
    context: matchContext.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    // Named here as the body holds them (`players[3]`): the balancer's own check names its input's `players[3].id`.
    const first = new Map<string, number>();
    body.players.forEach((player, i) => {
      const seen = first.get(player);
      if (seen !== undefined)
        ctx.addIssue({ code: 'custom', path: ['players', i], message: `player ${JSON.stringify(player.slice(0, 80))} appears twice (first at players[${seen}])` });
      else first.set(player, i);
    });
  });

export const integrityQuerySchema = z.object({
  matches: z.coerce.number().int().min(1).max(200_000).optional().describe('Most recent matches examined. Default 20,000.'),
  limit: z.coerce.number().int().min(1).max(500).optional().describe('Most entries returned. Default 100.'),
});

export const predictSchema = z
  .object({
    teams: z
      .array(z.object({ players: z.array(id).min(1).max(64) }).strict())
      .min(2)
      .max(16),
    context: matchContext.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    // A player plays once in a match: on two teams (or twice on one) the prediction would mean nothing.
    const first = new Map<string, string>();
    body.teams.forEach((team, t) =>
      team.players.forEach((player, i) => {
        const seen = first.get(player);
        if (seen !== undefined) ctx.addIssue({ code: 'custom', path: ['teams', t, 'players', i], message: `player ${JSON.stringify(player.slice(0, 80))} is already in ${seen}` });
        else first.set(player, `teams[${t}].players[${i}]`);
      }),
    );
  });
export const playerParams = z.object({ ladder: id, player: id });
export const idParams = z.object({ id });

/** `teams[1].players[0]` from zod's path array. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
const isNumberIn = (value: unknown, min: number, max: number): boolean => typeof value === 'number' && value >= min && value <= max;
const isShortIdentifier = (value: unknown): boolean => typeof value === 'string' && value.length <= 40 && isIdentifier(value);

/** Whether a filter object is one `ticketSchema` accepts unchanged. */
function isPlainFilter(filter: Record<string, unknown>): boolean {
  for (const key in filter) {
    const value = filter[key];
    if (key === 'within') {
      if (!isNumberIn(value, 0, 100)) return false;
    } else if (key === 'strict') {
      if (typeof value !== 'boolean') return false;
    } else if (key !== 'maxPing' || !isNumberIn(value, 0, 1e6)) return false;
  }
  return true;
}

const isFiniteNumber = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);

/** Whether a rule-set player's attributes are ones `ticketSchema` accepts unchanged (`ruleSetAttributes`: the four FlexMatch types). */
function isPlainAttributes(attributes: Record<string, unknown>): boolean {
  for (const name in attributes) {
    if (name.length < 1 || name.length > 100 || name === '__proto__') return false;
    const value = attributes[name];
    if (typeof value === 'string') {
      if (value.length > 1000) return false;
    } else if (Array.isArray(value)) {
      if (value.length > 1000) return false;
      for (const item of value) if (typeof item !== 'string' || item.length > 1000) return false;
    } else if (isRecord(value)) {
      let entries = 0;
      for (const key in value) {
        if (++entries > 1000 || key.length > 1000 || key === '__proto__' || !isFiniteNumber(value[key])) return false;
      }
    } else if (!isFiniteNumber(value)) return false;
  }
  return true;
}

/**
 * Whether `value` is a ticket that `ticketSchema` accepts and returns unchanged: the same rules,
 * written out, so the common case skips zod (a fifth of the server's time per ticket went to it).
 * Anything else, valid or not, is left to zod, which names the field at fault.
 */
export function isPlainTicket(value: unknown): boolean {
  if (!isRecord(value)) return false;
  let players: unknown;
  for (const key in value) {
    if (key === 'players') players = value[key];
    else if (key === 'id') {
      if (typeof value.id !== 'string' || !isIdentifier(value.id)) return false;
    } else if (key !== 'mode' || !isShortIdentifier(value.mode)) return false;
  }
  if (!Array.isArray(players) || players.length < 1 || players.length > 16) return false;
  for (const player of players) {
    if (!isRecord(player) || typeof player.id !== 'string' || !isRecord(player.pings)) return false;
    for (const key in player) {
      const field = player[key];
      if (key === 'percentile') {
        if (!isNumberIn(field, 1, 100)) return false;
      } else if (key === 'rating') {
        if (!isNumberIn(field, 0, 1e9)) return false;
      } else if (key === 'filter') {
        if (!isRecord(field) || !isPlainFilter(field)) return false;
      } else if (key === 'attributes') {
        if (!isRecord(field) || !isPlainAttributes(field)) return false;
      } else if (key === 'roles') {
        if (!Array.isArray(field) || field.length > 32) return false;
        for (const role of field) if (typeof role !== 'string' || role.length < 1 || role.length > 100) return false;
      } else if (key !== 'id' && key !== 'pings') return false;
    }
    if (!isIdentifier(player.id)) return false;
    const pings = player.pings;
    for (const region in pings) if (region === '__proto__' || !isShortIdentifier(region) || !isNumberIn(pings[region], 0, 1e6)) return false;
  }
  return true;
}

const isIdOrNumber = (value: unknown): boolean =>
  typeof value === 'string' ? isIdentifier(value) : typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER;

function isPlainMatchPlayer(player: unknown): boolean {
  if (typeof player !== 'object' || player === null) return isIdOrNumber(player);
  if (!isRecord(player) || !('id' in player) || !isIdOrNumber(player.id)) return false;
  for (const key in player) {
    if (key === 'seconds') {
      if (!isNumberIn(player.seconds, 0, 1e15)) return false;
    } else if (key === 'quit') {
      if (typeof player.quit !== 'boolean') return false;
    } else if (key !== 'id') return false;
  }
  return true;
}

/**
 * The common valid match body, checked without zod (which copies the whole
 * body and runs its checks per player: a sixth of the server's CPU for a 6v6
 * match). Accepts only what `matchSchema` accepts and returns unchanged
 * (property-tested); anything it refuses goes to zod, which names the field.
 */
export function isPlainMatch(value: unknown): boolean {
  if (!isRecord(value)) return false;
  let teams: unknown;
  for (const key in value) {
    const field = value[key];
    if (key === 'teams') teams = field;
    else if (key === 'id' || key === 'period') {
      if (!isIdOrNumber(field)) return false;
    } else if (key === 'at') {
      if (!(typeof field === 'string' ? field.length <= 40 : isNumberIn(field, 0, 8.64e15))) return false;
    } else if (key !== 'weight' || !isNumberIn(field, 0, 1e6)) return false;
  }
  if (!Array.isArray(teams) || teams.length < 2 || teams.length > 64) return false;
  for (const team of teams) {
    if (!isRecord(team)) return false;
    let players: unknown;
    for (const key in team) {
      const field = team[key];
      if (key === 'players') players = field;
      else if (key === 'rank') {
        if (!isNumberIn(field, 0, 1e6)) return false;
      } else if (key !== 'score' || !isNumberIn(field, 0, 1e15)) return false;
    }
    if (!Array.isArray(players) || players.length < 1 || players.length > 64) return false;
    for (const player of players) if (!isPlainMatchPlayer(player)) return false;
  }
  return true;
}

/** Checks that accept the common valid input of a schema fast, unchanged; whatever they refuse goes to zod. */
const fastPaths = new Map<z.ZodType, (value: unknown) => boolean>([
  [ticketSchema, isPlainTicket],
  [matchSchema, isPlainMatch],
]);

/** Path parameters that are all identifiers: an object with exactly these keys, each a valid identifier. */
export function isIdentifierParams(names: readonly string[]): (value: unknown) => boolean {
  return (value) => {
    if (typeof value !== 'object' || value === null) return false;
    let count = 0;
    for (const key in value) {
      const field = (value as Record<string, unknown>)[key];
      if (!names.includes(key) || typeof field !== 'string' || !isIdentifier(field)) return false;
      count++;
    }
    return count === names.length;
  };
}
for (const schema of [ladderParams, matchParams, seasonParams, seasonPlayerParams, playerParams, idParams]) fastPaths.set(schema, isIdentifierParams(Object.keys(schema.shape)));

/** Validates `value` against `schema`, throwing InvalidInputError that names the first bad field. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, where = 'body'): z.infer<S> {
  if (fastPaths.get(schema)?.(value) === true) return value as z.infer<S>;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  let path = fieldPath(issue.path);
  if (issue.code === 'unrecognized_keys') path = path === '' ? issue.keys[0]! : `${path}.${issue.keys[0]}`;
  const message = issue.code === 'unrecognized_keys' ? `unknown field ${JSON.stringify(issue.keys[0]).slice(0, 80)}` : issue.message;
  throw new InvalidInputError(message, { field: path === '' ? where : path });
}
