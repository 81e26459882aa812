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
import { type FillPool, RuleSetBackfills, type RuleSetBackfill, type RuleSetBackfillInput, type RuleSetBackfillResult } from './backfill.js';
import { type CompiledRule, compileRule } from './compile.js';
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
  /** Backfill requests that gained players in this pass, in the order served (see backfill.ts). */
  backfills: RuleSetBackfillResult[];
}

interface Entry {
  ticket: RuleSetTicket;
  seq: number;
  /** The ticket's time and party size, kept on the entry (a queued ticket is fixed, as its batch values and key are): a pass reads them from 100,000 entries without going to the tickets. */
  at: number;
  size: number;
  taken: boolean;
  /** Party value per numeric batchDistance rule. */
  batch: number[];
  /** Key of the string batchDistance values; null when a party disagrees. */
  key: string | null;
  order: number;
  bestRegion: string | undefined;
  /** Worst ping of the party per region every member reports. */
  regionNames: string[];
  /** Aligned with regionNames. */
  regionPing: number[];
  regionMin: number[];
  regionSum: number[];
  /** This pass: the entry's batch list and position in it (kept on the entry, not in a per-pass map of 100k objects). */
  list: BatchList | undefined;
  index: number;
  /** This pass: what kept the entry out of candidate matches, in the order first seen, and how often. */
  whyReasons: string[] | undefined;
  whyCounts: number[] | undefined;
}

/**
 * One batch for a pass, in candidate order, with what the candidate walk and
 * the batch-rule check read kept in flat arrays by position: a window of a
 * thousand candidates is then read from a few contiguous arrays instead of a
 * thousand scattered tickets.
 */
interface BatchList {
  group: Entry[];
  next: Int32Array;
  prev: Int32Array;
  head: number;
  order: Float64Array;
  at: Float64Array;
  /** The party's value per numeric batchDistance rule, by position (position × rules + rule): one array read per candidate. */
  batch: Float64Array;
  /** The first two reasons (id + 1, 0 for none) that kept each ticket out this pass, and how often; later reasons go on the entry. */
  firstWhy: Int32Array;
  firstCount: Int32Array;
  secondWhy: Int32Array;
  secondCount: Int32Array;
  /** Players in the party, and 1 when it reports pings. */
  size: Int32Array;
  pinged: Uint8Array;
  /** The pass's regions by number, and per position and region (position × regions.length + region) the party's worst ping, best ping and sum there: NaN where it reports none. */
  regions: string[];
  ping: Float64Array;
  pingMin: Float64Array;
  pingSum: Float64Array;
}

interface TeamSlot {
  name: string;
  def: TeamDef;
  players: RuleSetPlayer[];
  tickets: string[];
  roles?: RoleAssignment;
  roleOwners: string[];
}

