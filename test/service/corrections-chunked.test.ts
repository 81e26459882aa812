/**
 * Corrections in pages: a void or a corrected match re-rates the later
 * matches a page (`chunk`) at a time and gives the event loop a turn
 * between rows once its slice has passed. With pages of 1 to 4 matches over
 * ladders several pages long, the result must equal the corrected log rated
 * from scratch (a fresh ladder fed the corrected log: the same states, the
 * same history entries, the same win probabilities) and every player's chain
 * of entries must list exactly the stored matches with them; no statement
 * may read more than one page of the log; a correction that fails half-way
 * leaves nothing of itself; and voiding or correcting needs the `correct`
 * scope.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { correctMatch, type Correction } from '../../src/service/corrections.js';
import { rebuildLadder } from '../../src/service/rebuild.js';
import type { Database, Queryable } from '../../src/store/database.js';
import { historyOf } from '../../src/store/matches.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import { parseMatch, type Match } from 'ladder-core/core/match.js';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';

type Body = { id: string; at: number; teams: Array<{ players: string[]; rank: number }> };

/** A log of `count` matches among `players` players, `size` a side, an hour apart. */
function log(count: number, seed: number, players: number, size: number): Body[] {
  const random = mulberry32(seed);
  const start = Date.now() - (count + 1) * 3_600_000;
  return Array.from({ length: count }, (_, i) => {
    const picked: string[] = [];
    while (picked.length < 2 * size) {
      const id = `p${Math.floor(random() * players)}`;
      if (!picked.includes(id)) picked.push(id);
    }
    const first = random() < 0.5;
    return {
      id: `m${i}`,
      at: start + i * 3_600_000,
      teams: [
        { players: picked.slice(0, size), rank: first ? 1 : 2 },
        { players: picked.slice(size), rank: first ? 2 : 1 },
      ],
    };
  });
}

/** The database with every transaction's statements passed through `spy` (which may throw, as a failing database would). */
function spied(db: Database, spy: (sql: string, rows: unknown[] | undefined) => void): Database {
  const wrap = (tx: Queryable): Queryable => ({
    query: async <Row>(sql: string, params?: readonly unknown[], options?: { name?: string }) => {
      spy(sql, undefined);
      const rows = await tx.query<Row>(sql, params, options);
      spy(sql, rows);
      return rows;
    },
    exec: (sql: string) => tx.exec(sql),
  });
  return { ...db, transaction: (work) => db.transaction((tx) => work(wrap(tx))) } as Database;
}

type Stored = { seq: number; id: string; void: boolean; winProbability: unknown; changes: Array<Record<string, unknown>> };

async function storedLog(db: Queryable, ladder: string): Promise<Stored[]> {
  const rows = await db.query<{ seq: number; id: string; voided_at: number | null; win_probability: unknown; changes: Array<Record<string, unknown>> }>(
    'SELECT seq, id, voided_at, win_probability, changes FROM matches WHERE ladder = $1 ORDER BY seq',
    [ladder],
  );
  return rows.map((r) => ({ seq: r.seq, id: r.id, void: r.voided_at !== null, winProbability: r.win_probability, changes: r.changes }));
}

async function storedPlayers(db: Queryable, ladder: string) {
  return db.query<{ id: string; rating: number; rd: number | null; volatility: number | null; matches: number; last_at: number | null }>(
    'SELECT id, rating, rd, volatility, matches, last_at FROM players WHERE ladder = $1 ORDER BY id',
    [ladder],
  );
}

/** History entries without their chain links (a fresh ladder has no voided matches to link through). */
const unlinked = (changes: Array<Record<string, unknown>>) => changes.map(({ prev: _prev, ...entry }) => entry);

