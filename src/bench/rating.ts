/**
 * Benchmark: Glicko-2 over the ATP file (about 619k matches), ours against the
 * npm packages glicko2-lite, glicko2, openskill and ts-trueskill in the same
 * run, as matches per second and as ratios; and the whole `ladder replay` of
 * the file, parsing included, as wall-clock seconds.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rate as openskillRate, rating as openskillRating } from 'openskill';
import { rate_1vs1 as trueskillRate1vs1, Rating as TrueSkillRating } from 'ts-trueskill';
import { glicko2RatePairwise, initialGlicko2Ratings, type PairwiseLog } from 'ladder-core/core/pairwise.js';
import { readInputText } from '../io/jsonl.js';
import { parsePairwiseCsv } from '../io/matches.js';
import { dataRoot, TENNIS_KDD19_FILE } from '../eval/datasets.js';

const require = createRequire(import.meta.url);
type Glicko2LiteRate = (
  rating: number,
  rd: number,
  vol: number,
  opponents: Array<[number, number, number]>,
  options?: { tau?: number },
) => { rating: number; rd: number; vol: number };
const glicko2Lite = require('glicko2-lite') as Glicko2LiteRate;
const glicko2Js = require('glicko2') as { Glicko2: new (settings: object) => { makePlayer(): unknown; updateRatings(matches: unknown[]): void } };

export const ATP_FILE = join(dataRoot(), TENNIS_KDD19_FILE);
const ATP_MAP = { winner: 'winner_id', loser: 'loser_id', at: 'tourney_date' };

export interface RatingBenchRow {
  name: string;
  matches: number;
  seconds: number;
  matchesPerSecond: number;
  note: string;
}

function best(runs: number, run: () => number): number {
  let fastest = Infinity;
  for (let i = 0; i < runs; i++) fastest = Math.min(fastest, run());
  return fastest;
}

function timed(work: () => void): number {
  const start = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function prefix(log: PairwiseLog, count: number): PairwiseLog {
  const n = Math.min(count, log.count);
  return { ...log, count: n, a: log.a.subarray(0, n), b: log.b.subarray(0, n), score: log.score.subarray(0, n), at: log.at.subarray(0, n) };
}

export function loadAtp(file = ATP_FILE): PairwiseLog {
  const log = parsePairwiseCsv(readInputText(file), ATP_MAP, () => {});
  if (!log) throw new Error('the ATP file is not a one-against-one CSV');
  return log;
}

function ours(log: PairwiseLog, withTime: boolean): number {
  const timeless = withTime ? log : { ...log, at: new Float64Array(log.count).fill(NaN) };
  return best(3, () => {
    const state = initialGlicko2Ratings(log.ids.length);
    return timed(() => glicko2RatePairwise(timeless, state));
  });
}

function lite(log: PairwiseLog): number {
  return best(2, () => {
    const n = log.ids.length;
    const rating = new Float64Array(n).fill(1500);
    const rd = new Float64Array(n).fill(350);
    const vol = new Float64Array(n).fill(0.06);
    return timed(() => {
      for (let g = 0; g < log.count; g++) {
        const i = log.a[g]!;
        const j = log.b[g]!;
        const s = log.score[g]!;
        const ri = glicko2Lite(rating[i]!, rd[i]!, vol[i]!, [[rating[j]!, rd[j]!, s]]);
        const rj = glicko2Lite(rating[j]!, rd[j]!, vol[j]!, [[rating[i]!, rd[i]!, 1 - s]]);
        rating[i] = ri.rating;
        rd[i] = ri.rd;
        vol[i] = ri.vol;
        rating[j] = rj.rating;
        rd[j] = rj.rd;
        vol[j] = rj.vol;
      }
    });
  });
}

function mmai(log: PairwiseLog): number {
  return timed(() => {
    const ranking = new glicko2Js.Glicko2({ tau: 0.5, rating: 1500, rd: 350, vol: 0.06 });
    const players = new Map<number, unknown>();
    const player = (i: number) => {
      let p = players.get(i);
      if (!p) players.set(i, (p = ranking.makePlayer()));
      return p;
    };
    for (let g = 0; g < log.count; g++) ranking.updateRatings([[player(log.a[g]!), player(log.b[g]!), log.score[g]!]]);
  });
}

function openskill(log: PairwiseLog): number {
  return timed(() => {
    const ratings = new Map<number, ReturnType<typeof openskillRating>>();
    const get = (i: number) => ratings.get(i) ?? openskillRating();
    for (let g = 0; g < log.count; g++) {
      const i = log.a[g]!;
      const j = log.b[g]!;
      const s = log.score[g]!;
      const [[ri], [rj]] = openskillRate([[get(i)], [get(j)]], { rank: [s === 1 ? 1 : s === 0 ? 2 : 1, s === 0 ? 1 : s === 1 ? 2 : 1] });
      ratings.set(i, ri!);
      ratings.set(j, rj!);
    }
  });
}

function trueskill(log: PairwiseLog): number {
  return timed(() => {
    const ratings = new Map<number, TrueSkillRating>();
    const get = (i: number) => ratings.get(i) ?? new TrueSkillRating();
    for (let g = 0; g < log.count; g++) {
      const i = log.a[g]!;
      const j = log.b[g]!;
      const s = log.score[g]!;
      const [ri, rj] = s === 0 ? trueskillRate1vs1(get(j), get(i)).reverse() : trueskillRate1vs1(get(i), get(j), s === 0.5);
      ratings.set(i, ri!);
      ratings.set(j, rj!);
    }
  });
}

/** Wall-clock seconds of the whole CLI replay of the file, best of three. */
export function replayWallClock(file = ATP_FILE): number {
  const cli = join(dirname(fileURLToPath(import.meta.url)), '../cli/main.js');
  return best(3, () => {
    const start = process.hrtime.bigint();
    const result = spawnSync(
      process.execPath,
      [cli, 'replay', '--system', 'glicko2', '--skip-invalid', '--json', '--map', 'winner=winner_id,loser=loser_id,at=tourney_date', file],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    if (result.status !== 0) throw new Error(`ladder replay failed: ${result.stderr.toString()}`);
    return Number(process.hrtime.bigint() - start) / 1e9;
  });
}

export async function benchRating(options: { prefixForSlowPeers?: number; mmaiPrefix?: number } = {}): Promise<RatingBenchRow[]> {
  const slowPrefix = options.prefixForSlowPeers ?? 100_000;
  const mmaiPrefix = options.mmaiPrefix ?? 5_000;
  const parseSeconds = timed(() => loadAtp());
  const log = loadAtp();
  const rows: RatingBenchRow[] = [];
  const row = (name: string, matches: number, seconds: number, note: string) => {
    const r = { name, matches, seconds, matchesPerSecond: matches / seconds, note };
    rows.push(r);
    console.log(
      `${name.padEnd(34)} ${String(matches).padStart(7)} matches  ${seconds.toFixed(3).padStart(8)} s  ${(r.matchesPerSecond / 1e6).toFixed(3).padStart(7)} M matches/s  ${note}`,
    );
  };
  console.log(`ATP file: ${log.count} matches, ${log.ids.length} players; gunzip + parse ${parseSeconds.toFixed(3)} s`);
  row('ladder glicko2 (idle RD growth)', log.count, ours(log, true), 'each match its own period, RD grows per idle day');
  row('ladder glicko2 (no idle growth)', log.count, ours(log, false), 'each match its own period, like glicko2-lite');
  row('glicko2-lite', log.count, lite(log), 'one call per player per match');
  row('openskill', slowPrefix, openskill(prefix(log, slowPrefix)), `first ${slowPrefix} matches`);
  const trueskillPrefix = Math.min(slowPrefix, 20_000);
  row('ts-trueskill', trueskillPrefix, trueskill(prefix(log, trueskillPrefix)), `first ${trueskillPrefix} matches`);
  row('glicko2 (mmai)', mmaiPrefix, mmai(prefix(log, mmaiPrefix)), `first ${mmaiPrefix} matches: every call is a period over all its players, O(players) a match`);
  const fastestPeer = Math.max(...rows.filter((r) => !r.name.startsWith('ladder')).map((r) => r.matchesPerSecond));
  const oursSame = rows[1]!.matchesPerSecond;
  console.log(`ratio, ladder (no idle growth) / fastest peer: ${(oursSame / fastestPeer).toFixed(1)}x; with idle growth: ${(rows[0]!.matchesPerSecond / fastestPeer).toFixed(1)}x`);
  const wall = replayWallClock();
  console.log(`ladder replay of the whole file (gunzip, parse, rate, JSON out): ${wall.toFixed(2)} s wall clock (best of 3)`);
  rows.push({ name: 'ladder replay CLI, whole file', matches: log.count, seconds: wall, matchesPerSecond: log.count / wall, note: 'wall clock, parsing included' });
  return rows;
}
