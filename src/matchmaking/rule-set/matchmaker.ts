/**
 * RuleSetMatchmaker: FlexMatch rule sets with the life of Matchmaker (add,
 * cancel, pass(now), waiting).
 *
 * A pass takes waiting tickets oldest first as anchors. For each anchor it
 * walks candidates (its batch: same string batch attributes; ordered by age,
 * or by nearness of the balanced / sortBy attributes; then by the sort rules
 * relative to the anchor), tentatively puts each into the team FlexMatch
 * would fill next (a team below its minimum first, then the one with most
 * open slots; the next team if a rule fails there), and keeps it when every
 * rule that can be judged on a forming match holds. Each time the teams reach
 * their minimums and the rules judged only on a complete match hold too, the
 * match so far is remembered; when the teams are full or the candidates run
 * out, the largest remembered match forms. Expansions apply by the age of the
 * newest ticket in the match (or the oldest, by expansionAgeSelection).
 */
import { InvalidInputError } from '../../core/errors.js';
import type { MatchView } from './expression.js';
import { holds, type Param } from './evaluate.js';
import { judgedWhenComplete, parseRuleSet } from './parse.js';
import { RoleAssignment } from './roles.js';
import { type AttributeSource, parseRuleSetTicket, type RuleSetPlayer, type RuleSetTicket, type RuleSetTicketInput } from './ticket.js';
import type { BatchDistanceRule, CompoundStatement, LatencyRule, PartyAggregation, Rule, RuleSet, TeamDef } from './types.js';

export interface RuleSetMatchmakerOptions {
  /** Candidates looked at per anchor; bounds a pass at O(tickets × window). @default max(1000, 5 × match size) */
  searchWindow?: number;
  /** Attributes taken from the ladder (rating, percentile) instead of the ticket. */
  attributes?: AttributeSource;
  /** Seed for batchingPreference "random". @default 1 */
  seed?: number;
}

export interface RuleSetMatch {
  /** The region every player reaches within the latency rule (lowest worst ping), or null without common pings. */
  region: string | null;
  /** Ticket ids per team, aligned with teamNames. */
  teams: string[][];
  teamNames: string[];
  /** Player ids per team. */
  players: string[][];
  /** Player id → role, when teams declare role slots. */
  roles?: Record<string, string>;
}

export interface RuleSetPassResult {
  matches: RuleSetMatch[];
  /** Ids of tickets still waiting, oldest first. */
  waiting: string[];
  /** Waiting ticket id → the rule that most often kept it out of a candidate match in this pass ("minPlayers" when too few tickets fitted at all). */
  why: Record<string, string>;
}

interface Entry {
  ticket: RuleSetTicket;
  seq: number;
  taken: boolean;
  /** Party value per numeric batchDistance rule. */
  batch: number[];
  /** Key of the string batchDistance values; null when a party disagrees. */
  key: string | null;
  order: number;
  bestRegion: string | undefined;
  /** Worst ping of the party per region every member reports. */
  regionPing: Map<string, number>;
  regionMin: Map<string, number>;
  regionSum: Map<string, number>;
  /** This pass: the entry's batch list and position in it (kept on the entry, not in a per-pass map of 100k objects). */
  list?: BatchList;
  index: number;
}

interface BatchList {
  group: Entry[];
  next: Int32Array;
  prev: Int32Array;
  head: number;
}

interface TeamSlot {
  name: string;
  def: TeamDef;
  players: RuleSetPlayer[];
  tickets: string[];
  roles?: RoleAssignment;
  roleOwners: string[];
}

interface Snapshot {
  count: number;
  region: string | null;
  roles?: Record<string, string>;
  sizes: number[];
}

const NO_REGIONS: Map<string, number> = new Map();

const aggregate = (values: number[], how: PartyAggregation): number =>
  how === 'min' ? Math.min(...values) : how === 'max' ? Math.max(...values) : values.reduce((a, b) => a + b, 0) / values.length;