type Step = { waitTimeSeconds: number; value: number };
/** A rule judged on a forming or complete match, with its compiled check when it has one. */
interface CheckedRule {
  rule: Rule;
  check: CompiledRule | undefined;
}

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
  private readonly early: CheckedRule[];
  private readonly late: CheckedRule[];
  private readonly sorts: Array<Extract<Rule, { type: 'absoluteSort' | 'distanceSort' }>>;
  /** Per team slot: minPlayers and maxPlayers expansion steps, and the role slots' total (Infinity without roles). */
  private readonly slotMinSteps: Array<Step[] | undefined> = [];
  private readonly slotMaxSteps: Array<Step[] | undefined> = [];
  private readonly slotRoleCap: number[] = [];
  /** Per numeric batchDistance rule: its maxDistance expansion steps. */
  private readonly batchSteps: Array<Step[] | undefined>;
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
  /** The batch rules on the ordering value (party average), each with its maxDistance and expansion steps: an anchor's own reach. */
  private readonly reachRules: Array<{ name: string; base: number; steps: readonly Step[] }> = [];
  private cut = false;
  /** Reasons a ticket was kept out, by small id, so that a pass counts them in flat arrays. */
  private readonly reasonIds = new Map<string, number>();
  private readonly reasonNames: string[] = [];
  /** A pass's scratch for one anchor: the reasons its candidates failed, in the order first seen, and the count by reason id. */
  private readonly anchorReasons: number[] = [];
  private readonly anchorCounts: number[] = [];
  /** Per numeric batchDistance rule: its reason id. */
  private readonly batchReason: number[];
  /** The wait times of the numeric batch rules' maxDistance steps, ascending, once each: between two of them every limit is one value. */
  private readonly batchWaits: number[];

  constructor(ruleSet: RuleSet | unknown, options: RuleSetMatchmakerOptions = {}) {
    this.ruleSet = isParsed(ruleSet) ? ruleSet : parseRuleSet(ruleSet);
    const rules = this.ruleSet.rules;
    this.byName = new Map(rules.map((r) => [r.name, r]));
    // Rules named by a compound statement are judged only inside it, as FlexMatch does.
    const inCompound = new Set<string>();
    const visit = (s: CompoundStatement): void => ('rule' in s ? void inCompound.add(s.rule) : s.args.forEach(visit));
    for (const r of rules) if (r.type === 'compound') visit(r.statement);
    const judged = rules.filter((r) => (r.type === 'comparison' || r.type === 'distance' || r.type === 'collection' || r.type === 'compound') && !inCompound.has(r.name));
    const early = judged.filter((r) => !judgedWhenComplete(r, rules));
    const late = judged.filter((r) => judgedWhenComplete(r, rules));
    this.sorts = rules.filter((r) => r.type === 'absoluteSort' || r.type === 'distanceSort');
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
    for (const t of this.teamSlots) {
      const steps = this.expansionBy.get(`team:${t.def.name}`);
      this.slotMinSteps.push(steps?.get('minPlayers'));
      this.slotMaxSteps.push(steps?.get('maxPlayers'));
      this.slotRoleCap.push(t.def.roles ? Object.values(t.def.roles).reduce((s, n) => s + n, 0) : Infinity);
    }
    this.batchSteps = this.numericBatch.map((r) => this.ruleStepsOf.get(r)?.get('maxDistance'));
    this.batchReason = this.numericBatch.map((r) => this.reasonId(r.name));
    this.batchWaits = [...new Set(this.batchSteps.flatMap((steps) => (steps ?? []).map((s) => s.waitTimeSeconds)))].sort((a, b) => a - b);
    const names = this.teamSlots.map((t) => t.name);
    const defs = this.teamSlots.map((t) => t.def.name);
    const checked = (r: Rule): CheckedRule => ({ rule: r, check: compileRule(r, this.ruleSet, names, defs) });
    this.early = early.map(checked);
    this.late = late.map(checked);
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
      this.reachRules.push({ name: r.name, base: r.maxDistance ?? Infinity, steps: this.expansion.get(`rule:${r.name}.maxDistance`) ?? [] });
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
      const playing = this.fillBook?.playingIn(p.id);
      if (playing !== undefined)
        throw new InvalidInputError(`player ${JSON.stringify(p.id)} is in the match of open backfill ${JSON.stringify(playing)}`, { field: `players[${k}].id` });
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
    const regionNames: string[] = [];
    const regionPing: number[] = [];
    const regionMin: number[] = [];
    const regionSum: number[] = [];
    for (const region of first ? Object.keys(first) : []) {
      const pings = ticket.players.map((p) => p.pings?.[region]);
      if (pings.some((x) => x === undefined)) continue;
      regionNames.push(region);
      regionPing.push(Math.max(...(pings as number[])));
      regionMin.push(Math.min(...(pings as number[])));
      regionSum.push((pings as number[]).reduce((a, b) => a + b, 0));
    }
    let best = -1;
    for (let j = 0; j < regionNames.length; j++) if (best < 0 || regionPing[j] < regionPing[best]) best = j;
    const bestRegion = best < 0 ? undefined : regionNames[best];
    const order = this.orderKey(ticket);
    // Every field from the start, so that all entries share one shape in the pass's hot loops.
    const entry: Entry = {
      ticket,
      seq: this.seq++,
      at: ticket.at,
      size: ticket.players.length,
      taken: false,
      batch,
      key,
      order,
      bestRegion,
      regionNames,
      regionPing,
      regionMin,
      regionSum,
      list: undefined,
      index: 0,
      whyReasons: undefined,
      whyCounts: undefined,
    };
    this.tickets.set(ticket.id, entry);
    for (let j = 0; j < ticket.players.length; j++) {
      const p = ticket.players[j];
      this.playerTicket.set(p.id, ticket.id);
    }
    return ticket;
  }

  cancel(id: string): boolean {
    const entry = this.tickets.get(id);
    if (!entry) return false;
    this.tickets.delete(id);
    for (let j = 0; j < entry.ticket.players.length; j++) {
      const p = entry.ticket.players[j];
      this.playerTicket.delete(p.id);
    }
    return true;
  }

  // Backfill (backfill.ts): a match in progress asks for players under the same rules.

  /** Open backfill requests, made on first use. */
  private fillBook: RuleSetBackfills | undefined;

  private backfillBook(): RuleSetBackfills {
    if (this.fillBook) return this.fillBook;
    const { slotMinSteps, slotMaxSteps, slotRoleCap, batchSteps, numericBatch, early, late, byName } = this;
    const latency = this.latency;
    const latencySteps = latency ? this.ruleStepsOf.get(latency) : undefined;
    const stepsOf = this.ruleStepsOf;
    this.fillBook = new RuleSetBackfills({
      ruleSet: this.ruleSet,
      attributes: this.options.attributes,
      slots: this.teamSlots,
      numericBatch,
      stringBatch: this.stringBatch,
      latency,
      searchWindow: this.options.searchWindow,
      teamMin: (k, age) => stepped(slotMinSteps[k], this.teamSlots[k].def.minPlayers, age)!,
      teamMax: (k, age) => Math.min(stepped(slotMaxSteps[k], this.teamSlots[k].def.maxPlayers, age)!, slotRoleCap[k]),
      batchLimit: (b, age) => stepped(batchSteps[b], numericBatch[b].maxDistance, age)!,
      latencyLimits: (age) => ({
        maxLatency: stepped(latencySteps?.get('maxLatency'), latency!.maxLatency, age)!,
        maxSpread: stepped(latencySteps?.get('maxDistance'), latency!.maxDistance, age),
      }),
      judge: (view, age, complete) => {
        const param: Param = (rule, property, base) => stepped(stepsOf.get(rule)?.get(property), base, age);
        for (const { rule, check } of complete ? late : early) if (!(check ? check(view, param) : holds(rule, view, param, byName))) return rule;
        return undefined;
      },
      waitingTicket: (playerId) => this.playerTicket.get(playerId),
    });
    return this.fillBook;
  }

  /**
   * Opens a backfill request: at the next passes (when, by
   * `algorithm.backfillPriority`), waiting tickets fill its open slots so
   * that the whole match obeys the rule set. Throws InvalidInputError naming
   * the field on a bad request, an id already open, or a match player who
   * waits in a ticket or is in another open request's match.
   */
  addBackfill(input: RuleSetBackfillInput | unknown): RuleSetBackfill {
    return this.backfillBook().add(input);
  }

  /** Withdraws an open backfill request; returns whether it was open. */
  removeBackfill(id: string): boolean {
    return this.fillBook?.remove(id) ?? false;
  }

  hasBackfill(id: string): boolean {
    return this.fillBook?.has(id) ?? false;
  }

  /** The open backfill requests, oldest first, with the players gained so far. */
  backfills(): RuleSetBackfill[] {
    return this.fillBook?.list() ?? [];
  }

  get backfillCount(): number {
    return this.fillBook?.size ?? 0;
  }

  /** Serves the pass's backfill requests from its batches (undefined when none is open). */
  private backfillServer(groups: ReadonlyMap<string, Entry[]>, unlink: (e: Entry) => void, now: number, results: RuleSetBackfillResult[]): ((until: number) => void) | undefined {
    if (this.fillBook === undefined || this.fillBook.size === 0) return undefined;
    const pool: FillPool<Entry> = {
      candidates: (key, centre, limit) => {
        const group = groups.get(key);
        const out: Entry[] = [];
        if (!group || group.length === 0) return out;
        const l = group[0].list!;
        if (Number.isNaN(centre) || Number.isNaN(group[0].order)) {
          for (let k = l.head; k >= 0 && out.length < limit; k = l.next[k]) out.push(group[k]);
          return out;
        }
        // Outward from the centre in the ordering value (the batch is sorted by it), skipping taken tickets.
        let hi = 0;
        for (let step = group.length; step > 0; step >>= 1) while (hi + step <= group.length && l.order[hi + step - 1] < centre) hi += step;
        let lo = hi - 1;
        while (out.length < limit && (lo >= 0 || hi < group.length)) {
          const k = hi >= group.length || (lo >= 0 && centre - l.order[lo] <= l.order[hi] - centre) ? lo-- : hi++;
          if (!group[k].taken) out.push(group[k]);
        }
        return out;
      },
      take: (e) => {
        e.taken = true;
        unlink(e);
      },
    };
    return this.fillBook.server(now, pool, results);
  }

  /** Drops matched tickets: one by one when few matched, else by rebuilding the maps from those still waiting (cheaper than 100,000 deletes). */
  private keepOnly(entries: Entry[], waiting: Entry[]): void {
    if (waiting.length * 2 > entries.length) {
      for (let j = 0; j < entries.length; j++) {
        const e = entries[j];
        if (e.taken) this.cancel(e.ticket.id);
      }
      return;
    }
    this.tickets.clear();
    this.playerTicket.clear();
    for (let j = 0; j < waiting.length; j++) {
      const e = waiting[j];
      this.tickets.set(e.ticket.id, e);
      for (let m = 0; m < e.ticket.players.length; m++) {
        const p = e.ticket.players[m];
        this.playerTicket.set(p.id, e.ticket.id);
      }
    }
  }

  private reasonId(reason: string): number {
    let id = this.reasonIds.get(reason);
    if (id === undefined) {
      id = this.reasonNames.push(reason) - 1;
      this.reasonIds.set(reason, id);
      this.anchorCounts.push(0);
    }
    return id;
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
    const entries = [...this.tickets.values()];
    // Tickets mostly arrive in time order: then they are in order already.
    for (let k = 1; k < entries.length; k++) {
      const a = entries[k - 1];
      const b = entries[k];
      if (a.at - b.at > 0 || (a.at === b.at && a.seq > b.seq)) return entries.sort((a, b) => a.at - b.at || a.seq - b.seq);
    }
    return entries;
  }

  private orderKey(ticket: RuleSetTicket): number {
    const name = this.orderAttribute;
    if (name === undefined) return NaN;
    const values = ticket.players.map((p) => p.attributes[name]).filter((v): v is number => typeof v === 'number');
    return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
  }

  pass(now: number): RuleSetPassResult {
    if (!Number.isFinite(now)) throw new InvalidInputError('must be a number of seconds', { field: 'now' });
    const entries = this.sortedEntries();
    const reasonNames = this.reasonNames;
    const blame = (entry: Entry, reason: string): void => {
      if (entry.list !== undefined) blameAt(entry.list, entry.index, this.reasonId(reason), reasonNames);
      else later(entry, reason);
    };
    // One walk over the queue (each entry read once): why each ticket was kept out this pass starts empty (reasons in the order first
    // seen, with counts, on the entry: a few at most per ticket); batches gather tickets agreeing on every string batchDistance
    // attribute (put in candidate order below); regions are numbered for the flat ping arrays (only a latency rule or the region of a
    // match reads them).
    const groups = new Map<string, Entry[]>();
    const regions: string[] = [];
    const regionId = new Map<string, number>();
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j];
      e.whyReasons = e.whyCounts = undefined;
      e.list = undefined;
      const names = e.regionNames;
      for (let r = 0; r < names.length; r++)
        if (!regionId.has(names[r])) {
          regionId.set(names[r], regions.length);
          regions.push(names[r]);
        }
      if (e.key === null) {
        blame(e, this.stringBatch[0].name);
        continue;
      }
      let g = groups.get(e.key);
      if (!g) groups.set(e.key, (g = []));
      g.push(e);
    }
    const numericOrder = !Number.isNaN(entries[0]?.order ?? NaN);
    const regionCount = regions.length;
    for (const group of groups.values()) {
      // The group is oldest first already, and the sort is stable: by order value alone it is by (order, age, arrival). The entries
      // as given (in the order they were queued, which is mostly their order in memory) and where each went.
      const given = numericOrder ? group.slice() : group;
      const placedAt = numericOrder ? sortByOrder(group) : undefined;
      const next = new Int32Array(group.length);
      const prev = new Int32Array(group.length);
      for (let k = 0; k < group.length; k++) {
        next[k] = k + 1 < group.length ? k + 1 : -1;
        prev[k] = k - 1;
      }
      const n = group.length;
      const order = new Float64Array(n);
      const at = new Float64Array(n);
      const batchCount = this.numericBatch.length;
      const batch = new Float64Array(n * batchCount);
      const size = new Int32Array(n);
      const pinged = new Uint8Array(n);
      const ping = new Float64Array(n * regionCount).fill(NaN);
      const pingMin = new Float64Array(n * regionCount);
      const pingSum = new Float64Array(n * regionCount);
      const list: BatchList = {
        group,
        next,
        prev,
        head: 0,
        order,
        at,
        batch,
        firstWhy: new Int32Array(n),
        firstCount: new Int32Array(n),
        secondWhy: new Int32Array(n),
        secondCount: new Int32Array(n),
        size,
        pinged,
        regions,
        ping,
        pingMin,
        pingSum,
      };
      // One visit per entry, in the order they were queued (visited in candidate order, 100,000 entries scattered over the heap cost
      // a cache miss each): its figures into the batch's arrays at its place in the batch.
      for (let j = 0; j < n; j++) {
        const e = given[j];
        const k = placedAt === undefined ? j : placedAt[j];
        e.list = list;
        e.index = k;
        size[k] = e.size;
        pinged[k] = e.regionNames.length > 0 ? 1 : 0;
        for (let r = 0; r < e.regionNames.length; r++) {
          const at = k * regionCount + regionId.get(e.regionNames[r])!;
          ping[at] = e.regionPing[r];
          pingMin[at] = e.regionMin[r];
          pingSum[at] = e.regionSum[r];
        }
        order[k] = e.order;
        at[k] = e.at;
        for (let b = 0; b < batchCount; b++) batch[k * batchCount + b] = e.batch[b];
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

    // Backfills: before every anchor (priority high), by age among them (normal), or after them all (low).
    const backfills: RuleSetBackfillResult[] = [];
    const serve = this.backfillServer(groups, unlink, now, backfills);
    const priority = this.ruleSet.algorithm.backfillPriority;
    if (serve && priority === 'high') serve(Infinity);
    const serveByAge = serve && priority === 'normal' ? serve : undefined;
    for (let j = 0; j < entries.length; j++) {
      const anchor = entries[j];
      serveByAge?.(anchor.at);
      if (anchor.taken || anchor.key === null) continue;
      const l = anchor.list!;
      const built = this.build(anchor, l, this.candidates(anchor, l, random, now), now);
      if (built) {
        for (let m = 0; m < built.entries.length; m++) {
          const e = built.entries[m];
          e.taken = true;
          unlink(e);
        }
        matches.push(built.match);
      }
    }
    serve?.(Infinity);
    const waiting = entries.filter((e) => !e.taken);
    if (waiting.length < entries.length) this.keepOnly(entries, waiting);
    const whyOut: Record<string, string> = {};
    // One walk over the queue: each waiting ticket's reason, and the batch arrays (this pass's only) let go.
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j];
      if (e.taken) {
        e.list = undefined;
        continue;
      }
      let best = 'minPlayers';
      let most = 0;
      const l = e.list;
      if (l !== undefined) {
        const k = e.index;
        if (l.firstWhy[k] > 0) [best, most] = [reasonNames[l.firstWhy[k] - 1], l.firstCount[k]];
        if (l.secondCount[k] > most) [best, most] = [reasonNames[l.secondWhy[k] - 1], l.secondCount[k]];
      }
      const reasons = e.whyReasons;
      if (reasons) for (let k = 0; k < reasons.length; k++) if (e.whyCounts![k] > most) [best, most] = [reasons[k], e.whyCounts![k]];
      whyOut[e.ticket.id] = best;
      e.whyReasons = e.whyCounts = undefined;
      e.list = undefined;
    }
    this.lastWhy = whyOut;
    return { matches, waiting: waiting.map((e) => e.ticket.id), why: whyOut, backfills };
  }

  /**
   * How far in the ordering value a candidate of an anchor of this age can
   * be and still join: each batch rule on that value bounds it by its widest
   * maxDistance over the ages a match with this anchor can have (the anchor's
   * or less when expansions follow the newest ticket, the anchor's or more
   * when they follow the oldest). Nothing past it is ever admitted, so the
   * walk stops there (fewer candidates looked at, the same matches).
   */
  private anchorReach(anchorAge: number): number {
    const newest = this.ruleSet.algorithm.expansionAgeSelection === 'newest';
    let reach = Infinity;
    for (let r = 0; r < this.reachRules.length; r++) {
      const { base, steps } = this.reachRules[r];
      let widest = newest ? base : (stepped(steps, base, anchorAge) ?? Infinity);
      for (let k = 0; k < steps.length; k++) if (newest ? steps[k].waitTimeSeconds <= anchorAge : steps[k].waitTimeSeconds > anchorAge) widest = Math.max(widest, steps[k].value);
      if (widest < reach) reach = widest;
    }
    return reach;
  }

  /**
   * Candidates for an anchor, in the order FlexMatch would try them: most
   * anchors fill their match from the first few, so the window is walked
   * lazily (a Walk) unless a sort rule, the fastest-region preference or
   * random batching must see all of it first (then their positions in order).
   */
  private candidates(anchor: Entry, l: BatchList, random: () => number, now: number): Walk | number[] {
    const outward = !Number.isNaN(anchor.order);
    const reachId = outward && this.reachRule !== undefined ? this.reasonId(this.reachRule) : -1;
    const { batchingPreference, strategy } = this.ruleSet.algorithm;
    const shuffled = batchingPreference === 'random' && strategy === 'balanced';
    // A shuffle draws one random number per candidate: it keeps the widest reach, so that a seed gives the same matches as before.
    const reach = outward && !shuffled ? this.anchorReach(now - anchor.at) : this.orderReach;
    const walk = new Walk(l, anchor.index, outward, this.options.searchWindow, anchor.order, reach, reachId, this.reasonNames);
    const group = l.group;
    const sorts = this.sorts;
    const reorder = sorts.length > 0 || (batchingPreference === 'random' && strategy === 'balanced') || (batchingPreference === 'fastestRegion' && anchor.bestRegion !== undefined);
    if (!reorder) return walk;
    const out: Entry[] = [];
    for (let k = walk.next(); k >= 0; k = walk.next()) out.push(group[k]);
    this.cut = walk.cut;
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
    return out.map((e) => e.index);
  }

  /** One anchor's forming match, reused from anchor to anchor (made at the first anchor). */
  private forming: FormingMatch | undefined;

  private build(anchor: Entry, l: BatchList, candidates: Walk | number[], now: number): { match: RuleSetMatch; entries: Entry[] } | undefined {
    this.forming ??= new FormingMatch(
      {
        teamSlots: this.teamSlots,
        numericBatch: this.numericBatch,
        batchSteps: this.batchSteps,
        batchWaits: this.batchWaits,
        batchReason: this.batchReason,
        early: this.early,
        late: this.late,
        latency: this.latency,
        ruleStepsOf: this.ruleStepsOf,
        byName: this.byName,
        slotMinSteps: this.slotMinSteps,
        slotMaxSteps: this.slotMaxSteps,
        slotRoleCap: this.slotRoleCap,
        reachRule: this.reachRule,
        reasonNames: this.reasonNames,
        anchorReasons: this.anchorReasons,
        anchorCounts: this.anchorCounts,
        reasonId: (reason) => this.reasonId(reason),
      },
      l,
      now,
      this.ruleSet.algorithm.expansionAgeSelection === 'newest',
    );
    return this.forming.build(anchor, l, candidates, now, this.cut);
  }
}

