/**
 * Corrections benchmark: voiding a match far back in a big ladder on
 * PostgreSQL. Builds a ladder of `matches` Elo 1v1 matches among `players`
 * players (rated here and bulk-loaded through the store, as the writer
 * would have stored them), then times voiding the match `back` matches
 * before the end, several times (a different match each time).
 *
 *   node dist/bench/corrections.js [--matches 1000000] [--players 100000] [--back 10000] [--runs 3]
 *
 * Uses DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) in a
 * fresh schema that is dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { Match } from '../core/match.js';
import type { PlayerState } from '../core/systems.js';
import { mulberry32 } from '../core/wvw.js';
import { correctMatch } from '../service/corrections.js';
import { Ladders } from '../service/ladders.js';
import { matchChanges } from '../service/rating.js';
import { dropSchema, openDatabase } from '../store/database.js';
import { advanceLadder } from '../store/ladders.js';
import { emptyMatchRows, insertMatches } from '../store/matches.js';
import { migrate } from '../store/migrations.js';
import { upsertPlayers } from '../store/players.js';

export interface CorrectionsOptions {
  matches?: number;
  players?: number;
  back?: number;
  runs?: number;
  databaseUrl?: string;
}

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
}

export async function benchCorrections(options: CorrectionsOptions = {}): Promise<{ loadSeconds: number; voidMs: number[]; rerated: number[] }> {
  const total = options.matches ?? 1_000_000;
  const players = options.players ?? 100_000;
  const back = options.back ?? 10_000;
  const runs = options.runs ?? 3;
  const schema = `ladder_bench_${randomBytes(4).toString('hex')}`;
  const url = options.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const db = await openDatabase({ databaseUrl: url, schema, poolSize: 2 });
  try {
    await migrate(db);
    const ladders = new Ladders(db);
    const ladder = await ladders.create({ id: 'big', system: 'elo' });
    const system = ladder.rating;
    const random = mulberry32(7);
    const states = new Map<string, PlayerState>();
    const lastSeqs = new Map<string, number>();
    const start = Date.now() - total * 1000;
    const loadStarted = performance.now();
    const chunk = 20_000;
    for (let first = 0; first < total; first += chunk) {
      const matchRows = emptyMatchRows();
      for (let i = first; i < Math.min(total, first + chunk); i++) {
        const a = Math.floor(random() * players);
        const b = (a + 1 + Math.floor(random() * (players - 1))) % players;
        const win = random() < 0.5;
        const match: Match = { id: `m${i + 1}`, at: start + i * 1000, teams: [{ players: [{ id: `p${a}` }], rank: win ? 1 : 2 }, { players: [{ id: `p${b}` }], rank: win ? 2 : 1 }] };
        const probabilities = system.predict(match.teams.map((t) => t.players.map((p) => states.get(p.id) ?? system.initial())));
        const rating = system.rateMatch(match, states, { timeIdle: true });
        const seq = i + 1;
        matchRows.seq.push(seq);
        matchRows.id.push(match.id!);
        matchRows.at.push(match.at!);
        matchRows.receivedAt.push(match.at!);
        matchRows.round.push(null);
        matchRows.body.push(JSON.stringify(match));
        matchRows.winProbability.push(JSON.stringify(probabilities));
        matchRows.changes.push(matchChanges(rating.players, (id) => lastSeqs.get(id) ?? null));
        for (const change of rating.players) {
          states.set(change.id, change.after);
          lastSeqs.set(change.id, seq);
        }
      }
      await db.transaction(async (tx) => {
        await insertMatches(tx, ladder.id, matchRows);
      });
    }
    const finals = [...states].map(([id, state]) => ({ id, state, lastSeq: lastSeqs.get(id) ?? null }));
    for (let i = 0; i < finals.length; i += chunk) await db.transaction((tx) => upsertPlayers(tx, ladder.id, finals.slice(i, i + chunk)));
    await db.transaction((tx) => advanceLadder(tx, ladder.id, { nextSeq: total + 1, matchesAdded: total, playersAdded: states.size, roundCount: 0, version: 1 }));
    await db.exec('ANALYZE');
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    console.log(`loaded ${total} matches of ${states.size} players in ${loadSeconds.toFixed(1)} s`);
    const voidMs: number[] = [];
    const rerated: number[] = [];
    for (let run = 0; run < runs; run++) {
      const target = `m${total - back - run * 7}`;
      const started = performance.now();
      const result = await correctMatch(db, ladder, target, { kind: 'void', reason: 'benchmark' });
      voidMs.push(performance.now() - started);
      rerated.push(result.rerated);
      console.log(`void ${target} (${back + run * 7} matches back): ${voidMs[run]!.toFixed(0)} ms, ${result.rerated} later matches re-rated, ${result.players.length} players changed`);
    }
    const sorted = [...voidMs].sort((a, b) => a - b);
    console.log(`median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms over ${runs} voids`);
    return { loadSeconds, voidMs, rerated };
  } finally {
    await db.close();
    await dropSchema(url, schema);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await benchCorrections({ matches: option('matches', 1_000_000), players: option('players', 100_000), back: option('back', 10_000), runs: option('runs', 3) });
}
