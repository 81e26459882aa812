import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import example from '../../../../test/fixtures/glickman-example.json' with { type: 'json' };
import { GLICKO2_SCALE, glicko2G, glicko2Idle, glicko2Update, glicko2WinProbability } from './glicko2.js';

describe("Glicko-2 against Glickman's worked example", () => {
  const result = glicko2Update(example.player, example.games, { tau: example.tau });

  it('gives the published 1464.06 / 151.52 / 0.05999', () => {
    // The paper rounds mu' to -0.2069 before converting: 173.7178 * -0.2069 + 1500 = 1464.06.
    // Unrounded, mu' = -0.20694 and the rating is 1464.0507, within 0.01 of the printed value.
    expect(result.rating).toBeCloseTo(1464.05, 2);
    expect(Math.abs(result.rating - example.published.rating)).toBeLessThan(0.01);
    expect(result.rd).toBeCloseTo(example.published.rd, 2);
    // 0.0599960 unrounded; the paper prints five decimals, truncated.
    expect(Math.abs(result.volatility - example.published.volatility)).toBeLessThan(1e-5);
  });

  it("matches the paper's intermediate quantities", () => {
    const phi = example.player.rd / GLICKO2_SCALE;
    expect(phi).toBeCloseTo(example.intermediate.phi, 4);
    const gs = example.games.map((g) => glicko2G(g.opponent.rd / GLICKO2_SCALE));
    gs.forEach((g, i) => expect(g).toBeCloseTo(example.intermediate.g[i]!, 4));
    const es = example.games.map((game, i) => 1 / (1 + Math.exp(-gs[i]! * (0 - (game.opponent.rating - 1500) / GLICKO2_SCALE))));
    es.forEach((e, i) => expect(e).toBeCloseTo(example.intermediate.E[i]!, 3));
    const v = 1 / es.reduce((sum, e, i) => sum + gs[i]! ** 2 * e * (1 - e), 0);
    // The paper computes v from g and E rounded to four places: 1.7785 against 1.77898 unrounded.
    expect(v).toBeCloseTo(example.intermediate.v, 3);
    const delta = v * example.games.reduce((sum, game, i) => sum + gs[i]! * (game.score - es[i]!), 0);
    expect(Math.abs(delta - example.intermediate.delta)).toBeLessThan(1e-3); // -0.48393 unrounded
    expect(result.rd / GLICKO2_SCALE).toBeCloseTo(example.intermediate.phiPrime, 4);
    expect((result.rating - 1500) / GLICKO2_SCALE).toBeCloseTo(example.intermediate.muPrime, 4);
  });

  it('lets a player who sits a period out keep rating and volatility while RD grows by step 6', () => {
    const idle = glicko2Update(example.player, [], { tau: 0.5 });
    expect(idle.rating).toBe(1500);
    expect(idle.volatility).toBe(0.06);
    // phi* = sqrt(phi^2 + sigma^2) = sqrt(1.1513^2 + 0.06^2) = 1.15286 -> 200.27 (hand computation)
    expect(idle.rd).toBeCloseTo(Math.sqrt((200 / GLICKO2_SCALE) ** 2 + 0.06 ** 2) * GLICKO2_SCALE, 9);
    expect(idle.rd).toBeCloseTo(200.27, 2);
  });

  it('grows RD continuously for fractional idle periods, never past the starting RD', () => {
    const p = { rating: 1500, rd: 50, volatility: 0.06 };
    const tenDays = glicko2Idle(p, 10);
    expect(tenDays.rd).toBeCloseTo(Math.sqrt((50 / GLICKO2_SCALE) ** 2 + 10 * 0.0036) * GLICKO2_SCALE, 9);
    expect(glicko2Idle(p, 1e9).rd).toBe(350);
    expect(glicko2Idle({ ...p, rd: 349 }, 1e9, { rd: 350 }).rd).toBe(350);
  });

  it('accepts any score in [0, 1] and rejects scores outside', () => {
    const half = glicko2Update(example.player, [{ opponent: { rating: 1500, rd: 200 }, score: 0.5 }]);
    expect(half.rating).toBeCloseTo(1500, 9);
    const partial = glicko2Update(example.player, [{ opponent: { rating: 1500, rd: 200 }, score: 0.7 }]);
    expect(partial.rating).toBeGreaterThan(1500);
    expect(() => glicko2Update(example.player, [{ opponent: { rating: 1500, rd: 200 }, score: 1.2 }])).toThrow(/games\[0\]\.score/);
  });

  it("predicts with both players' uncertainty", () => {
    expect(glicko2WinProbability({ rating: 1500, rd: 100 }, { rating: 1500, rd: 300 })).toBeCloseTo(0.5, 12);
    // g(sqrt(phi_a^2 + phi_b^2)) with phi = 0 is 1: plain logistic in 400/ln10 units, 1/(1+10^(-200/400)) = 0.7597.
    expect(glicko2WinProbability({ rating: 1700, rd: 1e-9 }, { rating: 1500, rd: 1e-9 })).toBeCloseTo(0.7597, 4);
  });
});

describe('Glicko-2 properties', () => {
  const rating = fc.record({
    rating: fc.double({ min: 0, max: 3000, noNaN: true }),
    rd: fc.double({ min: 30, max: 350, noNaN: true }),
    volatility: fc.double({ min: 0.01, max: 0.2, noNaN: true }),
  });

  it('never lowers a rating on a win', () => {
    fc.assert(
      fc.property(rating, rating, fc.double({ min: 0.2, max: 1.2, noNaN: true }), (player, opponent, tau) => {
        expect(glicko2Update(player, [{ opponent, score: 1 }], { tau }).rating).toBeGreaterThanOrEqual(player.rating);
        expect(glicko2Update(player, [{ opponent, score: 0 }], { tau }).rating).toBeLessThanOrEqual(player.rating);
      }),
    );
  });

  it('leaves equal players where they were after a draw', () => {
    fc.assert(
      fc.property(rating, (player) => {
        const after = glicko2Update(player, [{ opponent: player, score: 0.5 }]);
        expect(after.rating).toBeCloseTo(player.rating, 9);
      }),
    );
  });

  it('gives finite results for extreme inputs', () => {
    fc.assert(
      fc.property(
        fc.record({
          rating: fc.double({ min: -5000, max: 10000, noNaN: true }),
          rd: fc.double({ min: 1, max: 350, noNaN: true }),
          volatility: fc.double({ min: 0.001, max: 1, noNaN: true }),
        }),
        fc.array(fc.record({ opponent: rating, score: fc.constantFrom(0, 0.5, 1) }), { minLength: 1, maxLength: 20 }),
        (player, games) => {
          const after = glicko2Update(player, games);
          expect(Number.isFinite(after.rating) && Number.isFinite(after.rd) && Number.isFinite(after.volatility)).toBe(true);
          expect(after.rd).toBeGreaterThan(0);
        },
      ),
    );
  });
});