/** What a forming match reads of its matchmaker: the rule set compiled, and the pass's reasons. */
interface FormingRules {
  teamSlots: ReadonlyArray<{ name: string; def: TeamDef }>;
  numericBatch: readonly BatchDistanceRule[];
  batchSteps: ReadonlyArray<Step[] | undefined>;
  batchWaits: readonly number[];
  batchReason: readonly number[];
  early: readonly CheckedRule[];
  late: readonly CheckedRule[];
  latency: LatencyRule | undefined;
  ruleStepsOf: ReadonlyMap<Rule, Map<string, Step[]> | undefined>;
  byName: Map<string, Rule>;
  slotMinSteps: ReadonlyArray<Step[] | undefined>;
  slotMaxSteps: ReadonlyArray<Step[] | undefined>;
  slotRoleCap: readonly number[];
  reachRule: string | undefined;
  reasonNames: readonly string[];
  /** The current anchor's reasons in the order first seen, and counts by reason id. */
  anchorReasons: number[];
  anchorCounts: number[];
  reasonId(reason: string): number;
}

/**
 * One anchor's forming match in a pass: teams, the rule checks' match view,
 * the batch rules' state, the regions every player so far reports and the
 * tickets placed, all kept from anchor to anchor and emptied for each (a
 * pass builds thousands of anchors: made anew for each, closures and arrays
 * were most of what a pass allocated). `build` tries the anchor and its
 * candidates and gives the largest complete match, or blames the anchor.
 */
