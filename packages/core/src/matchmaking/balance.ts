/**
 * Team balance for a set of players already chosen for one match (a lobby, a
 * custom game, a rematch): split them into equal teams, parties kept whole,
 * so that the predicted result is as close to even as the players allow.
 *
 * The measure, for k teams with predicted win probabilities p_0 … p_{k−1}:
 *
 *   imbalance = max_i |p_i − 1/k|
 *
 * For two teams that is |p_0 − 0.5| (p_1 = 1 − p_0). For more it is the
 * largest distance of any team from an equal share: a split is only as even
 * as its most favoured (or least favoured) team.
 *
 * - Exact: every split is tried (capacity pruning; teams are interchangeable,
 *   so a party may open only the first empty team — the first party always
 *   lands on team 0 — and each split is scored once), up to `exactPlayers`
 *   players while there are at most `exactSplits` splits. Two teams of 16
 *   players have C(15, 7) = 6 435 splits.
 * - Heuristic, beyond that: three starts (greedy largest-then-strongest
 *   party first to the team with room and the least strength so far; the
 *   same greedy strongest first; a snake draft), each improved by
 *   best-improvement exchanges of equal player counts between two teams (one
 *   party for one, one for two), scored by `predict`, until none helps; the
 *   best end wins. Its gap to the exact answer is measured in
 *   `npm run bench -- balance` (docs/MATCHMAKING.md).
 *
 * - Deadline (option `deadlineMs`): both searches look at the clock after
 *   each split they score and stop once it has passed, keeping the best split
 *   so far. An exhaustive search cut short also scores the heuristic's
 *   starts, so the answer is never worse than a greedy one; either way the
 *   answer says `exact: false` and `deadlineReached: true`. The clock is an
 *   option (`clock`) so tests can drive it.
 *
 * `predict` must treat teams as interchangeable (reordering the teams
 * reorders the answer) and ignore the order of players in a team, as every
 * `RatingSystem.predict` does. The heuristic also calls it with two teams.
 */
import { InvalidInputError } from '../core/errors.js';

export interface BalancePlayer<S> {
  id: string;
  /** Whatever `predict` reads, e.g. a `PlayerState`. */
  state: S;
}

export interface BalanceRequest<S> {
  players: readonly BalancePlayer<S>[];
  /** Groups of player ids that must play on the same team; players in none play solo. */
  parties?: readonly (readonly string[])[];
  /** Number of teams, 2 or more. @default 2 */
  teams?: number;
}

export interface BalanceOptions {
  /** Exhaustive search up to this many players. @default 16 */
  exactPlayers?: number;
  /** … and while the number of distinct splits is at most this. @default 200 000 */
  exactSplits?: number;
  /**
   * Milliseconds (by `clock`) after which the search stops and answers with
   * the best split found so far; at least one split is always scored.
   * @default no deadline
   */
  deadlineMs?: number;
  /** Milliseconds from any fixed origin. @default performance.now */
  clock?: () => number;
}

/** Win probability of each team, e.g. `RatingSystem.predict`. */
export type TeamPredictor<S> = (teams: S[][]) => number[];

export interface BalanceResult {
  /** Player ids per team, each in input order; teams ordered by their first player's input position. */
  teams: string[][];
  /** `predict` of these teams. */
  probabilities: number[];
  /** max_i |probabilities[i] − 1/k|; 0 is perfectly even. */
  imbalance: number;
  /** Whether every split was tried (false when the deadline cut an exhaustive search short). */
  exact: boolean;
  /** Whether the search stopped at `deadlineMs` rather than on its own. */
  deadlineReached: boolean;
  /** Splits scored (calls of `predict` for whole splits). */
  evaluated: number;
}

export const BALANCE_DEFAULTS = Object.freeze({ exactPlayers: 16, exactSplits: 200_000 });

interface Unit {
  /** Player indexes (input order). */
  members: number[];
  size: number;
}

/** The measure: largest distance of a team's win probability from 1/k. */
export function imbalanceOf(probabilities: readonly number[]): number {
  const even = 1 / probabilities.length;
  let worst = 0;
  for (const p of probabilities) worst = Math.max(worst, Math.abs(p - even));
  return worst;
}

