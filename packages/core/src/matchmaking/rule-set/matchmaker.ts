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
import { type FillPool, RuleSetBackfills, type RuleSetBackfill, type RuleSetBackfillInput, type RuleSetBackfillResult } from './backfill.js';
import { type BatchList, blameAt, type Entry, later, type Narrowing, sortByOrder, type Step, stepped, Walk } from './batch.js';
import { compileRule } from './compile.js';
import { holds, type Param } from './evaluate.js';
import { type CheckedRule, FormingMatch } from './forming.js';
import { judgedWhenComplete, parseRuleSet } from './parse.js';
import { type AttributeSource, parseRuleSetTicket, type RuleSetTicket, type RuleSetTicketInput } from './ticket.js';
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
  /** How a walk narrows as its match forms (undefined without reach rules). */
  private readonly narrowing: Narrowing | undefined;
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
    const narrowed = this.numericBatch.findIndex((r) => r.name === this.reachRules[0]?.name);
    if (narrowed >= 0) this.narrowing = { rule: narrowed, widestFrom: (age) => this.reachFrom(age) };
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
   * How far in the ordering value a candidate can be from the values of a
   * match of this age and still join it: each batch rule on that value bounds
   * it by its widest maxDistance over the ages the match can still have (this
   * age or less when expansions follow the newest ticket, this age or more
   * when they follow the oldest). Nothing past it is ever admitted: an
   * anchor's walk stops there from the anchor's value, and as tickets join,
   * from the match's lowest and highest values (Narrowing, batch.ts).
   */
  private reachFrom(age: number): number {
    const newest = this.ruleSet.algorithm.expansionAgeSelection === 'newest';
    let reach = Infinity;
    for (let r = 0; r < this.reachRules.length; r++) {
      const { base, steps } = this.reachRules[r];
      let widest = newest ? base : (stepped(steps, base, age) ?? Infinity);
      for (let k = 0; k < steps.length; k++) if (newest ? steps[k].waitTimeSeconds <= age : steps[k].waitTimeSeconds > age) widest = Math.max(widest, steps[k].value);
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
    const reach = outward && !shuffled ? this.reachFrom(now - anchor.at) : this.orderReach;
    const walk = new Walk(l, anchor.index, outward, this.options.searchWindow, anchor.order, reach, reachId, this.reasonNames, outward ? this.narrowing : undefined);
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

function isParsed(value: unknown): value is RuleSet {
  return (
    typeof value === 'object' &&
    value !== null &&
    'large' in value &&
    Array.isArray((value as RuleSet).rules) &&
    (value as RuleSet).rules.every((r) => typeof r === 'object' && r !== null && 'index' in r)
  );
}