class FormingMatch {
  private readonly teams: TeamSlot[];
  private readonly view: MatchView;
  readonly check: BatchCheck;
  private readonly teamCount: number;
  /** Each team's minimum and maximum for the age in `sizesAge` (worked out again when the age asked for differs). */
  private readonly minOf: Float64Array;
  private readonly maxOf: Float64Array;
  private sizesAge = NaN;
  /** The match age the rule parameters are judged at (set before each judgement). */
  private paramAge = NaN;
  /** The latency rule's limits for the age last set (NaN spread: no maxDistance). */
  private maxLatency = Infinity;
  private maxSpread = NaN;
  /** The regions every player so far reports (none known until a ticket with pings joins, or any ticket under a latency rule), with the worst ping, the best and the sum there, rewritten in place as tickets join. */
  private regionsKnown = false;
  private regionCount = 0;
  private readonly regionAt: number[] = [];
  private readonly regionMax: number[] = [];
  private readonly regionMin: number[] = [];
  private readonly regionSum: number[] = [];
  /** Positions in the batch of the tickets placed so far, and their teams. */
  private readonly placed: number[] = [];
  private readonly placedTeam: number[] = [];
  private placedCount = 0;
  /** Players per team, and in the match. */
  private readonly counts: number[];
  private players = 0;
  /** The largest complete match so far: its ticket count (-1 for none), region and roles. */
  private snapshotCount = -1;
  private snapshotRegion: string | null = null;
  private snapshotRoles: Record<string, string> | undefined;
  /** Teams in fill order for one ticket, and their ranks. */
  private readonly fillOrder: number[] = [];
  private readonly ranks: number[];
  private readonly hasRoles: boolean;
  /** Players are placed in the teams only when something reads them: a rule judged on the match, or role slots. */
  private readonly needPlayers: boolean;
  private readonly param: Param;
  private l: BatchList;
  private now = 0;