/**
 * Splits the players into `teams` equal teams, parties whole, minimising
 * `imbalanceOf(predict(teams))`. Deterministic: ties keep the first split
 * found, in an order fixed by the input order.
 */
export function balance<S>(request: BalanceRequest<S>, predict: TeamPredictor<S>, options: BalanceOptions = {}): BalanceResult {
  const { units, k, capacity } = validate(request);
  const states = request.players.map((p) => p.state);
  const exactPlayers = options.exactPlayers ?? BALANCE_DEFAULTS.exactPlayers;
  const exactSplits = options.exactSplits ?? BALANCE_DEFAULTS.exactSplits;
  for (const [field, value] of [
    ['exactPlayers', exactPlayers],
    ['exactSplits', exactSplits],
  ] as const) {
    if (!Number.isInteger(value) || value < 0) throw new InvalidInputError(`must be a non-negative integer, got ${value}`, { field });
  }
  const clock = options.clock ?? (() => performance.now());
  if (options.deadlineMs !== undefined && !(options.deadlineMs >= 0))
    throw new InvalidInputError(`must be a non-negative number of milliseconds, got ${options.deadlineMs}`, { field: 'deadlineMs' });
  const end = options.deadlineMs === undefined ? Infinity : clock() + options.deadlineMs;
  const deadline: Deadline = { passed: () => end !== Infinity && clock() >= end, reached: false };
  // Largest parties first: capacity failures show near the root. The searches work on `sorted`.
  const order = units.map((_, u) => u).sort((a, b) => units[b].size - units[a].size || a - b);
  const sorted = order.map((u) => units[u]);
  const score = (assignment: Int32Array): { probabilities: number[]; imbalance: number } => {
    const probabilities = checkedPredict(predict, teamsOf(assignment, sorted, k, states), k);
    return { probabilities, imbalance: imbalanceOf(probabilities) };
  };
  let best: { assignment: Int32Array; imbalance: number; evaluated: number; exact: boolean };
  if (request.players.length <= exactPlayers && countSplits(sorted, k, capacity, exactSplits) <= exactSplits) {
    best = exactSearch(sorted, k, capacity, score, deadline);
    if (deadline.reached) {
      // Cut short, the canonical order has only seen splits that differ in the last parties: the heuristic's starts (its local search stops at once) may be far better.
      const starts = heuristic(sorted, k, capacity, states, predict, score, deadline);
      if (starts.evaluated > 0 && starts.imbalance < best.imbalance) best = { ...starts, evaluated: best.evaluated + starts.evaluated };
      else best.evaluated += starts.evaluated;
    }
  } else {
    best = heuristic(sorted, k, capacity, states, predict, score, deadline);
  }
  if (best.evaluated === 0) throw new InvalidInputError(`parties of sizes ${units.map((u) => u.size).join(', ')} cannot fill ${k} teams of ${capacity}`, { field: 'parties' });
  // Back to input unit order, then teams by their first player.
  const assignment = new Int32Array(units.length);
  order.forEach((u, position) => (assignment[u] = best.assignment[position]));
  const members: number[][] = Array.from({ length: k }, () => []);
  units.forEach((unit, u) => members[assignment[u]].push(...unit.members));
  for (const team of members) team.sort((a, b) => a - b);
  members.sort((a, b) => a[0] - b[0]);
  const probabilities = checkedPredict(
    predict,
    members.map((team) => team.map((i) => states[i])),
    k,
  );
  return {
    teams: members.map((team) => team.map((i) => request.players[i].id)),
    probabilities,
    imbalance: imbalanceOf(probabilities),
    exact: best.exact && !deadline.reached,
    deadlineReached: deadline.reached,
    evaluated: best.evaluated,
  };
}

/** The search's deadline: `passed()` reads the clock; `reached` records that a search stopped on it. */
interface Deadline {
  passed(): boolean;
  reached: boolean;
}

