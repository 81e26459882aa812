/**
 * Voided matches and seasons in the dashboard, in chromium against the seeded
 * service: matches voided through the API are struck through with their reason
 * and left out of every figure the pages compute; a viewer with a write key
 * voids one through the page and sees the service's answer; a closed season's
 * frozen standings and a player's final standing are one select away.
 *
 * Its own service (one per test file): voids and a new season change the
 * seeded ladders under the other files' feet.
 */
import { describeSystem } from 'ladder-core/core/registry.js';
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { PHONE, useDashboard } from './harness.js';
import type { Api } from './seed.js';

const rating = (value: number, system: string) => value.toFixed(describeSystem(system).display.decimals);

interface HistoryEntry {
  matchId: string;
  seq: number;
  result: 'win' | 'loss' | 'draw';
  before: { rating: number };
  after: { rating: number };
  terms: { outcome?: string; expected?: number };
  void?: boolean;
}

interface ListedMatch {
  id: string;
  seq: number;
  round?: string;
  teams: Array<{ players: string[]; rank?: number; quitters?: string[] }>;
  void?: { at: string; reason: string };
}

interface VoidAnswer {
  match: { id: string; seq: number; void: boolean };
  changed: boolean;
  rerated: number;
  players: Array<{ id: string; before: { rating: number } | null; after: { rating: number } | null }>;
}

interface Standing {
  position: number;
  id: string;
  rank: number | null;
  rating: number;
  rd: number | null;
  percentile: number | null;
  division: string | null;
  matches: number;
}

/** "W W · L L · D D" the way the player page counts it: a quit is the loss it was rated as; voids not at all. */
function record(history: HistoryEntry[]): string {
  const tally = { win: 0, loss: 0, draw: 0 };
  for (const entry of history) {
    if (entry.void) continue;
    const counted = entry.terms.outcome === 'quit' ? 'loss' : entry.terms.outcome === 'walkover' ? 'win' : entry.result;
    tally[counted] += 1;
  }
  return `${tally.win} W · ${tally.loss} L · ${tally.draw} D`;
}

/** The number column of the player page's match list: counted matches numbered from the oldest, voided ones "–". */
function numbers(history: HistoryEntry[]): string[] {
  let counted = history.filter((entry) => !entry.void).length;
  return history.map((entry) => (entry.void ? '–' : String(counted--)));
}

