import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PlayerState } from 'ladder-core/core/systems.js';
import { publicState, publicStateJson } from './rating.js';

const number = fc.oneof(fc.double(), fc.constantFrom(0, -0, 1e-7, 1e21, 1e300, -1e-300, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY), fc.integer());

describe('publicStateJson', () => {
  it('writes exactly what JSON.stringify(publicState(state)) writes', () => {
    fc.assert(
      fc.property(
        number,
        fc.nat(),
        fc.option(number, { nil: undefined }),
        fc.option(number, { nil: undefined }),
        fc.option(fc.integer(), { nil: undefined }),
        (rating, matches, rd, volatility, lastAt) => {
          const state: PlayerState = { rating, matches };
          if (rd !== undefined) state.rd = rd;
          if (volatility !== undefined) state.volatility = volatility;
          if (lastAt !== undefined) state.lastAt = lastAt;
          expect(publicStateJson(state)).toBe(JSON.stringify(publicState(state)));
        },
      ),
      { numRuns: 5000 },
    );
  });
});
