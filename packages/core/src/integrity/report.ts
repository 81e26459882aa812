/**
 * Integrity report: who in a match log looks like a win-trader, a booster or
 * a serial quitter. Pure: a log in, entries out, most suspicious first, each
 * with the counts and the expected counts it rests on. An entry is a reason
 * to look, not a verdict.
 *
 * Pairs (players who met as opponents):
 * - Meetings. Under random pairing — each player keeps their number of
 *   matches, each match its size and team sizes, and who fills which seat is
 *   random — players i and j, with c_i and c_j matches, meet as opponents
 *   E_ij = c_i · c_j · Σ_m O_m / S² times on average, where S = Σ_m N_m is
 *   the number of seats (N_m players in match m) and O_m = N_m² − Σ_t n_mt²
 *   the ordered pairs of seats on different teams. The meetings are taken as
 *   Poisson(E_ij): `meetingP` = P(X ≥ meetings). A matchmaker pairs players
 *   of similar skill, region and hour, so honest neighbours meet far more
 *   than this model says: meeting often is necessary for an entry, never
 *   enough.
 * - Results, from the first player's side, draws left out. Alternation: the
 *   exact runs test given the two win counts (`alternationP` = P(at least
 *   this many runs) in a random order) — win-traders take turns. One-sided:
 *   the exact binomial test of the wins against `expectedWinShare`, the log5
 *   estimate from each player's results outside the pair — a booster keeps
 *   losing to the same player, who is not better elsewhere.
 *   patternP = min(2 · min(alternationP, oneSidedP), 1).
 * - A pair is tested when it met at least `minMeetings` times and its
 *   `meetingP` is at most the option `meetingP`; it is an entry when the
 *   Benjamini–Hochberg adjusted patternP over the pairs tested (q) is at
 *   most `alpha`: among entries, at most a share `alpha` are expected to be
 *   honest pairs, and with no cheater at all, the chance of any pair entry
 *   is at most `alpha` (under the models).
 *
 * Players with at least `minMatches` matches:
 * - Quits: the exact binomial test of the player's quits against the
 *   population's quit rate π (quits per seat): P(X ≥ quits | matches, π).
 * - Results: the exact binomial test of the player's wins among decisive
 *   matches against one half, with the longest win streak, the number of
 *   distinct opponents and the share of wins taken in matches against the
 *   most-beaten opponent as evidence. A win rate alone is what a strong
 *   player has where skill decides (1v1), so a results entry also needs at
 *   least `minWinConcentration` of the wins against one opponent (a boosted
 *   player wins against few).
 * - An entry when the Benjamini–Hochberg adjusted p (q, over the players
 *   tested, each kind of test on its own) is at most `alpha`.
 *
 * Order: `score` = −log10 q, highest first.
 */
import { InvalidInputError } from '../core/errors.js';
import { type Match, teamPlacements } from '../core/match.js';
import { benjaminiHochberg, binomialTail, poissonUpper, runsMoments, runsUpper } from './stats.js';

export interface IntegrityOptions {
  /**
   * Meetings as opponents before a pair is tested. Below ten, no result
   * pattern is rare enough to count once many pairs are tested (ten
   * alternating results happen by chance 2 times in C(10, 5) = 252), and
   * every pair tested dilutes the others' evidence. @default 10
   */
  minMeetings?: number;
  /** Largest meetingP (under random pairing) a pair may have to be tested. @default 0.001 */
  meetingP?: number;
  /** Matches before a player is tested. @default 10 */
  minMatches?: number;
  /**
   * A results entry also needs this share of the player's wins to come in
   * matches against one opponent: a win rate alone is what a strong player
   * has in a game decided by skill (1v1); a boosted one wins against few.
   * @default 0.25
   */
  minWinConcentration?: number;
  /**
   * False discovery rate of each kind of entry, under the models: an entry
   * needs a Benjamini–Hochberg adjusted p-value (q) of at most this.
   * @default 0.01
   */
  alpha?: number;
  /** Most entries returned. @default 100 */
  limit?: number;
}

export const INTEGRITY_DEFAULTS: Readonly<Required<IntegrityOptions>> = Object.freeze({
  minMeetings: 10,
  meetingP: 0.001,
  minMatches: 10,
  minWinConcentration: 0.25,
  alpha: 0.01,
  limit: 100,
});