function validate<S>(request: BalanceRequest<S>): { units: Unit[]; k: number; capacity: number } {
  const k = request.teams ?? 2;
  if (!Number.isInteger(k) || k < 2) throw new InvalidInputError(`must be a whole number of at least 2, got ${k}`, { field: 'teams' });
  const players = request.players;
  if (!Array.isArray(players) || players.length === 0) throw new InvalidInputError('must hold at least one player', { field: 'players' });
  const index = new Map<string, number>();
  players.forEach((player, i) => {
    if (typeof player?.id !== 'string' || player.id.length === 0) throw new InvalidInputError('must be a non-empty string', { field: `players[${i}].id` });
    if (index.has(player.id)) throw new InvalidInputError(`player "${player.id}" appears twice (first at players[${index.get(player.id)}])`, { field: `players[${i}].id` });
    index.set(player.id, i);
  });
  if (players.length % k !== 0) throw new InvalidInputError(`${players.length} players cannot make ${k} teams of equal size`, { field: 'players' });
  const capacity = players.length / k;
  const partyOf = new Int32Array(players.length).fill(-1);
  const units: Unit[] = [];
  (request.parties ?? []).forEach((party, p) => {
    if (!Array.isArray(party) || party.length === 0) throw new InvalidInputError('must be a non-empty array of player ids', { field: `parties[${p}]` });
    if (party.length > capacity) throw new InvalidInputError(`party of ${party.length} is larger than a team of ${capacity}`, { field: `parties[${p}]` });
    const members: number[] = [];
    party.forEach((id, j) => {
      const i = index.get(id);
      if (i === undefined) throw new InvalidInputError(`"${String(id)}" is not one of the players`, { field: `parties[${p}][${j}]` });
      if (partyOf[i] === p) throw new InvalidInputError(`player "${id}" appears twice in the party`, { field: `parties[${p}][${j}]` });
      if (partyOf[i] !== -1) throw new InvalidInputError(`player "${id}" is already in parties[${partyOf[i]}]`, { field: `parties[${p}][${j}]` });
      partyOf[i] = p;
      members.push(i);
    });
    units.push({ members, size: members.length });
  });
  for (let i = 0; i < players.length; i++) if (partyOf[i] === -1) units.push({ members: [i], size: 1 });
  // Parties in the order of their first player, so the answer does not depend on how `parties` is listed.
  units.sort((a, b) => Math.min(...a.members) - Math.min(...b.members));
  return { units, k, capacity };
}

function teamsOf<S>(assignment: Int32Array, units: readonly Unit[], k: number, states: readonly S[]): S[][] {
  const teams: S[][] = Array.from({ length: k }, () => []);
  for (let u = 0; u < units.length; u++) for (const i of units[u].members) teams[assignment[u]].push(states[i]);
  return teams;
}

function checkedPredict<S>(predict: TeamPredictor<S>, teams: S[][], k: number): number[] {
  const probabilities = predict(teams);
  if (!Array.isArray(probabilities) || probabilities.length !== k || probabilities.some((p) => typeof p !== 'number' || !(p >= 0 && p <= 1))) {
    throw new InvalidInputError(`must return ${k} probabilities in [0, 1], got ${JSON.stringify(probabilities)}`, { field: 'predict' });
  }
  return probabilities;
}

/**
 * Walks the canonical splits: unit u (largest first) goes to a team with
 * room; an empty team only if it is the first empty one (teams are
 * interchangeable, so this visits each split once and puts unit 0 on team
 * 0). Calls `leaf` for each complete split; stops when it returns true.
 */
function walkSplits(units: readonly Unit[], k: number, capacity: number, assignment: Int32Array, leaf: () => boolean): void {
  const room = new Int32Array(k).fill(capacity);
  const visit = (u: number): boolean => {
    if (u === units.length) return leaf();
    const size = units[u].size;
    for (let t = 0; t < k; t++) {
      if (room[t] < size) continue;
      const empty = room[t] === capacity;
      room[t] -= size;
      assignment[u] = t;
      const stop = visit(u + 1);
      room[t] += size;
      if (stop) return true;
      if (empty) break; // the later empty teams give the same splits
    }
    return false;
  };
  visit(0);
}

/** Distinct splits, counting no further than `cap + 1`. */
function countSplits(units: readonly Unit[], k: number, capacity: number, cap: number): number {
  let count = 0;
  walkSplits(units, k, capacity, new Int32Array(units.length), () => ++count > cap);
  return count;
}

