/**
 * The widening horizon, worked by hand with the default steps (5, 10, 20,
 * 50, 100 percentile points, one every 30 s).
 */
import { describe, expect, it } from 'vitest';
import { lastBackfillWideningSeconds, lastWideningSeconds } from './horizon.js';
import { WIDENING_DEFAULTS } from './widening.js';

describe('widening horizon', () => {
  it("a ticket's range last widens at its loosest player's last step past their own range", () => {
    // Own range 10: the steps 20, 50 and 100 are wider, so three steps, at 30 s each: 90 s.
    const ticket = {
      id: 't',
      at: 0,
      players: [
        { id: 'a', percentile: 50, filter: { within: 10 } },
        { id: 'b', percentile: 50, filter: { within: 50 } },
      ],
    };
    expect(lastWideningSeconds(ticket as never, WIDENING_DEFAULTS)).toBe(90);
    // A strict player never widens; own range 100 leaves no wider step.
    expect(lastWideningSeconds({ ...ticket, players: [{ id: 'a', percentile: 50, filter: { within: 5, strict: true } }] } as never, WIDENING_DEFAULTS)).toBe(0);
    expect(lastWideningSeconds({ ...ticket, players: [{ id: 'a', percentile: 50, filter: { within: 100 } }] } as never, WIDENING_DEFAULTS)).toBe(0);
  });

  it("a backfill's range uses each match player's filter, else the request's, else the ladder's defaults", () => {
    const request = { match: 'm', teams: [['a'], ['b']], players: { a: { filter: { within: 20 } } } };
    // a: own 20, wider steps 50 and 100: 60 s; b: the defaults' 5: wider 10, 20, 50, 100: 120 s.
    expect(lastBackfillWideningSeconds(request as never, WIDENING_DEFAULTS, { within: 5, strict: false, maxPing: 150 })).toBe(120);
    // The request's range 50 for b (one wider step, 30 s); a keeps its own 20 (60 s).
    expect(lastBackfillWideningSeconds({ ...request, filter: { within: 50 } } as never, WIDENING_DEFAULTS, { within: 5, strict: false, maxPing: 150 })).toBe(60);
    // A strict request holds every player whose own filter does not say otherwise.
    expect(lastBackfillWideningSeconds({ ...request, filter: { strict: true } } as never, WIDENING_DEFAULTS, { within: 5, strict: false, maxPing: 150 })).toBe(0);
  });
});