  constructor(
    private readonly mm: FormingRules,
    l: BatchList,
    now: number,
    private readonly newest: boolean,
  ) {
    this.l = l;
    this.teams = mm.teamSlots.map((t) => ({ name: t.name, def: t.def, players: [], tickets: [], roleOwners: [], roles: undefined }));
    this.view = { teams: this.teams.map((t) => ({ name: t.name, definition: t.def.name, players: t.players })) };
    this.check = new BatchCheck(l, now, newest, mm.numericBatch, mm.batchSteps, mm.batchWaits, mm.batchReason);
    this.teamCount = this.teams.length;
    this.minOf = new Float64Array(this.teamCount);
    this.maxOf = new Float64Array(this.teamCount);
    this.counts = this.teams.map(() => 0);
    this.ranks = this.teams.map(() => 0);
    this.hasRoles = this.teams.some((t) => t.def.roles);
    this.needPlayers = mm.early.length > 0 || mm.late.length > 0 || this.hasRoles;
    const stepsOf = mm.ruleStepsOf;
    // Rule properties under the expansions for the age being judged.
    this.param = (rule, property, base) => stepped(stepsOf.get(rule)?.get(property), base, this.paramAge);
  }

  /**
   * Tries the anchor at its position in batch l, then its candidates (a walk,
   * or positions in the order to try them): the largest complete match, or
   * undefined with the anchor blamed for what held it.
   */
  build(anchor: Entry, l: BatchList, candidates: Walk | number[], now: number, listCut: boolean): { match: RuleSetMatch; entries: Entry[] } | undefined {
    const { teams, teamCount, check, counts, mm } = this;
    const newest = this.newest;
    this.l = l;
    this.now = now;
    for (let k = 0; k < teamCount; k++) {
      const team = teams[k];
      team.players.length = 0;
      team.roleOwners.length = 0;
      if (team.def.roles) team.roles = new RoleAssignment(team.def.roles);
      counts[k] = 0;
    }
    check.reset(l, now, newest);
    this.sizesAge = this.paramAge = NaN;
    this.maxLatency = Infinity;
    this.maxSpread = NaN;
    this.placedCount = 0;
    this.regionsKnown = false;
    this.regionCount = 0;
    this.players = 0;
    this.snapshotCount = -1;
    this.snapshotRegion = null;
    this.snapshotRoles = undefined;
    // Why candidates failed this anchor: reasons in the order first seen, with counts by reason id (zero again when the anchor is done).
    const { anchorReasons, anchorCounts, reasonNames: names } = mm;
    anchorReasons.length = 0;

    const anchorReason = this.tryAdd(anchor.index);
    if (anchorReason >= 0) {
      blameAt(l, anchor.index, anchorReason, names);
      return undefined;
    }
    if (this.complete()) this.remember();
    // Team sizes and the match's age change only when a ticket joins, so fullness is worked out then.
    let isFull = this.full();
    const walk = candidates instanceof Walk ? candidates : undefined;
    const list = candidates instanceof Walk ? undefined : candidates;
    let listed = 0;
    const atOf = l.at;
    // tryAdd written out for the candidates (the anchor has joined, so the match has an age): most are refused, by a batch rule, and this loop is a pass's hottest.
    for (;;) {
      let candidate: number;
      let reason: number;
      if (walk !== undefined) {
        // Candidates a batch rule refuses are blamed inside the walk; it stops at the first the batch rules let through.
        if (isFull) {
          walk.next();
          break;
        }
        candidate = walk.nextAdmitted(check, anchorCounts, anchorReasons);
        if (candidate < 0) break;
        reason = -1;
      } else {
        candidate = listed < list!.length ? list![listed++] : -1;
        if (candidate < 0 || isFull) break;
        reason = check.refusalAtAge(candidate);
      }
      const ticketAge = now - atOf[candidate];
      const a = newest ? Math.min(check.age, ticketAge) : Math.max(check.age, ticketAge);
      if (reason < 0) {
        const failed = this.tryJoin(candidate, a);
        if (failed === undefined) {
          if (this.complete()) this.remember();
          isFull = this.full();
          continue;
        }
        reason = mm.reasonId(failed);
      }
      blameAt(l, candidate, reason, names);
      if (anchorCounts[reason]++ === 0) anchorReasons.push(reason);
    }
    if (this.snapshotCount < 0) {
      // Tickets past the batch rule's widest reach were never tried: that rule held the anchor.
      const cut = walk !== undefined ? walk.cut : listCut;
      let best = mm.reasonId(cut && mm.reachRule !== undefined ? mm.reachRule : 'minPlayers');
      let most = 0;
      for (let j = 0; j < anchorReasons.length; j++) {
        const id = anchorReasons[j];
        if (anchorCounts[id] > most) [best, most] = [id, anchorCounts[id]];
        anchorCounts[id] = 0;
      }
      blameAt(l, anchor.index, best, names);
      return undefined;
    }
    for (let j = 0; j < anchorReasons.length; j++) {
      const id = anchorReasons[j];
      anchorCounts[id] = 0;
    }
    return this.match();
  }

  /** The largest complete match remembered: its tickets, and the match as a pass reports it. */
  private match(): { match: RuleSetMatch; entries: Entry[] } {
    const { teams, snapshotRoles, placed, placedTeam } = this;
    const group = this.l.group;
    const kept: Entry[] = [];
    const out: RuleSetMatch = {
      region: this.snapshotRegion,
      teams: teams.map(() => []),
      teamNames: teams.map((t) => t.name),
      players: teams.map(() => []),
      ...(snapshotRoles ? { roles: {} as Record<string, string> } : {}),
    };
    for (let p = 0; p < this.snapshotCount; p++) {
      const entry = group[placed[p]];
      const team = placedTeam[p];
      kept.push(entry);
      out.teams[team].push(entry.ticket.id);
      for (let j = 0; j < entry.ticket.players.length; j++) {
        const p = entry.ticket.players[j];
        out.players[team].push(p.id);
        if (snapshotRoles) out.roles![p.id] = snapshotRoles[p.id];
      }
    }
    return { match: out, entries: kept };
  }

  private sizesAt(a: number): void {
    this.sizesAge = a;
    const { teams, minOf, maxOf, mm } = this;
    for (let k = 0; k < this.teamCount; k++) {
      minOf[k] = stepped(mm.slotMinSteps[k], teams[k].def.minPlayers, a)!;
      maxOf[k] = Math.min(stepped(mm.slotMaxSteps[k], teams[k].def.maxPlayers, a)!, mm.slotRoleCap[k]);
    }
  }

  private teamMin(k: number, a: number): number {
    if (a !== this.sizesAge) this.sizesAt(a);
    return this.minOf[k];
  }

  private teamMax(k: number, a: number): number {
    if (a !== this.sizesAge) this.sizesAt(a);
    return this.maxOf[k];
  }

  private judge(rules: readonly CheckedRule[]): Rule | undefined {
    for (let j = 0; j < rules.length; j++) {
      const { rule, check } = rules[j];
      if (!(check ? check(this.view, this.param) : holds(rule, this.view, this.param, this.mm.byName))) return rule;
    }
    return undefined;
  }

