/**
 * Matchmaking simulator: a population with hidden true skills queues over
 * simulated days, is matched by the matchmaker on the percentiles of a rating
 * system, plays, and is rated. Reports what players would feel (waits, ping,
 * close games) and how fast ratings find the truth.
 *
 * Model (kept simple on purpose, every constant is an option or named here):
 * - true skill ~ Normal(0, 1); a team's performance is the sum of its
 *   players' skill plus Normal(0, 1) noise each; the higher total wins.
 * - players live in four regions (eu 35 %, na 35 %, asia 20 %, sa 10 %),
 *   15–60 ms at home, 80–220 ms elsewhere; maxPing 100–150 ms.
 * - 25 % of players belong to a fixed party of 2–3 friends who queue
 *   together; 20 % of players use a strict filter.
 * - arrivals follow the day: an idle player queues in a tick with a
 *   probability that peaks in the evening (sinusoid over 24 h, peak 20:00).
 * - matches last `matchSeconds`; then players idle again.
 * - optional, for the integrity report (all off by default, and then the
 *   run is exactly what it was without them): honest quits (`quitRate`: each
 *   player of a match quits with this chance, at a uniform 30–90 % of the
 *   match), and cheaters (`cheats`) who play arranged matches outside the
 *   matchmaker — the two of a pair on opposite teams, filled with random
 *   idle players — besides their normal queueing. Win-traders (any two solo
 *   players) take turns winning; boosters (a player from the top tenth of
 *   true skill) always lose to their boostee (one from the bottom half) and
 *   quit `boosterQuitShare` of those matches.
 */
import { createSystem, describeSystem, InvalidInputError, type Match, type PlayerState, systemsWhere, type SystemName } from 'ladder-core';
import { Leaderboard } from 'ladder-core/standings/leaderboard.js';
import { Matchmaker } from 'ladder-core/matchmaking/matchmaker.js';
import type { FormedMatch } from 'ladder-core/matchmaking/matchmaker.js';
import type { Ticket } from 'ladder-core/matchmaking/ticket.js';
import { DEFAULT_REGIONS, pickWeighted, pingsFrom, seededRandom } from 'ladder-core/matchmaking/synthetic-queue.js';

export interface SimulationOptions {
  /** @default 3000 */
  players?: number;
  /** @default 2 */
  days?: number;
  /** Players per team. @default 6 */
  teamSize?: number;
  /** Rating system driving percentiles. @default 'teamrank' */
  system?: SystemName;
  /** @default 1 */
  seed?: number;
  /** Seconds between matchmaking passes (the simulation tick). @default 10 */
  tickSeconds?: number;
  /** @default 600 */
  matchSeconds?: number;
  /** Mean queue joins per idle player per hour at the daily peak. @default 1.2 */
  peakJoinsPerHour?: number;
  /** Placement matches before a percentile shows. @default 10 */
  placementMatches?: number;
  /** |percentile − true percentile| that counts as settled. @default 10 */
  settleTolerance?: number;
  /** Matches for the rating-error curve. @default 60 */
  curveMatches?: number;
  /** Chance each player of a matchmade match quits partway (honest quits). @default 0 */
  quitRate?: number;
  /** Cheaters injected into the population. @default none */
  cheats?: CheatOptions;
  /** Keep every rated match (matchmade and arranged) in the report's `log`. @default false */
  keepLog?: boolean;
}

export interface CheatOptions {
  /** Pairs of win-traders. @default 0 */
  winTraders?: number;
  /** Booster pairs (a strong booster, a weak boostee). @default 0 */
  boosters?: number;
  /** Arranged matches each cheating pair tries to play per day (when both are idle). @default 6 */
  arrangedPerDay?: number;
  /** Share of arranged matches in which the booster quits. @default 0.5 */
  boosterQuitShare?: number;
}