export class RuleSetMatchmaker {
  readonly ruleSet: RuleSet;
  private readonly tickets = new Map<string, Entry>();
  private readonly playerTicket = new Map<string, string>();
  private seq = 0;
  private lastWhy: Record<string, string> = {};
  private readonly options: Required<Omit<RuleSetMatchmakerOptions, 'attributes'>> & { attributes: AttributeSource };
  // Compiled from the rule set.
  private readonly early: Rule[];
  private readonly late: Rule[];
  private readonly numericBatch: BatchDistanceRule[];
  private readonly stringBatch: BatchDistanceRule[];
  private readonly latency: LatencyRule | undefined;
  private readonly byName: Map<string, Rule>;
  private readonly expansion = new Map<string, Array<{ waitTimeSeconds: number; value: number }>>();
  /** The same steps by kind:name, then property: looked up per rule check without building strings. */
  private readonly ruleStepsOf = new Map<Rule, Map<string, Array<{ waitTimeSeconds: number; value: number }>> | undefined>();
  private readonly expansionBy = new Map<string, Map<string, Array<{ waitTimeSeconds: number; value: number }>>>();
  private readonly teamSlots: Array<{ name: string; def: TeamDef }> = [];
  private readonly matchSize: number;
  /** How far in the ordering value a candidate can be and still join (Infinity unless a batch rule bounds that value). */
  private readonly orderReach: number = Infinity;
  private readonly orderAttribute: string | undefined;
  /** The batch rule that bounds orderReach, and whether it cut the current anchor's candidates short. */
  private readonly reachRule: string | undefined;
  private cut = false;

  constructor(ruleSet: RuleSet | unknown, options: RuleSetMatchmakerOptions = {}) {
    this.ruleSet = isParsed(ruleSet) ? ruleSet : parseRuleSet(ruleSet);
    const rules = this.ruleSet.rules;
    this.byName = new Map(rules.map((r) => [r.name, r]));
    // Rules named by a compound statement are judged only inside it, as FlexMatch does.
    const inCompound = new Set<string>();
    const visit = (s: CompoundStatement): void => ('rule' in s ? void inCompound.add(s.rule) : s.args.forEach(visit));
    for (const r of rules) if (r.type === 'compound') visit(r.statement);
    const judged = rules.filter((r) => (r.type === 'comparison' || r.type === 'distance' || r.type === 'collection' || r.type === 'compound') && !inCompound.has(r.name));
    this.early = judged.filter((r) => !judgedWhenComplete(r, rules));
    this.late = judged.filter((r) => judgedWhenComplete(r, rules));
    const batches = rules.filter((r): r is BatchDistanceRule => r.type === 'batchDistance');
    const type = (name: string) => this.ruleSet.playerAttributes.find((a) => a.name === name)!.type;
    this.numericBatch = batches.filter((r) => type(r.batchAttribute) === 'number');
    this.stringBatch = batches.filter((r) => type(r.batchAttribute) === 'string');
    this.latency = rules.find((r): r is LatencyRule => r.type === 'latency');
    for (const e of this.ruleSet.expansions) {
      this.expansion.set(`${e.kind}:${e.name}.${e.property}`, e.steps);
      const owner = `${e.kind}:${e.name}`;
      if (!this.expansionBy.has(owner)) this.expansionBy.set(owner, new Map());
      this.expansionBy.get(owner)!.set(e.property, e.steps);
    }
    for (const def of this.ruleSet.teams) {
      if (def.quantity === 1) this.teamSlots.push({ name: def.name, def });
      else for (let q = 1; q <= def.quantity; q++) this.teamSlots.push({ name: `${def.name}_${q}`, def });
    }
    for (const r of rules) this.ruleStepsOf.set(r, this.expansionBy.get(`rule:${r.name}`));
    this.matchSize = this.teamSlots.reduce((sum, t) => sum + t.def.maxPlayers, 0);
    // Candidates are taken nearest in the balancing value, else the first sortBy attribute, else the first numeric batch attribute.
    const { algorithm } = this.ruleSet;
    this.orderAttribute =
      algorithm.strategy === 'balanced'
        ? algorithm.balancedAttribute
        : algorithm.batchingPreference === 'sorted'
          ? algorithm.sortByAttributes[0]
          : this.numericBatch[0]?.batchAttribute;
    for (const r of this.numericBatch) {
      if (r.batchAttribute !== this.orderAttribute || r.partyAggregation !== 'avg') continue;
      const widest = Math.max(r.maxDistance!, ...(this.expansion.get(`rule:${r.name}.maxDistance`) ?? []).map((s) => s.value));
      if (widest < this.orderReach) [this.orderReach, this.reachRule] = [widest, r.name];
    }
    this.options = { searchWindow: options.searchWindow ?? Math.max(1000, 5 * this.matchSize), seed: options.seed ?? 1, attributes: options.attributes ?? {} };
  }

