/**
 * The integrity report in the dashboard, in chromium against the seeded
 * service: a ladder of honest players with one win-trading pair (they meet
 * far more often than anyone and take turns winning). With an admin key the
 * Integrity tab shows the report, most suspicious first, the pair on top
 * with its counts, expected counts and z-scores as the service computed
 * them; without a key, and with a key that can only read, the page says the
 * report is for administrators instead, and the tab is not offered.
 *
 * Its own service (one per test file), so the trading ladder touches no
 * other file's data.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from 'ladder-core/core/random.js';
import { PHONE, useDashboard } from './harness.js';
import { ADMIN_KEY } from './seed.js';

interface PairEntry {
  kind: 'pair';
  players: [string, string];
  pattern: string;
  evidence: { meetings: number; expectedMeetings: number; meetingZ: number; q: number; runs: number; results: string };
}

describe('integrity report in chromium', () => {
  const dashboard = useDashboard();
  const { withPage, open } = dashboard;
  let readKey = '';
  let writeKey = '';

  beforeAll(async () => {
    const api = dashboard.api;
    // 24 honest players, 240 matches between random pairs (the stronger more often wins); the traders
    // x1 and x2 meet 30 times among them, taking turns.
    await api.post('/v1/ladders', { id: 'trade', system: 'elo', public: true });
    const next = mulberry32(20240714);
    const honest = Array.from({ length: 24 }, (_, i) => `h${String(i + 1).padStart(2, '0')}`);
    const matches: unknown[] = [];
    let traded = 0;
    for (let i = 0; i < 240; i++) {
      const a = Math.floor(next() * honest.length);
      let b = Math.floor(next() * honest.length);
      if (b === a) b = (a + 1) % honest.length;
      const aWins = next() < 1 / (1 + 10 ** ((b - a) / 30));
      matches.push({
        id: `m${i}`,
        teams: [
          { players: [honest[a]], rank: aWins ? 1 : 2 },
          { players: [honest[b]], rank: aWins ? 2 : 1 },
        ],
      });
      if (i % 8 === 0 && traded < 30) {
        matches.push({
          id: `trade-${traded}`,
          teams: [
            { players: ['x1'], rank: traded % 2 === 0 ? 1 : 2 },
            { players: ['x2'], rank: traded % 2 === 0 ? 2 : 1 },
          ],
        });
        traded++;
      }
    }
    // In order: the report reads the log in play order.
    for (const match of matches) await api.post('/v1/ladders/trade/matches', match);
    readKey = (await api.post('/v1/keys', { name: 'integrity reader', scopes: ['read'] })).key;
    writeKey = (await api.post('/v1/keys', { name: 'integrity writer', scopes: ['write'] })).key;
  }, 120_000);

  /** Saves a key through the header form, as a person would. */
  async function useKey(page: Page, key: string) {
    if (!(await page.locator('details.api-key').evaluate((details) => (details as HTMLDetailsElement).open))) await page.click('details.api-key summary');
    await page.getByLabel('Key for private ladders').fill(key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.waitForSelector('main:not([aria-busy]) h1');
  }
  const tabs = (page: Page) => page.locator('nav.tabs a').allInnerTexts();
  /** Chromium logs a refused call (401/403) as a failed load: the expected ones are taken out of the page's problems. */
  function expectRefusals(problems: string[], count: number) {
    const refused = problems.filter((problem) => /status of 40[13]/.test(problem));
    expect(refused.length).toBe(count);
    problems.splice(0, problems.length, ...problems.filter((problem) => !refused.includes(problem)));
  }

  it('an admin sees the report, the win-trading pair first, with its evidence as the service computed it', async () => {
    const report = await dashboard.api.get('/v1/ladders/trade/reports/integrity');
    const first = report.entries[0] as PairEntry;
    expect(first.kind).toBe('pair');
    expect([...first.players].sort()).toEqual(['x1', 'x2']);
    expect(first.pattern).toBe('alternating');
    await withPage('integrity-admin', async (page) => {
      await open(page, '/ladders/trade');
      expect(await tabs(page)).not.toContain('Integrity');
      await useKey(page, ADMIN_KEY);
      expect(await tabs(page)).toContain('Integrity');
      await page.click('nav.tabs a:text("Integrity")');
      await page.waitForSelector('#integrity-table');
      expect(await page.locator('h1').innerText()).toBe('trade: integrity report');
      expect(await page.locator('nav.tabs a[aria-current="page"]').innerText()).toBe('Integrity');
      expect(await page.locator('#integrity-admin-only').count()).toBe(0);
      expect(await page.locator('#integrity-summary').innerText()).toContain(`${report.matches} most recent counting matches of ${report.players} players`);
      // Every entry, in the service's order (most suspicious first).
      const rows = page.locator('#integrity-table tbody tr');
      expect(await rows.count()).toBe(report.entries.length);
      expect(await page.locator('#integrity-table tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.players))).toEqual(
        report.entries.map((entry: { kind: string; players?: string[]; player?: string }) => (entry.kind === 'pair' ? entry.players!.join(' ') : entry.player)),
      );
      const top = rows.first();
      expect(await top.getAttribute('data-kind')).toBe('pair');
      expect(await top.locator('td.finding').innerText()).toBe('Pair: results alternate');
      expect(await top.locator('td.players a').allInnerTexts()).toEqual(first.players);
      expect(await top.locator('td.players a').first().getAttribute('href')).toBe(`#/ladders/trade/players/${first.players[0]}`);
      const e = first.evidence;
      expect(await top.locator('td.observed').innerText()).toBe(`${e.meetings} meetings`);
      expect(await top.locator('td.expected').innerText()).toBe(e.expectedMeetings.toFixed(2));
      expect(await top.locator('td.z').innerText()).toBe(e.meetingZ.toFixed(1));
      expect(await top.locator('td.q').innerText()).toBe(e.q < 0.001 ? e.q.toExponential(1) : e.q.toFixed(3));
      expect(await top.locator('td.evidence-cell .pattern').innerText()).toContain(`${e.runs} runs in 30 results`);
      // The whole evidence is one click away.
      expect(await top.locator('details.evidence dl').isVisible()).toBe(false);
      await top.locator('details.evidence summary').click();
      const evidence = await top.locator('details.evidence dl').innerText();
      expect(evidence).toContain('Meetings');
      expect(evidence).toContain(`${e.meetings} (expected ${e.expectedMeetings.toFixed(2)}, z ${e.meetingZ.toFixed(1)}`);
      expect(evidence).toContain(e.results);
      expect(evidence).toContain('Runs');
      // The traders are one entry, not two.
      expect(await page.locator('#integrity-table tbody tr[data-kind="pair"]').count()).toBe(report.entries.filter((entry: { kind: string }) => entry.kind === 'pair').length);
      expect(await page.locator('#integrity-table tbody tr[data-players="x1 x2"], #integrity-table tbody tr[data-players="x2 x1"]').count()).toBe(1);
    });
  });

  it('readable on a phone', async () => {
    await withPage(
      'integrity-phone',
      async (page) => {
        await open(page, '/ladders/trade/integrity');
        await useKey(page, ADMIN_KEY);
        await page.waitForSelector('#integrity-table');
        // Stacked rows: no sideways scrolling of the page.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      },
      PHONE,
    );
  });

  it('without an admin key the page says the report is for administrators, and the tab is not offered', async () => {
    await withPage('integrity-not-admin', async (page, problems) => {
      // No key: the message, no call to the report.
      await open(page, '/ladders/trade/integrity');
      const message = page.locator('#integrity-admin-only');
      expect(await message.getAttribute('data-reason')).toBe('no-key');
      expect(await message.innerText()).toContain('For administrators only.');
      expect(await message.innerText()).toContain('save a key with the admin scope');
      expect(await page.locator('#integrity-table').count()).toBe(0);

      // A key that can read (and one that can write) is told it lacks the admin scope; nothing of the report shows.
      for (const key of [readKey, writeKey]) {
        await useKey(page, key);
        await page.waitForSelector('#integrity-admin-only[data-reason="not-admin"]');
        expect(await page.locator('#integrity-admin-only').innerText()).toContain('lacks the admin scope');
        expect(await page.locator('#integrity-table').count()).toBe(0);
        expect(await page.locator('main').innerText()).not.toContain('x1');
        // Found out: the ladder's other pages no longer offer the tab.
        await open(page, '/ladders/trade');
        expect(await tabs(page)).not.toContain('Integrity');
        await open(page, '/ladders/trade/integrity');
      }
      expectRefusals(problems, 2);
    });
  });
});
