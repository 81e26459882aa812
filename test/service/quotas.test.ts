/**
 * Quotas and expiry of what a key can hold in the matchmaking queue, on both
 * backends (PGlite with the in-process queue, PostgreSQL with Redis):
 * tickets and backfills expire after their ladder's time-to-live (on a
 * clock the test advances), seen by their readers, the queue's figures and
 * the assignment stream, and their players are freed; caps on waiting
 * tickets per ladder and per key (429 naming the cap); a region leaves the
 * queue's set when no waiting ticket names it, and a queue may declare its
 * regions; event streams are capped per address and a closed stream frees
 * its slot; API keys limited to named ladders; a backfill names a match the
 * matchmaker formed or says it is declared.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamsFullError } from '../../src/service/errors/index.js';
import { StreamSlots } from '../../src/service/http/stream-slots.js';
import { BACKENDS, client, type TestServer, useTestServer } from './helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A ladder's assignment stream: its status, and every event (name and data) as it arrives. */
function openStream(url: string, ladder: string) {
  const controller = new AbortController();
  const events: Array<{ event: string; data: any }> = [];
  let body = '';
  const opened = (async () => {
    const response = await fetch(`${url}/v1/ladders/${ladder}/assignments`, { signal: controller.signal });
    if (response.status !== 200) {
      body = await response.text();
      return response;
    }
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let ready!: () => void;
    const first = new Promise<void>((resolve) => (ready = resolve));
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          if (buffer.includes(': assignments of ladder')) ready();
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const match = /^event: (\w+)\ndata: (.*)$/m.exec(block);
            if (match) events.push({ event: match[1]!, data: JSON.parse(match[2]!) });
          }
        }
      } catch {
        // Aborted.
      }
    })();
    await first;
    return response;
  })();
  return { opened, events, body: () => body, close: () => controller.abort() };
}