  /** Whether a region's figures pass the latency rule (limits set by setLatencyLimits). */
  private acceptable(max: number, min: number, sum: number, count: number): boolean {
    if (max > this.maxLatency) return false;
    // No maxDistance is NaN here: no spread is above it.
    if (max - (this.mm.latency!.distanceReference === 'min' ? min : sum / count) > this.maxSpread) return false;
    return true;
  }

  private setLatencyLimits(a: number): void {
    const latency = this.mm.latency!;
    const steps = this.mm.ruleStepsOf.get(latency);
    this.maxLatency = stepped(steps?.get('maxLatency'), latency.maxLatency, a)!;
    this.maxSpread = stepped(steps?.get('maxDistance'), latency.maxDistance, a) ?? NaN;
  }

  /** Whether some region every player so far and the party at position i report passes the latency rule. */
  private reachable(i: number, count: number): boolean {
    const { regions, ping, pingMin, pingSum } = this.l;
    const stride = regions.length;
    const base = i * stride;
    if (!this.regionsKnown) {
      for (let g = 0; g < stride; g++) if (!Number.isNaN(ping[base + g]) && this.acceptable(ping[base + g], pingMin[base + g], pingSum[base + g], count)) return true;
      return false;
    }
    const { regionAt, regionMax, regionMin, regionSum } = this;
    for (let r = 0; r < this.regionCount; r++) {
      const at = base + regionAt[r];
      const ms = ping[at];
      if (Number.isNaN(ms)) continue;
      if (this.acceptable(Math.max(regionMax[r], ms), Math.min(regionMin[r], pingMin[at]), regionSum[r] + pingSum[at], count)) return true;
    }
    return false;
  }

  /** Narrows the regions to those the party at position i reports too, with its figures added. */
  private joinRegions(i: number): void {
    const { regions, ping, pingMin, pingSum } = this.l;
    const stride = regions.length;
    const base = i * stride;
    const { regionAt, regionMax, regionMin, regionSum } = this;
    if (!this.regionsKnown) {
      this.regionsKnown = true;
      let count = 0;
      for (let g = 0; g < stride; g++) {
        if (Number.isNaN(ping[base + g])) continue;
        regionAt[count] = g;
        regionMax[count] = ping[base + g];
        regionMin[count] = pingMin[base + g];
        regionSum[count] = pingSum[base + g];
        count++;
      }
      this.regionCount = count;
      return;
    }
    let kept = 0;
    for (let r = 0; r < this.regionCount; r++) {
      const at = base + regionAt[r];
      const ms = ping[at];
      if (Number.isNaN(ms)) continue;
      regionAt[kept] = regionAt[r];
      regionMax[kept] = Math.max(regionMax[r], ms);
      regionMin[kept] = Math.min(regionMin[r], pingMin[at]);
      regionSum[kept] = regionSum[r] + pingSum[at];
      kept++;
    }
    this.regionCount = kept;
  }

  /** Tries to add the ticket at position i of the batch; returns the id of the reason it cannot join, or -1 when it joined. */
  private tryAdd(i: number): number {
    const check = this.check;
    const ticketAge = this.now - this.l.at[i];
    const age = check.age;
    const a = Number.isNaN(age) ? ticketAge : this.newest ? Math.min(age, ticketAge) : Math.max(age, ticketAge);
    const refused = check.refusal(i, a);
    if (refused >= 0) return refused;
    const reason = this.tryJoin(i, a);
    return reason === undefined ? -1 : this.mm.reasonId(reason);
  }

  /** The rest of tryAdd, once the batch rules hold: the reason the ticket at position i cannot join a match of age a, or undefined when it joined. */
  private tryJoin(i: number, a: number): string | undefined {
    const size = this.l.size[i];
    const latency = this.mm.latency;
    if (latency) {
      this.setLatencyLimits(a);
      if (!this.reachable(i, this.players + size)) return latency.name;
    }
    const { teamCount, counts } = this;
    // Teams in FlexMatch's fill order: below their minimum first, then most open slots, then as listed.
    if (!this.needPlayers) {
      // Nothing is judged on the players: the first team in that order takes the ticket.
      let best = -1;
      let bestRank = 0;
      for (let k = 0; k < teamCount; k++) {
        const open = this.teamMax(k, a) - counts[k];
        if (open < size) continue;
        const rank = (counts[k] < this.teamMin(k, a) ? 1_000_000 : 0) + open;
        if (best < 0 || rank > bestRank) {
          best = k;
          bestRank = rank;
        }
      }
      if (best < 0) return 'maxPlayers';
      this.joined(i, best, size, a);
      return undefined;
    }
    const { fillOrder: order, ranks, teams } = this;
    let orderCount = 0;
    for (let k = 0; k < teamCount; k++) {
      const open = this.teamMax(k, a) - counts[k];
      if (open < size) continue;
      const rank = (counts[k] < this.teamMin(k, a) ? 1_000_000 : 0) + open;
      let at = orderCount;
      while (at > 0 && rank > ranks[order[at - 1]]) {
        order[at] = order[at - 1];
        at--;
      }
      order[at] = k;
      orderCount++;
      ranks[k] = rank;
    }
    if (orderCount === 0) return 'maxPlayers';
    let reason: string | undefined;
    this.paramAge = a;
    const early = this.mm.early;
    const entry = this.l.group[i];
    for (let o = 0; o < orderCount; o++) {
      const k = order[o];
      const team = teams[k];
      const before = team.players.length;
      if (team.roles) {
        let ok = true;
        for (let j = 0; j < entry.ticket.players.length; j++) {
          const p = entry.ticket.players[j];
          if (!(ok = team.roles.add(p.roles))) break;
        }
        if (!ok) {
          team.roles.truncate(before);
          reason ??= `teams[${team.name}].roles`;
          continue;
        }
      }
      for (let j = 0; j < entry.ticket.players.length; j++) {
        const p = entry.ticket.players[j];
        team.players.push(p);
      }
      const failed = early.length === 0 ? undefined : this.judge(early);
      if (failed) {
        team.players.length = before;
        team.roles?.truncate(before);
        reason ??= failed.name;
        continue;
      }
      if (team.roles)
        for (let j = 0; j < entry.ticket.players.length; j++) {
          const p = entry.ticket.players[j];
          team.roleOwners.push(p.id);
        }
      this.joined(i, k, size, a);
      return undefined;
    }
    return reason;
  }

  /** The ticket at position i (size players) joined team k, making the match's age a: the running figures take it in. */
  private joined(i: number, k: number, size: number, a: number): void {
    this.counts[k] += size;
    this.placed[this.placedCount] = i;
    this.placedTeam[this.placedCount] = k;
    this.placedCount++;
    this.check.age = a;
    this.players += size;
    this.check.join(i);
    if (this.l.pinged[i] === 1 || this.mm.latency) this.joinRegions(i);
  }

  private complete(): boolean {
    const age = this.check.age;
    for (let k = 0; k < this.teamCount; k++) if (this.counts[k] < this.teamMin(k, age)) return false;
    const late = this.mm.late;
    if (late.length === 0) return true;
    this.paramAge = age;
    const failed = this.judge(late);
    if (failed) {
      const reason = this.mm.reasonId(failed.name);
      if (this.mm.anchorCounts[reason]++ === 0) this.mm.anchorReasons.push(reason);
      return false;
    }
    return true;
  }

