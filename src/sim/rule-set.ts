/**
 * The rule-set simulator: a seeded stream of solo tickets arrives at a
 * FlexMatch rule set's queue, a pass runs every tick, and the report says
 * what share of the tickets matched, how long they waited, and which rules
 * held the waiting ones.
 *
 * Model (every constant is an option or named here):
 * - arrivals: a Poisson number per tick, `arrivalsPerSecond` on average;
 * - a number attribute ~ Normal(its default, or 50; sd `spread`), rounded;
 *   a string attribute takes its default, or one of `stringValues`; a
 *   string list holds 1–3 of `stringValues`; a string→number map gives each
 *   of `stringValues` a value in 0–100 (defaults, when declared, win);
 * - pings from one of the four default regions (15–60 ms at home, 80–220
 *   elsewhere); each player accepts 1–2 of the rule set's roles, if any;
 * - a ticket still waiting after `maxWaitSeconds` leaves the queue (as a
 *   ticket past its time-to-live would) and counts as not matched.
 *
 * "Held by" counts, per rule, the waiting tickets whose most frequent reason
 * for staying out of the pass's candidate matches was that rule, summed over
 * passes (`minPlayers`: too few tickets fitted at all).
 */
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { type RuleSet, RuleSetMatchmaker, type RuleSetPlayerInput } from 'ladder-core/matchmaking/rule-set/index.js';
import { quantiles } from './simulate.js';
import { DEFAULT_REGIONS, pickWeighted, pingsFrom, seededRandom } from 'ladder-core/matchmaking/synthetic-queue.js';

export interface RuleSetSimulationOptions {
  /** The rule set (JSON object or text). */
  ruleSet: unknown;
  /** Simulated seconds of arrivals. @default 600 */
  seconds?: number;
  /** Mean tickets arriving per second. @default 5 */
  arrivalsPerSecond?: number;
  /** Seconds between passes. @default 1 */
  tickSeconds?: number;
  /** A ticket leaves unmatched after this long. @default 300 */
  maxWaitSeconds?: number;
  /** Standard deviation of number attributes. @default 15 */
  spread?: number;
  /** Values string attributes are drawn from. @default ['a', 'b'] */
  stringValues?: string[];
  /** @default 1 */
  seed?: number;
}

export interface RuleSetSimulationReport {
  ruleSet: string;
  options: Required<Omit<RuleSetSimulationOptions, 'ruleSet'>>;
  tickets: number;
  matched: number;
  /** Tickets that left unmatched after maxWaitSeconds. */
  timedOut: number;
  /** Tickets still waiting when the arrivals ended. */
  leftWaiting: number;
  /** matched ÷ (matched + timedOut): of the tickets whose fate is known. */
  matchedShare: number;
  matches: number;
  /** Seconds matched tickets waited. */
  wait: { p50: number; p90: number; max: number };
  /** Rule name → waiting ticket-passes it held (see the module comment). */
  heldBy: Record<string, number>;
}

/** A standard normal draw (Box–Muller). */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function attributesFor(ruleSet: RuleSet, random: () => number, spread: number, values: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const pick = () => values[Math.floor(random() * values.length)]!;
  for (const def of ruleSet.playerAttributes) {
    if (def.type === 'number') out[def.name] = Math.round((typeof def.default === 'number' ? def.default : 50) + spread * normal(random));
    else if (def.type === 'string') out[def.name] = typeof def.default === 'string' ? def.default : pick();
    else if (def.type === 'string_list') out[def.name] = [...new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, pick))];
    else out[def.name] = Object.fromEntries(values.map((v) => [v, Math.round(random() * 100)]));
  }
  return out;
}

export function simulateRuleSet(input: RuleSetSimulationOptions): RuleSetSimulationReport {
  const options = {
    seconds: input.seconds ?? 600,
    arrivalsPerSecond: input.arrivalsPerSecond ?? 5,
    tickSeconds: input.tickSeconds ?? 1,
    maxWaitSeconds: input.maxWaitSeconds ?? 300,
    spread: input.spread ?? 15,
    stringValues: input.stringValues ?? ['a', 'b'],
    seed: input.seed ?? 1,
  };
  for (const field of ['seconds', 'arrivalsPerSecond', 'tickSeconds', 'maxWaitSeconds'] as const)
    if (!(options[field] > 0) || !Number.isFinite(options[field])) throw new InvalidInputError(`must be a positive number, got ${options[field]}`, { field });
  if (!(options.spread >= 0)) throw new InvalidInputError(`must be at least 0, got ${options.spread}`, { field: 'spread' });
  if (options.stringValues.length === 0) throw new InvalidInputError('must name at least one value', { field: 'stringValues' });
  // The matchmaker parses the rule set (or takes one already parsed).
  const matchmaker = new RuleSetMatchmaker(input.ruleSet);
  const ruleSet = matchmaker.ruleSet;
  const random = seededRandom(options.seed);
  const roleNames = [...new Set(ruleSet.teams.flatMap((t) => Object.keys(t.roles ?? {})))];
  const arrived = new Map<string, number>();
  const waits: number[] = [];
  const heldBy: Record<string, number> = {};
  let tickets = 0;
  let matches = 0;
  let timedOut = 0;
  const perTick = options.arrivalsPerSecond * options.tickSeconds;
  for (let now = 0; now < options.seconds; now += options.tickSeconds) {
    // Poisson arrivals (Knuth's method; perTick stays small enough per tick).
    let count = 0;
    for (let p = random(), limit = Math.exp(-perTick); p > limit; p *= random()) count++;
    for (let k = 0; k < count; k++) {
      const id = `t${tickets++}`;
      const home = pickWeighted(
        DEFAULT_REGIONS.map((r) => r.weight),
        random,
      );
      const player: RuleSetPlayerInput = {
        id: `p-${id}`,
        attributes: attributesFor(ruleSet, random, options.spread, options.stringValues),
        pings: pingsFrom(home, DEFAULT_REGIONS, random),
      };
      if (roleNames.length > 0) player.roles = [...new Set([roleNames[Math.floor(random() * roleNames.length)]!, roleNames[Math.floor(random() * roleNames.length)]!])];
      const at = now + random() * options.tickSeconds;
      matchmaker.add({ id, at, players: [player] });
      arrived.set(id, at);
    }
    const pass = matchmaker.pass(now + options.tickSeconds);
    for (const match of pass.matches) {
      matches++;
      for (const id of match.teams.flat()) {
        waits.push(now + options.tickSeconds - arrived.get(id)!);
        arrived.delete(id);
      }
    }
    for (const rule of Object.values(pass.why)) heldBy[rule] = (heldBy[rule] ?? 0) + 1;
    for (const id of pass.waiting) {
      if (now + options.tickSeconds - arrived.get(id)! < options.maxWaitSeconds) continue;
      matchmaker.cancel(id);
      arrived.delete(id);
      timedOut++;
    }
  }
  const q = quantiles(waits);
  const matched = waits.length;
  return {
    ruleSet: ruleSet.name ?? '(unnamed)',
    options,
    tickets,
    matched,
    timedOut,
    leftWaiting: arrived.size,
    matchedShare: matched + timedOut > 0 ? matched / (matched + timedOut) : NaN,
    matches,
    wait: { p50: q.p50, p90: q.p90, max: waits.length > 0 ? Math.max(...waits) : NaN },
    heldBy: Object.fromEntries(Object.entries(heldBy).sort((a, b) => b[1] - a[1])),
  };
}
