/**
 * One suite for every TicketStore (the contract in store.ts), run in process
 * against each store without HTTP: memory.test.ts and redis.test.ts call
 * `runTicketStoreSuite` with a factory, as a shared router suite is run
 * against every router. A case is named after the rule of the contract it
 * holds, so a store that breaks a rule fails a case of that name.
 *
 * The suite fakes Date (both stores stamp times with Date.now) and lets time
 * pass through `elapse`, which also ages what the store expires by itself
 * (the Redis store's key TTLs), so expiry is checked without waiting.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Ticket } from 'ladder-core/matchmaking';
import {
  bandOf,
  type BackfillPlacement,
  type ExpiredEvent,
  FIGURES_EPOCH,
  FINISHED_TTL_MS,
  type IntakeLimits,
  MAX_QUEUE_REGIONS,
  MAX_WHY_ASKED,
  type Placement,
  type QueueEvent,
  type QueuedBackfill,
  type StoredBackfill,
  type StoredTicket,
  type TicketStore,
  WHY_ASKED_MS,
} from './store.js';

export interface TicketStoreHarness {
  store: TicketStore;
  /** Another instance over the same shared state; absent for a store that serves one instance. */
  another?(): Promise<TicketStore>;
  /** Ages by `ms` what the store expires on its own (Date is moved by the suite). */
  elapse?(ms: number): Promise<void>;
  /** How long the store's matchmaking lock lasts unless renewed (absent: it never lapses). */
  lockMs?: number;
  dispose(): Promise<void>;
}

export interface TicketStoreSuite {
  name: string;
  newStore: () => Promise<TicketStoreHarness>;
  /** fast-check runs of the model comparison. @default 30 */
  runs?: number;
}

const START = FIGURES_EPOCH + 1_000_000_000;
let serial = 0;

/** A name no other case (nor an earlier run against a shared Redis) uses. */
function fresh(kind: string): string {
  return `${kind}-${process.pid}-${Date.now().toString(36)}-${++serial}`;
}

export function ticketOf(
  ladder: string,
  id: string,
  players: string[],
  options: { createdAt?: number; owner?: string; pings?: Record<string, number>[]; percentiles?: number[] } = {},
): StoredTicket {
  const createdAt = options.createdAt ?? Date.now();
  const ticket: Ticket = {
    id,
    at: Math.floor(createdAt / 1000),
    players: players.map((player, i) => ({
      id: player,
      percentile: options.percentiles?.[i] ?? 50,
      pings: options.pings?.[i] ?? { eu: 30 },
      filter: { within: 10, strict: false, maxPing: 150 },
    })),
  };
  return { id, ladder, status: 'waiting', createdAt, ticket, ...(options.owner !== undefined ? { owner: options.owner } : {}) };
}

export function placementOf(teams: string[][], players: string[][], matchId = fresh('match')): Placement {
  const at = Date.now();
  return {
    recent: { matchId, region: 'eu', teams, players, winProbability: 0.5, waitSeconds: { p50: 1, max: 2 }, at: new Date(at).toISOString() },
    match: { id: matchId, region: 'eu', teams, players, at },
    tickets: teams.flatMap((ids, team) => ids.map((id) => ({ id, team }))),
  };
}

export function backfillOf(ladder: string, id: string, teams: string[][], createdAt = Date.now()): StoredBackfill {
  const match = `m-${id}`;
  return {
    id,
    ladder,
    status: 'waiting',
    createdAt,
    match,
    declared: true,
    region: 'eu',
    fills: 0,
    request: { id, match, region: 'eu', at: Math.floor(createdAt / 1000), teams, teamSize: 2 },
    added: [],
    open: teams.map((t) => 2 - t.length),
  };
}

/** A fill of `backfill` (as the caller saw it) by one solo ticket on `team`. */
export function fillOf(backfill: StoredBackfill, ticket: string, player: string, team: number): BackfillPlacement {
  const at = Date.now();
  const teams = backfill.request.teams.map((t, i) => (i === team ? [...t, player] : [...t]));
  const open = backfill.open.map((n, i) => (i === team ? n - 1 : n));
  const added = [...backfill.added, { ticket, team, players: [player], at }];
  const ticketTeams = teams.map((_, i) => (i === team ? [ticket] : []));
  return {
    backfill: backfill.id,
    fills: backfill.fills,
    after: {
      id: backfill.id,
      ladder: backfill.ladder,
      createdAt: backfill.createdAt,
      match: backfill.match,
      declared: true,
      region: backfill.region,
      request: { ...backfill.request, teams },
      added,
      open,
      filled: open.every((n) => n === 0),
    },
    newcomers: [player],
    recent: {
      matchId: backfill.match,
      region: 'eu',
      teams: ticketTeams,
      players: teams,
      winProbability: null,
      waitSeconds: { p50: 0, max: 0 },
      backfill: backfill.id,
      at: new Date(at).toISOString(),
    },
    match: { id: backfill.match, region: 'eu', teams: ticketTeams, players: teams, at, backfill: backfill.id },
    tickets: [{ id: ticket, team }],
  };
}

/** Every event after `cursor` to the end of the log. */
async function drain(store: TicketStore, ladder: string, cursor: string, max = 1000): Promise<{ events: QueueEvent[]; cursor: string; gap: boolean }> {
  const events: QueueEvent[] = [];
  let gap = false;
  for (;;) {
    const batch = await store.readEvents(ladder, cursor, max);
    events.push(...batch.events);
    gap ||= batch.gap;
    cursor = batch.cursor;
    if (batch.complete) return { events, cursor, gap };
  }
}

