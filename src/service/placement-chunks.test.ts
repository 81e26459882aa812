import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { placementChunks } from './placement-chunks.js';

/** A match of these team sizes (ticket ids unique across the test). */
let next = 0;
const matchOf = (sizes: number[]) => ({ teams: sizes.map((n) => Array.from({ length: n }, () => `t${next++}`)) });
const ticketsOf = (chunk: Array<{ teams: string[][] }>) => chunk.reduce((sum, m) => sum + m.teams.flat().length, 0);

describe('placementChunks', () => {
  it('cuts six-against-six matches at 200 tickets, not at 250 matches', () => {
    // 100 matches of 12 tickets: 16 to a chunk (192 tickets), the 17th would make 204.
    const chunks = placementChunks(Array.from({ length: 100 }, () => matchOf([6, 6])));
    expect(chunks.map((c) => c.length)).toEqual([16, 16, 16, 16, 16, 16, 4]);
    expect(chunks.map(ticketsOf)).toEqual([192, 192, 192, 192, 192, 192, 48]);
  });

  it('cuts one-against-one matches at 100 matches (200 tickets)', () => {
    const chunks = placementChunks(Array.from({ length: 250 }, () => matchOf([1, 1])));
    expect(chunks.map((c) => c.length)).toEqual([100, 100, 50]);
  });

  it('gives a match larger than the budget a chunk of its own', () => {
    const big = matchOf([100, 100, 50]);
    const chunks = placementChunks([matchOf([1, 1]), big, matchOf([1, 1])]);
    expect(chunks.map((c) => c.length)).toEqual([1, 1, 1]);
    expect(chunks[1]![0]).toBe(big);
  });

  it('keeps every match once, in order, each chunk within both limits', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 4 }), { maxLength: 600 }), (shapes) => {
        const matches = shapes.map(matchOf);
        const chunks = placementChunks(matches);
        expect(chunks.flat()).toEqual(matches);
        for (const chunk of chunks) {
          expect(chunk.length).toBeGreaterThan(0);
          expect(chunk.length).toBeLessThanOrEqual(250);
          if (chunk.length > 1) expect(ticketsOf(chunk)).toBeLessThanOrEqual(200);
        }
        // Greedy: a chunk ends only where the next match would not fit.
        for (let i = 0; i + 1 < chunks.length; i++) {
          const chunk = chunks[i]!;
          expect(chunk.length === 250 || ticketsOf(chunk) + chunks[i + 1]![0]!.teams.flat().length > 200).toBe(true);
        }
      }),
    );
  });
});
