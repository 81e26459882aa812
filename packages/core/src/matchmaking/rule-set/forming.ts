/**
 * One anchor's forming match in a rule-set pass (FormingMatch): the teams it
 * fills in FlexMatch's order, the rules judged as tickets join, the regions
 * every player reaches, and the largest complete match so far.
 */
import { BatchCheck, type BatchList, blameAt, type Entry, type Step, stepped, Walk } from './batch.js';
import type { CompiledRule } from './compile.js';
import { holds, type Param } from './evaluate.js';
import type { MatchView } from './expression.js';
import type { RuleSetMatch } from './matchmaker.js';
import { RoleAssignment } from './roles.js';
import type { RuleSetPlayer } from './ticket.js';
import type { BatchDistanceRule, LatencyRule, Rule, TeamDef } from './types.js';

export interface TeamSlot {
  name: string;
  def: TeamDef;
  players: RuleSetPlayer[];
  tickets: string[];
  roles?: RoleAssignment;
  roleOwners: string[];
}

/** A rule judged on a forming or complete match, with its compiled check when it has one. */
export interface CheckedRule {
  rule: Rule;
  check: CompiledRule | undefined;
}

/** What a forming match reads of its matchmaker: the rule set compiled, and the pass's reasons. */
export interface FormingRules {
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
export class FormingMatch {
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