  /** Queues a ticket; throws InvalidInputError naming the field when it is malformed or a player already waits. */
  add(input: RuleSetTicketInput | unknown): RuleSetTicket {
    const ticket = parseRuleSetTicket(input, this.ruleSet, this.options.attributes);
    if (this.tickets.has(ticket.id)) throw new InvalidInputError(`ticket ${JSON.stringify(ticket.id)} is already waiting`, { field: 'id' });
    ticket.players.forEach((p, k) => {
      const other = this.playerTicket.get(p.id);
      if (other !== undefined) throw new InvalidInputError(`player ${JSON.stringify(p.id)} already waits in ticket ${JSON.stringify(other)}`, { field: `players[${k}].id` });
    });
    const batch = this.numericBatch.map((r) =>
      aggregate(
        ticket.players.map((p) => p.attributes[r.batchAttribute] as number),
        r.partyAggregation,
      ),
    );
    const parts = this.stringBatch.map((r) => {
      const values = new Set(ticket.players.map((p) => p.attributes[r.batchAttribute] as string));
      return values.size === 1 ? [...values][0] : null;
    });
    const key = parts.length === 0 ? '' : parts.includes(null) ? null : JSON.stringify(parts);
    const first = ticket.players[0].pings;
    const regionPing = first ? new Map<string, number>() : NO_REGIONS;
    const regionMin = first ? new Map<string, number>() : NO_REGIONS;
    const regionSum = first ? new Map<string, number>() : NO_REGIONS;
    for (const region of first ? Object.keys(first) : []) {
      const pings = ticket.players.map((p) => p.pings?.[region]);
      if (pings.some((x) => x === undefined)) continue;
      regionPing.set(region, Math.max(...(pings as number[])));
      regionMin.set(region, Math.min(...(pings as number[])));
      regionSum.set(
        region,
        (pings as number[]).reduce((a, b) => a + b, 0),
      );
    }
    let bestRegion: string | undefined;
    for (const [region, ms] of regionPing) if (bestRegion === undefined || ms < regionPing.get(bestRegion)!) bestRegion = region;
    const order = this.orderKey(ticket);
    this.tickets.set(ticket.id, { ticket, seq: this.seq++, taken: false, batch, key, order, bestRegion, regionPing, regionMin, regionSum, index: 0 });
    for (const p of ticket.players) this.playerTicket.set(p.id, ticket.id);
    return ticket;
  }

  cancel(id: string): boolean {
    const entry = this.tickets.get(id);
    if (!entry) return false;
    this.tickets.delete(id);
    for (const p of entry.ticket.players) this.playerTicket.delete(p.id);
    return true;
  }

  /** Waiting tickets, oldest first. */
  waiting(): RuleSetTicket[] {
    return this.sortedEntries().map((e) => e.ticket);
  }

  /** The rule that most often kept a waiting ticket out of candidate matches in the last pass. */
  whyWaiting(id: string): string | undefined {
    return this.lastWhy[id];
  }

  private sortedEntries(): Entry[] {
    return [...this.tickets.values()].sort((a, b) => a.ticket.at - b.ticket.at || a.seq - b.seq);
  }

  private orderKey(ticket: RuleSetTicket): number {
    const name = this.orderAttribute;
    if (name === undefined) return NaN;
    const values = ticket.players.map((p) => p.attributes[name]).filter((v): v is number => typeof v === 'number');
    return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
  }

  /** A rule or team property under the expansions for a match whose deciding ticket has waited `age` seconds. */
  private expanded(key: string, base: number | undefined, age: number): number | undefined {
    const steps = this.expansion.get(key);
    if (!steps) return base;
    let value = base;
    for (const s of steps) if (s.waitTimeSeconds <= age) value = s.value;
    return value;
  }