describe('voids and seasons in chromium', () => {
  const dashboard = useDashboard();
  const { withPage, open } = dashboard;
  let api: Api;
  beforeEach(() => {
    api = dashboard.api;
  });

  const cellTexts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();
  const history = async (ladder: string, player: string): Promise<HistoryEntry[]> => (await api.get(`/v1/ladders/${ladder}/players/${player}/history?limit=500`)).history;
  /** Saves a key through the header form, as a person would. */
  async function useKey(page: Page, key: string) {
    if (!(await page.locator('details.api-key').evaluate((details) => (details as HTMLDetailsElement).open))) await page.click('details.api-key summary');
    await page.getByLabel('Key for private ladders').fill(key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.waitForSelector('main:not([aria-busy]) h1');
    // The form folds away once the key is in use.
    expect(await page.locator('details.api-key').evaluate((details) => (details as HTMLDetailsElement).open)).toBe(false);
  }

  it('a match voided through the API is struck through with its reason and counts in no figure', async () => {
    await withPage('voided-through-api', async (page) => {
      // A duelist with a match in the middle of their history, voided with a reason.
      const board = await api.get('/v1/ladders/duel/leaderboard?limit=5');
      const player = board.entries[0].id as string;
      const before = await history('duel', player);
      expect(before.length).toBeGreaterThanOrEqual(4);
      const target = before[Math.floor(before.length / 2)]!;
      const reason = 'server bug: wrong winner reported';
      const answer: VoidAnswer = await api.post(`/v1/ladders/duel/matches/${target.matchId}/void`, { reason });
      expect(answer.changed).toBe(true);
      const after = await history('duel', player);
      expect(after.find((entry) => entry.matchId === target.matchId)?.void).toBe(true);
      const counted = after.filter((entry) => !entry.void);

      await open(page, `/ladders/duel/players/${player}`);
      await page.waitForSelector('#match-list');
      const row = page.locator(`#match-list tr[data-match="${target.matchId}"]`);
      expect(await row.getAttribute('class')).toContain('void');
      expect(await row.locator('td.result').innerText()).toBe(`void: ${reason}`);
      expect(await row.locator('td.before').evaluate((cell) => getComputedStyle(cell).textDecorationLine)).toBe('line-through');
      expect(await row.locator('td.result').evaluate((cell) => getComputedStyle(cell).textDecorationLine)).toBe('none');
      // Every other row as the API has it now (the later ones re-rated).
      expect(await cellTexts(page, '#match-list td.before')).toEqual(after.slice(0, 20).map((entry) => rating(entry.before.rating, 'glicko2')));
      expect(await cellTexts(page, '#match-list td.result')).toEqual(after.slice(0, 20).map((entry) => (entry.void ? `void: ${reason}` : entry.result)));
      // The figures skip it: match numbers, the record, the chart's steps.
      expect(await cellTexts(page, '#match-list td.number')).toEqual(numbers(after).slice(0, 20));
      expect(await page.locator('#player-stats [data-stat="record"] dd').innerText()).toBe(record(after));
      expect(record(after)).not.toBe(record(after.map((entry) => ({ ...entry, void: false }))));
      expect(await page.locator('#void-count').innerText()).toContain('1 voided match is struck through');
      await page.waitForSelector('.chart .uplot canvas');
      expect(await page.locator('.chart').getAttribute('data-points')).toBe(String(counted.length + 1));
      // No key saved: nothing to void with.
      expect(await page.locator('.void-button').count()).toBe(0);

      // The match list shows it too, with the same reason.
      const { matches } = await api.get('/v1/ladders/duel/matches?limit=200');
      const listedAt = matches.findIndex((match: ListedMatch) => match.id === target.matchId);
      expect(matches[listedAt].void.reason).toBe(reason);
      // The page that starts with it: the one before the match after it (the list's cursor).
      await open(page, `/ladders/duel/matches${listedAt > 0 ? `?before=${matches[listedAt - 1].seq}` : ''}`);
      await page.waitForSelector('#match-table');
      const listed = page.locator(`#match-table tr[data-match="${target.matchId}"]`);
      expect(await listed.getAttribute('class')).toContain('void');
      expect(await listed.locator('td.result').innerText()).toBe(`void: ${reason}`);
      expect(await page.locator('#matches-status').innerText()).toContain('1 voided');

      // The performance page's "pick a run" leaves it out of the player's games.
      await open(page, '/performance');
      await page.waitForSelector('#performance-ratings');
      await page.selectOption('#run-ladder', 'duel');
      await page.fill('#run-player', player);
      await page.fill('#run-count', '200');
      await page.click('#run-load');
      await page.waitForFunction(() => document.querySelector('.pick-run p.meta')?.textContent?.startsWith('Loaded'));
      expect(await page.locator('.pick-run p.meta').innerText()).toContain(`Loaded ${counted.length} games`);
    });
  });

  it('a viewer with a correct key voids a match from the player page and sees what it changed', async () => {
    await withPage('void-from-page', async (page) => {
      const { key } = await api.post('/v1/keys', { name: 'dashboard corrector', scopes: ['correct'] });
      // A squad player's oldest match: every later match of theirs is rated again.
      const { matches } = await api.get('/v1/ladders/squad/matches?limit=100');
      const oldest: ListedMatch = matches[matches.length - 1];
      const player = oldest.teams[0]!.players[0]!;
      const involved = oldest.teams.flatMap((team) => team.players);
      const ratingsBefore = new Map<string, number>();
      for (const id of involved) ratingsBefore.set(id, (await api.get(`/v1/ladders/squad/players/${id}`)).rating);

      await open(page, `/ladders/squad/players/${player}`);
      await useKey(page, key);
      await page.waitForSelector('#match-list .void-button');
      // The oldest match is on the last page of the list.
      const pages = Math.ceil((await history('squad', player)).length / 20);
      if (pages > 1) await open(page, `/ladders/squad/players/${player}?page=${pages}`);
      const button = page.locator(`#match-list tr[data-match="${oldest.id}"] .void-button`);
      expect(await button.getAttribute('aria-label')).toBe(`Void ${oldest.id}…`);
      await button.click();
      await page.waitForSelector('#void-dialog[open]');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('void-reason');
      // A reason is required.
      await page.click('#void-confirm');
      expect(await page.locator('#void-dialog').getAttribute('open')).not.toBeNull();
      const reason = 'played on a test server';
      await page.getByLabel('Reason').fill(reason);
      const answered = page.waitForResponse((response) => response.url().endsWith(`/matches/${oldest.id}/void`));
      await page.click('#void-confirm');
      const answer: VoidAnswer = await (await answered).json();
      expect(answer.changed).toBe(true);

      // The answer stays on the refreshed page and takes the focus.
      await page.waitForSelector('main:not([aria-busy]) #void-answer');
      expect(await page.locator('#void-dialog').count()).toBe(0);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('void-answer');
      const later = answer.rerated;
      expect(await page.locator('#void-summary').innerText()).toBe(
        `Voided ${oldest.id}: ${later} later ${later === 1 ? 'match' : 'matches'} re-rated, ${answer.players.length} players’ ratings changed.`,
      );
      expect(later).toBeGreaterThan(0);
      expect(await cellTexts(page, '#void-players td.player')).toEqual(answer.players.map((entry) => entry.id));
      expect(await cellTexts(page, '#void-players td.before')).toEqual(answer.players.map((entry) => (entry.before ? rating(entry.before.rating, 'teamrank') : '–')));
      expect(await cellTexts(page, '#void-players td.after')).toEqual(answer.players.map((entry) => (entry.after ? rating(entry.after.rating, 'teamrank') : '–')));
      // The answer is the service's: before is what the players had, after what they have now.
      for (const id of involved) {
        const changed = answer.players.find((entry) => entry.id === id);
        if (!changed) continue;
        expect(changed.before?.rating).toBe(ratingsBefore.get(id));
        expect(changed.after?.rating).toBe((await api.get(`/v1/ladders/squad/players/${id}`)).rating);
      }

      // Refreshed: the match is void, with no button left on it.
      const row = page.locator(`#match-list tr[data-match="${oldest.id}"]`);
      expect(await row.locator('td.result').innerText()).toBe(`void: ${reason}`);
      expect(await row.locator('.void-button').count()).toBe(0);
      const { matches: listed } = await api.get('/v1/ladders/squad/matches?limit=100');
      expect(listed.find((match: ListedMatch) => match.id === oldest.id).void.reason).toBe(reason);

      await page.click('#void-answer-close');
      expect(await page.locator('#void-answer').count()).toBe(0);
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    });
  });

  it("at 1280 px a team-rank player's match list shows every column, the quitter modifier and the Void buttons included, without scrolling", async () => {
    await withPage('teamrank-columns', async (page) => {
      const { key } = await api.post('/v1/keys', { name: 'dashboard admin', scopes: ['admin'] });
      const { matches } = await api.get('/v1/ladders/squad/matches?limit=1');
      const player = matches[0].teams[0].players[0];
      await open(page, `/ladders/squad/players/${player}`);
      await useKey(page, key);
      await page.waitForSelector('#match-list .void-button');
      const wrap = page.locator('#match-list').locator('xpath=..');
      expect(await wrap.evaluate((element) => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0);
      const wrapBox = (await wrap.boundingBox())!;
      for (const selector of ['#match-list thead th:has-text("Quitter modifier")', '#match-list .void-button >> nth=0']) {
        const box = (await page.locator(selector).boundingBox())!;
        expect(box.x + box.width, selector).toBeLessThanOrEqual(wrapBox.x + wrapBox.width);
      }
    });
  });

  it('a key that can only read is told so, and the Void buttons go', async () => {
    await withPage('void-read-only', async (page, problems) => {
      const { key } = await api.post('/v1/keys', { name: 'dashboard reader', scopes: ['read'] });
      await open(page, '/ladders/squad/matches');
      await useKey(page, key);
      await page.waitForSelector('#match-table .void-button');
      // Voided rows offer nothing.
      const { matches } = await api.get('/v1/ladders/squad/matches?limit=25');
      for (const match of matches as ListedMatch[]) {
        expect(await page.locator(`#match-table tr[data-match="${match.id}"] .void-button`).count(), match.id).toBe(match.void ? 0 : 1);
      }
      const target = (matches as ListedMatch[]).find((match) => !match.void)!;
      await page.click(`#match-table tr[data-match="${target.id}"] .void-button`);
      await page.getByLabel('Reason').fill('trying');
      await page.click('#void-confirm');
      await page.waitForSelector('#void-problem:not([hidden])');
      expect(await page.locator('#void-problem').innerText()).toContain('may not void matches');
      await page.click('#void-cancel');
      await page.waitForSelector('main:not([aria-busy]) #match-table');
      await page.waitForFunction(() => document.querySelectorAll('.void-button').length === 0);
      expect((await api.get('/v1/ladders/squad/matches?limit=25')).matches.find((match: ListedMatch) => match.id === target.id).void).toBeUndefined();
      // Chromium logs the refused write as a failed load; that one is expected.
      const refused = problems.filter((problem) => problem.includes('status of 403'));
      expect(refused.length).toBe(1);
      problems.splice(0, problems.length, ...problems.filter((problem) => !refused.includes(problem)));
    });
  });

  describe('seasons', () => {
    const PLAYERS = Array.from({ length: 32 }, (_, index) => `racer-${String(index + 1).padStart(2, '0')}`);

    /** A ladder of its own: 32 players over 64 matches in season "spring", then "summer" opens. Once, for whichever test comes first. */
    let seeded: Promise<void> | undefined;
    const seedSeasons = () => (seeded ??= seed());
    async function seed() {
      await api.post('/v1/ladders', { id: 'league', system: 'glicko2', public: true, season: 'spring', standings: { placementMatches: 1 } });
      for (let start = 0; start < 64; start += 8) {
        await Promise.all(
          Array.from({ length: 8 }, (_, step) => {
            const index = start + step;
            const a = PLAYERS[index % 32]!;
            const b = PLAYERS[(index * 7 + 3) % 32 === index % 32 ? (index + 1) % 32 : (index * 7 + 3) % 32]!;
            return api.post('/v1/ladders/league/matches', {
              id: `league-${index + 1}`,
              teams: [
                { players: [a], rank: a < b ? 1 : 2 },
                { players: [b], rank: a < b ? 2 : 1 },
              ],
            });
          }),
        );
      }
      await api.post('/v1/ladders/league/seasons', { name: 'summer', reset: { keep: 0.5, rd: 150 } });
    }

    it("the leaderboard shows a closed season's frozen standings, paged, and the player page their final standing", async () => {
      await withPage('seasons', async (page) => {
        await seedSeasons();
        const { seasons } = await api.get('/v1/ladders/league/seasons');
        expect(seasons.map((season: { name: string }) => season.name)).toEqual(['spring', 'summer']);

        // Just opened: nobody has played in summer; the way to spring's standings is offered.
        await open(page, '/ladders/league');
        expect(await page.locator('#leaderboard-status').innerText()).toBe('No ranked players in season summer yet. The final standings of spring.');
        const options = await page.$$eval('#season option', (elements) => elements.map((option) => [(option as HTMLOptionElement).value, option.textContent]));
        expect(options).toEqual([
          ['summer', 'summer (current)'],
          ['spring', `spring (closed ${seasons[0].closedAt.slice(0, 10)})`],
        ]);
        expect(await page.locator('#season').inputValue()).toBe('summer');

        // Pick spring: its frozen standings, 25 to a page.
        await page.selectOption('#season', 'spring');
        await page.waitForFunction(() => location.hash.includes('season=spring') && document.querySelector('main:not([aria-busy]) #leaderboard'));
        const first: { total: number; entries: Standing[] } = await api.get('/v1/ladders/league/seasons/spring/leaderboard?limit=25&offset=0');
        expect(first.total).toBe(32);
        const checkRows = async (entries: Standing[]) => {
          expect(await cellTexts(page, '#leaderboard td.position')).toEqual(entries.map((entry) => String(entry.position)));
          expect(await cellTexts(page, '#leaderboard td.player')).toEqual(entries.map((entry) => entry.id));
          expect(await cellTexts(page, '#leaderboard td.rating')).toEqual(entries.map((entry) => rating(entry.rating, 'glicko2')));
          expect(await cellTexts(page, '#leaderboard td.division')).toEqual(entries.map((entry) => entry.division ?? '–'));
          expect(await cellTexts(page, '#leaderboard td.percentile')).toEqual(entries.map((entry) => (entry.percentile === null ? '–' : String(entry.percentile))));
        };
        await checkRows(first.entries);
        expect(await page.locator('#leaderboard-status').innerText()).toBe(
          `Final standings of season spring (closed ${seasons[0].closedAt.slice(0, 16).replace('T', ' ')}): showing 1–25 of 32 players.`,
        );
        expect(await page.locator('#page-number').innerText()).toBe('Page 1 of 2');
        expect(await page.locator('#search-form').count(), 'search is the live board’s').toBe(0);
        await page.click('#next-page');
        await page.waitForFunction(() => document.querySelector('#page-number')?.textContent === 'Page 2 of 2');
        const second: { entries: Standing[] } = await api.get('/v1/ladders/league/seasons/spring/leaderboard?limit=25&offset=25');
        await checkRows(second.entries);
        expect(new URL(page.url()).hash).toContain('season=spring');

        // Matches in summer: the live board fills, and the current season is the picker's default again.
        for (let index = 0; index < 6; index += 1) {
          await api.post('/v1/ladders/league/matches', {
            id: `summer-${index + 1}`,
            teams: [
              { players: [PLAYERS[index]!], rank: 1 },
              { players: [PLAYERS[31 - index]!], rank: 2 },
            ],
          });
        }
        await page.selectOption('#season', 'summer');
        await page.waitForFunction(() => !location.hash.includes('season=') && document.querySelector('main:not([aria-busy]) #leaderboard'));
        const live = await api.get('/v1/ladders/league/leaderboard?limit=25');
        expect(await cellTexts(page, '#leaderboard td.player')).toEqual(live.entries.map((entry: { id: string }) => entry.id));
        expect(await page.locator('#search-form').count()).toBe(1);

        // A player's final standing in spring, from the frozen standings' link.
        const player = second.entries[0]!;
        await open(page, '/ladders/league?season=spring&offset=25');
        await page.click(`#leaderboard td.player a:text-is("${player.id}")`);
        await page.waitForSelector('main:not([aria-busy]) #season-standing');
        expect(await page.locator('#season').inputValue()).toBe('spring');
        const standing: Standing = await api.get(`/v1/ladders/league/seasons/spring/players/${player.id}`);
        const stat = (key: string) => page.locator(`#season-standing [data-stat="${key}"] dd`).innerText();
        expect(await stat('position')).toBe(String(standing.position));
        expect(await stat('rating')).toBe(rating(standing.rating, 'glicko2'));
        expect(await stat('rd')).toBe(standing.rd === null ? '–' : standing.rd.toFixed(1));
        expect(await stat('division')).toBe(standing.division ?? '–');
        expect(await stat('matches')).toBe(String(standing.matches));
        expect(await page.locator('#player-stats').count(), 'today’s standing gives way to the season’s').toBe(0);

        // Back to the current season through the select: today's standing.
        await page.selectOption('#season', 'summer');
        await page.waitForSelector('main:not([aria-busy]) #player-stats');
        const now = await api.get(`/v1/ladders/league/players/${player.id}`);
        expect(await page.locator('#player-stats [data-stat="rating"] dd').innerText()).toBe(rating(now.rating, 'glicko2'));
        expect(now.rating).not.toBe(standing.rating);

        // And by the picker on the player page itself.
        await page.selectOption('#season', 'spring');
        await page.waitForSelector('main:not([aria-busy]) #season-standing');
        expect(await stat('position')).toBe(String(standing.position));
      });
    });

    it('the new pages fit a 390 px phone', async () => {
      await withPage(
        'phone-seasons-matches',
        async (page) => {
          await seedSeasons();
          for (const route of ['/ladders/league?season=spring', '/ladders/league/players/racer-01?season=spring', '/ladders/duel/matches', '/ladders/squad/matches']) {
            await open(page, route);
            await page.waitForTimeout(100);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            expect(overflow, route).toBeLessThanOrEqual(0);
          }
          // The frozen standings keep the division and percentile on screen.
          await open(page, '/ladders/league?season=spring');
          for (const cell of await page.locator('#leaderboard tbody td.division').all()) {
            const box = (await cell.boundingBox())!;
            expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
          }
        },
        PHONE,
      );
    });
  });
});
