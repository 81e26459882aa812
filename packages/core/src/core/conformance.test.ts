/**
 * One suite every registered rating system passes, the way hono runs one
 * router suite over every router (`runTest({ newRouter })`):
 * `conformance(descriptor)` states the properties, and the loop at the end
 * runs them for each system in the registry, so a system is held to them
 * the moment it is registered. What a system does not claim (draws, more
 * than two teams, a fast path, rating periods) is read from its
 * capabilities, and checked to be claimed honestly.
 *
 * - a win never lowers a winner's rating;
 * - a one-against-one draw between equal players moves neither rating;
 * - a million random games leave no NaN or infinity (a plain loop, no
 *   property framework, so it stays within seconds);
 * - predicted chances are probabilities that sum to 1;
 * - the fast path gives the general path's ratings;
 * - rating a match and rating a period of it agree; a period of matches
 *   without common players is each match rated alone (rating periods) or
 *   the matches rated in order (systems without periods).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RegisteredDescriptor } from './registry.js';
import { allSystems } from './registry.js';
import { InvalidInputError } from './errors.js';
import type { Match, MatchTeam } from './match.js';
import { optionProblem } from './options.js';
import { PairwiseLogBuilder } from './pairwise.js';
import type { PlayerState, RatingSystem } from './rating-system.js';
import { Replay } from './replay.js';
import { createSystem } from './systems.js';
import { mulberry32 } from './random.js';

const DAY = 86_400_000;
/** Players a generated log draws from. */
const POOL = 12;

/** One generated match: its players (pool indices, distinct), each team's place and score, the days since the match before. */
interface Shape {
  count: number;
  size: number;
  players: number[];
  places: number[];
  scores: number[];
  gap: number;
}

/** Shapes of match the system rates: team sizes, team counts and ties as its capabilities allow. */
function shapes(d: RegisteredDescriptor): fc.Arbitrary<Shape> {
  const { teams, multiTeam, draws } = d.capabilities;
  return fc.tuple(multiTeam ? fc.integer({ min: 2, max: 4 }) : fc.constant(2), teams ? fc.integer({ min: 1, max: 3 }) : fc.constant(1)).chain(([count, size]) =>
    fc.record({
      count: fc.constant(count),
      size: fc.constant(size),
      players: fc.uniqueArray(fc.integer({ min: 0, max: POOL - 1 }), { minLength: count * size, maxLength: count * size }),
      places: draws
        ? fc.array(fc.integer({ min: 1, max: count }), { minLength: count, maxLength: count })
        : fc.shuffledSubarray(
            Array.from({ length: count }, (_, i) => i + 1),
            { minLength: count, maxLength: count },
          ),
      scores: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: count, maxLength: count }),
      gap: fc.integer({ min: 0, max: 20 }),
    }),
  );
}

/** A team as the system needs it: placed by rank, or by raw score where it needs scores. */
function team(d: RegisteredDescriptor, ids: string[], place: number, score: number): MatchTeam {
  const players = ids.map((id) => ({ id }));
  return d.capabilities.needsScores ? { players, score } : { players, rank: place };
}

/** Generated shapes as timed matches, one after another. */
function matchesOf(d: RegisteredDescriptor, log: readonly Shape[], prefix = 'p'): Match[] {
  let day = 0;
  return log.map((shape, m) => {
    day += shape.gap;
    const teams = Array.from({ length: shape.count }, (_, t) =>
      team(
        d,
        shape.players.slice(t * shape.size, (t + 1) * shape.size).map((i) => `${prefix}${i}`),
        shape.places[t]!,
        shape.scores[t]!,
      ),
    );
    return { id: `m${m}`, at: day * DAY, teams };
  });
}

/** Plays a log through the system (which keeps it, if it keeps whole histories) and returns every player's state. */
function warmUp(system: RatingSystem, matches: readonly Match[]): Map<string, PlayerState> {
  const replay = new Replay(system);
  for (const match of matches) replay.push(match);
  return new Map(replay.players);
}

const lastAt = (matches: readonly Match[]) => matches.at(-1)?.at ?? 0;

function finite(state: PlayerState): boolean {
  return Number.isFinite(state.rating) && (state.rd === undefined || Number.isFinite(state.rd)) && (state.volatility === undefined || Number.isFinite(state.volatility));
}