  pass(now: number): RuleSetPassResult {
    if (!Number.isFinite(now)) throw new InvalidInputError('must be a number of seconds', { field: 'now' });
    const entries = this.sortedEntries();
    const why = new Map<Entry, Map<string, number>>();
    const blame = (entry: Entry, reason: string): void => {
      let counts = why.get(entry);
      if (!counts) why.set(entry, (counts = new Map()));
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    };

    // Batches: tickets agreeing on every string batchDistance attribute, each in candidate order.
    const groups = new Map<string, Entry[]>();
    for (const e of entries) {
      if (e.key === null) {
        blame(e, this.stringBatch[0].name);
        continue;
      }
      let g = groups.get(e.key);
      if (!g) groups.set(e.key, (g = []));
      g.push(e);
    }
    const numericOrder = !Number.isNaN(entries[0]?.order ?? NaN);
    for (const group of groups.values()) {
      if (numericOrder) group.sort((a, b) => a.order - b.order || a.ticket.at - b.ticket.at || a.seq - b.seq);
      const next = new Int32Array(group.length);
      const prev = new Int32Array(group.length);
      for (let k = 0; k < group.length; k++) {
        next[k] = k + 1 < group.length ? k + 1 : -1;
        prev[k] = k - 1;
      }
      const list: BatchList = { group, next, prev, head: 0 };
      for (let k = 0; k < group.length; k++) {
        group[k].list = list;
        group[k].index = k;
      }
    }
    const unlink = (e: Entry): void => {
      const h = e.list!;
      const { next, prev } = h;
      const index = e.index;
      if (prev[index] >= 0) next[prev[index]] = next[index];
      else h.head = next[index];
      if (next[index] >= 0) prev[next[index]] = prev[index];
    };

    const matches: RuleSetMatch[] = [];
    let rng = this.options.seed >>> 0 || 1;
    const random = (): number => {
      rng ^= rng << 13;
      rng ^= rng >>> 17;
      rng ^= rng << 5;
      return (rng >>> 0) / 4294967296;
    };

    for (const anchor of entries) {
      if (anchor.taken || anchor.key === null) continue;
      const l = anchor.list!;
      const candidates = this.candidates(anchor, { group: l.group, index: anchor.index, next: l.next, prev: l.prev }, l.head, random, blame);
      const built = this.build(anchor, candidates, now, blame);
      if (built) {
        for (const id of built.match.teams.flat()) {
          const e = this.tickets.get(id)!;
          e.taken = true;
          unlink(e);
        }
        matches.push(built.match);
      }
    }
    for (const m of matches) for (const id of m.teams.flat()) this.cancel(id);
    const waiting = entries.filter((e) => !e.taken);
    const whyOut: Record<string, string> = {};
    for (const e of waiting) {
      const counts = why.get(e);
      let best = 'minPlayers';
      let most = 0;
      if (counts) for (const [reason, n] of counts) if (n > most) [best, most] = [reason, n];
      whyOut[e.ticket.id] = best;
    }
    this.lastWhy = whyOut;
    return { matches, waiting: waiting.map((e) => e.ticket.id), why: whyOut };
  }