export interface PairEntry {
  kind: 'pair';
  players: [string, string];
  /** −log10 of the adjusted p-value; higher is more suspicious. */
  score: number;
  /** Which pattern carried the entry. */
  pattern: 'alternating' | 'one-sided';
  evidence: {
    meetings: number;
    expectedMeetings: number;
    /** (meetings − expected) / √expected. */
    meetingZ: number;
    meetingP: number;
    /** Results of players[0] against players[1] in log order: W, L or D. */
    results: string;
    wins: [number, number];
    draws: number;
    runs: number;
    expectedRuns: number;
    runsZ: number;
    alternationP: number;
    /** Chance players[0] beats players[1], from their results outside the pair (log5). */
    expectedWinShare: number;
    winZ: number;
    oneSidedP: number;
    /** min(2 · min(alternationP, oneSidedP), 1). */
    patternP: number;
    /** Benjamini–Hochberg adjusted patternP over the pairs tested. */
    q: number;
    /** Pairs that reached the pattern test. */
    tested: number;
  };
}

export interface QuitEntry {
  kind: 'quits';
  player: string;
  score: number;
  evidence: { matches: number; quits: number; expectedQuits: number; populationRate: number; z: number; p: number; q: number; tested: number };
}

export interface ResultsEntry {
  kind: 'results';
  player: string;
  score: number;
  evidence: {
    matches: number;
    decisive: number;
    wins: number;
    expectedWins: number;
    z: number;
    p: number;
    q: number;
    longestWinStreak: number;
    distinctOpponents: number;
    /** The opponent the player beat most often, and the share of the player's wins that came in matches against them. */
    topOpponent: string | null;
    topOpponentShare: number;
    tested: number;
  };
}

export type IntegrityEntry = PairEntry | QuitEntry | ResultsEntry;

export interface IntegrityReport {
  matches: number;
  players: number;
  /** Σ_m O_m / S²: E_ij = c_i · c_j · meetingFactor. */
  meetingFactor: number;
  /** Quits per seat over the whole log. */
  quitRate: number;
  /** How many pairs and players were tested. */
  tested: { pairs: number; players: number };
  entries: IntegrityEntry[];
}

interface PlayerTally {
  matches: number;
  quits: number;
  wins: number;
  losses: number;
  streak: number;
  longestStreak: number;
  opponents: number;
}

interface PairTally {
  a: string;
  b: string;
  /** Results from a's side. */
  results: string;
  winsA: number;
  winsB: number;
}

function checkOption(name: keyof IntegrityOptions, value: number, min: number, max: number, integer: boolean): number {
  if (typeof value !== 'number' || !(value >= min && value <= max) || (integer && !Number.isInteger(value))) {
    throw new InvalidInputError(`must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${String(value)}`, { field: name });
  }
  return value;
}

