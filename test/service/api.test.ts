/**
 * The HTTP API end to end, on embedded PGlite and on the machine's
 * PostgreSQL + Redis: ladders, matches with idempotency, reads, keys and
 * scopes, rounds, tickets, performance, OpenAPI and metrics.
 */
import glicko2 from 'glicko2';
import { describe, expect, it } from 'vitest';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';
import { describeSystem, SYSTEM_NAMES } from 'ladder-core/core/registry.js';

describe.each(BACKENDS)('service API on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  let anon: ReturnType<typeof client>;

  useTestServer({ backend }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
    anon = client(server.url);
  });

  it('creates ladders and refuses bad definitions naming the field', async () => {
    expect((await admin.post('/v1/ladders', { id: 'duel', system: 'glicko2', public: true, standings: { placementMatches: 1 } })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'team', system: 'teamrank', standings: { placementMatches: 1 } })).status).toBe(201);
    expect((await admin.post('/v1/ladders', { id: 'worlds', system: 'wvw', public: true, standings: { placementMatches: 1 } })).status).toBe(201);
    const again = await admin.post('/v1/ladders', { id: 'duel', system: 'glicko2' });
    expect(again.status).toBe(409);
    const badOption = await admin.post('/v1/ladders', { id: 'x1', system: 'glicko2', options: { tau: -1 } });
    expect(badOption.status).toBe(400);
    expect(badOption.body.error.field).toBe('options.tau');
    const unknownOption = await admin.post('/v1/ladders', { id: 'x2', system: 'elo', options: { kk: 3 } });
    expect(unknownOption.body.error.field).toBe('options.kk');
    const badSystem = await admin.post('/v1/ladders', { id: 'x3', system: 'trueskill' });
    expect(badSystem.body.error.field).toBe('system');
    const wholeHistory = await admin.post('/v1/ladders', { id: 'x4', system: 'whr', options: { dailyVariance: 0 } });
    expect(wholeHistory.status).toBe(400);
    expect(wholeHistory.body.error.field).toBe('options.dailyVariance');
    const badChoice = await admin.post('/v1/ladders', { id: 'x5', system: 'teamrank', options: { quitterModifier: 'heads' } });
    expect(badChoice.body.error).toMatchObject({ field: 'options.quitterModifier', message: 'must be one of "time", "headcount", got "heads"' });
  });

  it('lists the rating systems of the registry, with options and display hints, without a key', async () => {
    const reply = await client(server.url).get('/v1/systems');
    expect(reply.status).toBe(200);
    const systems = reply.body.systems as Array<Record<string, any>>;
    expect(systems.map((s) => s.name)).toEqual(SYSTEM_NAMES);
    for (const system of systems) {
      const descriptor = describeSystem(system.name);
      expect(system.label).toBe(descriptor.label);
      expect(system.capabilities).toEqual(descriptor.capabilities);
      expect(system.options.map((o: { name: string }) => o.name)).toEqual(Object.keys(descriptor.options));
      expect(system.ladders).toBe(true);
    }
    const teamrank = systems.find((s) => s.name === 'teamrank')!;
    expect(teamrank.display.decimals).toBe(2);
    // One name for every system's number, team rank's included (docs/RATING.md).
    expect(systems.map((s) => s.display.quantity)).toEqual(systems.map(() => 'rating'));
    expect(teamrank.options.find((o: { name: string }) => o.name === 'quitterModifier')).toMatchObject({ type: 'choice', values: ['time', 'headcount'], default: 'time' });
  });

  it('rates a match: Glicko-2 numbers agree with the glicko2 npm package', async () => {
    const reply = await admin.post(
      '/v1/ladders/duel/matches',
      {
        id: 'm1',
        at: Date.now(),
        teams: [
          { players: ['ann'], rank: 1 },
          { players: ['bob'], rank: 2 },
        ],
      },
      { 'idempotency-key': 'duel-1' },
    );
    expect(reply.status).toBe(201);
    // Independent implementation: two new players (1500, 350, 0.06), ann beats bob, tau 0.5.
    const ranking = new glicko2.Glicko2({ tau: 0.5, rating: 1500, rd: 350, vol: 0.06 });
    const ann = ranking.makePlayer();
    const bob = ranking.makePlayer();
    ranking.updateRatings([[ann, bob, 1]]);
    const after = Object.fromEntries(reply.body.players.map((p: { id: string; after: unknown }) => [p.id, p.after]));
    expect(after.ann.rating).toBeCloseTo(ann.getRating(), 6);
    expect(after.ann.rd).toBeCloseTo(ann.getRd(), 6);
    expect(after.bob.rating).toBeCloseTo(bob.getRating(), 6);
    expect(reply.body.players[0].terms).toMatchObject({ score: 1, expected: 0.5, surprise: 0.5 });
    expect(reply.body.match).toMatchObject({ id: 'm1', seq: 1 });
    // The stored state is the answer's, to the last bit (numbers go to the database as array literals).
    const stored = await admin.get('/v1/ladders/duel/players/ann');
    expect([stored.body.rating, stored.body.rd, stored.body.volatility]).toEqual([after.ann.rating, after.ann.rd, after.ann.volatility]);
    expect(Object.is(stored.body.rating, after.ann.rating)).toBe(true);
  });

  it('answers a repeated Idempotency-Key with the same body and does not rate twice; another body is 409', async () => {
    const body = {
      teams: [
        { players: ['cat'], rank: 1 },
        { players: ['dan'], rank: 2 },
      ],
    };
    const first = await admin.post('/v1/ladders/duel/matches', body, { 'idempotency-key': 'k-cat' });
    const second = await admin.post('/v1/ladders/duel/matches', body, { 'idempotency-key': 'k-cat' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    const cat = await anon.get('/v1/ladders/duel/players/cat');
    expect(cat.body.matches).toBe(1);
    const conflict = await admin.post('/v1/ladders/duel/matches', { ...body, teams: [body.teams[1], body.teams[0]] }, { 'idempotency-key': 'k-cat' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('conflict');
    const duplicateId = await admin.post('/v1/ladders/duel/matches', { id: 'm1', teams: body.teams });
    expect(duplicateId.status).toBe(409);
  });

  it('team rank: terms and hand-computed ranks (1.00 + 1.00/20 = 1.05 for the winner, the floor 1.00 for the loser)', async () => {
    const reply = await admin.post('/v1/ladders/team/matches', {
      teams: [
        { players: ['t1'], rank: 1 },
        { players: ['t2'], rank: 2 },
      ],
    });
    expect(reply.status).toBe(201);
    const [winner, loser] = reply.body.players;
    expect(winner.after.rating).toBeCloseTo(1.05, 10);
    expect(loser.after.rating).toBeCloseTo(1.0, 10);
    expect(winner.terms).toMatchObject({ outcome: 'win', averageModifier: 1, quitterModifier: 1 });
    const threeTeams = await admin.post('/v1/ladders/team/matches', {
      teams: [
        { players: ['a'], rank: 1 },
        { players: ['b'], rank: 2 },
        { players: ['c'], rank: 3 },
      ],
    });
    expect(threeTeams.status).toBe(400);
    expect(threeTeams.body.error.field).toBe('teams');
  });

  it('reads: private ladders need a key, public ones do not; player page, history and leaderboard', async () => {
    // Without a key a private ladder answers exactly as a missing one, so ladder names cannot be probed.
    const hidden = await anon.get('/v1/ladders/team/players/t1');
    const missing = await anon.get('/v1/ladders/no-such-ladder/players/t1');
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body.error.message.replace('team', 'X')).toBe(missing.body.error.message.replace('no-such-ladder', 'X'));
    const t1 = await admin.get('/v1/ladders/team/players/t1');
    expect(t1.body).toMatchObject({ id: 't1', rating: 1.05, matches: 1, rank: 1, placementRemaining: 0 });
    expect(t1.body.rd).toBeUndefined();
    const ann = await anon.get('/v1/ladders/duel/players/ann');
    expect(ann.status).toBe(200);
    expect(ann.body.volatility).toBeGreaterThan(0);
    expect(ann.body.percentile).toBe(100);
    expect((await anon.get('/v1/ladders/duel/players/nobody')).status).toBe(404);
    const history = await anon.get('/v1/ladders/duel/players/ann/history');
    expect(history.body.history).toHaveLength(1);
    expect(history.body.history[0]).toMatchObject({ matchId: 'm1', result: 'win', teams: [['ann'], ['bob']] });
    // The `before` cursor: entries of matches before it; a cursor that is no positive integer is a 400 naming it.
    expect((await anon.get(`/v1/ladders/duel/players/ann/history?before=${history.body.history[0].seq}`)).body.history).toEqual([]);
    expect((await anon.get(`/v1/ladders/duel/players/ann/history?before=${history.body.history[0].seq + 1}`)).body.history).toHaveLength(1);
    for (const bad of ['0', '-1', '1.5', 'x', '1e300']) {
      const reply = await anon.get(`/v1/ladders/duel/players/ann/history?before=${bad}`);
      expect(reply.status, bad).toBe(400);
      expect(JSON.stringify(reply.body), bad).toContain('before');
    }
    const board = await anon.get('/v1/ladders/duel/leaderboard?limit=2');
    expect(board.body.total).toBe(4);
    expect(board.body.entries.map((e: { id: string }) => e.id)).toEqual(['ann', 'cat']);
    expect(board.body.entries[0].rank).toBe(1);
    const around = await anon.get('/v1/ladders/duel/leaderboard?limit=3&around=dan');
    expect(around.body.entries.map((e: { id: string }) => e.id)).toContain('dan');
    // Prefix search on ids (migration 3 indexes ids for it); LIKE's wildcards are taken literally.
    const searched = await anon.get('/v1/ladders/duel/leaderboard?search=a');
    expect(searched.body.entries.map((e: { id: string }) => e.id)).toEqual(['ann']);
    expect(searched.body.entries[0].rank).toBe(1);
    expect(searched.body.total).toBe(1);
    expect((await anon.get('/v1/ladders/duel/leaderboard?search=%25')).body.entries).toEqual([]);
    expect((await anon.get('/v1/ladders/duel/leaderboard?search=_nn')).body.entries).toEqual([]);
    const bad = await anon.get('/v1/ladders/duel/leaderboard?limit=100000');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('limit');
    const matches = await anon.get('/v1/ladders/duel/matches');
    expect(matches.body.matches[matches.body.matches.length - 1]).toMatchObject({ id: 'm1', winProbability: [0.5, 0.5] });
  });

  it('leaderboard search: total counts every matching player, so every page can be reached', async () => {
    await admin.post('/v1/ladders', { id: 'srch', system: 'elo', public: true, standings: { placementMatches: 0 } });
    for (let i = 1; i <= 30; i += 2) {
      expect(
        (
          await admin.post('/v1/ladders/srch/matches', {
            teams: [
              { players: [`p${i}`], rank: 1 },
              { players: [`p${i + 1}`], rank: 2 },
            ],
          })
        ).status,
      ).toBe(201);
    }
    // p1, p10 … p19: eleven ids start with "p1".
    const seen: string[] = [];
    for (let offset = 0; offset < 15; offset += 5) {
      const page = await anon.get(`/v1/ladders/srch/leaderboard?search=p1&limit=5&offset=${offset}`);
      expect(page.body.total).toBe(11);
      seen.push(...page.body.entries.map((e: { id: string }) => e.id));
    }
    expect(seen.sort()).toEqual(['p1', 'p10', 'p11', 'p12', 'p13', 'p14', 'p15', 'p16', 'p17', 'p18', 'p19']);
  });

  it('keys: scopes, 401 without a key, 403 with too small a scope, revocation', async () => {
    const noKey = await anon.post('/v1/ladders/duel/matches', {
      teams: [
        { players: ['a'], rank: 1 },
        { players: ['b'], rank: 2 },
      ],
    });
    expect(noKey.status).toBe(401);
    const made = await admin.post('/v1/keys', { name: 'reader', scopes: ['read'] });
    expect(made.status).toBe(201);
    const reader = client(server.url, made.body.key);
    expect((await reader.get('/v1/ladders/team/players/t1')).status).toBe(200);
    const forbidden = await reader.post('/v1/ladders/duel/matches', {
      teams: [
        { players: ['a'], rank: 1 },
        { players: ['b'], rank: 2 },
      ],
    });
    expect(forbidden.status).toBe(403);
    const listed = await admin.get('/v1/keys');
    expect(JSON.stringify(listed.body)).not.toContain(made.body.key);
    expect((await admin.del(`/v1/keys/${made.body.id}`)).status).toBe(200);
    expect((await reader.get('/v1/ladders/team/players/t1')).status).toBe(401);
    expect((await client(server.url, 'lk_aaaaaaaaaaaa_' + 'x'.repeat(43)).get('/v1/ladders')).status).toBe(401);
  });

  it('World-vs-World rounds: new ratings and next round groups', async () => {
    const round = await admin.post('/v1/ladders/worlds/rounds', { round: 'week 1', matches: [{ worlds: { A: 300, B: 200, C: 100 } }, { worlds: { D: 100, E: 200, F: 300 } }] });
    expect(round.status).toBe(201);
    expect(round.body.groups).toHaveLength(2);
    // Sorted rule: the two winners and the two middle worlds share the top tier.
    expect(new Set(round.body.groups[0])).toEqual(new Set(['A', 'F', round.body.groups[0][2]]));
    expect(round.body.ratings).toHaveLength(6);
    const again = await admin.post('/v1/ladders/worlds/rounds', { round: 'week 1', matches: [{ worlds: { A: 1, B: 2 } }] });
    expect(again.status).toBe(409);
    const twice = await admin.post('/v1/ladders/worlds/rounds', { matches: [{ worlds: { A: 1, B: 2 } }, { worlds: { A: 3, C: 2 } }] });
    expect(twice.status).toBe(400);
    expect(twice.body.error.field).toBe('matches[1].worlds.A');
    const notWvw = await admin.post('/v1/ladders/duel/rounds', { matches: [{ worlds: { A: 1, B: 2 } }] });
    expect(notWvw.status).toBe(400);
    const rounds = await anon.get('/v1/ladders/worlds/rounds');
    expect(rounds.body.rounds[0]).toMatchObject({ round: 'week 1' });
    expect(rounds.body.rounds[0].matches[0].shares.A).toBeCloseTo(0.5, 12);
  });

  it('tickets: waiting, matched by a pass with the match and team, cancellation, assignment events', async () => {
    const events: string[] = [];
    const controller = new AbortController();
    const stream = await fetch(`${server.url}/v1/ladders/duel/assignments`, { signal: controller.signal });
    const reader = stream.body!.getReader();
    const reading = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          events.push(new TextDecoder().decode(value));
        }
      } catch {
        // Aborted.
      }
    })();
    const a = await admin.post('/v1/ladders/duel/tickets', { players: [{ id: 'ann', percentile: 50, pings: { eu: 20 } }] });
    const b = await admin.post('/v1/ladders/duel/tickets', { players: [{ id: 'bob', percentile: 52, pings: { eu: 30, na: 90 } }], mode: '1v1' });
    const c = await admin.post('/v1/ladders/duel/tickets', { players: [{ id: 'cy', pings: { asia: 30 }, filter: { strict: true, maxPing: 50 } }] });
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(a.body.ticket.status).toBe('waiting');
    expect((await anon.get(`/v1/tickets/${a.body.ticket.id}`)).body.status).toBe('waiting');
    expect(await server.matchmakeNow()).toBe(1);
    const placed = await anon.get(`/v1/tickets/${a.body.ticket.id}`);
    expect(placed.body.status).toBe('matched');
    expect(placed.body.match.region).toBe('eu');
    expect(placed.body.match.teams.flat().sort()).toEqual([a.body.ticket.id, b.body.ticket.id].sort());
    expect((await admin.del(`/v1/tickets/${a.body.ticket.id}`)).status).toBe(409);
    expect((await admin.del(`/v1/tickets/${c.body.ticket.id}`)).body).toEqual({ id: c.body.ticket.id, status: 'cancelled' });
    const queue = await anon.get('/v1/ladders/duel/queue');
    expect(queue.body.waiting).toBe(0);
    expect(queue.body.recent[0].teams.flat().sort()).toEqual([a.body.ticket.id, b.body.ticket.id].sort());
    for (let i = 0; i < 50 && !events.join('').includes('event: assignment'); i++) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await reading;
    expect(events.join('')).toContain('event: assignment');
    const party = await admin.post('/v1/ladders/duel/tickets', {
      players: [
        { id: 'p', pings: { eu: 1 } },
        { id: 'q', pings: { eu: 1 } },
      ],
    });
    expect(party.status).toBe(400);
    expect(party.body.error.field).toBe('players');
  });

  it('performance ratings of a game record', async () => {
    // Algorithm of 400 by hand: (1500 + 400 + 1700 - 400) / 2 = 1600.
    const reply = await anon.post('/v1/performance', {
      games: [
        { opponent: 1500, result: 'win' },
        { opponent: 1700, result: 'loss' },
      ],
    });
    expect(reply.status).toBe(200);
    expect(reply.body.algo400).toBe(1600);
    // Elo K 32 from the opponents' average 1600: 1600 + 32 * (1 - 1/(1 + 10^(-100/400))).
    expect(reply.body.path[0]).toBeCloseTo(1600 + 32 * (1 - 1 / (1 + 10 ** (-100 / 400))), 9);
    expect(Object.keys(reply.body).sort()).toEqual(['algo400', 'clamped', 'maxLikelihood', 'netzero', 'netzeroUnordered', 'path']);
    expect(reply.body.clamped).toBeNull();
    // Only wins (a zero-weight loss does not count): the likelihood ratings are clamped stand-ins.
    const allWins = await anon.post('/v1/performance', {
      games: [
        { opponent: 1500, result: 'win' },
        { opponent: 1700, result: 'win' },
        { opponent: 1900, result: 'loss', weight: 0 },
      ],
    });
    expect(allWins.body.clamped).toBe('above');
    expect(allWins.body.maxLikelihood).toBeGreaterThanOrEqual(1700 + 800);
    expect((await anon.post('/v1/performance', { games: [{ opponent: 1500, result: 'loss' }] })).body.clamped).toBe('below');
    const bad = await anon.post('/v1/performance', { games: [{ opponent: 'x', result: 'win' }] });
    expect(bad.body.error.field).toBe('games[0].opponent');
  });

  it('openapi.json from the request schemas, docs page, healthz and metrics', async () => {
    const spec = await anon.get('/openapi.json');
    expect(spec.body.openapi).toBe('3.0.3');
    const matchBody = spec.body.paths['/v1/ladders/{ladder}/matches'].post.requestBody.content['application/json'].schema;
    expect(matchBody.properties.teams.minItems).toBe(2);
    expect((await anon.get('/docs')).text).toContain('/v1/ladders/{ladder}/matches');
    expect((await anon.get('/healthz')).body).toEqual({ ok: true });
    const metrics = (await anon.get('/metrics')).text;
    expect(metrics).toMatch(/ladder_matches_rated_total\{ladder="duel"\} \d+/);
    expect(metrics).toContain('ladder_http_request_duration_seconds_bucket');
    expect(metrics).toContain('ladder_ticket_wait_seconds_count{queue="duel"} 2');
    // The event loop's delay, in seconds, by quantile: ordered, and far under a second on an idle test server.
    const delays = ['0.5', '0.99', '1'].map((q) => Number(new RegExp(`^ladder_event_loop_delay_seconds\\{quantile="${q}"\\} (\\S+)$`, 'm').exec(metrics)?.[1]));
    expect(delays.every((d) => d > 0 && d < 1)).toBe(true);
    expect(delays[0]! <= delays[1]! && delays[1]! <= delays[2]!).toBe(true);
    // The part of it that was the process's own work on the main thread (Linux only): under a second on an idle test server.
    const own = /^ladder_event_loop_own_stall_seconds (\S+)$/m.exec(metrics)?.[1];
    if (process.platform === 'linux') {
      expect(Number(own)).toBeGreaterThanOrEqual(0);
      expect(Number(own)).toBeLessThan(1);
    } else expect(own).toBeUndefined();
    // The process's memory by kind, in bytes: the resident set and the heap as this process sees them at the scrape.
    const memory = (kind: string) => Number(new RegExp(`^ladder_process_memory_bytes\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    const usage = process.memoryUsage();
    expect(memory('resident')).toBeGreaterThan(0.5 * usage.rss);
    expect(memory('resident')).toBeLessThan(2 * usage.rss);
    expect(memory('heap_used')).toBeGreaterThan(0);
    expect(memory('heap_used')).toBeLessThanOrEqual(memory('heap_total'));
    expect(memory('array_buffers')).toBeLessThanOrEqual(memory('external'));
    expect(memory('heap_total')).toBeLessThan(memory('resident'));
  });

  it('refuses bodies over the limit with 413 and invalid JSON with 400', async () => {
    const huge = await admin.post(
      '/v1/ladders/duel/matches',
      JSON.stringify({
        teams: [
          { players: ['a'.repeat(70_000)], rank: 1 },
          { players: ['b'], rank: 2 },
        ],
      }),
    );
    expect(huge.status).toBe(413);
    const broken = await admin.post('/v1/ladders/duel/matches', '{"teams": [');
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('invalid_input');
  });
});
