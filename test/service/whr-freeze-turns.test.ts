/**
 * A whr ladder's freeze (a horizon) is run by the writer ahead of the match
 * whose day makes it, in slices with a turn of the event loop between them
 * (`LadderHistory.freezeAhead`): the loop turns during the freeze (counted,
 * not timed), and the history reaches, bit for bit, what adding the matches
 * alone reaches (where the freeze runs inside the match's prediction, in one
 * piece).
 */
import { describe, expect, it } from 'vitest';
import type { Match } from 'ladder-core/core/match.js';
import { Turns } from '../../src/service/turns.js';
import { LadderHistory } from '../../src/service/whole-history.js';

const DAY = 86_400_000;

/** 40 days of 30 one-on-one matches among 24 players; every seventh reported two days late. */
function log(): Match[] {
  const out: Match[] = [];
  for (let i = 0; i < 1200; i++) {
    const day = Math.floor(i / 30) - (i % 7 === 6 && i >= 90 ? 2 : 0);
    out.push({
      id: `m${i}`,
      at: day * DAY + (i % 30) * 60_000,
      teams: [
        { players: [{ id: `p${(i * 5) % 24}` }], rank: 1 },
        { players: [{ id: `p${(i * 5 + 1 + (i % 11)) % 24}` }], rank: i % 9 === 0 ? 1 : 2 },
      ],
    });
  }
  return out;
}

describe('a whr freeze run ahead, in slices', () => {
  for (const inference of ['ep', 'map'] as const) {
    it(`${inference}: the event loop turns during each freeze, and the states are those of the matches added alone`, async () => {
      const options = { horizon: 12, inference };
      const alone = new LadderHistory('whr', options, 0);
      const ahead = new LadderHistory('whr', options, 0);
      const matches = log();
      let turnsDuringFreezes = 0;
      let freezes = 0;
      for (let seq = 1; seq <= matches.length; seq++) {
        const match = matches[seq - 1]!;
        alone.predict(match);
        alone.add(seq, match);
        let turned = 0;
        let ticking = true;
        const tick = (): void => {
          if (!ticking) return;
          turned++;
          setImmediate(tick);
        };
        setImmediate(tick);
        const before = ahead.freeze()?.past.day;
        // Slices of 0 ms: a turn after every step of the freeze.
        await ahead.freezeAhead(match, new Turns(0));
        ticking = false;
        if (ahead.freeze()?.past.day !== before) {
          freezes++;
          turnsDuringFreezes += turned;
          expect(turned).toBeGreaterThan(1);
        }
        ahead.predict(match);
        ahead.add(seq, match);
      }
      // Freeze points every 3 days from day 12 on.
      expect(freezes).toBeGreaterThan(5);
      expect(turnsDuringFreezes).toBeGreaterThan(freezes);
      expect(ahead.freeze()).toEqual(alone.freeze());
      expect(new Map(ahead.states)).toEqual(new Map(alone.states));
    });
  }
});