/** The report over a log of core `Match` records in play order. */
export function integrityReport(matches: readonly Match[], options: IntegrityOptions = {}): IntegrityReport {
  const o = { ...INTEGRITY_DEFAULTS, ...options };
  checkOption('minMeetings', o.minMeetings, 1, Infinity, true);
  checkOption('meetingP', o.meetingP, 0, 1, false);
  checkOption('minMatches', o.minMatches, 1, Infinity, true);
  checkOption('minWinConcentration', o.minWinConcentration, 0, 1, false);
  checkOption('alpha', o.alpha, 0, 1, false);
  checkOption('limit', o.limit, 0, Infinity, true);

  const players = new Map<string, PlayerTally>();
  const pairs = new Map<string, PairTally>();
  let seats = 0;
  let opponentSeatPairs = 0;
  let quits = 0;
  matches.forEach((match, m) => {
    if (!match || !Array.isArray(match.teams) || match.teams.length < 2) throw new InvalidInputError('a match needs at least two teams', { field: `matches[${m}].teams` });
    const placements = teamPlacements(match);
    const best = Math.min(...placements);
    const bestCount = placements.filter((p) => p === best).length;
    let size = 0;
    let sameTeam = 0;
    match.teams.forEach((team, t) => {
      size += team.players.length;
      sameTeam += team.players.length ** 2;
      const won = placements[t] === best && bestCount === 1;
      const lost = placements[t] !== best;
      for (const player of team.players) {
        let tally = players.get(player.id);
        if (tally === undefined) {
          tally = { matches: 0, quits: 0, wins: 0, losses: 0, streak: 0, longestStreak: 0, opponents: 0 };
          players.set(player.id, tally);
        }
        tally.matches++;
        if (player.quit) {
          tally.quits++;
          quits++;
        }
        if (won) {
          tally.wins++;
          tally.streak++;
          tally.longestStreak = Math.max(tally.longestStreak, tally.streak);
        } else {
          if (lost) tally.losses++;
          tally.streak = 0;
        }
      }
    });
    seats += size;
    opponentSeatPairs += size * size - sameTeam;
    // Every pair of opponents, from the side of the lower id.
    for (let t = 0; t < match.teams.length; t++) {
      for (let u = t + 1; u < match.teams.length; u++) {
        for (const x of match.teams[t].players) {
          for (const y of match.teams[u].players) {
            const [a, b, aTeam, bTeam] = x.id < y.id ? [x.id, y.id, t, u] : [y.id, x.id, u, t];
            const key = `${a}\u0000${b}`;
            let pair = pairs.get(key);
            if (pair === undefined) {
              pair = { a, b, results: '', winsA: 0, winsB: 0 };
              pairs.set(key, pair);
            }
            const pa = placements[aTeam];
            const pb = placements[bTeam];
            if (pa < pb) {
              pair.results += 'W';
              pair.winsA++;
            } else if (pa > pb) {
              pair.results += 'L';
              pair.winsB++;
            } else {
              pair.results += 'D';
            }
          }
        }
      }
    }
  });
  const meetingFactor = seats === 0 ? 0 : opponentSeatPairs / (seats * seats);
  const quitRate = seats === 0 ? 0 : quits / seats;
  for (const pair of pairs.values()) {
    players.get(pair.a)!.opponents++;
    players.get(pair.b)!.opponents++;
  }

  // Pairs: meetings first, then the result pattern for those that meet far too often.
  const candidates: Array<{ pair: PairTally; meetingP: number; expected: number }> = [];
  for (const pair of pairs.values()) {
    const meetings = pair.results.length;
    if (meetings < o.minMeetings) continue;
    const expected = players.get(pair.a)!.matches * players.get(pair.b)!.matches * meetingFactor;
    const meetingP = poissonUpper(meetings, expected);
    if (meetingP <= o.meetingP) candidates.push({ pair, meetingP, expected });
  }
  const entries: IntegrityEntry[] = [];
  const scoreOf = (q: number) => -Math.log10(Math.max(Number.MIN_VALUE, q));
  const pairTests = candidates.map(({ pair, meetingP, expected }) => {
    const meetings = pair.results.length;
    const decisive = pair.winsA + pair.winsB;
    let runs = 0;
    let previous = '';
    for (const r of pair.results) {
      if (r === 'D') continue;
      if (r !== previous) runs++;
      previous = r;
    }
    const moments = runsMoments(pair.winsA, pair.winsB);
    const alternationP = runsUpper(pair.winsA, pair.winsB, runs);
    const ta = players.get(pair.a)!;
    const tb = players.get(pair.b)!;
    // Win shares outside the pair, smoothed (one win and one loss added).
    const shareA = (ta.wins - pair.winsA + 1) / (ta.wins + ta.losses - decisive + 2);
    const shareB = (tb.wins - pair.winsB + 1) / (tb.wins + tb.losses - decisive + 2);
    const expectedWinShare = (shareA * (1 - shareB)) / (shareA * (1 - shareB) + shareB * (1 - shareA));
    const oneSidedP =
      decisive === 0 ? 1 : Math.min(1, 2 * Math.min(binomialTail(decisive, pair.winsA, expectedWinShare, true), binomialTail(decisive, pair.winsA, expectedWinShare, false)));
    const entry: PairEntry = {
      kind: 'pair',
      players: [pair.a, pair.b],
      score: 0,
      pattern: alternationP <= oneSidedP ? 'alternating' : 'one-sided',
      evidence: {
        meetings,
        expectedMeetings: expected,
        meetingZ: expected > 0 ? (meetings - expected) / Math.sqrt(expected) : Infinity,
        meetingP,
        results: pair.results,
        wins: [pair.winsA, pair.winsB],
        draws: meetings - decisive,
        runs,
        expectedRuns: moments.mean,
        runsZ: moments.variance > 0 ? (runs - moments.mean) / Math.sqrt(moments.variance) : 0,
        alternationP,
        expectedWinShare,
        winZ: decisive > 0 ? (pair.winsA - decisive * expectedWinShare) / Math.sqrt(decisive * expectedWinShare * (1 - expectedWinShare)) : 0,
        oneSidedP,
        patternP: Math.min(1, 2 * Math.min(alternationP, oneSidedP)),
        q: 1,
        tested: candidates.length,
      },
    };
    return entry;
  });
  benjaminiHochberg(pairTests.map((e) => e.evidence.patternP)).forEach((q, i) => {
    const entry = pairTests[i];
    entry.evidence.q = q;
    entry.score = scoreOf(q);
    if (q <= o.alpha) entries.push(entry);
  });

  // Players.
  const tested = [...players].filter(([, tally]) => tally.matches >= o.minMatches);
  if (quitRate > 0) {
    const quitP = tested.map(([, tally]) => binomialTail(tally.matches, tally.quits, quitRate, true));
    benjaminiHochberg(quitP).forEach((q, i) => {
      if (q > o.alpha) return;
      const [id, tally] = tested[i];
      const expectedQuits = tally.matches * quitRate;
      entries.push({
        kind: 'quits',
        player: id,
        score: scoreOf(q),
        evidence: {
          matches: tally.matches,
          quits: tally.quits,
          expectedQuits,
          populationRate: quitRate,
          z: quitRate < 1 ? (tally.quits - expectedQuits) / Math.sqrt(expectedQuits * (1 - quitRate)) : 0,
          p: quitP[i],
          q,
          tested: tested.length,
        },
      });
    });
  }
  const winP = tested.map(([, tally]) => binomialTail(tally.wins + tally.losses, tally.wins, 0.5, true));
  const flaggedResults: Array<{ id: string; tally: PlayerTally; p: number; q: number }> = [];
  benjaminiHochberg(winP).forEach((q, i) => {
    if (q <= o.alpha && tested[i][1].wins > 0) flaggedResults.push({ id: tested[i][0], tally: tested[i][1], p: winP[i], q });
  });
  if (flaggedResults.length > 0) {
    // The most-beaten opponent of each flagged player, from the pairs.
    const flagged = new Map(flaggedResults.map((f) => [f.id, { top: null as string | null, wins: 0 }]));
    for (const pair of pairs.values()) {
      for (const [me, other, wins] of [
        [pair.a, pair.b, pair.winsA],
        [pair.b, pair.a, pair.winsB],
      ] as const) {
        const entry = flagged.get(me);
        if (entry !== undefined && (wins > entry.wins || (wins === entry.wins && entry.top !== null && other < entry.top))) Object.assign(entry, { top: other, wins });
      }
    }
    for (const { id, tally, p, q } of flaggedResults) {
      const decisive = tally.wins + tally.losses;
      const top = flagged.get(id)!;
      if (top.wins < o.minWinConcentration * tally.wins) continue;
      entries.push({
        kind: 'results',
        player: id,
        score: scoreOf(q),
        evidence: {
          matches: tally.matches,
          decisive,
          wins: tally.wins,
          expectedWins: decisive / 2,
          z: (tally.wins - decisive / 2) / Math.sqrt(decisive / 4),
          p,
          q,
          longestWinStreak: tally.longestStreak,
          distinctOpponents: tally.opponents,
          topOpponent: top.wins > 0 ? top.top : null,
          topOpponentShare: tally.wins > 0 ? top.wins / tally.wins : 0,
          tested: tested.length,
        },
      });
    }
  }

  const label = (e: IntegrityEntry) => (e.kind === 'pair' ? e.players.join(' ') : e.player);
  entries.sort((x, y) => y.score - x.score || x.kind.localeCompare(y.kind) || label(x).localeCompare(label(y)));
  return {
    matches: matches.length,
    players: players.size,
    meetingFactor,
    quitRate,
    tested: { pairs: candidates.length, players: tested.length },
    entries: entries.slice(0, o.limit),
  };
}