  /**
   * Candidates for an anchor, in the order FlexMatch would try them, one at a
   * time: most anchors fill their match from the first few, so the window is
   * walked lazily unless a sort rule, the fastest-region preference or random
   * batching must see all of it first.
   */
  private candidates(
    anchor: Entry,
    l: { group: Entry[]; index: number; next: Int32Array; prev: Int32Array },
    head: number,
    random: () => number,
    blame: (e: Entry, reason: string) => void,
  ): () => Entry | undefined {
    const { group, next, prev, index } = l;
    let left = this.options.searchWindow;
    let pull: () => Entry | undefined;
    if (Number.isNaN(anchor.order)) {
      let k = head;
      pull = () => {
        if (k === index) k = next[k];
        if (k < 0 || left-- <= 0) return undefined;
        const e = group[k];
        k = next[k];
        return e;
      };
    } else {
      // Outward from the anchor, nearest ordering value first; past the widest a batch rule on that value can reach, nothing more can join.
      const reach = this.orderReach;
      let lo = prev[index];
      let hi = next[index];
      this.cut = false;
      // The first ticket past the reach on each side is kept out by that rule; the ones beyond it, further still, too, but counting one keeps this O(1).
      const beyond = (k: number): boolean => {
        if (Math.abs(group[k].order - anchor.order) <= reach) return false;
        this.cut = true;
        blame(group[k], this.reachRule!);
        return true;
      };
      if (lo >= 0 && beyond(lo)) lo = -1;
      if (hi >= 0 && beyond(hi)) hi = -1;
      pull = () => {
        if (left-- <= 0 || (lo < 0 && hi < 0)) return undefined;
        let e: Entry;
        if (hi < 0 || (lo >= 0 && anchor.order - group[lo].order <= group[hi].order - anchor.order)) {
          e = group[lo];
          lo = prev[lo];
          if (lo >= 0 && beyond(lo)) lo = -1;
        } else {
          e = group[hi];
          hi = next[hi];
          if (hi >= 0 && beyond(hi)) hi = -1;
        }
        return e;
      };
    }
    const sorts = this.ruleSet.rules.filter((r) => r.type === 'absoluteSort' || r.type === 'distanceSort');
    const { batchingPreference, strategy } = this.ruleSet.algorithm;
    const reorder = sorts.length > 0 || (batchingPreference === 'random' && strategy === 'balanced') || (batchingPreference === 'fastestRegion' && anchor.bestRegion !== undefined);
    if (!reorder) return pull;
    const out: Entry[] = [];
    for (let e = pull(); e; e = pull()) out.push(e);
    if (batchingPreference === 'random' && strategy === 'balanced') {
      for (let k = out.length - 1; k > 0; k--) {
        const j = Math.floor(random() * (k + 1));
        [out[k], out[j]] = [out[j], out[k]];
      }
    }
    if (batchingPreference === 'fastestRegion' && anchor.bestRegion !== undefined) {
      // Tickets whose fastest region is the anchor's come first.
      const same = out.filter((e) => e.bestRegion === anchor.bestRegion);
      const other = out.filter((e) => e.bestRegion !== anchor.bestRegion);
      out.splice(0, out.length, ...same, ...other);
    }
    if (sorts.length > 0) {
      const keyOf = (rule: (typeof sorts)[number], e: Entry): number => {
        const anchorValue = anchor.ticket.players[0].attributes[rule.sortAttribute];
        let mapKey: string | undefined;
        if (typeof anchorValue === 'object' && !Array.isArray(anchorValue)) {
          const pairs = Object.entries(anchorValue);
          if (pairs.length > 0) mapKey = pairs.reduce((best, p) => ((rule.mapKey === 'minValue' ? p[1] < best[1] : p[1] > best[1]) ? p : best))[0];
        }
        const sortValueOf = (ticket: RuleSetTicket): number => {
          const values = ticket.players.map((p) => {
            const v = p.attributes[rule.sortAttribute];
            if (typeof v === 'number') return v;
            if (typeof v === 'object' && !Array.isArray(v) && mapKey !== undefined) return v[mapKey] ?? 0;
            return 0;
          });
          return aggregate(values, rule.partyAggregation);
        };
        const v = rule.type === 'distanceSort' ? Math.abs(sortValueOf(e.ticket) - sortValueOf(anchor.ticket)) : sortValueOf(e.ticket);
        return rule.sortDirection === 'descending' ? -v : v;
      };
      const keys = new Map(out.map((e) => [e, sorts.map((r) => keyOf(r, e))]));
      out.sort((a, b) => {
        const ka = keys.get(a)!;
        const kb = keys.get(b)!;
        for (let k = 0; k < ka.length; k++) if (ka[k] !== kb[k]) return ka[k] - kb[k];
        return 0;
      });
    }
    let k = 0;
    return () => out[k++];
  }