describe.each(BACKENDS)('corrections in pages on %s', (backend) => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 } } }, async (started) => {
    server = started;
    api = client(server.url, server.admin);
  });

  const post = async (ladder: string, bodies: Body[]) => {
    for (const body of bodies) expect((await api.post(`/v1/ladders/${ladder}/matches`, body)).status).toBe(201);
  };

  it("property: corrections in pages of 1–4 matches equal the corrected log rated from scratch, and every chain lists exactly the player's matches", {
    timeout: 600_000,
  }, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 6, max: 14 }),
        fc.constantFrom(['elo', 1] as const, ['glicko2', 1] as const, ['teamrank', 2] as const),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ pick: fc.nat(), kind: fc.constantFrom('void', 'flip', 'swap', 'newcomer'), who: fc.nat() }), { minLength: 1, maxLength: 3 }),
        async (seed, count, [system, size], chunk, corrections) => {
          // Every other run writes its corrections in one transaction, the others in phases.
          const mode = n % 2 === 0 ? 'phased' : 'transaction';
          const ladder = `pg-${backend === 'pglite' ? 'a' : 'b'}-${n++}`;
          const fresh = `${ladder}-fresh`;
          expect((await api.post('/v1/ladders', { id: ladder, system })).status).toBe(201);
          const bodies = log(count, seed, 2 * size + 2, size);
          await post(ladder, bodies);
          const current = new Map(bodies.map((b) => [b.id, b]));
          const voided = new Set<string>();
          const left = new Set<string>();
          for (const c of corrections) {
            const target = bodies[c.pick % count]!;
            if (voided.has(target.id)) continue;
            const stored = current.get(target.id)!;
            let correction: Correction;
            let next: Body | undefined;
            if (c.kind === 'void') correction = { kind: 'void', reason: 'test' };
            else {
              const teams = stored.teams.map((t) => ({ ...t, players: [...t.players] }));
              if (c.kind === 'flip') [teams[0]!.rank, teams[1]!.rank] = [teams[1]!.rank, teams[0]!.rank];
              else {
                // Someone else in the first seat: a player of the ladder not in this match, or one never seen before.
                const everyone = teams.flatMap((t) => t.players);
                const replacement = c.kind === 'newcomer' ? `new${c.who % 3}` : `p${c.who % (2 * size + 2)}`;
                if (everyone.includes(replacement)) continue;
                teams[0]!.players[0] = replacement;
              }
              next = { ...stored, teams };
              correction = { kind: 'replace', match: parseMatch({ at: stored.at, teams }) as Match };
            }
            const result = await correctMatch(server.db, await server.ladders.get(ladder), target.id, correction, Date.now(), { chunk, sliceMs: 0, mode });
            for (const p of result.players) if (p.after === null) left.add(p.id);
            if (next) current.set(target.id, next);
            else voided.add(target.id);
          }
          // The corrected log, rated from scratch in a ladder of its own.
          expect((await api.post('/v1/ladders', { id: fresh, system })).status).toBe(201);
          const corrected = bodies.filter((b) => !voided.has(b.id)).map((b) => current.get(b.id)!);
          await post(fresh, corrected);

          expect(await storedPlayers(server.db, ladder)).toEqual(await storedPlayers(server.db, fresh));
          const got = await storedLog(server.db, ladder);
          const want = new Map((await storedLog(server.db, fresh)).map((m) => [m.id, m]));
          for (const match of got) {
            if (match.void) continue;
            const expected = want.get(match.id)!;
            expect(unlinked(match.changes), `${ladder} ${match.id}`).toEqual(unlinked(expected.changes));
            expect(match.winProbability, `${ladder} ${match.id}`).toEqual(expected.winProbability);
          }
          expect((await rebuildLadder(server.db, await server.ladders.get(ladder))).differences).toEqual([]);
          // Each chain: exactly the stored matches (voided ones included) whose history names the player, newest first.
          for (const { id } of await storedPlayers(server.db, ladder)) {
            if (left.has(id)) continue;
            const chain = (await historyOf(server.db, ladder, id, { limit: 1000, offset: 0, maxSkipped: 1000 })).rows.map((row) => row.id);
            const expected = got
              .filter((m) => m.changes.some((e) => e.player === id))
              .map((m) => m.id)
              .reverse();
            expect(chain, `${ladder} ${id}`).toEqual(expected);
          }
        },
      ),
      { numRuns: backend === 'pglite' ? 14 : 8, seed: 21 },
    );
  });

  it('reads the later matches one page at a time and gives the event loop a turn between rows', async () => {
    await api.post('/v1/ladders', { id: 'paged', system: 'glicko2' });
    const bodies = log(40, 3, 4, 1);
    await post('paged', bodies);
    const chunk = 5;
    let largest = 0;
    const db = spied(server.db, (sql, rows) => {
      if (rows && /FROM matches/.test(sql) && !/RECURSIVE/.test(sql)) largest = Math.max(largest, rows.length);
    });
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const result = await correctMatch(db, await server.ladders.get('paged'), 'm0', { kind: 'void', reason: 'test' }, Date.now(), { chunk, sliceMs: 0, mode: 'transaction' });
    ticking = false;
    expect(result.rerated).toBeGreaterThan(20);
    // One page at most from any statement over the log ...
    expect(largest).toBeLessThanOrEqual(chunk);
    // ... and at least one turn of the event loop for every match looked at, not one per statement.
    expect(ticks).toBeGreaterThanOrEqual(39);
    expect((await rebuildLadder(server.db, await server.ladders.get('paged'))).differences).toEqual([]);
  });

  it('a correction in one transaction that fails half-way leaves the ladder exactly as it was', async () => {
    await api.post('/v1/ladders', { id: 'half', system: 'elo' });
    await post('half', log(30, 4, 4, 1));
    const snapshot = async () => ({
      log: await storedLog(server.db, 'half'),
      players: await server.db.query('SELECT * FROM players WHERE ladder = $1 ORDER BY id', ['half']),
      ladder: await server.db.query('SELECT next_seq, match_count, player_count, version, corrections FROM ladders WHERE id = $1', ['half']),
    });
    const before = await snapshot();
    let writes = 0;
    // The database fails on the third page's write, after two pages of new history were written.
    const db = spied(server.db, (sql, rows) => {
      if (rows === undefined && /^UPDATE matches SET changes/.test(sql) && ++writes === 3) throw new Error('connection lost');
    });
    await expect(
      correctMatch(db, await server.ladders.get('half'), 'm1', { kind: 'void', reason: 'test' }, Date.now(), { chunk: 4, sliceMs: 0, mode: 'transaction' }),
    ).rejects.toThrow('the database is unavailable');
    expect(writes).toBe(3);
    expect(await snapshot()).toEqual(before);
    // And the same correction then goes through, counted once.
    const result = await correctMatch(server.db, await server.ladders.get('half'), 'm1', { kind: 'void', reason: 'test' }, Date.now(), {
      chunk: 4,
      sliceMs: 0,
      mode: 'transaction',
    });
    expect(result.changed).toBe(true);
    expect((await snapshot()).ladder[0]).toMatchObject({ match_count: 29, corrections: 1 });
    expect((await rebuildLadder(server.db, await server.ladders.get('half'))).differences).toEqual([]);
  });

  it('voiding and correcting need the correct scope: a write key gets 403, a correct key may also post', async () => {
    await api.post('/v1/ladders', { id: 'scoped', system: 'elo' });
    await post('scoped', log(6, 5, 4, 1));
    const writer = client(server.url, (await api.post('/v1/keys', { name: 'game server', scopes: ['write'] })).body.key);
    const made = await api.post('/v1/keys', { name: 'moderator', scopes: ['correct'] });
    expect(made.status).toBe(201);
    expect(made.body.scopes).toEqual(['correct']);
    const corrector = client(server.url, made.body.key);
    const flipped = {
      teams: [
        { players: ['p0'], rank: 2 },
        { players: ['p1'], rank: 1 },
      ],
    };
    for (const reply of [await writer.post('/v1/ladders/scoped/matches/m2/void', { reason: 'x' }), await writer.put('/v1/ladders/scoped/matches/m3', flipped)]) {
      expect(reply.status).toBe(403);
      expect(reply.body.error.message).toContain('correct');
    }
    expect((await server.db.query<{ n: number }>('SELECT count(*)::int4 AS n FROM matches WHERE ladder = $1 AND voided_at IS NOT NULL', ['scoped']))[0]!.n).toBe(0);
    expect(
      (
        await writer.post('/v1/ladders/scoped/matches', {
          teams: [
            { players: ['a'], rank: 1 },
            { players: ['b'], rank: 2 },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await corrector.post('/v1/ladders/scoped/matches/m2/void', { reason: 'x' })).status).toBe(200);
    expect((await corrector.put('/v1/ladders/scoped/matches/m3', flipped)).status).toBe(200);
    // correct ranks above write, below admin.
    expect(
      (
        await corrector.post('/v1/ladders/scoped/matches', {
          teams: [
            { players: ['a'], rank: 1 },
            { players: ['b'], rank: 2 },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await corrector.post('/v1/keys', { name: 'nope', scopes: ['read'] })).status).toBe(403);
    // The API description says so.
    const doc = (await api.get('/openapi.json')).body;
    expect(doc.paths['/v1/ladders/{ladder}/matches/{match}/void'].post.description).toContain('Auth: correct.');
    expect(doc.paths['/v1/ladders/{ladder}/matches/{match}'].put.description).toContain('Auth: correct.');
    expect(doc.paths['/v1/ladders/{ladder}/matches/{match}/void'].post.responses['403']).toBeDefined();
  });
});
