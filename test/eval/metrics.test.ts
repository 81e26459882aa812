import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { davidsonOutcome, fitDavidsonNu } from '../../src/eval/draws.js';
import { MetricsAccumulator } from '../../src/eval/metrics.js';

describe('MetricsAccumulator', () => {
  it('computes log-loss, accuracy and Brier by hand on three matches', () => {
    // Team 0's chances 0.8 (won), 0.6 (lost), 0.5 (won).
    // log-loss = −(ln 0.8 + ln 0.4 + ln 0.5) / 3 = (0.2231436 + 0.9162907 + 0.6931472) / 3 = 0.6108605
    // accuracy: the favourite won only in the first; an exact 0.5 is wrong → 1/3
    // Brier = (0.2² + 0.6² + 0.5²) / 3 = (0.04 + 0.36 + 0.25) / 3 = 0.216667
    const m = new MetricsAccumulator();
    // Each add returns that match's own log-loss.
    expect(m.add(0.8, 1)).toBeCloseTo(0.2231436, 7);
    expect(m.add(0.6, 0)).toBeCloseTo(0.9162907, 7);
    expect(m.add(0.5, 1)).toBeCloseTo(0.6931472, 7);
    const r = m.result();
    expect(r.n).toBe(3);
    expect(r.logLoss).toBeCloseTo(0.6108605, 6);
    expect(r.accuracy).toBeCloseTo(1 / 3, 12);
    expect(r.brier).toBeCloseTo(0.216667, 6);
    expect(r.decisive).toBeUndefined();
  });

  it('scores three outcomes when given them, and reports decisive matches apart', () => {
    // A draw predicted at P(draw) 0.25: −ln 0.25 = 1.386294; a win at P(win) 0.5: −ln 0.5 = 0.693147. Mean 1.039721.
    const m = new MetricsAccumulator();
    m.add(0.5, 0.5, { win: 0.375, draw: 0.25, loss: 0.375 });
    m.add(0.7, 1, { win: 0.5, draw: 0.3, loss: 0.2 });
    const r = m.result();
    expect(r.logLoss).toBeCloseTo(1.039721, 6);
    expect(r.draws).toBe(1);
    // The draw is not a favourite's win; the second is.
    expect(r.accuracy).toBe(0.5);
    expect(r.accuracy3).toBe(0.5);
    expect(r.decisive).toEqual({ n: 1, logLoss: -Math.log(0.7), accuracy: 1 });
  });

  it("bins the favourite's chance symmetrically: (p, win) and (1 − p, loss) land in the same bin", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1), (p, s) => {
        const a = new MetricsAccumulator();
        const b = new MetricsAccumulator();
        a.add(p, s);
        b.add(1 - p, 1 - s);
        const binsA = a.calibration();
        const binsB = b.calibration();
        return binsA.every((bin, i) => bin.n === binsB[i]!.n && (bin.n === 0 || Math.abs(bin.observed - binsB[i]!.observed) < 1e-12));
      }),
    );
  });
});

describe('Davidson draw model', () => {
  it('sums to one and is the two-outcome chance at ν = 0', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 20, noNaN: true }), (p, nu) => {
        const o = davidsonOutcome(p, nu);
        const zero = davidsonOutcome(p, 0);
        return Math.abs(o.win + o.draw + o.loss - 1) < 1e-12 && zero.win === p && zero.draw === 0;
      }),
    );
  });

  it('fits ν by maximum likelihood: at p = 0.5 the draw chance equals the draw share', () => {
    // With p = 0.5, r = ν/2 and P(draw) = (ν/2)/(1 + ν/2); the likelihood is maximised where it equals the
    // observed share d, i.e. ν = 2d/(1 − d). Two draws in four: d = 0.5, ν = 2.
    expect(fitDavidsonNu([0.5, 0.5, 0.5, 0.5], [1, 0, 0.5, 0.5])).toBeCloseTo(2, 4);
    // One draw in four: d = 0.25, ν = 2/3.
    expect(fitDavidsonNu([0.5, 0.5, 0.5, 0.5], [1, 0, 0.5, 1])).toBeCloseTo(2 / 3, 4);
    expect(fitDavidsonNu([0.3, 0.8], [1, 0])).toBe(0);
  });
});