  private build(anchor: Entry, candidates: () => Entry | undefined, now: number, blame: (e: Entry, reason: string) => void): { match: RuleSetMatch } | undefined {
    const newest = this.ruleSet.algorithm.expansionAgeSelection === 'newest';
    const teams: TeamSlot[] = this.teamSlots.map((t) => ({
      name: t.name,
      def: t.def,
      players: [],
      tickets: [],
      roleOwners: [],
      ...(t.def.roles ? { roles: new RoleAssignment(t.def.roles) } : {}),
    }));
    const view: MatchView = { teams: teams.map((t) => ({ name: t.name, definition: t.def.name, players: t.players })) };
    const placed: Array<{ entry: Entry; team: number }> = [];
    let age = NaN;
    const batchMin = this.numericBatch.map(() => Infinity);
    const batchMax = this.numericBatch.map(() => -Infinity);
    let regions: Map<string, { max: number; min: number; sum: number }> | undefined;
    let players = 0;
    let snapshot: Snapshot | undefined;
    let anchorReasons: Map<string, number> | undefined;

    const step = (steps: Array<{ waitTimeSeconds: number; value: number }> | undefined, base: number, a: number): number => {
      if (!steps) return base;
      let value = base;
      for (const s of steps) if (s.waitTimeSeconds <= a) value = s.value;
      return value;
    };
    const teamSteps = teams.map((t) => this.expansionBy.get(`team:${t.def.name}`));
    const minSteps = teamSteps.map((m) => m?.get('minPlayers'));
    const maxSteps = teamSteps.map((m) => m?.get('maxPlayers'));
    const teamMin = (t: TeamSlot, a: number): number => step(minSteps[teams.indexOf(t)], t.def.minPlayers, a);
    const teamMax = (t: TeamSlot, a: number): number => {
      const max = step(maxSteps[teams.indexOf(t)], t.def.maxPlayers, a);
      return t.def.roles
        ? Math.min(
            max,
            Object.values(t.def.roles).reduce((s, n) => s + n, 0),
          )
        : max;
    };
    const stepsOf = this.ruleStepsOf;
    const paramAt =
      (a: number): Param =>
      (rule, property, base) => {
        const steps = stepsOf.get(rule)?.get(property);
        if (!steps) return base;
        let value = base;
        for (const s of steps) if (s.waitTimeSeconds <= a) value = s.value;
        return value;
      };

    const acceptableRegions = (
      stats: Map<string, { max: number; min: number; sum: number }>,
      count: number,
      a: number,
    ): Array<[string, { max: number; min: number; sum: number }]> => {
      const out: Array<[string, { max: number; min: number; sum: number }]> = [];
      const rule = this.latency;
      const maxLatency = rule ? this.expanded(`rule:${rule.name}.maxLatency`, rule.maxLatency, a)! : Infinity;
      const maxDistance = rule ? this.expanded(`rule:${rule.name}.maxDistance`, rule.maxDistance, a) : undefined;
      for (const entry of stats) {
        const s = entry[1];
        if (s.max > maxLatency) continue;
        if (maxDistance !== undefined) {
          const ref = rule!.distanceReference === 'min' ? s.min : s.sum / count;
          if (s.max - ref > maxDistance) continue;
        }
        out.push(entry);
      }
      return out;
    };

    const order: number[] = [];
    const ranks: number[] = teams.map(() => 0);
    /** Tries to add a ticket; returns the reason it cannot join, or undefined when it joined. */
    const tryAdd = (entry: Entry): string | undefined => {
      const ticketAge = now - entry.ticket.at;
      const a = Number.isNaN(age) ? ticketAge : newest ? Math.min(age, ticketAge) : Math.max(age, ticketAge);
      const param = paramAt(a);
      for (let k = 0; k < this.numericBatch.length; k++) {
        const rule = this.numericBatch[k];
        const v = entry.batch[k];
        const spread = Math.max(batchMax[k], v) - Math.min(batchMin[k], v);
        if (spread > param(rule, 'maxDistance', rule.maxDistance)!) return rule.name;
      }
      // Regions every player so far and this party report, with their figures.
      let nextRegions: Map<string, { max: number; min: number; sum: number }> | undefined;
      if (entry.regionPing.size > 0 || this.latency) {
        nextRegions = new Map();
        if (regions === undefined) {
          for (const [region, ms] of entry.regionPing) nextRegions.set(region, { max: ms, min: entry.regionMin.get(region)!, sum: entry.regionSum.get(region)! });
        } else {
          for (const [region, s] of regions) {
            const ms = entry.regionPing.get(region);
            if (ms === undefined) continue;
            nextRegions.set(region, { max: Math.max(s.max, ms), min: Math.min(s.min, entry.regionMin.get(region)!), sum: s.sum + entry.regionSum.get(region)! });
          }
        }
        if (this.latency && acceptableRegions(nextRegions, players + entry.ticket.players.length, a).length === 0) return this.latency.name;
      }
      const size = entry.ticket.players.length;
      // Teams in FlexMatch's fill order: below their minimum first, then most open slots, then as listed.
      order.length = 0;
      for (let k = 0; k < teams.length; k++) {
        const open = teamMax(teams[k], a) - teams[k].players.length;
        if (open < size) continue;
        const rank = (teams[k].players.length < teamMin(teams[k], a) ? 1_000_000 : 0) + open;
        let at = order.length;
        while (at > 0 && rank > ranks[order[at - 1]]) at--;
        order.splice(at, 0, k);
        ranks[k] = rank;
      }
      if (order.length === 0) return 'maxPlayers';
      let reason: string | undefined;
      for (const k of order) {
        const team = teams[k];
        const before = team.players.length;
        if (team.roles) {
          let ok = true;
          for (const p of entry.ticket.players) if (!(ok = team.roles.add(p.roles))) break;
          if (!ok) {
            team.roles.truncate(before);
            reason ??= `teams[${team.name}].roles`;
            continue;
          }
        }
        team.players.push(...entry.ticket.players);
        const failed = this.early.find((r) => !holds(r, view, param, this.byName));
        if (failed) {
          team.players.length = before;
          team.roles?.truncate(before);
          reason ??= failed.name;
          continue;
        }
        // Joined: commit the running figures.
        team.tickets.push(entry.ticket.id);
        for (const p of entry.ticket.players) team.roleOwners.push(p.id);
        placed.push({ entry, team: k });
        age = a;
        players += size;
        for (let b = 0; b < this.numericBatch.length; b++) {
          batchMin[b] = Math.min(batchMin[b], entry.batch[b]);
          batchMax[b] = Math.max(batchMax[b], entry.batch[b]);
        }
        if (nextRegions) regions = nextRegions;
        return undefined;
      }
      return reason;
    };

    const complete = (): boolean => {
      if (!teams.every((t) => t.players.length >= teamMin(t, age))) return false;
      const param = paramAt(age);
      const failed = this.late.find((r) => !holds(r, view, param, this.byName));
      if (failed) {
        (anchorReasons ??= new Map()).set(failed.name, (anchorReasons.get(failed.name) ?? 0) + 1);
        return false;
      }
      return true;
    };
    const remember = (): void => {
      let region: string | null = null;
      if (regions) {
        let best: [string, { max: number; min: number; sum: number }] | undefined;
        for (const r of acceptableRegions(regions, players, age))
          if (!best || r[1].max < best[1].max || (r[1].max === best[1].max && (r[1].sum < best[1].sum || (r[1].sum === best[1].sum && r[0] < best[0])))) best = r;
        region = best ? best[0] : null;
      }
      let roles: Record<string, string> | undefined;
      if (teams.some((t) => t.roles)) {
        roles = {};
        for (const t of teams) if (t.roles) t.roles.roles().forEach((role, k) => (roles![t.roleOwners[k]] = role));
      }
      snapshot = { count: placed.length, region, sizes: teams.map((t) => t.players.length), ...(roles ? { roles } : {}) };
    };

    const anchorReason = tryAdd(anchor);
    if (anchorReason !== undefined) {
      blame(anchor, anchorReason);
      return undefined;
    }
    if (complete()) remember();
    for (let candidate = candidates(); candidate; candidate = candidates()) {
      if (teams.every((t) => t.players.length >= teamMax(t, age))) break;
      const reason = tryAdd(candidate);
      if (reason !== undefined) {
        blame(candidate, reason);
        (anchorReasons ??= new Map()).set(reason, (anchorReasons.get(reason) ?? 0) + 1);
        continue;
      }
      if (complete()) remember();
    }
    if (!snapshot) {
      // Tickets past the batch rule's widest reach were never tried: that rule held the anchor.
      let best = this.cut && this.reachRule !== undefined ? this.reachRule : 'minPlayers';
      let most = 0;
      if (anchorReasons) for (const [reason, n] of anchorReasons) if (n > most) [best, most] = [reason, n];
      blame(anchor, best);
      return undefined;
    }
    const kept = placed.slice(0, snapshot.count);
    const out: RuleSetMatch = {
      region: snapshot.region,
      teams: teams.map(() => []),
      teamNames: teams.map((t) => t.name),
      players: teams.map(() => []),
      ...(snapshot.roles ? { roles: {} as Record<string, string> } : {}),
    };
    for (const { entry, team } of kept) {
      out.teams[team].push(entry.ticket.id);
      for (const p of entry.ticket.players) {
        out.players[team].push(p.id);
        if (snapshot.roles) out.roles![p.id] = snapshot.roles[p.id];
      }
    }
    return { match: out };
  }
}

function isParsed(value: unknown): value is RuleSet {
  return (
    typeof value === 'object' &&
    value !== null &&
    'large' in value &&
    Array.isArray((value as RuleSet).rules) &&
    (value as RuleSet).rules.every((r) => typeof r === 'object' && r !== null && 'index' in r)
  );
}