  private full(): boolean {
    const age = this.check.age;
    for (let k = 0; k < this.teamCount; k++) if (this.counts[k] < this.teamMax(k, age)) return false;
    return true;
  }

  private remember(): void {
    const latency = this.mm.latency;
    let region: string | null = null;
    if (this.regionsKnown) {
      if (latency) this.setLatencyLimits(this.check.age);
      const { regionAt, regionMax, regionMin, regionSum } = this;
      const allRegions = this.l.regions;
      // The lowest worst ping, then the lowest sum, then the name: one region whatever the order they are listed in.
      let best = -1;
      for (let r = 0; r < this.regionCount; r++) {
        if (latency && !this.acceptable(regionMax[r], regionMin[r], regionSum[r], this.players)) continue;
        if (
          best < 0 ||
          regionMax[r] < regionMax[best] ||
          (regionMax[r] === regionMax[best] && (regionSum[r] < regionSum[best] || (regionSum[r] === regionSum[best] && allRegions[regionAt[r]] < allRegions[regionAt[best]])))
        )
          best = r;
      }
      region = best < 0 ? null : allRegions[regionAt[best]];
    }
    if (this.hasRoles) {
      const roles: Record<string, string> = {};
      for (const t of this.teams) if (t.roles) t.roles.roles().forEach((role, k) => (roles[t.roleOwners[k]] = role));
      this.snapshotRoles = roles;
    }
    this.snapshotCount = this.placedCount;
    this.snapshotRegion = region;
  }
}

/**
 * Sorts entries by their order value, stably, reading the values from one
 * flat array rather than from each entry: the distinct values sorted by the
 * engine's numeric sort (no comparator called back), then the entries placed
 * by value in their order (a counting sort over the distinct values).
 * Returns where each entry went: placedAt[j] is the new position of the
 * entry that was at j.
 */
function sortByOrder(group: Entry[]): Int32Array {
  const n = group.length;
  const key = new Float64Array(n);
  let hasNaN = false;
  for (let k = 0; k < n; k++) {
    // -0 and 0 are one value, as they were to the comparator below.
    key[k] = group[k].order + 0;
    if (key[k] !== key[k]) hasNaN = true;
  }
  const copy = group.slice();
  if (hasNaN) {
    const positions: number[] = Array.from({ length: n }, (_, k) => k);
    positions.sort((a, b) => key[a] - key[b]);
    const placedAt = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      group[k] = copy[positions[k]];
      placedAt[positions[k]] = k;
    }
    return placedAt;
  }
  const values = key.slice().sort();
  let distinct = 0;
  for (let k = 0; k < n; k++) if (k === 0 || values[k] !== values[distinct - 1]) values[distinct++] = values[k];
  const slot = new Int32Array(n);
  const start = new Int32Array(distinct + 1);
  for (let k = 0; k < n; k++) {
    let lo = 0;
    let hi = distinct - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[mid] < key[k]) lo = mid + 1;
      else hi = mid;
    }
    slot[k] = lo;
    start[lo + 1]++;
  }
  for (let v = 0; v < distinct; v++) start[v + 1] += start[v];
  // slot becomes where each entry went.
  for (let k = 0; k < n; k++) {
    const at = start[slot[k]]++;
    group[at] = copy[k];
    slot[k] = at;
  }
  return slot;
}

/** Blames the ticket at position k of a batch, by reason id (names: the reasons by id). */
function blameAt(l: BatchList, k: number, id: number, names: readonly string[]): void {
  const first = l.firstWhy[k];
  if (first === id + 1) l.firstCount[k]++;
  else if (first === 0) {
    l.firstWhy[k] = id + 1;
    l.firstCount[k] = 1;
  } else if (l.secondWhy[k] === id + 1) l.secondCount[k]++;
  else if (l.secondWhy[k] === 0) {
    l.secondWhy[k] = id + 1;
    l.secondCount[k] = 1;
  } else later(l.group[k], names[id]);
}

/** Blames a ticket on the entry itself: a third reason and beyond, or a ticket outside every batch. */
function later(entry: Entry, reason: string): void {
  const reasons = entry.whyReasons;
  if (reasons === undefined) {
    entry.whyReasons = [reason];
    entry.whyCounts = [1];
    return;
  }
  const k = reasons.indexOf(reason);
  if (k >= 0) entry.whyCounts![k]++;
  else {
    reasons.push(reason);
    entry.whyCounts!.push(1);
  }
}

/**
 * An anchor's candidates taken lazily from its batch, one per next(): in age
 * order (outward is false), or outward from the anchor's ordering value,
 * nearest first, stopping at the widest a batch rule on that value can reach
 * (the first ticket past it on each side is blamed on that rule, and cut is
 * set). At most `left` candidates.
 */
class Walk {
  cut = false;
  private lo: number;
  private hi: number;
  private k: number;

  constructor(
    private readonly l: BatchList,
    private readonly index: number,
    private readonly outward: boolean,
    private left: number,
    private readonly centre: number,
    private readonly reach: number,
    private readonly reachId: number,
    private readonly names: readonly string[],
  ) {
    this.k = l.head;
    this.lo = l.prev[index];
    this.hi = l.next[index];
    if (outward) {
      if (this.lo >= 0 && this.beyond(this.lo)) this.lo = -1;
      if (this.hi >= 0 && this.beyond(this.hi)) this.hi = -1;
    }
  }

  /** The next candidate's position in the batch, or -1 when there is none. */
  next(): number {
    const { next, prev, order } = this.l;
    if (!this.outward) {
      let k = this.k;
      if (k === this.index) k = next[k];
      if (k < 0 || this.left-- <= 0) {
        this.k = k;
        return -1;
      }
      this.k = next[k];
      return k;
    }
    if (this.left-- <= 0) return -1;
    const lo = this.lo;
    const hi = this.hi;
    if (lo < 0 && hi < 0) return -1;
    if (hi < 0 || (lo >= 0 && this.centre - order[lo] <= order[hi] - this.centre)) {
      const p = prev[lo];
      this.lo = p >= 0 && this.beyond(p) ? -1 : p;
      return lo;
    }
    const n = next[hi];
    this.hi = n >= 0 && this.beyond(n) ? -1 : n;
    return hi;
  }