/** Equal up to the rounding of a conversion there and back (a rating through the Glicko-2 scale). */
function nearlyEqual(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Options for the million-game run where a system's defaults would take
 * minutes rather than seconds: Whole-History Rating re-smooths the last 64
 * days of every player of a closed day, and the whole timelines of an
 * eighth of all players (its cycle); the run keeps its messages and
 * smoothing, over a window of 4 and without the cycle.
 */
const MILLION_GAME_OPTIONS: Partial<Record<string, Readonly<Record<string, unknown>>>> = { whr: { window: 4, sweeps: 1, cycle: 0 } };

function conformance(d: RegisteredDescriptor): void {
  const caps = d.capabilities;
  const make = (): RatingSystem => createSystem(d.name);
  const logs = fc.array(shapes(d), { maxLength: 25 });

  describe(`${d.name}: its descriptor`, () => {
    it('has options whose defaults pass their own schema, and are what createSystem uses', () => {
      for (const [name, spec] of Object.entries(d.options)) expect(optionProblem(spec, spec.default), name).toBeUndefined();
      expect(make().options).toEqual(Object.fromEntries(Object.entries(d.options).map(([name, spec]) => [name, spec.default])));
    });

    it('fits only its own options, within ranges that hold their starting points', () => {
      const names = d.fit.parameters.map((p) => p.name);
      for (const parameter of d.fit.parameters) {
        expect(Object.hasOwn(d.options, parameter.name), parameter.name).toBe(true);
        expect(parameter.min).toBeLessThan(parameter.max);
        if (parameter.initial !== undefined) expect(parameter.initial >= parameter.min && parameter.initial <= parameter.max, parameter.name).toBe(true);
      }
      for (const name of d.fit.byDefault) expect(names).toContain(name);
    });

    it('claims its capabilities honestly', () => {
      expect(caps.fastPath).toBe(d.fastPath !== undefined);
      expect(make().initial().rd !== undefined).toBe(caps.deviation);
      const three = matchesOf(d, [{ count: 3, size: 1, players: [0, 1, 2], places: [1, 2, 3], scores: [3, 2, 1], gap: 0 }])[0]!;
      if (caps.multiTeam) expect(make().rateMatch(three, new Map()).players).toHaveLength(3);
      else expect(() => make().rateMatch(three, new Map())).toThrow(InvalidInputError);
      if (caps.needsScores) {
        const placed: Match = {
          teams: [
            { players: [{ id: 'a' }], rank: 1 },
            { players: [{ id: 'b' }], rank: 2 },
          ],
        };
        expect(() => make().rateMatch(placed, new Map())).toThrow(InvalidInputError);
      }
      // Idle growth: a player who has played grows less certain with time away; other systems leave the state as it was.
      const system = make();
      const states = warmUp(
        system,
        matchesOf(
          d,
          Array.from({ length: 6 }, () => ({ count: 2, size: 1, players: [0, 1], places: [1, 2], scores: [2, 1], gap: 1 })),
        ),
      );
      const played = states.get('p0')!;
      const idle = system.idle(played, 30);
      if (caps.idleGrowth) expect(idle.rd!).toBeGreaterThan(played.rd!);
      else expect(idle).toEqual(played);
      expect(idle.rating).toBe(played.rating);
    });

    it('names terms its ratings report', () => {
      const rating = make().rateMatch(matchesOf(d, [{ count: 2, size: 1, players: [0, 1], places: [1, 2], scores: [2, 1], gap: 0 }])[0]!, new Map());
      for (const change of rating.players) for (const column of d.dashboard.terms) expect(Object.keys(change.terms)).toContain(column.key);
    });
  });

  describe(`${d.name}: conformance`, () => {
    it("never lowers a winner's rating", () => {
      const winners = fc.record({
        size: caps.teams ? fc.integer({ min: 1, max: 3 }) : fc.constant(1),
        players: fc.uniqueArray(fc.integer({ min: 0, max: POOL + 3 }), { minLength: 6, maxLength: 6 }),
        gap: fc.integer({ min: 0, max: 40 }),
      });
      fc.assert(
        fc.property(logs, winners, (log, w) => {
          const warm = matchesOf(d, log);
          const ids = w.players.map((i) => `p${i}`);
          // A shutout: placed first, or (scored systems) every point to the winners.
          const match: Match = { at: lastAt(warm) + w.gap * DAY, teams: [team(d, ids.slice(0, w.size), 1, 10), team(d, ids.slice(3, 3 + w.size), 2, 0)] };
          if (d.rateLog) {
            // A whole-history system's rating is its estimate from the whole log (to its convergence tolerance).
            const options = make().options;
            const before = d.rateLog(warm, options);
            const after = d.rateLog([...warm, match], options);
            const initial = make().initial().rating;
            for (const id of ids.slice(0, w.size)) expect(after.get(id)!.rating, id).toBeGreaterThanOrEqual((before.get(id)?.rating ?? initial) - 1e-6);
            return;
          }
          const system = make();
          const states = warmUp(system, warm);
          for (const change of system.rateMatch(match, states).players) {
            if (change.team === 0) expect(change.after.rating, change.id).toBeGreaterThanOrEqual(change.before.rating);
          }
        }),
        { numRuns: 150 },
      );
    });

    it.skipIf(!caps.draws)('moves neither rating in a one-against-one draw between equal players', () => {
      const draw = (at: number): Match => ({ at, teams: [team(d, ['x'], 1, 7), team(d, ['y'], 1, 7)] });
      // New players, with a system that has seen nothing.
      for (const change of make().rateMatch(draw(0), new Map()).players) expect(change.after.rating).toBe(change.before.rating);
      if (caps.wholeHistory) return; // Its states are its own history's: two given equal states are not two equal players to it.
      fc.assert(
        fc.property(logs, fc.integer({ min: 0, max: POOL - 1 }), fc.integer({ min: 0, max: 40 }), (log, who, gap) => {
          const system = make();
          const warm = matchesOf(d, log);
          const states = warmUp(system, warm);
          const state = states.get(`p${who}`) ?? system.initial();
          const equal = new Map([
            ['x', state],
            ['y', { ...state }],
          ]);
          for (const change of system.rateMatch(draw(lastAt(warm) + gap * DAY), equal).players)
            expect(nearlyEqual(change.after.rating, change.before.rating), `${change.before.rating} → ${change.after.rating}`).toBe(true);
        }),
        { numRuns: 100 },
      );
    });

    it('leaves no NaN or infinity after a million random games', () => {
      // A plain loop: one against one mostly, teams and more teams where the system has them, a strict
      // pecking order in half the games (ratings run to the extremes), ties, a day passing every 500 games.
      const system = createSystem(d.name, MILLION_GAME_OPTIONS[d.name] ?? {});
      const random = mulberry32(20_260_101);
      const players = 400;
      const ids = Array.from({ length: players }, (_, i) => `q${i}`);
      const states = new Map<string, PlayerState>();
      const lineup: number[] = [];
      let at = 0;
      for (let game = 0; game < 1_000_000; game++) {
        if (game % 500 === 0) at += DAY;
        const size = caps.teams && random() < 0.05 ? 2 : 1;
        const count = caps.multiTeam && random() < 0.05 ? 3 : 2;
        lineup.length = 0;
        while (lineup.length < size * count) {
          const i = Math.floor(random() * players);
          if (!lineup.includes(i)) lineup.push(i);
        }
        if (random() < 0.5) lineup.sort((a, b) => a - b);
        const tie = caps.draws && random() < 0.1;
        const teams: MatchTeam[] = [];
        for (let t = 0; t < count; t++)
          teams.push(
            team(
              d,
              lineup.slice(t * size, (t + 1) * size).map((i) => ids[i]!),
              tie ? 1 : t + 1,
              tie ? 5 : 10 * (count - t),
            ),
          );
        for (const change of system.rateMatch({ at, teams }, states).players) states.set(change.id, change.after);
      }
      const broken = [...states].filter(([, state]) => !finite(state));
      expect(broken.slice(0, 3)).toEqual([]);
      const all = [...states.values()];
      for (let i = 0; i + 1 < all.length; i += 2) for (const p of system.predict([[all[i]!], [all[i + 1]!]])) expect(Number.isFinite(p)).toBe(true);
    }, 120_000);

    it('predicts chances that are probabilities and sum to 1', () => {
      const lineup = fc.record({
        count: caps.multiTeam ? fc.integer({ min: 2, max: 5 }) : fc.constant(2),
        size: caps.teams ? fc.integer({ min: 1, max: 3 }) : fc.constant(1),
        players: fc.array(fc.integer({ min: 0, max: POOL + 3 }), { minLength: 15, maxLength: 15 }),
      });
      fc.assert(
        fc.property(logs, lineup, (log, l) => {
          const system = make();
          const states = warmUp(system, matchesOf(d, log));
          const teams = Array.from({ length: l.count }, (_, t) => Array.from({ length: l.size }, (_, s) => states.get(`p${l.players[t * 3 + s]}`) ?? system.initial()));
          const chances = system.predict(teams);
          expect(chances).toHaveLength(l.count);
          for (const p of chances) expect(p >= 0 && p <= 1, String(p)).toBe(true);
          expect(Math.abs(chances.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-12);
        }),
        { numRuns: 150 },
      );
    });

    it.skipIf(!d.fastPath)('gives by its fast path the ratings of the general path', () => {
      const games = fc.array(
        fc.record({
          a: fc.integer({ min: 0, max: 9 }),
          b: fc.integer({ min: 0, max: 9 }),
          score: fc.constantFrom(0, 0.5, 1),
          gap: fc.integer({ min: 0, max: 40 }),
          timed: fc.boolean(),
        }),
        { maxLength: 80 },
      );
      fc.assert(
        fc.property(games, (list) => {
          const builder = new PairwiseLogBuilder();
          const matches: Match[] = [];
          let day = 0;
          for (const g of list.filter((game) => game.a !== game.b)) {
            day += g.gap;
            const at = g.timed ? day * DAY : undefined;
            builder.add(`p${g.a}`, `p${g.b}`, g.score, at ?? Number.NaN);
            const places = g.score === 1 ? [1, 2] : g.score === 0 ? [2, 1] : [1, 1];
            matches.push({ ...(at !== undefined ? { at } : {}), teams: [team(d, [`p${g.a}`], places[0]!, 2 - places[0]!), team(d, [`p${g.b}`], places[1]!, 2 - places[1]!)] });
          }
          const log = builder.build();
          const system = make();
          const fast = d.fastPath!.replay(log, system.options);
          const general = warmUp(system, matches);
          log.ids.forEach((id, i) => {
            const state = general.get(id)!;
            expect(Math.abs(fast.rating[i]! - state.rating), id).toBeLessThan(1e-6);
            if (fast.rd) expect(Math.abs(fast.rd[i]! - state.rd!), id).toBeLessThan(1e-6);
            if (fast.volatility) expect(Math.abs(fast.volatility[i]! - state.volatility!), id).toBeLessThan(1e-9);
            expect(fast.matches[i]).toBe(state.matches);
          });
        }),
        { numRuns: 150 },
      );
    });

    it('rates a match as it rates a period of that one match', () => {
      fc.assert(
        fc.property(logs, shapes(d), (log, shape) => {
          const warm = matchesOf(d, log);
          const [match] = matchesOf(d, [{ ...shape, gap: 0 }]).map((m) => ({ ...m, at: lastAt(warm) + shape.gap * DAY }));
          // Two systems with the same past: a whole-history system keeps it inside.
          const one = make();
          const other = make();
          const states = warmUp(one, warm);
          warmUp(other, warm);
          expect(other.ratePeriod([match!], states)).toEqual([one.rateMatch(match!, states)]);
        }),
        { numRuns: 100 },
      );
    });

    it.skipIf(caps.wholeHistory)(
      caps.ratingPeriods
        ? "rates a period of matches without common players as each match alone, from the period's start"
        : 'rates a period of matches one after another, each seeing the ones before',
      () => {
        fc.assert(
          fc.property(logs, fc.array(shapes(d), { minLength: 1, maxLength: 6 }), (log, period) => {
            const system = make();
            const warm = matchesOf(d, log);
            const states = warmUp(system, warm);
            // The period's matches, at one time. With rating periods no player is in two of them (a player the
            // period already has plays under a new name); without, players meet again.
            const seen = new Set<string>();
            const matches = period.map((shape, m) => {
              const match = { ...matchesOf(d, [{ ...shape, gap: 0 }])[0]!, id: `period-${m}`, at: lastAt(warm) + DAY };
              if (!caps.ratingPeriods) return match;
              const teams = match.teams.map((t) => ({ ...t, players: t.players.map(({ id }) => ({ id: seen.has(id) ? `${id}-m${m}` : id })) }));
              for (const t of match.teams) for (const { id } of t.players) seen.add(id);
              return { ...match, teams };
            });
            const rated = system.ratePeriod(matches, states);
            if (caps.ratingPeriods) {
              expect(rated).toEqual(matches.map((match) => system.rateMatch(match, states)));
            } else {
              const running = new Map(states);
              const expected = matches.map((match) => {
                const rating = system.rateMatch(match, running);
                for (const change of rating.players) running.set(change.id, change.after);
                return rating;
              });
              expect(rated).toEqual(expected);
            }
          }),
          { numRuns: 100 },
        );
      },
    );
  });
}

for (const descriptor of allSystems()) conformance(descriptor);