type Scorer = (assignment: Int32Array) => { probabilities: number[]; imbalance: number };

function exactSearch(units: readonly Unit[], k: number, capacity: number, score: Scorer, deadline: Deadline) {
  const assignment = new Int32Array(units.length);
  const best = { assignment: new Int32Array(units.length), imbalance: Infinity, evaluated: 0, exact: true };
  walkSplits(units, k, capacity, assignment, () => {
    best.evaluated++;
    const { imbalance } = score(assignment);
    if (imbalance < best.imbalance) {
      best.imbalance = imbalance;
      best.assignment.set(assignment);
    }
    if (imbalance === 0) return true; // cannot do better than perfectly even
    if (deadline.passed()) return (deadline.reached = true);
    return false;
  });
  return best;
}

function heuristic<S>(units: readonly Unit[], k: number, capacity: number, states: readonly S[], predict: TeamPredictor<S>, score: Scorer, deadline: Deadline) {
  // A player's strength: their chance, alone, against everyone (monotone in
  // skill for every system); a party's is the sum of its players'.
  const everyone = [...states];
  const strength = states.map((state) => checkedPredict(predict, [[state], everyone], 2)[0]);
  const unitStrength = units.map((unit) => unit.members.reduce((sum, i) => sum + strength[i], 0));
  // Three starts, each improved by local search; the best end wins.
  const starts = [greedy(units, unitStrength, k, capacity, true), greedy(units, unitStrength, k, capacity, false), snake(units, unitStrength, k, capacity)].filter(
    (start): start is Int32Array => start !== null,
  );
  if (starts.length === 0) {
    const packed = pack(units, k, capacity);
    if (packed === null) return { assignment: new Int32Array(units.length), imbalance: Infinity, evaluated: 0, exact: false };
    starts.push(packed);
  }
  let best = { assignment: starts[0], imbalance: Infinity, squares: Infinity };
  let evaluated = 0;
  const seen = new Set<string>();
  for (const start of starts) {
    const key = start.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    const end = localSearch(units, start, score, deadline);
    evaluated += end.evaluated;
    if (better(end, best)) best = end;
  }
  return { assignment: best.assignment, imbalance: best.imbalance, evaluated, exact: false };
}

interface Ranked {
  imbalance: number;
  /** Sum of squared distances from 1/k. */
  squares: number;
}

/**
 * Moves are ranked by the measure, then by the sum of squared distances from
 * 1/k: with three teams or more a move that evens out two teams without
 * touching the worst one still counts, so the search does not stall on a
 * plateau of the maximum.
 */
function ranked(probabilities: readonly number[]): Ranked {
  let squares = 0;
  for (const p of probabilities) squares += (p - 1 / probabilities.length) ** 2;
  return { imbalance: imbalanceOf(probabilities), squares };
}

function better(a: Ranked, b: Ranked): boolean {
  return a.imbalance < b.imbalance - 1e-15 || (a.imbalance <= b.imbalance + 1e-15 && a.squares < b.squares - 1e-15);
}

/** Best-improvement exchanges of equal player counts between two teams (one unit for one, one for two) until none helps. */
function localSearch(units: readonly Unit[], start: Int32Array, score: Scorer, deadline: Deadline) {
  const assignment = Int32Array.from(start);
  let current = ranked(score(assignment).probabilities);
  let evaluated = 1;
  const trial = new Int32Array(assignment.length);
  // Once the deadline has passed, every later start is only scored, and the current round's moves are skipped.
  let stopped = deadline.reached || deadline.passed();
  if (stopped) deadline.reached = true;
  for (let round = 0; round < 4 * units.length && current.imbalance > 0 && !stopped; round++) {
    const best = { ...current, move: [] as number[], targets: [] as number[] };
    const consider = (move: number[], targets: number[]) => {
      if (stopped) return;
      if (deadline.passed()) {
        stopped = deadline.reached = true;
        return;
      }
      trial.set(assignment);
      move.forEach((u, j) => (trial[u] = targets[j]));
      const candidate = ranked(score(trial).probabilities);
      evaluated++;
      if (better(candidate, best)) Object.assign(best, candidate, { move, targets });
    };
    for (let a = 0; a < units.length; a++) {
      const ta = assignment[a];
      for (let b = a + 1; b < units.length; b++) {
        if (assignment[b] !== ta && units[a].size === units[b].size) consider([a, b], [assignment[b], ta]);
      }
      // A party for two smaller units that sit together on another team.
      if (units[a].size < 2) continue;
      for (let b = 0; b < units.length; b++) {
        const tb = assignment[b];
        if (tb === ta || units[b].size >= units[a].size) continue;
        for (let c = b + 1; c < units.length; c++) {
          if (assignment[c] === tb && units[b].size + units[c].size === units[a].size) consider([a, b, c], [tb, ta, ta]);
        }
      }
    }
    if (best.move.length === 0) break;
    best.move.forEach((u, j) => (assignment[u] = best.targets[j]));
    current = { imbalance: best.imbalance, squares: best.squares };
  }
  return { assignment, ...current, evaluated };
}