  /**
   * The next candidate the numeric batch rules let through, or -1 when there
   * is none: those they refuse on the way are blamed on the ticket and counted
   * for the anchor (anchorCounts by reason id, anchorReasons in the order
   * first seen). The pass's hottest loop: most candidates end here.
   */
  nextAdmitted(check: BatchCheck, anchorCounts: number[], anchorReasons: number[]): number {
    const l = this.l;
    const names = this.names;
    const { firstWhy, firstCount } = l;
    if (!this.outward) {
      for (;;) {
        const k = this.next();
        if (k < 0) return -1;
        const reason = check.refusalAtAge(k);
        if (reason < 0) return k;
        if (firstWhy[k] === reason + 1) firstCount[k]++;
        else blameAt(l, k, reason, names);
        if (anchorCounts[reason]++ === 0) anchorReasons.push(reason);
      }
    }
    // next() and check.refusalAtAge() written out over local copies of the walk's and the check's state.
    const { next, prev, order } = l;
    const { centre, reach } = this;
    let { lo, hi, left } = this;
    const { values, bounds, count, reasons, at, now, newest, age } = check;
    let { limitFrom, limitBefore } = check;
    let found = -1;
    for (;;) {
      if (left-- <= 0) break;
      if (lo < 0 && hi < 0) break;
      let k: number;
      // A neighbour with the same order value as k is within reach as k was: only a new value is measured against it.
      if (hi < 0 || (lo >= 0 && centre - order[lo] <= order[hi] - centre)) {
        k = lo;
        const p = prev[lo];
        lo = p >= 0 && order[p] !== order[k] && !(Math.abs(order[p] - centre) <= reach) ? this.cutAt(p) : p;
      } else {
        k = hi;
        const n = next[hi];
        hi = n >= 0 && order[n] !== order[k] && !(Math.abs(order[n] - centre) <= reach) ? this.cutAt(n) : n;
      }
      // The match's age with this ticket (the anchor has joined, so the age is a number), and the batch rules' limits for it.
      const ticketAge = now - at[k];
      const a = newest ? (ticketAge < age ? ticketAge : age) : ticketAge > age ? ticketAge : age;
      if (!(a >= limitFrom && a < limitBefore)) {
        check.limitsAt(a);
        limitFrom = check.limitFrom;
        limitBefore = check.limitBefore;
      }
      let reason = -1;
      const base = k * count;
      for (let r = 0; r < count; r++) {
        const v = values[base + r];
        // Math.max and Math.min written out (a NaN value refuses nothing, as there).
        const low = bounds[3 * r];
        const high = bounds[3 * r + 1];
        if ((v > high ? v : high) - (v < low ? v : low) > bounds[3 * r + 2] && v === v) {
          reason = reasons[r];
          break;
        }
      }
      if (reason < 0) {
        found = k;
        break;
      }
      if (firstWhy[k] === reason + 1) firstCount[k]++;
      else blameAt(l, k, reason, names);
      if (anchorCounts[reason]++ === 0) anchorReasons.push(reason);
    }
    this.lo = lo;
    this.hi = hi;
    this.left = left;
    return found;
  }

  /** The ticket at position k is past the reach: blamed on the reach rule; returns -1, the end of that side. */
  private cutAt(k: number): number {
    this.cut = true;
    blameAt(this.l, k, this.reachId, this.names);
    return -1;
  }

  private beyond(k: number): boolean {
    if (Math.abs(this.l.order[k] - this.centre) <= this.reach) return false;
    this.cutAt(k);
    return true;
  }
}

/**
 * The numeric batchDistance rules on one anchor's forming match: each rule's
 * lowest and highest party value so far, and its maxDistance for the ages in
 * [limitFrom, limitBefore) (between two expansion steps it is one value;
 * candidates' ages mostly fall in the same interval).
 */
class BatchCheck {
  /** The match's age (the anchor's until another ticket joins). */
  age = NaN;
  newest: boolean;
  readonly count: number;
  /** Per rule (rule × 3): the lowest party value so far, the highest, and the maxDistance for the ages in [limitFrom, limitBefore). */
  readonly bounds: Float64Array;
  limitFrom = NaN;
  limitBefore = NaN;
  values: Float64Array;
  at: Float64Array;

  constructor(
    l: BatchList,
    public now: number,
    newest: boolean,
    private readonly rules: readonly BatchDistanceRule[],
    private readonly steps: ReadonlyArray<Step[] | undefined>,
    private readonly waits: readonly number[],
    readonly reasons: readonly number[],
  ) {
    this.newest = newest;
    this.count = rules.length;
    this.bounds = new Float64Array(3 * this.count);
    this.values = l.batch;
    this.at = l.at;
    this.reset(l, now, newest);
  }

  /** Empty again, for an anchor of batch l. */
  reset(l: BatchList, now: number, newest: boolean): void {
    this.values = l.batch;
    this.at = l.at;
    this.now = now;
    this.newest = newest;
    this.age = NaN;
    for (let k = 0; k < this.count; k++) {
      this.bounds[3 * k] = Infinity;
      this.bounds[3 * k + 1] = -Infinity;
    }
  }

  /** The reason id of the first rule the ticket at position i breaks for a match of age a, or -1. */
  refusal(i: number, a: number): number {
    if (!(a >= this.limitFrom && a < this.limitBefore)) this.limitsAt(a);
    const { values, bounds, count } = this;
    const base = i * count;
    for (let k = 0; k < count; k++) {
      const v = values[base + k];
      // Math.max and Math.min written out (a NaN value refuses nothing, as there): the pass's hottest comparison.
      const low = bounds[3 * k];
      const high = bounds[3 * k + 1];
      if ((v > high ? v : high) - (v < low ? v : low) > bounds[3 * k + 2] && v === v) return this.reasons[k];
    }
    return -1;
  }

  /** refusal() for the age the match would have with the ticket at position i. */
  refusalAtAge(i: number): number {
    const ticketAge = this.now - this.at[i];
    return this.refusal(i, this.newest ? Math.min(this.age, ticketAge) : Math.max(this.age, ticketAge));
  }

  /** The ticket at position i joined: its values widen the spreads. */
  join(i: number): void {
    const { values, bounds, count } = this;
    for (let k = 0; k < count; k++) {
      const v = values[i * count + k];
      bounds[3 * k] = Math.min(bounds[3 * k], v);
      bounds[3 * k + 1] = Math.max(bounds[3 * k + 1], v);
    }
  }

  /** Sets the batch rules' maxDistance for age a, and the interval of ages [limitFrom, limitBefore) it holds for. */
  limitsAt(a: number): void {
    // No maxDistance bounds nothing: a spread is never above it, as never above Infinity.
    for (let k = 0; k < this.count; k++) this.bounds[3 * k + 2] = stepped(this.steps[k], this.rules[k].maxDistance, a) ?? Infinity;
    // A NaN age is worked out each time (no interval holds it).
    this.limitFrom = Number.isNaN(a) ? NaN : -Infinity;
    this.limitBefore = Infinity;
    for (let w = 0; w < this.waits.length; w++) {
      if (this.waits[w] <= a) this.limitFrom = this.waits[w];
      else {
        this.limitBefore = this.waits[w];
        break;
      }
    }
  }
}

/** A property's value under expansion steps (sorted by wait) for a match of the given age. */
function stepped(steps: readonly Step[] | undefined, base: number | undefined, age: number): number | undefined {
  if (steps === undefined) return base;
  let value = base;
  for (let k = 0; k < steps.length; k++) if (steps[k].waitTimeSeconds <= age) value = steps[k].value;
  return value;
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