/** Waits until `test` holds (polling), at most `ms`. */
async function until(test: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

describe.each(BACKENDS)('quotas on %s', (backend) => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  /** Added to the real time by the service's expiry clock. */
  let offset = 0;

  useTestServer({ backend, options: { rateLimit: { perSecond: 1e6 }, clock: () => Date.now() + offset, streams: { perAddress: 2, total: 100 } } }, async (started) => {
    server = started;
    admin = client(server.url, server.admin);
  });

  const ladder = async (id: string, matchmaking: Record<string, unknown> = {}) => {
    const created = await admin.post('/v1/ladders', { id, system: 'glicko2', public: true, matchmaking });
    expect(created.status, created.text).toBe(201);
  };
  const ticket = (id: string, player: string, pings: Record<string, number> = { eu: 20 }) => ({ id, players: [{ id: player, pings }] });
  const writeKey = async (name: string, ladders?: string[], scopes = ['write']) => {
    const created = await admin.post('/v1/keys', { name, scopes, ...(ladders ? { ladders } : {}) });
    expect(created.status, created.text).toBe(201);
    return created.body as { key: string; ladders: string[] | null };
  };

  it('a waiting ticket expires after its time-to-live: its reader, the queue, the stream see it; its player is free again', async () => {
    offset = 0;
    await ladder('ttl', { ticketTtlSeconds: 60, backfillTtlSeconds: 120 });
    const stream = openStream(server.url, 'ttl');
    expect((await stream.opened).status).toBe(200);
    expect((await admin.post('/v1/ladders/ttl/tickets', ticket('ttl-1', 'ann'))).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/ttl-1')).body.status).toBe('waiting');

    offset = 61_000;
    await server.matchmakeNow();
    const read = await admin.get('/v1/tickets/ttl-1');
    expect(read.body).toMatchObject({ id: 'ttl-1', status: 'expired' });
    const queue = await admin.get('/v1/ladders/ttl/queue');
    expect(queue.body).toMatchObject({ waiting: 0, byRegion: {} });
    await until(() => stream.events.some((e) => e.event === 'expired'));
    expect(stream.events.find((e) => e.event === 'expired')!.data).toEqual({ tickets: ['ttl-1'], backfills: [] });
    // Cancelling it now says what happened to it.
    expect((await admin.del('/v1/tickets/ttl-1')).body).toEqual({ id: 'ttl-1', status: 'expired' });
    // The player is free to queue again.
    expect((await admin.post('/v1/ladders/ttl/tickets', ticket('ttl-2', 'ann'))).status).toBe(201);
    stream.close();
  });

  it('an open backfill expires after its time-to-live (read before any pass sweeps it), freeing its players', async () => {
    offset = 0;
    await ladder('bttl', { ticketTtlSeconds: 600, backfillTtlSeconds: 30 });
    const opened = await admin.post('/v1/ladders/bttl/backfills', { id: 'bttl-1', declared: true, match: 'live-9', region: 'na', teams: [['bx'], []] });
    expect(opened.status, opened.text).toBe(201);
    expect((await admin.post('/v1/ladders/bttl/tickets', ticket('bttl-t', 'bx'))).status).toBe(409);
    offset = 31_000;
    // No matchmaking turn has run: the read itself expires it.
    expect((await admin.get('/v1/backfills/bttl-1')).body).toMatchObject({ id: 'bttl-1', status: 'expired' });
    expect((await admin.post('/v1/ladders/bttl/tickets', ticket('bttl-t', 'bx'))).status).toBe(201);
    // The matchmaker lets it go too (a turn after the expiry forms nothing from it and fails nothing).
    await server.matchmakeNow();
    expect((await admin.get('/v1/backfills/bttl-1')).body.status).toBe('expired');
  });

  it('caps waiting tickets per key and per ladder with 429 naming the cap; a ticket that leaves frees its place', async () => {
    await ladder('capped', { maxWaiting: 3, maxWaitingPerKey: 2 });
    const k1 = client(server.url, (await writeKey('cap-1')).key);
    const k2 = client(server.url, (await writeKey('cap-2')).key);
    expect((await k1.post('/v1/ladders/capped/tickets', ticket('c1', 'c1p'))).status).toBe(201);
    expect((await k1.post('/v1/ladders/capped/tickets', ticket('c2', 'c2p', { eu: 20, na: 90 }))).status).toBe(201);
    const perKey = await k1.post('/v1/ladders/capped/tickets', ticket('c3', 'c3p'));
    expect(perKey.status).toBe(429);
    expect(perKey.body.error).toMatchObject({ code: 'quota_exceeded', field: 'matchmaking.maxWaitingPerKey' });
    expect(Number(perKey.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await k2.post('/v1/ladders/capped/tickets', ticket('c4', 'c4p'))).status).toBe(201);
    const perLadder = await k2.post('/v1/ladders/capped/tickets', ticket('c5', 'c5p'));
    expect(perLadder.status).toBe(429);
    expect(perLadder.body.error).toMatchObject({ code: 'quota_exceeded', field: 'matchmaking.maxWaiting' });
    // A refused ticket was not queued: its id is still free.
    expect((await admin.get('/v1/tickets/c5')).status).toBe(404);
    expect((await k1.del('/v1/tickets/c1')).status).toBe(200);
    expect((await k1.post('/v1/ladders/capped/tickets', ticket('c3', 'c3p'))).status).toBe(201);
    // Matched tickets leave the counts too: c3 and c4 (both 50th percentile, eu) match.
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/c4')).body.status).toBe('matched');
    expect((await k2.post('/v1/ladders/capped/tickets', ticket('c6', 'c6p'))).status).toBe(201);
    expect((await k2.post('/v1/ladders/capped/tickets', ticket('c7', 'c7p'))).status).toBe(201);
  });

  it('a region leaves the queue when no waiting ticket names it: invented regions do not block new ones for good', async () => {
    await ladder('churn');
    const invented = Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`invented-${i}`, 10 + i]));
    expect((await admin.post('/v1/ladders/churn/tickets', ticket('inv', 'mallory', invented))).status).toBe(201);
    // The long-lived matchmaker learns the invented regions too.
    await server.matchmakeNow();
    const blocked = await admin.post('/v1/ladders/churn/tickets', ticket('eu-1', 'eve'));
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.field).toBe('players[].pings');
    expect((await admin.del('/v1/tickets/inv')).status).toBe(200);
    expect((await admin.post('/v1/ladders/churn/tickets', ticket('eu-1', 'eve'))).status).toBe(201);
    expect((await admin.post('/v1/ladders/churn/tickets', ticket('eu-2', 'frank'))).status).toBe(201);
    // The matchmaker that saw 31 regions makes room too (it is rebuilt from the queue) and matches them.
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/eu-1')).body).toMatchObject({ status: 'matched', match: { region: 'eu' } });
    expect((await admin.get('/v1/tickets/eu-2')).body.status).toBe('matched');
    // The same churn through matches: a region named only by matched tickets leaves as well.
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`other-${i}`, 10 + i]));
    expect((await admin.post('/v1/ladders/churn/tickets', ticket('o-1', 'o1', { ...many, eu: 5 }))).status).toBe(201);
    expect((await admin.post('/v1/ladders/churn/tickets', ticket('o-2', 'o2', { ...many, eu: 5 }))).status).toBe(201);
    await server.matchmakeNow();
    expect((await admin.get('/v1/tickets/o-2')).body.status).toBe('matched');
    expect((await admin.post('/v1/ladders/churn/tickets', ticket('na-1', 'n1', { na: 5 }))).status).toBe(201);
  });

  it('a queue that declares its regions refuses a ping to any other, naming it', async () => {
    await ladder('declared', { regions: ['eu', 'na'] });
    const refused = await admin.post('/v1/ladders/declared/tickets', ticket('d1', 'dp', { eu: 20, mars: 5 }));
    expect(refused.status).toBe(400);
    expect(refused.body.error.field).toBe('players[0].pings.mars');
    expect((await admin.post('/v1/ladders/declared/tickets', ticket('d1', 'dp', { eu: 20, na: 80 }))).status).toBe(201);
    expect((await admin.get('/v1/ladders/declared')).body.matchmaking.regions).toEqual(['eu', 'na']);
    const twice = await admin.post('/v1/ladders', { id: 'declared-2', system: 'glicko2', matchmaking: { regions: ['eu', 'eu'] } });
    expect(twice.status).toBe(400);
    expect(twice.body.error.field).toBe('matchmaking.regions[1]');
  });

  it('caps event streams per address with 503 and Retry-After; a closed stream frees its slot', async () => {
    await ladder('streams');
    const first = openStream(server.url, 'streams');
    const second = openStream(server.url, 'streams');
    expect((await first.opened).status).toBe(200);
    expect((await second.opened).status).toBe(200);
    const third = openStream(server.url, 'streams');
    const refused = await third.opened;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(third.body()).error).toMatchObject({ code: 'unavailable', field: 'streams.perAddress' });
    first.close();
    let again = openStream(server.url, 'streams');
    await until(async () => {
      if ((await again.opened).status === 200) return true;
      again = openStream(server.url, 'streams');
      return false;
    });
    second.close();
    again.close();
  });

  it('an API key limited to named ladders gets 403 on every other ladder, its tickets included', async () => {
    await ladder('lim-a');
    await ladder('lim-b');
    const limited = await writeKey('lim', ['lim-a']);
    expect(limited.ladders).toEqual(['lim-a']);
    const key = client(server.url, limited.key);
    expect((await key.post('/v1/ladders/lim-a/tickets', ticket('la-1', 'la'))).status).toBe(201);
    for (const reply of [
      await key.post('/v1/ladders/lim-b/tickets', ticket('lb-1', 'lb')),
      await key.get('/v1/ladders/lim-b/leaderboard'),
      await key.get('/v1/ladders/lim-b/queue'),
      await key.post('/v1/ladders/lim-b/matches', {
        teams: [
          { players: ['x'], rank: 1 },
          { players: ['y'], rank: 2 },
        ],
      }),
    ]) {
      expect(reply.status, reply.text).toBe(403);
      expect(reply.body.error).toMatchObject({ code: 'forbidden', field: 'ladder' });
    }
    // Reached by a ticket's id rather than the path: the ticket's ladder counts.
    expect((await admin.post('/v1/ladders/lim-b/tickets', ticket('lb-2', 'lb2'))).status).toBe(201);
    expect((await key.get('/v1/tickets/lb-2')).status).toBe(403);
    expect((await key.del('/v1/tickets/lb-2')).status).toBe(403);
    expect((await admin.get('/v1/tickets/lb-2')).body.status).toBe('waiting');
    // A limited admin key manages its ladders but not the keys of all.
    const limitedAdmin = client(server.url, (await writeKey('lim-admin', ['lim-a'], ['admin'])).key);
    expect((await limitedAdmin.get('/v1/ladders/lim-a')).status).toBe(200);
    expect((await limitedAdmin.get('/v1/keys')).status).toBe(403);
    expect((await limitedAdmin.post('/v1/keys', { name: 'escalate', scopes: ['admin'] })).status).toBe(403);
    expect((await limitedAdmin.post('/v1/ladders', { id: 'lim-c', system: 'elo' })).status).toBe(403);
    expect((await limitedAdmin.get('/v1/ladders')).body.ladders.map((l: { id: string }) => l.id)).toEqual(['lim-a']);
    const listed = (await admin.get('/v1/keys')).body.keys as Array<{ name: string; ladders: string[] | null }>;
    expect(listed.find((k) => k.name === 'lim')!.ladders).toEqual(['lim-a']);
    expect(listed.find((k) => k.name === 'cap-1')?.ladders ?? null).toBeNull();
  });

  it('a backfill names a match the ladder formed, or says the game server declared it', async () => {
    await ladder('formed');
    expect((await admin.post('/v1/ladders/formed/tickets', ticket('f1', 'fa'))).status).toBe(201);
    expect((await admin.post('/v1/ladders/formed/tickets', ticket('f2', 'fb'))).status).toBe(201);
    await server.matchmakeNow();
    const matchId = (await admin.get('/v1/tickets/f1')).body.match.id as string;
    expect(typeof matchId).toBe('string');
    const unknown = await admin.post('/v1/ladders/formed/backfills', { match: 'never-formed', region: 'eu', teams: [['fa'], []] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.field).toBe('match');
    const wrongTeams = await admin.post('/v1/ladders/formed/backfills', { match: matchId, region: 'eu', teams: [['fa'], [], []] });
    expect(wrongTeams.status).toBe(400);
    expect(wrongTeams.body.error.field).toBe('teams');
    // Another ladder's match is not this one's.
    await ladder('formed-other');
    expect((await admin.post('/v1/ladders/formed-other/backfills', { match: matchId, region: 'eu', teams: [['fa'], []] })).status).toBe(404);
    const named = await admin.post('/v1/ladders/formed/backfills', { match: matchId, region: 'eu', teams: [['fa'], []] });
    expect(named.status, named.text).toBe(201);
    expect(named.body).toMatchObject({ match: matchId, declared: false });
    const declared = await admin.post('/v1/ladders/formed/backfills', { match: 'server-own-1', declared: true, region: 'eu', teams: [['gx'], []] });
    expect(declared.status, declared.text).toBe(201);
    expect(declared.body).toMatchObject({ match: 'server-own-1', declared: true });
  });
});

describe('stream slots', () => {
  it('never hold more than their caps, and every release gives exactly one slot back', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3 }), fc.nat()), { maxLength: 60 }),
        (perAddress, total, steps) => {
          const slots = new StreamSlots({ perAddress, total });
          const held: Array<{ address: string; release: () => void }> = [];
          for (const [take, who, pick] of steps) {
            const address = `a${who}`;
            if (take) {
              const mine = held.filter((h) => h.address === address).length;
              try {
                held.push({ address, release: slots.take(address) });
                expect(mine < perAddress && held.length - 1 < total).toBe(true);
              } catch (error) {
                expect(error).toBeInstanceOf(StreamsFullError);
                expect(mine >= perAddress || held.length >= total).toBe(true);
                expect((error as StreamsFullError).cap).toBe(mine >= perAddress ? 'perAddress' : 'total');
              }
            } else if (held.length > 0) {
              const [gone] = held.splice(pick % held.length, 1);
              gone!.release();
              // Released twice (a socket's close and the response's): still one slot.
              gone!.release();
            }
            expect(slots.size).toBe(held.length);
          }
        },
      ),
    );
  });
});