/** Who cheated, for scoring a detector. */
export interface InjectedCheaters {
  /** Win-trading pairs. */
  winTraders: Array<[string, string]>;
  boosters: Array<{ booster: string; boostee: string }>;
  /** Arranged matches played. */
  arrangedMatches: number;
}

export interface Quantiles {
  count: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface SimulationReport {
  system: SystemName;
  options: Required<SimulationOptions>;
  matches: number;
  /** Seconds waited per ticket, by band of the ticket's mean percentile at queueing. */
  waitByPercentileBand: Record<string, Quantiles>;
  waitByRegion: Record<string, Quantiles>;
  waitByPartySize: Record<string, Quantiles>;
  waitAll: Quantiles;
  /** Share of matches whose win probability, predicted by the system, is in [0.45, 0.55]. */
  predictedClose: number;
  /** Share of matches whose predicted win probability for the weaker side is below 0.40. */
  predictedLopsided: number;
  /** Same two shares from the hidden true skills. */
  trueClose: number;
  trueLopsided: number;
  /** Percentile spread (max − min) per match. */
  percentileSpread: Quantiles;
  /** Share of matches formed at each widening step (0 = own filters). */
  wideningSteps: Record<string, number>;
  /** p95 of the worst ping in a match (ms). */
  worstPingP95: number;
  /** Matches until a player's percentile stays within the tolerance of their true percentile. */
  matchesToSettle: { settled: number; notSettled: number; p50: number; p90: number };
  /** Mean |percentile − true percentile| after k matches, k = 1..curveMatches. */
  errorCurve: number[];
  /** Every rated match in order, with `keepLog`. */
  log?: Match[];
  /** The injected cheaters, with `cheats`. */
  cheaters?: InjectedCheaters;
}

interface SimPlayer {
  id: string;
  skill: number;
  truePercentile: number;
  home: number;
  pings: Record<string, number>;
  within: number;
  strict: boolean;
  maxPing: number;
  party: number;
  busyUntil: number;
  queued: boolean;
  /** Percentile error after each match. */
  errors: number[];
}

function normal(random: () => number): number {
  // Box–Muller.
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export function quantiles(values: number[]): Quantiles {
  if (values.length === 0) return { count: 0, p50: NaN, p90: NaN, p99: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

const SIM_DEFAULTS: Required<SimulationOptions> = {
  players: 3000,
  days: 2,
  teamSize: 6,
  system: 'teamrank',
  seed: 1,
  tickSeconds: 10,
  matchSeconds: 600,
  peakJoinsPerHour: 1.2,
  placementMatches: 10,
  settleTolerance: 10,
  curveMatches: 60,
  quitRate: 0,
  cheats: {},
  keepLog: false,
};

const CHEAT_DEFAULTS: Required<CheatOptions> = { winTraders: 0, boosters: 0, arrangedPerDay: 6, boosterQuitShare: 0.5 };

/**
 * The systems the simulator can drive: those that rate matches by placement
 * alone (its matches have a winner, not raw scores) and rate them one at a
 * time from stored states (not whole-history systems).
 */
export function simulatedSystems(): SystemName[] {
  return systemsWhere((d) => !d.capabilities.needsScores && !d.capabilities.wholeHistory).map((d) => d.name);
}

/** `name` as a system the simulator can drive, else an InvalidInputError naming `field`. */
export function simulatedSystem(name: string, field = 'system'): SystemName {
  const descriptor = describeSystem(name, field);
  if (!simulatedSystems().includes(descriptor.name)) {
    throw new InvalidInputError(`the simulator plays matches by placement and rates them from stored states; ${name} cannot; use ${simulatedSystems().join(', ')}`, { field });
  }
  return descriptor.name;
}

/** What a simulation tells its caller while it runs. */
export interface SimulationHooks {
  /** Ticks done of the total (the simulated time in steps of `tickSeconds`), once per simulated hour and at the end. */
  onProgress?: (done: number, total: number) => void;
}

export function simulate(options: SimulationOptions = {}, hooks: SimulationHooks = {}): SimulationReport {
  const o: Required<SimulationOptions> = { ...SIM_DEFAULTS, ...options };
  const random = seededRandom(o.seed);
  const system = createSystem(simulatedSystem(o.system));
  const board = new Leaderboard({ placementMatches: o.placementMatches, initialCapacity: o.players });
  const matchmaker = new Matchmaker({ teamSize: o.teamSize });
  const states = new Map<string, PlayerState>();

  // Population.
  const players: SimPlayer[] = [];
  for (let i = 0; i < o.players; i++) {
    const home = pickWeighted(
      DEFAULT_REGIONS.map((r) => r.weight),
      random,
    );
    const strict = random() < 0.2;
    players.push({
      id: `p${i}`,
      skill: normal(random),
      truePercentile: 0,
      home,
      pings: pingsFrom(home, DEFAULT_REGIONS, random),
      within: strict ? 10 + Math.floor(random() * 11) : [5, 10][Math.floor(random() * 2)],
      strict,
      maxPing: 100 + Math.floor(random() * 51),
      party: -1,
      busyUntil: 0,
      queued: false,
      errors: [],
    });
    states.set(`p${i}`, system.initial());
  }
  const bySkill = [...players].sort((a, b) => a.skill - b.skill);
  bySkill.forEach((p, index) => (p.truePercentile = Math.max(1, Math.ceil((100 * index) / Math.max(1, players.length - 1)))));
  // Parties: friends from the same region, 25 % of players.
  const parties: SimPlayer[][] = [];
  for (let r = 0; r < DEFAULT_REGIONS.length; r++) {
    const local = players.filter((p) => p.home === r && random() < 0.25);
    for (let k = 0; k + 1 < local.length; ) {
      const size = Math.min(o.teamSize, random() < 0.6 ? 2 : 3, local.length - k);
      const members = local.slice(k, k + size);
      members.forEach((m) => (m.party = parties.length));
      parties.push(members);
      k += size;
    }
  }

  const byId = new Map(players.map((p) => [p.id, p]));
  const log: Match[] | undefined = o.keepLog ? [] : undefined;
  let matchNumber = 0;
  const rate = (record: Match, at: number): void => {
    const rated = system.rateMatch(record, states);
    for (const change of rated.players) {
      states.set(change.id, change.after);
      board.upsert(change.id, change.after.rating, at, change.after.matches);
    }
    log?.push(record);
  };
  // Cheaters (drawn only when asked for, so a run without them is unchanged).
  const cheats = { ...CHEAT_DEFAULTS, ...o.cheats };
  const cheatPairs: Array<{ kind: 'trade' | 'boost'; a: SimPlayer; b: SimPlayer; played: number }> = [];
  if (cheats.winTraders > 0 || cheats.boosters > 0) {
    const taken = new Set<SimPlayer>();
    const pick = (pool: SimPlayer[]): SimPlayer => {
      const free = pool.filter((p) => !taken.has(p) && p.party === -1);
      if (free.length === 0) throw new RangeError('simulate: not enough solo players for the cheaters asked for');
      const chosen = free[Math.floor(random() * free.length)];
      taken.add(chosen);
      return chosen;
    };
    for (let i = 0; i < cheats.winTraders; i++) cheatPairs.push({ kind: 'trade', a: pick(players), b: pick(players), played: 0 });
    const top = bySkill.slice(Math.floor(0.9 * bySkill.length));
    const bottom = bySkill.slice(0, Math.floor(0.5 * bySkill.length));
    for (let i = 0; i < cheats.boosters; i++) cheatPairs.push({ kind: 'boost', a: pick(top), b: pick(bottom), played: 0 });
  }
  const cheaters = new Set(cheatPairs.flatMap((pair) => [pair.a, pair.b]));
  const idle = (p: SimPlayer, now: number) => !p.queued && p.busyUntil <= now;
  /** One arranged match of a cheating pair at `now`; false when there are not enough idle players to fill it. */
  const arrange = (pair: (typeof cheatPairs)[number], now: number): boolean => {
    const pool = players.filter((p) => idle(p, now) && !cheaters.has(p));
    const need = 2 * o.teamSize - 2;
    if (pool.length < need) return false;
    for (let i = 0; i < need; i++) {
      const j = i + Math.floor(random() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    const teams = [
      [pair.a, ...pool.slice(0, o.teamSize - 1)],
      [pair.b, ...pool.slice(o.teamSize - 1, need)],
    ];
    // Traders take turns; a boostee (b) always wins.
    const winner = pair.kind === 'trade' ? pair.played % 2 : 1;
    const boosterQuits = pair.kind === 'boost' && random() < cheats.boosterQuitShare;
    const quitAt = Math.floor(o.matchSeconds * (0.3 + 0.6 * random()));
    const at = (now + o.matchSeconds) * 1000;
    const record: Match = {
      id: `m${matchNumber++}`,
      at,
      teams: teams.map((team, t) => ({
        players: team.map((p) => (boosterQuits && p === pair.a ? { id: p.id, seconds: quitAt, quit: true } : { id: p.id, seconds: o.matchSeconds })),
        rank: t === winner ? 1 : 2,
      })),
    };
    rate(record, at);
    for (const team of teams) for (const p of team) p.busyUntil = now + o.matchSeconds;
    pair.played++;
    return true;
  };
  const ticketInfo = new Map<string, { at: number; band: string; region: string; size: number }>();
  const waits = { band: new Map<string, number[]>(), region: new Map<string, number[]>(), party: new Map<string, number[]>(), all: [] as number[] };
  const push = (map: Map<string, number[]>, key: string, value: number) => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  let ticketNumber = 0;
  const formed: Array<{ match: FormedMatch; predicted: number; truth: number }> = [];

  const percentileFor = (id: string): number => {
    const shown = board.percentile(id);
    if (shown !== null) return shown;
    return board.percentileForRating(states.get(id)!.rating) ?? 50;
  };

  const end = o.days * 86_400;
  const { onProgress } = hooks;
  const ticks = Math.ceil(end / o.tickSeconds);
  const ticksPerHour = Math.max(1, Math.round(3600 / o.tickSeconds));
  for (let now = 0, tick = 0; now < end; now += o.tickSeconds, tick++) {
    if (onProgress && tick % ticksPerHour === 0) onProgress(tick, ticks);
    const hour = (now / 3600) % 24;
    const joinPerTick = (o.peakJoinsPerHour * (0.55 + 0.45 * Math.cos((2 * Math.PI * (hour - 20)) / 24)) * o.tickSeconds) / 3600;
    for (const pair of cheatPairs) {
      if (idle(pair.a, now) && idle(pair.b, now) && random() < (cheats.arrangedPerDay * o.tickSeconds) / 86_400) arrange(pair, now);
    }
    // Arrivals: a solo player or a whole party (when every member is idle).
    for (const player of players) {
      if (player.queued || player.busyUntil > now || random() >= joinPerTick) continue;
      let members = [player];
      if (player.party >= 0) {
        const party = parties[player.party];
        if (party.every((m) => !m.queued && m.busyUntil <= now)) members = party;
      }
      const ticket: Ticket = {
        id: `t${ticketNumber++}`,
        at: now,
        players: members.map((m) => ({
          id: m.id,
          percentile: percentileFor(m.id),
          rating: states.get(m.id)!.rating,
          pings: m.pings,
          filter: { within: m.within, strict: m.strict, maxPing: m.maxPing },
        })),
      };
      matchmaker.add(ticket);
      members.forEach((m) => (m.queued = true));
      const mean = ticket.players.reduce((s, p) => s + p.percentile, 0) / ticket.players.length;
      const band = `${Math.floor((Math.min(99.999, mean) - 1) / 20) * 20 + 1}-${Math.floor((Math.min(99.999, mean) - 1) / 20) * 20 + 20}`;
      ticketInfo.set(ticket.id, { at: now, band, region: DEFAULT_REGIONS[player.home].name, size: members.length });
    }

    const result = matchmaker.pass(now);
    for (const match of result.matches) {
      for (const team of match.teams) {
        for (const ticketId of team) {
          const info = ticketInfo.get(ticketId)!;
          const wait = now - info.at;
          waits.all.push(wait);
          push(waits.band, info.band, wait);
          push(waits.region, info.region, wait);
          push(waits.party, String(info.size), wait);
          ticketInfo.delete(ticketId);
        }
      }
      // Play it out from the hidden skills.
      const teamPlayers = match.players.map((ids) => ids.map((id) => byId.get(id)!));
      const performance = teamPlayers.map((team) => team.reduce((sum, p) => sum + p.skill + normal(random), 0));
      const skillGap = teamPlayers[0].reduce((s, p) => s + p.skill, 0) - teamPlayers[1].reduce((s, p) => s + p.skill, 0);
      // P(team 0 wins) = Φ(gap / sqrt(2·teamSize)) under the model above.
      const truth = phi(skillGap / Math.sqrt(2 * o.teamSize));
      const predicted = system.predict(match.players.map((ids) => ids.map((id) => states.get(id)!)))[0];
      formed.push({ match, predicted, truth });
      const winner = performance[0] >= performance[1] ? 0 : 1;
      const at = (now + o.matchSeconds) * 1000;
      const player = (id: string) =>
        o.quitRate > 0 && random() < o.quitRate ? { id, seconds: Math.floor(o.matchSeconds * (0.3 + 0.6 * random())), quit: true } : { id, seconds: o.matchSeconds };
      const record: Match = {
        id: `m${matchNumber++}`,
        at,
        teams: match.players.map((ids, team) => ({ players: ids.map(player), rank: team === winner ? 1 : 2 })),
      };
      rate(record, at);
      for (const team of teamPlayers) {
        for (const p of team) {
          p.queued = false;
          p.busyUntil = now + o.matchSeconds;
        }
      }
    }
    // Error against the truth for everyone who just finished a match (measured when they are rated).
    if (result.matches.length > 0) {
      for (const match of result.matches) {
        for (const ids of match.players) {
          for (const id of ids) {
            const p = byId.get(id)!;
            const shown = board.percentileForRating(states.get(id)!.rating) ?? 50;
            p.errors.push(Math.abs(shown - p.truePercentile));
          }
        }
      }
    }
  }
  onProgress?.(ticks, ticks);

  // Quality figures.
  const n = formed.length;
  const closeness = (p: number) => Math.min(p, 1 - p);
  const share = (test: (x: { predicted: number; truth: number }) => boolean) => (n === 0 ? NaN : formed.filter(test).length / n);
  const steps: Record<string, number> = {};
  for (const f of formed) steps[String(f.match.quality.wideningStep)] = (steps[String(f.match.quality.wideningStep)] ?? 0) + 1 / n;
  const worstPings = formed.map((f) => f.match.quality.worstPing).sort((a, b) => a - b);

  // Settling: first match count after which the error stays within tolerance for the rest of the run.
  const settle: number[] = [];
  let notSettled = 0;
  for (const p of players) {
    if (p.errors.length < 5) continue;
    let last = -1;
    for (let k = p.errors.length - 1; k >= 0; k--) {
      if (p.errors[k] > o.settleTolerance) {
        last = k;
        break;
      }
    }
    if (last === p.errors.length - 1) notSettled++;
    else settle.push(last + 2);
  }
  const settleQ = quantiles(settle);
  const errorCurve: number[] = [];
  for (let k = 0; k < o.curveMatches; k++) {
    const at = players.filter((p) => p.errors.length > k).map((p) => p.errors[k]);
    errorCurve.push(at.length === 0 ? NaN : at.reduce((a, b) => a + b, 0) / at.length);
  }
  const toQ = (map: Map<string, number[]>) => Object.fromEntries([...map].sort((a, b) => a[0].localeCompare(b[0], 'en', { numeric: true })).map(([k, v]) => [k, quantiles(v)]));
  return {
    system: o.system,
    options: o,
    matches: n,
    waitByPercentileBand: toQ(waits.band),
    waitByRegion: toQ(waits.region),
    waitByPartySize: toQ(waits.party),
    waitAll: quantiles(waits.all),
    predictedClose: share((f) => closeness(f.predicted) >= 0.45),
    predictedLopsided: share((f) => closeness(f.predicted) < 0.4),
    trueClose: share((f) => closeness(f.truth) >= 0.45),
    trueLopsided: share((f) => closeness(f.truth) < 0.4),
    percentileSpread: quantiles(formed.map((f) => f.match.quality.percentileSpread)),
    wideningSteps: steps,
    worstPingP95: worstPings.length === 0 ? NaN : worstPings[Math.min(worstPings.length - 1, Math.floor(0.95 * worstPings.length))],
    matchesToSettle: { settled: settle.length, notSettled, p50: settleQ.p50, p90: settleQ.p90 },
    errorCurve,
    ...(log === undefined ? {} : { log }),
    ...(cheatPairs.length === 0
      ? {}
      : {
          cheaters: {
            winTraders: cheatPairs.filter((p) => p.kind === 'trade').map((p): [string, string] => [p.a.id, p.b.id]),
            boosters: cheatPairs.filter((p) => p.kind === 'boost').map((p) => ({ booster: p.a.id, boostee: p.b.id })),
            arrangedMatches: cheatPairs.reduce((n, p) => n + p.played, 0),
          },
        }),
  };
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 via erf). */
function phi(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** An SVG line chart of the rating-error curves, one line per report. */
export function errorCurveSvg(reports: readonly SimulationReport[]): string {
  const width = 640;
  const height = 360;
  const margin = { left: 56, right: 16, top: 28, bottom: 44 };
  const maxK = Math.max(1, ...reports.map((r) => r.errorCurve.length));
  const maxY = Math.max(1, ...reports.flatMap((r) => r.errorCurve.filter(Number.isFinite)));
  const x = (k: number) => margin.left + ((width - margin.left - margin.right) * k) / Math.max(1, maxK - 1);
  const y = (v: number) => height - margin.bottom - ((height - margin.top - margin.bottom) * v) / maxY;
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle">Mean |percentile − true percentile| after k matches</text>`,
    `<line x1="${margin.left}" y1="${height - margin.bottom}" x2="${width - margin.right}" y2="${height - margin.bottom}" stroke="black"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${height - margin.bottom}" stroke="black"/>`,
    `<text x="${width / 2}" y="${height - 8}" text-anchor="middle">matches played (k)</text>`,
  ];
  for (let tick = 0; tick <= 4; tick++) {
    const v = (maxY * tick) / 4;
    parts.push(`<text x="${margin.left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(0)}</text>`);
    const k = Math.round(((maxK - 1) * tick) / 4);
    parts.push(`<text x="${x(k)}" y="${height - margin.bottom + 16}" text-anchor="middle">${k + 1}</text>`);
  }
  reports.forEach((report, index) => {
    const points = report.errorCurve.map((v, k) => (Number.isFinite(v) ? `${x(k).toFixed(1)},${y(v).toFixed(1)}` : '')).filter(Boolean);
    const color = colors[index % colors.length];
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(' ')}"/>`);
    parts.push(`<text x="${width - margin.right - 120}" y="${margin.top + 16 * (index + 1)}" fill="${color}">${report.system}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