function describeEvent(event: QueueEvent): string {
  switch (event.kind) {
    case 'add':
      return `add ${event.ticket.id}`;
    case 'cancel':
      return `cancel ${event.id}`;
    case 'backfill':
      return `backfill ${event.backfill.id}`;
    case 'unbackfill':
      return `unbackfill ${event.id}`;
  }
}

export function runTicketStoreSuite({ name, newStore, runs = 30 }: TicketStoreSuite): void {
  describe(`ticket store conformance: ${name}`, () => {
    let harness: TicketStoreHarness;
    let store: TicketStore;
    let ladder: string;

    beforeEach(async () => {
      harness = await newStore();
      store = harness.store;
      ladder = fresh('ladder');
      vi.useFakeTimers({ toFake: ['Date'], now: START });
    });

    afterEach(async () => {
      vi.useRealTimers();
      await harness.dispose();
    });

    async function elapse(ms: number): Promise<void> {
      vi.setSystemTime(Date.now() + ms);
      await harness.elapse?.(ms);
    }

    it('at most one waiting ticket per player', async () => {
      const [t1, t2, t3] = [fresh('t'), fresh('t'), fresh('t')];
      expect(await store.add(ticketOf(ladder, t1, ['a', 'b']))).toEqual({ ok: true });
      expect(await store.add(ticketOf(ladder, t2, ['c', 'a']))).toEqual({ ok: false, reason: 'player', index: 1 });
      expect(await store.add(ticketOf(ladder, t1, ['x']))).toEqual({ ok: false, reason: 'id' });
      // Tickets queued in one turn are each checked as if alone, in order.
      const together = await Promise.all([store.add(ticketOf(ladder, t2, ['c'])), store.add(ticketOf(ladder, t3, ['c']))]);
      expect(together).toEqual([{ ok: true }, { ok: false, reason: 'player', index: 0 }]);
      await store.cancel((await store.get(t1))!);
      expect(await store.add(ticketOf(ladder, t3, ['a']))).toEqual({ ok: true });
      // A finished ticket's id stays taken while it is readable.
      expect(await store.add(ticketOf(ladder, t1, ['z']))).toEqual({ ok: false, reason: 'id' });
      expect((await store.figures(ladder)).waiting).toBe(2);
    });

    it('figures change together with the queue', async () => {
      const ids = [fresh('t'), fresh('t'), fresh('t')];
      await store.add(ticketOf(ladder, ids[0]!, ['a', 'b'], { createdAt: START - 5000, percentiles: [5, 95], pings: [{ eu: 20, na: 90 }, { na: 10 }] }));
      await store.add(ticketOf(ladder, ids[1]!, ['c'], { createdAt: START - 3000, percentiles: [50], pings: [{ na: 40, eu: 60 }] }));
      await store.add(ticketOf(ladder, ids[2]!, ['d'], { createdAt: START - 1000, percentiles: [100] }));
      const bands = (ps: number[]) => {
        const out = new Array<number>(10).fill(0);
        for (const p of ps) out[bandOf(p)]!++;
        return out;
      };
      let f = await store.figures(ladder);
      expect(f).toEqual({
        waiting: 3,
        byRegion: new Map([
          ['eu', 2],
          ['na', 1],
        ]),
        byBand: bands([5, 95, 50, 100]),
        createdSum: 3 * (START - FIGURES_EPOCH) - 9000,
        oldestCreatedAt: START - 5000,
      });
      await store.cancel((await store.get(ids[0]!))!);
      f = await store.figures(ladder);
      expect(f).toEqual({
        waiting: 2,
        byRegion: new Map([
          ['eu', 1],
          ['na', 1],
        ]),
        byBand: bands([50, 100]),
        createdSum: 2 * (START - FIGURES_EPOCH) - 4000,
        oldestCreatedAt: START - 3000,
      });
      await store.claim(ladder);
      expect(await store.assign(ladder, [placementOf([[ids[1]!], [ids[2]!]], [['c'], ['d']])])).toEqual(['placed']);
      f = await store.figures(ladder);
      expect(f).toEqual({ waiting: 0, byRegion: new Map(), byBand: new Array<number>(10).fill(0), createdSum: 0, oldestCreatedAt: null });
      expect(await store.waitingByQueue()).toContainEqual([ladder, 0]);
      expect(await store.queues()).toContain(ladder);
    });

    it('a match is placed only if every one of its tickets still waits', async () => {
      const [t1, t2, t3] = [fresh('t'), fresh('t'), fresh('t')];
      for (const [id, p] of [
        [t1, 'a'],
        [t2, 'b'],
        [t3, 'c'],
      ] as const)
        await store.add(ticketOf(ladder, id, [p]));
      await store.cancel((await store.get(t2))!);
      expect(await store.claim(ladder)).toBe('acquired');
      const gone = placementOf([[t1], [t2]], [['a'], ['b']]);
      const placed = placementOf([[t1], [t3]], [['a'], ['c']]);
      expect(await store.assign(ladder, [gone, placed])).toEqual(['gone', 'placed']);
      const [one, two, three] = await store.getMany([t1, t2, t3]);
      expect(one).toMatchObject({ status: 'matched', match: { id: placed.match.id, team: 0, teams: [[t1], [t3]] } });
      expect(two).toMatchObject({ status: 'cancelled' });
      expect(two!.match).toBeUndefined();
      expect(three).toMatchObject({ status: 'matched', match: { id: placed.match.id, team: 1 } });
      expect((await store.recent(ladder)).map((r) => r.matchId)).toEqual([placed.match.id]);
      expect(await store.formedMatch(placed.match.id)).toEqual({ ladder, teams: 2 });
      expect(await store.formedMatch(gone.match.id)).toBeUndefined();
    });

    it('a match is placed only while the caller holds the lock', async () => {
      const [t1, t2] = [fresh('t'), fresh('t')];
      await store.add(ticketOf(ladder, t1, ['a']));
      await store.add(ticketOf(ladder, t2, ['b']));
      const placement = placementOf([[t1], [t2]], [['a'], ['b']]);
      expect(await store.assign(ladder, [placement])).toEqual(['lost']);
      await store.claim(ladder);
      await store.release(ladder);
      expect(await store.assign(ladder, [placement])).toEqual(['lost']);
      expect((await store.get(t1))!.status).toBe('waiting');
      expect((await store.figures(ladder)).waiting).toBe(2);
      expect(await store.recent(ladder)).toEqual([]);
    });

    it('a ticket is matched or cancelled, never both, never twice', async () => {
      const [t1, t2, t3] = [fresh('t'), fresh('t'), fresh('t')];
      for (const [id, p] of [
        [t1, 'a'],
        [t2, 'b'],
        [t3, 'c'],
      ] as const)
        await store.add(ticketOf(ladder, id, [p]));
      await store.claim(ladder);
      const cursor = await store.snapshot(ladder, () => {});
      const first = placementOf([[t1], [t2]], [['a'], ['b']]);
      // The same tickets twice in one call: only the first is placed.
      expect(await store.assign(ladder, [first, placementOf([[t1], [t2]], [['a'], ['b']])])).toEqual(['placed', 'gone']);
      expect(await store.assign(ladder, [placementOf([[t3], [t1]], [['c'], ['a']])])).toEqual(['gone']);
      expect(await store.cancel((await store.get(t1))!)).toMatchObject({ status: 'matched', match: { id: first.match.id } });
      expect((await store.cancel((await store.get(t3))!))!.status).toBe('cancelled');
      expect((await store.cancel((await store.get(t3))!))!.status).toBe('cancelled');
      expect(await store.assign(ladder, [placementOf([[t3], [t2]], [['c'], ['b']])])).toEqual(['gone']);
      expect((await store.get(t3))!.match).toBeUndefined();
      const f = await store.figures(ladder);
      expect(f.waiting).toBe(0);
      expect(f.byBand.every((n) => n === 0)).toBe(true);
      // One cancel event, though cancelled twice.
      expect((await drain(store, ladder, cursor)).events.map(describeEvent)).toEqual([`cancel ${t3}`]);
      expect(await store.recent(ladder)).toHaveLength(1);
    });

    it('the backfill rules', async () => {
      const [t1, t2, t3, b1, b2] = [fresh('t'), fresh('t'), fresh('t'), fresh('b'), fresh('b')];
      await store.add(ticketOf(ladder, t1, ['w']));
      // Its players may not wait in a ticket, nor be in another open backfill.
      expect(await store.addBackfill(backfillOf(ladder, b1, [['a'], ['w']]))).toEqual({ ok: false, reason: 'waiting', team: 1, index: 0 });
      expect(await store.addBackfill(backfillOf(ladder, b1, [['a'], ['b']]))).toEqual({ ok: true });
      expect(await store.addBackfill(backfillOf(ladder, b1, [['q'], []]))).toEqual({ ok: false, reason: 'id' });
      expect(await store.addBackfill(backfillOf(ladder, b2, [['c'], ['b']]))).toEqual({ ok: false, reason: 'playing', team: 1, index: 0, backfill: b1 });
      // Nor may they queue while it is open.
      expect(await store.add(ticketOf(ladder, t2, ['x', 'a']))).toEqual({ ok: false, reason: 'playing', index: 1, backfill: b1 });
      await store.add(ticketOf(ladder, t2, ['n']));
      await store.add(ticketOf(ladder, t3, ['o']));
      const seen = (await store.getBackfill(b1))!;
      expect(seen).toMatchObject({ status: 'waiting', fills: 0, open: [1, 1] });
      // Only while the caller holds the lock.
      expect(await store.fill(ladder, [fillOf(seen, t2, 'n', 0)])).toEqual(['lost']);
      await store.claim(ladder);
      // A ticket that left the queue is not added.
      await store.cancel((await store.get(t3))!);
      expect(await store.fill(ladder, [fillOf(seen, t3, 'o', 0)])).toEqual(['gone']);
      // Placed only if the backfill is still as the caller saw it.
      expect(await store.fill(ladder, [fillOf(seen, t2, 'n', 0), fillOf(seen, t1, 'w', 1)])).toEqual(['placed', 'gone']);
      const after = (await store.getBackfill(b1))!;
      expect(after).toMatchObject({ status: 'waiting', fills: 1, open: [0, 1], request: { teams: [['a', 'n'], ['b']] } });
      expect(await store.get(t2)).toMatchObject({ status: 'matched', match: { id: seen.match, backfill: b1, team: 0 } });
      // The newcomer is now in the match: it may not queue.
      expect(await store.add(ticketOf(ladder, fresh('t'), ['n']))).toMatchObject({ ok: false, reason: 'playing', backfill: b1 });
      // Filling the last slot closes it and frees its players.
      expect(await store.fill(ladder, [fillOf(after, t1, 'w', 1)])).toEqual(['placed']);
      expect(await store.getBackfill(b1)).toMatchObject({ status: 'filled', fills: 2, open: [0, 0] });
      expect(await store.add(ticketOf(ladder, fresh('t'), ['a', 'n', 'w']))).toEqual({ ok: true });
      // A cancelled backfill frees its players too, once.
      expect(await store.addBackfill(backfillOf(ladder, b2, [['c'], ['d']]))).toEqual({ ok: true });
      expect((await store.cancelBackfill((await store.getBackfill(b2))!))!.status).toBe('cancelled');
      expect((await store.cancelBackfill((await store.getBackfill(b2))!))!.status).toBe('cancelled');
      expect(await store.fill(ladder, [fillOf((await store.getBackfill(b2))!, fresh('t'), 'z', 0)])).toEqual(['gone']);
      expect(await store.add(ticketOf(ladder, fresh('t'), ['c']))).toEqual({ ok: true });
      expect((await store.recent(ladder)).map((r) => r.backfill)).toEqual([b1, b1]);
    });

    it("the event log: every change in order, a snapshot's position, reading in pages, trimming", async () => {
      const [t1, t2, t3, b1] = [fresh('t'), fresh('t'), fresh('t'), fresh('b')];
      await store.add(ticketOf(ladder, t1, ['a']));
      await store.addBackfill(backfillOf(ladder, b1, [['p'], []]));
      expect(await store.claim(ladder)).toBe('acquired');
      const read: string[] = [];
      const open: string[] = [];
      const start = await store.snapshot(
        ladder,
        (tickets) => void read.push(...tickets.map((t) => t.id)),
        (backfills) => void open.push(...backfills.map((b) => b.id)),
      );
      expect(read).toEqual([t1]);
      expect(open).toEqual([b1]);
      await store.add(ticketOf(ladder, t2, ['b']));
      await store.add(ticketOf(ladder, t3, ['c']));
      await store.cancel((await store.get(t2))!);
      await store.cancelBackfill((await store.getBackfill(b1))!);
      const expected = [`add ${t2}`, `add ${t3}`, `cancel ${t2}`, `unbackfill ${b1}`];
      const page = await store.readEvents(ladder, start, 3);
      expect(page.events.map(describeEvent)).toEqual(expected.slice(0, 3));
      expect(page).toMatchObject({ complete: false, gap: false, waiting: 2, backfills: 0 });
      expect(page.events[0]).toMatchObject({ kind: 'add', ticket: { id: t2, players: [{ id: 'b' }] } });
      const rest = await store.readEvents(ladder, page.cursor, 3);
      expect(rest.events.map(describeEvent)).toEqual(expected.slice(3));
      expect(rest).toMatchObject({ complete: true, gap: false });
      expect(await store.readEvents(ladder, rest.cursor, 3)).toMatchObject({ events: [], complete: true, gap: false });
      // Trimmed up to what was read: reading on from there loses nothing.
      await store.trimEvents(ladder, page.cursor);
      await store.add(ticketOf(ladder, fresh('t'), ['d']));
      const after = await drain(store, ladder, page.cursor);
      expect(after.gap).toBe(false);
      expect(after.events.map(describeEvent).slice(0, 1)).toEqual(expected.slice(3));
      // From before the trim: the events since, or a gap (never some of them silently).
      const old = await drain(store, ladder, start);
      if (!old.gap) expect(old.events.map(describeEvent).slice(0, 4)).toEqual(expected);
    });

    it("a rule-set ticket's attributes and roles, and a match's team names and roles, survive the store, a snapshot and the log", async () => {
      const [t1, t2] = [fresh('t'), fresh('t')];
      const withRuleSet = (stored: StoredTicket, k: number): StoredTicket => {
        stored.ticket.players[0]!.attributes = { skill: 20 + k, mode: 'ctf', maps: ['dust', 'pier'], ping: { eu: 30 } };
        stored.ticket.players[0]!.roles = k === 0 ? ['tank', 'healer'] : ['healer'];
        return stored;
      };
      const expected = (k: number) => ({ attributes: { skill: 20 + k, mode: 'ctf', maps: ['dust', 'pier'], ping: { eu: 30 } }, roles: k === 0 ? ['tank', 'healer'] : ['healer'] });
      expect(await store.add(withRuleSet(ticketOf(ladder, t1, ['a']), 0))).toEqual({ ok: true });
      expect(await store.claim(ladder)).toBe('acquired');
      const rebuilt: Ticket[] = [];
      const start = await store.snapshot(ladder, (tickets) => void rebuilt.push(...tickets));
      expect(rebuilt.map((t) => t.players[0])).toEqual([expect.objectContaining({ id: 'a', ...expected(0) })]);
      expect(await store.add(withRuleSet(ticketOf(ladder, t2, ['b']), 1))).toEqual({ ok: true });
      const events = await drain(store, ladder, start);
      expect(events.events).toEqual([
        expect.objectContaining({ kind: 'add', ticket: expect.objectContaining({ id: t2, players: [expect.objectContaining({ id: 'b', ...expected(1) })] }) }),
      ]);
      expect((await store.get(t1))!.ticket.players[0]).toMatchObject(expected(0));

      const placement = placementOf([[t1], [t2]], [['a'], ['b']]);
      placement.match.teamNames = ['red', 'blue'];
      placement.match.roles = { a: 'tank', b: 'healer' };
      placement.recent.teamNames = ['red', 'blue'];
      placement.recent.roles = { a: 'tank', b: 'healer' };
      expect(await store.assign(ladder, [placement])).toEqual(['placed']);
      for (const [id, team] of [
        [t1, 0],
        [t2, 1],
      ] as const) {
        expect((await store.get(id))!.match).toMatchObject({ team, teamNames: ['red', 'blue'], roles: { a: 'tank', b: 'healer' } });
      }
      expect((await store.recent(ladder))[0]).toMatchObject({ teamNames: ['red', 'blue'], roles: { a: 'tank', b: 'healer' } });
    });

    it("a rule-set backfill's team names, its players' attributes, pings and roles, and a fill's roles survive the store, a snapshot, the log and the fill", async () => {
      const [b1, b2, t1] = [fresh('b'), fresh('b'), fresh('t')];
      const ruleSet = (stored: StoredBackfill): StoredBackfill => {
        stored.request.teamNames = ['red', 'blue'];
        stored.request.players = {
          a: { percentile: 50, attributes: { skill: 20, maps: ['dust'], ping: { eu: 30 } }, pings: { eu: 30 }, roles: ['tank', 'healer'] },
          b: { percentile: 50, attributes: { skill: 21, mode: 'ctf' }, pings: { eu: 40, na: 90 }, roles: ['tank'] },
        };
        return stored;
      };
      const expected = {
        teamNames: ['red', 'blue'],
        players: {
          a: { attributes: { skill: 20, maps: ['dust'], ping: { eu: 30 } }, pings: { eu: 30 }, roles: ['tank', 'healer'] },
          b: { attributes: { skill: 21, mode: 'ctf' }, pings: { eu: 40, na: 90 }, roles: ['tank'] },
        },
      };
      expect(await store.addBackfill(ruleSet(backfillOf(ladder, b1, [['a'], ['b']])))).toEqual({ ok: true });
      expect((await store.getBackfill(b1))!.request).toMatchObject(expected);
      expect(await store.claim(ladder)).toBe('acquired');
      const open: QueuedBackfill[] = [];
      const start = await store.snapshot(
        ladder,
        () => undefined,
        (backfills) => void open.push(...backfills),
      );
      expect(open.find((b) => b.id === b1)).toMatchObject(expected);
      expect(await store.addBackfill(ruleSet(backfillOf(ladder, b2, [['c'], ['d']])))).toEqual({ ok: true });
      const events = (await drain(store, ladder, start)).events;
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ kind: 'backfill', backfill: { id: b2, ...expected } });
      // A fill: the newcomer's rule-set fields and the roles seated join the request; the assignment names teams and roles.
      await store.add(ticketOf(ladder, t1, ['n']));
      const fill = fillOf((await store.getBackfill(b1))!, t1, 'n', 0);
      fill.after.request.players = { ...fill.after.request.players, n: { percentile: 50, attributes: { skill: 22 }, pings: { eu: 30 }, roles: ['healer'] } };
      fill.after.request.roles = { a: 'tank', n: 'healer', b: 'tank' };
      fill.match.teamNames = ['red', 'blue'];
      fill.match.roles = { a: 'tank', n: 'healer', b: 'tank' };
      expect(await store.fill(ladder, [fill])).toEqual(['placed']);
      expect((await store.getBackfill(b1))!.request).toMatchObject({
        teamNames: ['red', 'blue'],
        roles: { a: 'tank', n: 'healer', b: 'tank' },
        players: { ...expected.players, n: { attributes: { skill: 22 }, pings: { eu: 30 }, roles: ['healer'] } },
      });
      expect((await store.get(t1))!.match).toMatchObject({ team: 0, backfill: b1, teamNames: ['red', 'blue'], roles: { n: 'healer' } });
    });

    it('trimming the log takes the lock', async () => {
      await store.add(ticketOf(ladder, fresh('t'), ['a']));
      const start = await store.snapshot(ladder, () => {});
      await store.add(ticketOf(ladder, fresh('t'), ['b']));
      const { cursor } = await drain(store, ladder, start);
      await store.trimEvents(ladder, cursor);
      expect(await drain(store, ladder, start)).toMatchObject({ gap: false, events: [{ kind: 'add' }] });
    });

    it('finished tickets, backfills and formed matches stay readable for FINISHED_TTL_MS, waiting ones for good', async () => {
      const [t1, t2, t3, t4, b1] = [fresh('t'), fresh('t'), fresh('t'), fresh('t'), fresh('b')];
      for (const [id, p] of [
        [t1, 'a'],
        [t2, 'b'],
        [t3, 'c'],
        [t4, 'd'],
      ] as const)
        await store.add(ticketOf(ladder, id, [p]));
      await store.addBackfill(backfillOf(ladder, b1, [['p'], []]));
      await store.claim(ladder);
      const placed = placementOf([[t1], [t2]], [['a'], ['b']]);
      await store.assign(ladder, [placed]);
      await store.cancel((await store.get(t3))!);
      await store.cancelBackfill((await store.getBackfill(b1))!);
      await elapse(FINISHED_TTL_MS - 60_000);
      expect((await store.getMany([t1, t2, t3, t4])).map((t) => t?.status)).toEqual(['matched', 'matched', 'cancelled', 'waiting']);
      expect((await store.getBackfill(b1))?.status).toBe('cancelled');
      expect(await store.formedMatch(placed.match.id)).toEqual({ ladder, teams: 2 });
      await elapse(120_000);
      expect((await store.getMany([t1, t2, t3, t4])).map((t) => t?.status)).toEqual([undefined, undefined, undefined, 'waiting']);
      expect(await store.getBackfill(b1)).toBeUndefined();
      expect(await store.formedMatch(placed.match.id)).toBeUndefined();
      // Its id is free again.
      expect(await store.add(ticketOf(ladder, t3, ['c']))).toEqual({ ok: true });
    });

    it('expire ends what is past its time-to-live, as a cancellation would', async () => {
      const [old1, old2, young, b1, b2] = [fresh('t'), fresh('t'), fresh('t'), fresh('b'), fresh('b')];
      await store.add(ticketOf(ladder, old2, ['b'], { createdAt: START - 50_000 }));
      await store.add(ticketOf(ladder, young, ['c'], { createdAt: START - 10_000 }));
      // Out of arrival order.
      await store.add(ticketOf(ladder, old1, ['a'], { createdAt: START - 60_000 }));
      await store.addBackfill(backfillOf(ladder, b1, [['p'], []], START - 40_000));
      await store.addBackfill(backfillOf(ladder, b2, [['q'], []], START - 5_000));
      const start = await store.snapshot(ladder, () => {});
      const announced = new Promise<ExpiredEvent>((resolve) => store.events.once('expired', resolve));
      const out = await store.expire(ladder, { tickets: START - 20_000, backfills: START - 20_000 }, START);
      expect({ ...out, tickets: [...out.tickets].sort() }).toEqual({ tickets: [old1, old2].sort(), backfills: [b1], oldestTicket: START - 10_000, oldestBackfill: START - 5_000 });
      const event = await announced;
      expect(event.ladder).toBe(ladder);
      expect([...event.tickets].sort()).toEqual([old1, old2].sort());
      expect(event.backfills).toEqual([b1]);
      expect((await store.getMany([old1, old2, young])).map((t) => t?.status)).toEqual(['expired', 'expired', 'waiting']);
      expect(await store.getBackfill(b1)).toMatchObject({ status: 'expired', endedAt: START });
      expect(await store.figures(ladder)).toMatchObject({ waiting: 1, oldestCreatedAt: START - 10_000 });
      expect((await drain(store, ladder, start)).events.map(describeEvent).sort()).toEqual([`cancel ${old1}`, `cancel ${old2}`, `unbackfill ${b1}`].sort());
      // Their players are free; an expired ticket cannot be placed.
      expect(await store.add(ticketOf(ladder, fresh('t'), ['a', 'b', 'p']))).toEqual({ ok: true });
      await store.claim(ladder);
      expect(await store.assign(ladder, [placementOf([[old1], [young]], [['a'], ['c']])])).toEqual(['gone']);
      expect(await store.expire(ladder, { tickets: START - 20_000, backfills: START - 20_000 }, START)).toMatchObject({ tickets: [], backfills: [] });
    });

    it('the lock: taken, renewed, given up, taken again', async () => {
      expect(await store.claim(ladder)).toBe('acquired');
      expect(await store.claim(ladder)).toBe('held');
      await store.release(ladder);
      expect(await store.claim(ladder)).toBe('acquired');
    });

    it('lock takeover: another instance waits while it is held, takes it once it lapses, and the old holder places nothing', async (context) => {
      if (!harness.another || harness.lockMs === undefined) return context.skip();
      const other = await harness.another();
      const [t1, t2] = [fresh('t'), fresh('t')];
      await store.add(ticketOf(ladder, t1, ['a']));
      await store.add(ticketOf(ladder, t2, ['b']));
      expect(await store.claim(ladder)).toBe('acquired');
      expect(await other.claim(ladder)).toBe('busy');
      expect(await other.assign(ladder, [placementOf([[t1], [t2]], [['a'], ['b']])])).toEqual(['lost']);
      await elapse(harness.lockMs + 1);
      expect(await other.claim(ladder)).toBe('acquired');
      expect(await store.assign(ladder, [placementOf([[t1], [t2]], [['a'], ['b']])])).toEqual(['lost']);
      expect(await store.claim(ladder)).toBe('busy');
      expect(await other.assign(ladder, [placementOf([[t1], [t2]], [['a'], ['b']])])).toEqual(['placed']);
      // Given up, it is free at once.
      await other.release(ladder);
      expect(await store.claim(ladder)).toBe('acquired');
    });

    it('the caps on waiting tickets, for the ladder and for each key', async () => {
      const limits: IntakeLimits = { maxWaiting: 3, maxWaitingPerKey: 2 };
      const ids = Array.from({ length: 6 }, () => fresh('t'));
      expect(await store.add(ticketOf(ladder, ids[0]!, ['a'], { owner: 'k1' }), limits)).toEqual({ ok: true });
      expect(await store.add(ticketOf(ladder, ids[1]!, ['b'], { owner: 'k1' }), limits)).toEqual({ ok: true });
      expect(await store.add(ticketOf(ladder, ids[2]!, ['c'], { owner: 'k1' }), limits)).toEqual({ ok: false, reason: 'cap', cap: 'key' });
      // Queued together, each counts the ones before it.
      const together = await Promise.all([
        store.add(ticketOf(ladder, ids[3]!, ['d'], { owner: 'k2' }), limits),
        store.add(ticketOf(ladder, ids[4]!, ['e'], { owner: 'k2' }), limits),
      ]);
      expect(together).toEqual([{ ok: true }, { ok: false, reason: 'cap', cap: 'ladder' }]);
      // Without limits, none.
      expect(await store.add(ticketOf(ladder, ids[5]!, ['f'], { owner: 'k1' }))).toEqual({ ok: true });
      // A ticket that leaves gives its place back, to its key and to the ladder.
      await store.cancel((await store.get(ids[0]!))!);
      expect(await store.add(ticketOf(ladder, ids[2]!, ['c'], { owner: 'k1' }), limits)).toEqual({ ok: false, reason: 'cap', cap: 'ladder' });
      await store.cancel((await store.get(ids[5]!))!);
      expect(await store.add(ticketOf(ladder, ids[2]!, ['c'], { owner: 'k1' }), limits)).toEqual({ ok: true });
      expect(await store.figures(ladder)).toMatchObject({ waiting: 3 });
    });

    it('a queue knows MAX_QUEUE_REGIONS regions at most; a region none names any more leaves', async () => {
      const ids = Array.from({ length: MAX_QUEUE_REGIONS + 2 }, () => fresh('t'));
      for (let i = 0; i < MAX_QUEUE_REGIONS; i++) expect(await store.add(ticketOf(ladder, ids[i]!, [`p${i}`], { pings: [{ [`r${i}`]: 30, r0: 90 }] }))).toEqual({ ok: true });
      expect(await store.add(ticketOf(ladder, ids[MAX_QUEUE_REGIONS]!, ['x'], { pings: [{ extra: 10 }] }))).toEqual({ ok: false, reason: 'regions' });
      // Known regions only: fine.
      expect(await store.add(ticketOf(ladder, ids[MAX_QUEUE_REGIONS + 1]!, ['y'], { pings: [{ r5: 10, r6: 20 }] }))).toEqual({ ok: true });
      expect((await store.figures(ladder)).byRegion.get('r5')).toBe(2);
      // r7 was named by one ticket only: once it leaves, a new region fits.
      await store.cancel((await store.get(ids[7]!))!);
      expect(await store.add(ticketOf(ladder, ids[MAX_QUEUE_REGIONS]!, ['x'], { pings: [{ extra: 10 }] }))).toEqual({ ok: true });
      // r0 is still named by others after its own ticket leaves: no room.
      await store.cancel((await store.get(ids[0]!))!);
      expect(await store.add(ticketOf(ladder, fresh('t'), ['z'], { pings: [{ another: 10 }] }))).toEqual({ ok: false, reason: 'regions' });
    });

    it("why waiting: the lock holder's summary and the reasons of the tickets asked about, bounded, forgotten with the queue", async () => {
      const [t1, t2] = [fresh('t'), fresh('t')];
      await store.add(ticketOf(ladder, t1, ['a']));
      await store.add(ticketOf(ladder, t2, ['b']));
      // Before any pass: nothing known, but the ask is remembered for the lock holder.
      expect(await store.askWhy(ladder, t1)).toBeUndefined();
      expect((await store.summary(ladder)).why).toBeUndefined();
      await elapse(10);
      await store.askWhy(ladder, t2);
      expect(await store.whyAsked(ladder)).toEqual([t2, t1]);
      const at = Date.now();
      // Only the lock holder writes.
      expect(await store.setWhy(ladder, { at, heldBy: { SkillClose: 2 } }, { [t1]: 'SkillClose' })).toBe(false);
      expect(await store.askWhy(ladder, t1)).toBeUndefined();
      expect(await store.claim(ladder)).toBe('acquired');
      expect(await store.setWhy(ladder, { at, heldBy: { SkillClose: 1, minPlayers: 1 } }, { [t1]: 'SkillClose', [t2]: 'minPlayers' })).toBe(true);
      expect(await store.askWhy(ladder, t1)).toEqual({ rule: 'SkillClose', at });
      expect((await store.summary(ladder)).why).toEqual({ at, heldBy: { SkillClose: 1, minPlayers: 1 } });
      // Every instance reads what the holder wrote.
      const other = await harness.another?.();
      if (other) {
        expect(await other.askWhy(ladder, t2)).toEqual({ rule: 'minPlayers', at });
        expect((await other.summary(ladder)).why?.heldBy).toEqual({ SkillClose: 1, minPlayers: 1 });
        expect(await other.setWhy(ladder, { at, heldBy: {} }, {})).toBe(false);
      }
      // A later pass replaces the whole: a ticket it does not name has no reason any more.
      await elapse(1000);
      const later = Date.now();
      expect(await store.setWhy(ladder, { at: later, heldBy: { minPlayers: 1 } }, { [t2]: 'minPlayers' })).toBe(true);
      expect(await store.askWhy(ladder, t1)).toBeUndefined();
      expect(await store.askWhy(ladder, t2)).toEqual({ rule: 'minPlayers', at: later });
      // The most recently asked MAX_WHY_ASKED only; asks older than WHY_ASKED_MS are forgotten.
      for (let i = 0; i < MAX_WHY_ASKED + 5; i++) {
        // A millisecond apart: asks within one millisecond have no order between them.
        vi.setSystemTime(Date.now() + 1);
        await store.askWhy(ladder, `x${i}`);
      }
      const asked = await store.whyAsked(ladder);
      expect(asked).toHaveLength(MAX_WHY_ASKED);
      expect(asked[0]).toBe(`x${MAX_WHY_ASKED + 4}`);
      expect(asked.at(-1)).toBe('x5');
      expect(asked).not.toContain(t1);
      await elapse(WHY_ASKED_MS + 1);
      expect(await store.whyAsked(ladder)).toEqual([]);
      await store.release(ladder);
      await store.closeQueue(ladder);
      expect((await store.summary(ladder)).why).toBeUndefined();
      expect(await store.askWhy(ladder, t2)).toBeUndefined();
    });

    it('closing a queue cancels everything in it and forgets it', async () => {
      const [t1, t2, b1] = [fresh('t'), fresh('t'), fresh('b')];
      await store.add(ticketOf(ladder, t1, ['a']));
      await store.add(ticketOf(ladder, t2, ['b']));
      await store.addBackfill(backfillOf(ladder, b1, [['p'], []]));
      expect(await store.closeQueue(ladder)).toEqual({ tickets: 2, backfills: 1 });
      expect((await store.getMany([t1, t2])).map((t) => t?.status)).toEqual(['cancelled', 'cancelled']);
      expect((await store.getBackfill(b1))?.status).toBe('cancelled');
      expect(await store.queues()).not.toContain(ladder);
      expect((await store.figures(ladder)).waiting).toBe(0);
    });

    it('random operations agree with a model of the contract', async () => {
      const player = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('add' as const),
          ticket: fc.nat(7),
          players: fc.uniqueArray(player, { minLength: 1, maxLength: 2 }),
          owner: fc.constantFrom('k1', 'k2'),
          age: fc.nat(60),
        }),
        fc.record({ kind: fc.constant('cancel' as const), ticket: fc.nat(7) }),
        fc.record({ kind: fc.constant('assign' as const), matches: fc.array(fc.uniqueArray(fc.nat(7), { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 3 }) }),
        fc.record({ kind: fc.constant('claim' as const) }),
        fc.record({ kind: fc.constant('release' as const) }),
        fc.record({ kind: fc.constant('expire' as const), age: fc.nat(60) }),
      );
      const limits: IntakeLimits = { maxWaiting: 4, maxWaitingPerKey: 3 };
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
          const queue = fresh('ladder');
          const ids = Array.from({ length: 8 }, () => fresh('t'));
          // The model: what the contract says, nothing else.
          const tickets = new Map<string, { status: StoredTicket['status']; players: string[]; owner: string; createdAt: number; match?: string }>();
          let held = false;
          const log: string[] = [];
          const waiting = () => [...tickets.entries()].filter(([, t]) => t.status === 'waiting');
          const cursor = await store.snapshot(queue, () => {});
          await store.release(queue);
          for (const o of ops) {
            if (o.kind === 'add') {
              const id = ids[o.ticket]!;
              const createdAt = START - o.age * 1000;
              let expected: unknown = { ok: true };
              const busy = new Set(waiting().flatMap(([, t]) => t.players));
              const index = o.players.findIndex((p) => busy.has(p));
              if (tickets.has(id)) expected = { ok: false, reason: 'id' };
              else if (index !== -1) expected = { ok: false, reason: 'player', index };
              else if (waiting().length >= limits.maxWaiting) expected = { ok: false, reason: 'cap', cap: 'ladder' };
              else if (waiting().filter(([, t]) => t.owner === o.owner).length >= limits.maxWaitingPerKey) expected = { ok: false, reason: 'cap', cap: 'key' };
              expect(await store.add(ticketOf(queue, id, o.players, { createdAt, owner: o.owner }), limits)).toEqual(expected);
              if ((expected as { ok: boolean }).ok) {
                tickets.set(id, { status: 'waiting', players: o.players, owner: o.owner, createdAt });
                log.push(`add ${id}`);
              }
            } else if (o.kind === 'cancel') {
              const id = ids[o.ticket]!;
              const known = tickets.get(id);
              const stored = await store.get(id);
              expect(stored?.status).toBe(known?.status);
              if (stored === undefined) continue;
              const after = await store.cancel(stored);
              if (known!.status === 'waiting') {
                known!.status = 'cancelled';
                log.push(`cancel ${id}`);
              }
              expect(after?.status).toBe(known!.status);
            } else if (o.kind === 'assign') {
              const placements = o.matches.map((m) =>
                placementOf([[ids[m[0]!]!], [ids[m[1]!]!]], [tickets.get(ids[m[0]!]!)?.players ?? [], tickets.get(ids[m[1]!]!)?.players ?? []]),
              );
              const expected = placements.map((p) => {
                if (!held) return 'lost';
                if (!p.tickets.every((t) => tickets.get(t.id)?.status === 'waiting')) return 'gone';
                for (const t of p.tickets) Object.assign(tickets.get(t.id)!, { status: 'matched', match: p.match.id });
                return 'placed';
              });
              expect(await store.assign(queue, placements)).toEqual(expected);
            } else if (o.kind === 'claim') {
              expect(await store.claim(queue)).toBe(held ? 'held' : 'acquired');
              held = true;
            } else if (o.kind === 'release') {
              await store.release(queue);
              held = false;
            } else {
              const cutoff = START - o.age * 1000;
              const ended = waiting()
                .filter(([, t]) => t.createdAt <= cutoff)
                .map(([id]) => id);
              for (const id of ended) tickets.get(id)!.status = 'expired';
              const out = await store.expire(queue, { tickets: cutoff, backfills: cutoff }, START);
              expect([...out.tickets].sort()).toEqual([...ended].sort());
              const left = waiting().map(([, t]) => t.createdAt);
              expect(out.oldestTicket).toBe(left.length === 0 ? null : Math.min(...left));
              // The log's order among tickets expired together is the store's.
              log.push(...[...out.tickets].map((id) => `cancel ${id}`));
            }
            const figures = await store.figures(queue);
            expect(figures.waiting).toBe(waiting().length);
            expect(figures.byBand[bandOf(50)]).toBe(waiting().reduce((n, [, t]) => n + t.players.length, 0));
          }
          for (const [id, t] of tickets) {
            const stored = await store.get(id);
            expect(stored?.status).toBe(t.status);
            expect(stored?.match?.id).toBe(t.match);
          }
          expect((await drain(store, queue, cursor)).events.map(describeEvent)).toEqual(log);
          await store.release(queue);
        }),
        { numRuns: runs },
      );
    });
  });
}