/**
 * Strongest unit first (largest first when `bySize`), each to the team with
 * room and the least strength so far; null when it paints itself into a
 * corner.
 */
function greedy(units: readonly Unit[], strength: readonly number[], k: number, capacity: number, bySize: boolean): Int32Array | null {
  const order = units.map((_, u) => u).sort((a, b) => (bySize ? units[b].size - units[a].size : 0) || strength[b] - strength[a] || a - b);
  const room = new Array<number>(k).fill(capacity);
  const total = new Array<number>(k).fill(0);
  const assignment = new Int32Array(units.length);
  for (const u of order) {
    let pick = -1;
    for (let t = 0; t < k; t++) if (room[t] >= units[u].size && (pick === -1 || total[t] < total[pick])) pick = t;
    if (pick === -1) return null;
    assignment[u] = pick;
    room[pick] -= units[u].size;
    total[pick] += strength[u];
  }
  return assignment;
}

/** A draft: strongest unit first, teams picking in snake order (0, 1, …, k−1, k−1, …, 0), a full team passing its turn; null when stuck. */
function snake(units: readonly Unit[], strength: readonly number[], k: number, capacity: number): Int32Array | null {
  const order = units.map((_, u) => u).sort((a, b) => strength[b] / units[b].size - strength[a] / units[a].size || a - b);
  const room = new Array<number>(k).fill(capacity);
  const assignment = new Int32Array(units.length);
  let turn = 0;
  for (const u of order) {
    let pick = -1;
    for (let tries = 0; tries < 2 * k && pick === -1; tries++, turn++) {
      const round = Math.floor(turn / k) % 2;
      const t = round === 0 ? turn % k : k - 1 - (turn % k);
      if (room[t] >= units[u].size) pick = t;
    }
    if (pick === -1) return null;
    assignment[u] = pick;
    room[pick] -= units[u].size;
  }
  return assignment;
}

/**
 * Any split that fits (bin packing of the party sizes into k teams), or null.
 * Backtracks over the parties only (solos fill whatever room is left) and
 * remembers room vectors already known to fail.
 */
function pack(units: readonly Unit[], k: number, capacity: number): Int32Array | null {
  const assignment = new Int32Array(units.length);
  const room = new Array<number>(k).fill(capacity);
  const parties = units.map((_, u) => u).filter((u) => units[u].size > 1);
  const failed = new Set<string>();
  const visit = (j: number): boolean => {
    if (j === parties.length) return true;
    const key = `${j}:${[...room].sort((a, b) => a - b).join(',')}`;
    if (failed.has(key)) return false;
    const u = parties[j];
    const tried = new Set<number>();
    for (let t = 0; t < k; t++) {
      if (room[t] < units[u].size || tried.has(room[t])) continue;
      tried.add(room[t]);
      room[t] -= units[u].size;
      assignment[u] = t;
      if (visit(j + 1)) return true;
      room[t] += units[u].size;
    }
    failed.add(key);
    return false;
  };
  if (!visit(0)) return null;
  let t = 0;
  for (let u = 0; u < units.length; u++) {
    if (units[u].size > 1) continue;
    while (room[t] === 0) t++;
    assignment[u] = t;
    room[t]--;
  }
  return assignment;
}
