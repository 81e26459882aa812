import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { parseMatch } from 'ladder-core/core/match.js';
import { type EvalMatch, systemContender } from '../../src/eval/contenders.js';
import { evaluate, splitAtDate } from '../../src/eval/engine.js';

const fixture = (): EvalMatch[] =>
  readFileSync(join(import.meta.dirname, 'fixtures/four-matches.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => parseMatch(JSON.parse(line)));

const E = (a: number, b: number) => 1 / (1 + 10 ** ((b - a) / 400));

describe('online protocol on the four-match fixture (Elo K 32, start 1500)', () => {
  // By hand: m1 A beats B → A 1516, B 1484. m2 B beats C: E_B = 1/(1 + 10^(16/400)) = 0.476993,
  // B 1500.7362, C 1483.2638. Split 2020-01-03: m3 and m4 are the test part.
  // m3 A v C: p = E(1516, 1483.2638) = 0.546972 (A won). Then A 1530.4969, C 1468.7668.
  // m4 B v C: p = E(1500.7362, 1468.7668) = 0.545878 (C won: the favourite lost).
  // log-loss = −(ln 0.546972 + ln 0.454122) / 2 = 0.696374; accuracy 1/2; Brier 0.251609.
  const result = evaluate(systemContender('elo', { k: 32 }), fixture(), { isTest: splitAtDate(Date.UTC(2020, 0, 3)) });

  it('honours the split date: matches on the date are test matches', () => {
    expect(result.train.n).toBe(2);
    expect(result.test.n).toBe(2);
  });

  it('reproduces the hand-computed log-loss, accuracy and Brier', () => {
    expect(result.test.logLoss).toBeCloseTo(0.6963736, 6);
    expect(result.test.accuracy).toBe(0.5);
    expect(result.test.brier).toBeCloseTo(0.2516086, 6);
  });

  it("keeps each scored match's log-loss when asked: −ln 0.546972 and −ln 0.454122, at the log's matches 3 and 4", () => {
    expect(result.losses).toBeUndefined();
    const kept = evaluate(systemContender('elo', { k: 32 }), fixture(), { isTest: splitAtDate(Date.UTC(2020, 0, 3)), keepLosses: true });
    expect([...kept.losses!.indices]).toEqual([2, 3]);
    expect(kept.losses!.losses[0]).toBeCloseTo(-Math.log(0.546972), 5);
    expect(kept.losses!.losses[1]).toBeCloseTo(-Math.log(1 - 0.545878), 5);
    expect((kept.losses!.losses[0]! + kept.losses!.losses[1]!) / 2).toBe(kept.test.logLoss);
  });

  it('predicts each test match from ratings learnt on the earlier ones (the update is applied after)', () => {
    const predictions: number[] = [];
    evaluate(systemContender('elo', { k: 32 }), fixture(), { isTest: splitAtDate(Date.UTC(2020, 0, 3)), onPrediction: (_, p) => predictions.push(p) });
    const b = 1484 + 32 * (1 - E(1484, 1500));
    const c = 1500 - 32 * (1 - E(1484, 1500));
    expect(predictions[0]).toBeCloseTo(E(1516, c), 12);
    const a3 = 1516 + 32 * (1 - E(1516, c));
    const c3 = c - 32 * (1 - E(1516, c));
    expect(predictions[1]).toBeCloseTo(E(b, c3), 12);
    expect(a3).toBeCloseTo(1530.4969, 3);
    expect(predictions[1]).toBeCloseTo(0.5458784, 6);
  });

  it('refuses a training match after the test part began', () => {
    const matches = fixture();
    matches.push({ ...matches[0]!, at: Date.UTC(2019, 0, 1) });
    expect(() => evaluate(systemContender('elo'), matches, { isTest: splitAtDate(Date.UTC(2020, 0, 3)) })).toThrow(InvalidInputError);
  });

  it('needs a time on every match for a date split', () => {
    const matches = fixture();
    delete matches[1]!.at;
    expect(() => evaluate(systemContender('elo'), matches, { isTest: splitAtDate(Date.UTC(2020, 0, 3)) })).toThrow(/no time/);
  });
});

describe('no peeking', () => {
  const players = ['p', 'q', 'r', 's'];
  const arbitraryLog = fc.array(fc.record({ a: fc.integer({ min: 0, max: 3 }), gap: fc.integer({ min: 1, max: 3 }), outcome: fc.constantFrom(1, 2, 0) }), {
    minLength: 4,
    maxLength: 25,
  });
  const build = (log: Array<{ a: number; gap: number; outcome: number }>): EvalMatch[] =>
    log.map(({ a, gap, outcome }, i) => ({
      at: Date.UTC(2021, 0, 1 + i),
      teams: [
        { players: [{ id: players[a]! }], rank: outcome === 0 ? 1 : outcome },
        { players: [{ id: players[(a + gap) % 4]! }], rank: outcome === 0 ? 1 : 3 - outcome },
      ],
    }));

  for (const system of ['elo', 'glicko2', 'teamrank'] as const) {
    it(`${system}: a test match's prediction does not change when later results change`, () => {
      fc.assert(
        fc.property(arbitraryLog, fc.nat(), fc.constantFrom(1, 2, 0), (log, cut, flipped) => {
          const splitIndex = cut % log.length;
          const changedIndex = splitIndex + ((cut >> 3) % (log.length - splitIndex));
          const original = build(log);
          const altered = build(log.map((m, i) => (i === changedIndex ? { ...m, outcome: flipped } : m)));
          const run = (matches: EvalMatch[]) => {
            const out: number[] = [];
            evaluate(systemContender(system), matches, { isTest: (_, i) => i >= splitIndex, draws: 'none', onPrediction: (_, p) => out.push(p) });
            return out;
          };
          const a = run(original);
          const b = run(altered);
          // Predictions up to and including the changed match are made before its result is known.
          for (let i = 0; i <= changedIndex - splitIndex; i++) if (a[i] !== b[i]) return false;
          return true;
        }),
        { numRuns: 60 },
      );
    });
  }
});

describe('draws and home advantage', () => {
  it('fits ν on the training part only and scores the test part with three outcomes', () => {
    // Training: four games between newcomers-level players; every prediction is 0.5 at Elo K 0
    // (ratings never move), two draws in four → ν = 2 (see the Davidson test), P(draw) = 1/2.
    const game = (day: number, rank: [number, number]): EvalMatch => ({
      at: Date.UTC(2022, 0, day),
      teams: [
        { players: [{ id: 'x' }], rank: rank[0] },
        { players: [{ id: 'y' }], rank: rank[1] },
      ],
    });
    const matches = [game(1, [1, 2]), game(2, [2, 1]), game(3, [1, 1]), game(4, [1, 1]), game(5, [1, 1]), game(6, [1, 2])];
    const result = evaluate(systemContender('elo', { k: 0 }), matches, { isTest: splitAtDate(Date.UTC(2022, 0, 5)) });
    expect(result.drawNu).toBeCloseTo(2, 4);
    // Test: a draw at P 1/2 and a win at P 1/4: log-loss (ln 2 + ln 4) / 2 = 1.039721.
    expect(result.test.logLoss).toBeCloseTo((Math.log(2) + Math.log(4)) / 2, 5);
    // Each kept loss is the three-outcome one the mean counts.
    const kept = evaluate(systemContender('elo', { k: 0 }), matches, { isTest: splitAtDate(Date.UTC(2022, 0, 5)), keepLosses: true });
    expect(kept.losses!.losses[0]).toBeCloseTo(Math.log(2), 5);
    expect(kept.losses!.losses[1]).toBeCloseTo(Math.log(4), 5);
  });

  it("adds the home advantage in the prediction and in the update's expectation", () => {
    // Home advantage 100 on Elo K 32: E = 1/(1 + 10^(−100/400)) = 0.640065; a home win moves the home
    // player to 1500 + 32 × 0.359935 = 1511.5179 and the visitor to 1488.4821.
    const home = (day: number, h: string, a: string, homeWins: boolean): EvalMatch => ({
      at: Date.UTC(2022, 0, day),
      home: 0,
      teams: [
        { players: [{ id: h }], rank: homeWins ? 1 : 2 },
        { players: [{ id: a }], rank: homeWins ? 2 : 1 },
      ],
    });
    const predictions: number[] = [];
    evaluate(systemContender('elo', { k: 32 }, { homeAdvantage: 100 }), [home(1, 'h', 'v', true), home(2, 'v', 'h', true)], {
      isTest: () => true,
      onPrediction: (_, p) => predictions.push(p),
    });
    expect(predictions[0]).toBeCloseTo(0.640065, 6);
    // Second match, v at home: E(1488.4821 + 100, 1511.5179).
    expect(predictions[1]).toBeCloseTo(E(1488.48208 + 100, 1511.51792), 6);
  });

  it('applies no home advantage at a neutral venue', () => {
    const neutral: EvalMatch = {
      at: 0,
      teams: [
        { players: [{ id: 'h' }], rank: 1 },
        { players: [{ id: 'v' }], rank: 2 },
      ],
    };
    const predictions: number[] = [];
    evaluate(systemContender('glicko2', {}, { homeAdvantage: 80 }), [neutral], { isTest: () => true, onPrediction: (_, p) => predictions.push(p) });
    expect(predictions[0]).toBe(0.5);
  });
});

describe('a contender with per-context offsets', () => {
  it('predicts each match in its context', () => {
    // Elo K 32, contextK 16. m1 on clay: A beats B, A 1516 (clay +8), B 1484 (clay −8).
    // m2 on clay is predicted at 1524 v 1476: E = 1 / (1 + 10^(−48/400)) = 0.568641.
    const duel = (id: string, context: string, day: number): EvalMatch => ({
      id,
      at: Date.UTC(2020, 0, day),
      context,
      teams: [
        { players: [{ id: 'A' }], rank: 1 },
        { players: [{ id: 'B' }], rank: 2 },
      ],
    });
    const predictions: number[] = [];
    evaluate(systemContender('elo', { k: 32, contextK: 16 }), [duel('m1', 'clay', 1), duel('m2', 'clay', 2), duel('m3', 'grass', 2)], {
      isTest: splitAtDate(Date.UTC(2020, 0, 2)),
      onPrediction: (_, expected) => predictions.push(expected),
    });
    expect(predictions[0]).toBeCloseTo(0.568641, 6);
    // m3 comes after m2 (A won again on clay: A 1516 + 32·0.431359 = 1529.8035, clay offset 8 + 16·0.431359 = 14.9017; B the mirror).
    expect(predictions[1]).toBeCloseTo(E(1529.8035, 1470.1965), 4);
  });
});
