/**
 * The dashboard where lists end, keys are wrong, results mean more than the
 * placing, screens are narrow and ratings are clamped; each checked in
 * chromium against the seeded service. Where the service's answer is changing
 * (the leaderboard search `total`, the performance `clamped` flag), the test
 * also answers in the new shape through a route and checks the dashboard reads it.
 */
import { describeSystem } from 'ladder-core/core/registry.js';
import type { Page, Route } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { PHONE, useDashboard } from './harness.js';
import type { Api } from './seed.js';

const cellTexts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();
const fixed = (value: number, digits: number) => value.toFixed(digits);

interface Board {
  total: number;
  offset: number;
  entries: Array<{ id: string; rank: number | null }>;
}

interface HistoryEntry {
  matchId: string;
  result: 'win' | 'loss' | 'draw';
  before: { rating: number };
  after: { rating: number };
  terms: { outcome?: string };
}

/** The result cell the dashboard should show for a history entry (src/web/public/pages/common.js resultMeaning). */
function expectedResult(entry: HistoryEntry, system: string): string {
  const change = entry.after.rating - entry.before.rating;
  if (entry.terms.outcome === 'quit') return entry.result === 'loss' ? 'loss · quit' : `${entry.result} · quit: counted as a loss`;
  const mixed = describeSystem(system).dashboard.mixedResult;
  if (mixed && entry.result === 'win' && change < 0) return `win · ${mixed.win}`;
  if (mixed && entry.result === 'loss' && change > 0) return `loss · ${mixed.loss}`;
  return entry.result;
}

describe('dashboard edge cases in chromium', () => {
  const dashboard = useDashboard();
  const { withPage, open } = dashboard;
  let api: Api;
  beforeEach(() => {
    api = dashboard.api;
  });

  /** Player ids of the leaderboard page shown. */
  const shownPlayers = (page: Page) => cellTexts(page, '#leaderboard tbody td.player');
  const waitForStatus = (page: Page, start: string) =>
    page.waitForFunction((text) => document.querySelector('main:not([aria-busy]) #leaderboard-status')?.textContent?.startsWith(text), start);

  describe('leaderboard search pages through every match', () => {
    /** Follows "Next" from the open page to the end and returns every player shown. */
    async function pageThrough(page: Page): Promise<string[]> {
      const seen = [...(await shownPlayers(page))];
      while ((await page.locator('#next-page').count()) > 0) {
        const before = hashOf(page);
        await page.click('#next-page');
        await page.waitForFunction((previous) => location.hash !== previous && document.querySelector('main:not([aria-busy]) #leaderboard'), before);
        // The new page is rendered once its status line counts from the next player (the old one may linger a moment).
        await waitForStatus(page, `Showing ${seen.length + 1}–`);
        seen.push(...(await shownPlayers(page)));
      }
      return seen;
    }
    const hashOf = (page: Page) => new URL(page.url()).hash;

    it('with the total the service answers today', async () => {
      await withPage('search-paging', async (page) => {
        const all: Board = await api.get('/v1/ladders/duel/leaderboard?limit=100&search=duelist');
        expect(all.entries.length).toBe(30);
        await open(page, '/ladders/duel?search=duelist&limit=10');
        await page.waitForSelector('#leaderboard');
        expect(await shownPlayers(page)).toEqual(all.entries.slice(0, 10).map((entry) => entry.id));
        expect(await page.locator('#next-page').count(), 'a next page of search results').toBe(1);
        expect(await pageThrough(page)).toEqual(all.entries.map((entry) => entry.id));
        expect(await page.locator('#leaderboard-status').innerText()).toBe('Showing 21–30 of 30 players matching “duelist”.');
        expect(await page.locator('#page-number').innerText()).toBe('Page 3 of 3');
        // And back again.
        await page.click('#previous-page');
        await waitForStatus(page, 'Showing 11–20');
        expect(await shownPlayers(page)).toEqual(all.entries.slice(10, 20).map((entry) => entry.id));
      });
    });

    it('with a total that counts every match', async () => {
      await withPage('search-paging-total', async (page) => {
        const all: Board = await api.get('/v1/ladders/duel/leaderboard?limit=100&search=duelist');
        // The fixed service: `total` is the number of players matching, not the page's length.
        const lookAheads: string[] = [];
        await page.route('**/v1/ladders/duel/leaderboard?*', async (route: Route) => {
          const url = new URL(route.request().url());
          if (!url.searchParams.has('search')) return route.continue();
          if (url.searchParams.get('limit') === '1') lookAheads.push(url.search);
          const response = await route.fetch();
          const body = await response.json();
          return route.fulfill({ response, json: { ...body, total: all.entries.length } });
        });
        await open(page, '/ladders/duel?search=duelist&limit=10');
        await page.waitForSelector('#leaderboard');
        expect(await page.locator('#leaderboard-status').innerText()).toBe('Showing 1–10 of 30 players matching “duelist”.');
        expect(await page.locator('#page-number').innerText()).toBe('Page 1 of 3');
        expect(await pageThrough(page)).toEqual(all.entries.map((entry) => entry.id));
        expect(lookAheads, 'no look-ahead when the total says it all').toEqual([]);
        // Past the end of the results: a way back to their last page.
        await open(page, '/ladders/duel?search=duelist&limit=10&offset=200');
        await page.waitForSelector('#back-to-list');
        expect(await page.locator('#leaderboard-status').innerText()).toBe('No entries on this page: the list has 30 players matching “duelist”, back to the last page.');
        await page.click('#back-to-list');
        await waitForStatus(page, 'Showing 21–30 of 30');
      });
    });
  });

  describe('the pager follows the offset the service answered', () => {
    it('around me: the page numbers count from the centred offset', async () => {
      await withPage('around-pager', async (page) => {
        const full: Board = await api.get('/v1/ladders/duel/leaderboard?limit=100');
        // A player whose centred page starts at an offset that is not a multiple of 25.
        const target = full.entries.find((_entry, index) => index - 12 > 0 && (index - 12) % 25 !== 0)!.id;
        const around: Board = await api.get(`/v1/ladders/duel/leaderboard?limit=25&around=${target}`);
        expect(around.offset % 25).not.toBe(0);
        await open(page, `/ladders/duel?around=${target}`);
        await page.waitForSelector(`#leaderboard tr.me[data-player="${target}"]`);
        const before = Math.ceil(around.offset / 25);
        const pages = before + Math.ceil((around.total - around.offset) / 25);
        expect(await page.locator('#page-number').innerText()).toBe(`Page ${before + 1} of ${pages}`);
        expect(await page.locator('#leaderboard-status').innerText()).toBe(
          `Showing ${around.offset + 1}–${around.offset + around.entries.length} of ${around.total} players around ${target}.`,
        );
        expect(await shownPlayers(page)).toEqual(around.entries.map((entry) => entry.id));

        // Previous steps one page size back from the answered offset, and the numbering agrees.
        await page.click('#previous-page');
        const previousOffset = Math.max(0, around.offset - 25);
        await waitForStatus(page, `Showing ${previousOffset + 1}–`);
        expect(await page.locator('#page-number').innerText()).toBe(
          `Page ${Math.ceil(previousOffset / 25) + 1} of ${Math.ceil(previousOffset / 25) + Math.ceil((around.total - previousOffset) / 25)}`,
        );
        const previous: Board = await api.get(`/v1/ladders/duel/leaderboard?limit=25&offset=${previousOffset}`);
        expect(await shownPlayers(page)).toEqual(previous.entries.map((entry) => entry.id));
      });
    });

    it('an offset past the end says the page is empty and leads back', async () => {
      await withPage('past-the-end', async (page) => {
        const first: Board = await api.get('/v1/ladders/duel/leaderboard?limit=25');
        await open(page, '/ladders/duel?offset=500');
        await page.waitForSelector('#back-to-list');
        const status = await page.locator('#leaderboard-status').innerText();
        expect(status).toBe(`No entries on this page: the list has ${first.total} players, back to the last page.`);
        expect(status).not.toContain('500');
        expect(await page.locator('#leaderboard').count(), 'no empty table').toBe(0);
        expect(await page.locator('#page-number').innerText()).toBe(`Past the last page (${Math.ceil(first.total / 25)} in all)`);
        expect(await page.locator('#next-page').count()).toBe(0);
        expect(await page.locator('#previous-page').innerText()).toBe('← Last page');

        await page.click('#back-to-list');
        const lastOffset = Math.floor((first.total - 1) / 25) * 25;
        await waitForStatus(page, `Showing ${lastOffset + 1}–${first.total} of ${first.total}`);
        const last: Board = await api.get(`/v1/ladders/duel/leaderboard?limit=25&offset=${lastOffset}`);
        expect(await shownPlayers(page)).toEqual(last.entries.map((entry) => entry.id));
        expect(await page.locator('#page-number').innerText()).toBe(`Page ${lastOffset / 25 + 1} of ${Math.ceil(first.total / 25)}`);
      });
    });
  });

  it('a wrong saved key: says so, offers to forget it, and public ladders keep working', async () => {
    await withPage('wrong-key', async (page, problems) => {
      await api.post('/v1/ladders', { id: 'backroom', system: 'elo', public: false });
      const { key: readKey } = await api.post('/v1/keys', { name: 'dashboard reader', scopes: ['read'] });

      await open(page, '/ladders');
      await page.click('details.api-key summary');
      await page.getByLabel('Key for private ladders').fill('ladder-key-that-does-not-exist');
      await page.getByRole('button', { name: 'Use key' }).click();
      await page.waitForSelector('#key-problem:not([hidden])');
      expect(await page.locator('#key-problem').innerText()).toContain('The saved API key is wrong');
      await page.waitForSelector('main:not([aria-busy]) #ladder-list');
      expect((await cellTexts(page, '#ladder-list li h2')).sort()).toEqual(['duel', 'squad', 'worlds']);

      // The key stays saved across a reload: every page still works, public reads go without it.
      await page.reload();
      await page.waitForSelector('main:not([aria-busy]) #ladder-list');
      await page.waitForSelector('#key-problem:not([hidden])');
      await open(page, '/ladders/duel');
      await page.waitForSelector('#leaderboard');
      await open(page, '/ladders/worlds/wvw');
      await page.waitForSelector('#tiers');
      await open(page, '/performance');
      await page.waitForSelector('#performance-ratings');
      // The service answers a private ladder as a missing one to a caller who may not read it.
      await open(page, '/ladders/backroom');
      expect(await page.locator('main .error').innerText()).toContain('a private ladder looks missing without a working key, and the saved API key was refused');

      // Forget it: the warning goes, the key is gone from the tab.
      await page.click('#forget-key');
      await page.waitForSelector('#key-problem', { state: 'hidden' });
      expect(await page.evaluate(() => sessionStorage.getItem('ladder.apiKey'))).toBeNull();
      expect(await page.locator('#api-key').inputValue()).toBe('');

      // A working key then shows the private ladder too.
      await open(page, '/ladders');
      if (!(await page.locator('details.api-key').evaluate((details) => (details as HTMLDetailsElement).open))) await page.click('details.api-key summary');
      await page.getByLabel('Key for private ladders').fill(readKey);
      await page.getByRole('button', { name: 'Use key' }).click();
      await page.waitForSelector('#ladder-list li[data-ladder="backroom"]');
      expect(await page.locator('#key-problem').isHidden()).toBe(true);

      // Chromium logs each refused request as a failed load (the private ladder's as 404s); nothing else may go wrong.
      const expected = problems.filter((problem) => problem.includes('status of 401') || (problem.includes('status of 404') && problem.includes('/v1/ladders/backroom')));
      expect(expected.length).toBeGreaterThan(0);
      problems.splice(0, problems.length, ...problems.filter((problem) => !expected.includes(problem)));
    });
  });

  describe('results that mean more than the placing', () => {
    it('a quit is labelled a loss whatever the team did, in the history and the rated matches', async () => {
      await withPage('quit-labels', async (page) => {
        const { matches } = await api.get('/v1/ladders/squad/matches?limit=500');
        // A quitter whose team won: the seed puts one on team one of every fourth match.
        let quitter: { player: string; history: HistoryEntry[] } | undefined;
        for (const player of new Set<string>(matches.flatMap((match: any) => match.teams.flatMap((team: any) => team.quitters ?? [])))) {
          const { history } = await api.get(`/v1/ladders/squad/players/${player}/history?limit=20`);
          if (history.some((entry: HistoryEntry) => entry.terms.outcome === 'quit' && entry.result === 'win')) {
            quitter = { player, history };
            break;
          }
        }
        expect(quitter, 'a seeded quitter on the winning team').toBeDefined();
        await open(page, `/ladders/squad/players/${quitter!.player}`);
        await page.waitForSelector('#match-list');
        expect(await cellTexts(page, '#match-list td.result')).toEqual(quitter!.history.map((entry) => expectedResult(entry, 'teamrank')));
        const quit = quitter!.history.find((entry) => entry.terms.outcome === 'quit' && entry.result === 'win')!;
        expect(await page.locator(`#match-list tr[data-match="${quit.matchId}"] td.result`).innerText()).toBe('win · quit: counted as a loss');

        await open(page, '/ladders/squad/matchmaking');
        await page.waitForSelector('#rated-table tbody tr');
        const rated = matches.slice(0, 10);
        const withQuit = rated.filter((match: any) => match.teams.some((team: any) => team.quitters?.length));
        expect(withQuit.length).toBeGreaterThan(0);
        for (const match of withQuit) {
          const quitters = match.teams.flatMap((team: any) => team.quitters ?? []);
          expect(await page.locator(`#rated-table tr[data-match="${match.id}"] td.result`).innerText()).toMatch(
            new RegExp(`^team \\d won · ${quitters.join(', ')} quit: counted as ${quitters.length === 1 ? 'a loss' : 'losses'}$`),
          );
        }
      });
    });

    it('a World vs World win that lost rating says so', async () => {
      await withPage('wvw-result-labels', async (page) => {
        const histories = new Map<string, HistoryEntry[]>();
        for (const world of ['Aurora', 'Borealis', 'Cinder', 'Dune', 'Ember', 'Frost']) {
          histories.set(world, (await api.get(`/v1/ladders/worlds/players/${world}/history?limit=20`)).history);
        }
        const all = [...histories.values()].flat();
        expect(
          all.some((entry) => entry.result === 'win' && entry.after.rating < entry.before.rating),
          'a seeded win that lost rating',
        ).toBe(true);
        expect(
          all.some((entry) => entry.result === 'loss' && entry.after.rating > entry.before.rating),
          'a seeded loss that gained rating',
        ).toBe(true);
        for (const [world, history] of histories) {
          await open(page, `/ladders/worlds/players/${world}`);
          await page.waitForSelector('#match-list');
          expect(await cellTexts(page, '#match-list td.result'), world).toEqual(history.map((entry) => expectedResult(entry, 'wvw')));
        }

        // The round view names the top scorer that lost rating too.
        const { rounds } = await api.get('/v1/ladders/worlds/rounds');
        await open(page, '/ladders/worlds/wvw');
        await page.waitForSelector('#shares');
        const latest = rounds[rounds.length - 1];
        const previous = rounds[rounds.length - 2];
        const notes = (await cellTexts(page, '#shares .share-note')).join('; ');
        for (const match of latest.matches) {
          const scores = Object.entries(match.worlds as Record<string, number>).sort((a, b) => b[1] - a[1]);
          const [top] = scores[0]!;
          const change = latest.ratings[top].rating - previous.ratings[top].rating;
          if (scores[0]![1] > scores[1]![1] && change < 0) expect(notes).toContain(`${top}: win · lost rating (${change.toFixed(1)})`);
        }
      });
    });
  });

  it('each world keeps one colour in the share bars and the chart, in every round', async () => {
    await withPage('wvw-colours', async (page) => {
      const { rounds } = await api.get('/v1/ladders/worlds/rounds');
      const coloursOf = async () => {
        await page.waitForSelector('.chart .u-legend .u-series');
        const bars = await page.$$eval('#shares .share', (elements) =>
          elements.map((element) => [(element as HTMLElement).dataset.world!, getComputedStyle(element).backgroundColor]),
        );
        const lines = await page.$$eval('.chart .u-legend .u-series', (rows) =>
          rows.slice(1).map((row) => [row.querySelector('.u-label')!.textContent!, getComputedStyle(row.querySelector('.u-marker')!).borderTopColor]),
        );
        return { bars, lines: Object.fromEntries(lines) as Record<string, string> };
      };
      const seen = new Map<string, string>();
      for (const round of [rounds[rounds.length - 1].round, rounds[0].round]) {
        await open(page, `/ladders/worlds/wvw?round=${round}`);
        const { bars, lines } = await coloursOf();
        expect(bars.length).toBe(6);
        expect(Object.keys(lines).sort()).toEqual(['Aurora', 'Borealis', 'Cinder', 'Dune', 'Ember', 'Frost']);
        for (const [world, colour] of bars) {
          expect(colour, `${world}'s bar and line in round ${round}`).toBe(lines[world!]);
          expect(seen.get(world!) ?? colour, `${world} keeps its colour from round to round`).toBe(colour);
          seen.set(world!, colour!);
        }
        expect(new Set(Object.values(lines)).size, 'six different colours').toBe(6);
      }
    });
  });

  it('a 390 px phone shows the division and the predicted win chance without scrolling sideways', async () => {
    await withPage(
      'phone-columns',
      async (page) => {
        const inView = async (selector: string) => {
          const cells = await page.locator(selector).all();
          expect(cells.length, selector).toBeGreaterThan(0);
          for (const cell of cells) {
            expect(await cell.isVisible(), selector).toBe(true);
            const box = (await cell.boundingBox())!;
            expect(box.x, `${selector} left edge`).toBeGreaterThanOrEqual(0);
            expect(box.x + box.width, `${selector} right edge`).toBeLessThanOrEqual(PHONE.width);
          }
        };
        for (const ladder of ['duel', 'squad']) {
          await open(page, `/ladders/${ladder}`);
          await page.waitForSelector('#leaderboard');
          await inView('#leaderboard thead th:has-text("Division")');
          await inView('#leaderboard tbody td.division');
          await inView('#leaderboard tbody td.percentile');
        }
        await open(page, '/ladders/duel/players/duelist-01');
        await inView('#player-stats [data-stat="division"] dd');
        await open(page, '/ladders/squad/matchmaking');
        await page.waitForSelector('#rated-table tbody tr');
        await inView('#rated-table tbody td.win-probability');
        expect(await page.locator('#rated-table tbody td.win-probability').first().getAttribute('data-label')).toBe('Predicted');
      },
      PHONE,
    );
  });

  describe('performance page', () => {
    const ratingsShown = (page: Page) =>
      page.$$eval('#performance-ratings [data-algorithm] dd', (cells) => cells.map((cell) => [(cell.parentElement as HTMLElement).dataset.algorithm, cell.textContent]));
    const expectedCards = (answer: Record<string, number>) => ['algo400', 'maxLikelihood', 'netzero', 'netzeroUnordered'].map((key) => [key, fixed(answer[key]!, 1)]);
    /** The games in the box, as the service is sent them. */
    const gamesInBox = async (page: Page) =>
      (await page.locator('#games').inputValue())
        .trim()
        .split('\n')
        .map((line) => {
          const [opponent, result, weight] = line.trim().split(/\s+/);
          return { opponent: Number(opponent), result, ...(weight === undefined ? {} : { weight: Number(weight) }) };
        });

    it("loading a player's games refreshes the cards", async () => {
      await withPage('performance-load', async (page) => {
        await open(page, '/performance');
        await page.waitForSelector('#performance-ratings');
        const board: Board = await api.get('/v1/ladders/duel/leaderboard?limit=5');
        await page.selectOption('#run-ladder', 'duel');
        await page.fill('#run-player', board.entries[0]!.id);
        await page.fill('#run-count', '6');
        await page.click('#run-load');
        await page.waitForFunction(() => document.querySelector('.pick-run p.meta')?.textContent?.startsWith('Loaded 6 games'));
        const games = await gamesInBox(page);
        expect(games.length).toBe(6);
        const answer = await api.post('/v1/performance', { games, k: 32 });
        await expect.poll(() => ratingsShown(page), { timeout: 10_000 }).toEqual(expectedCards(answer));
        expect(await page.locator('#performance-games tbody tr').count()).toBe(6);
      });
    });

    it('says when an all-wins or all-losses rating was clamped', async () => {
      await withPage('performance-clamped', async (page) => {
        await open(page, '/performance');
        await page.waitForSelector('#performance-ratings');
        const rate = async (text: string) => {
          await page.getByLabel('Games', { exact: true }).fill(text);
          await page.getByRole('button', { name: 'Rate this run' }).click();
          const games = await gamesInBox(page);
          const answer = await api.post('/v1/performance', { games, k: 32 });
          await expect.poll(() => ratingsShown(page)).toEqual(expectedCards(answer));
          return answer;
        };
        const clampFlags = () => page.$$eval('#performance-ratings .clamped', (cards) => cards.map((card) => (card as HTMLElement).dataset.algorithm));

        const wins = await rate('1500 win\n1620 win\n1700 win');
        expect(wins.maxLikelihood).toBeGreaterThanOrEqual(1700 + 800);
        expect(await page.locator('#performance-clamped').innerText()).toContain('at least the best opponent (1700) + 800');
        expect(await clampFlags()).toEqual(['maxLikelihood', 'netzero', 'netzeroUnordered']);

        await rate('1500 loss\n1400 loss');
        expect(await page.locator('#performance-clamped').innerText()).toContain('at most the worst opponent (1400) − 800');

        // A zero-weight game does not count: one win alone is still clamped.
        const weighted = await rate('1500 win\n1600 loss 0');
        expect(weighted.maxLikelihood).toBe(2300);
        expect(await page.locator('#performance-clamped').count()).toBe(1);

        await rate('1500 win\n1600 loss');
        expect(await page.locator('#performance-clamped').count()).toBe(0);
        expect(await clampFlags()).toEqual([]);
      });
    });

    it('reads the clamped flag when the service sends one', async () => {
      await withPage('performance-clamped-flag', async (page) => {
        const flags: Array<string | null> = ['above', null];
        await page.route('**/v1/performance', async (route: Route) => {
          const response = await route.fetch();
          return route.fulfill({ response, json: { ...(await response.json()), clamped: flags[0] } });
        });
        await open(page, '/performance');
        // The service's word wins over the dashboard's reading of the games.
        await page.getByLabel('Games', { exact: true }).fill('1500 win\n1650 win');
        await page.getByRole('button', { name: 'Rate this run' }).click();
        await expect.poll(() => page.locator('#performance-clamped').innerText()).toContain('(1650) + 800');
        flags.shift();
        await page.getByRole('button', { name: 'Rate this run' }).click();
        await page.waitForFunction(() => document.querySelector('#performance-ratings')?.getAttribute('data-clamped') === 'no');
        expect(await page.locator('#performance-clamped').count()).toBe(0);
      });
    });
  });

  it('a player page with more history than one request holds fetches all of it, page by page, oldest match last', async () => {
    await api.post('/v1/ladders', { id: 'marathon', system: 'elo', public: true });
    const count = 230;
    for (let i = 0; i < count; i++) {
      await api.post('/v1/ladders/marathon/matches', {
        id: `run${i}`,
        teams: [
          { players: ['runner'], rank: i % 3 === 0 ? 2 : 1 },
          { players: [`rival${i % 7}`], rank: i % 3 === 0 ? 1 : 2 },
        ],
      });
    }
    await withPage('player-long-history', async (page) => {
      // 20 matches a page: the dashboard fetched all 230 entries (three requests of up to 100, each before the last one's entry).
      await open(page, '/ladders/marathon/players/runner?page=12');
      expect(
        await page
          .locator('.pager')
          .getByText(/^Page \d+ of \d+$/)
          .innerText(),
      ).toBe('Page 12 of 12');
      const rows = await page.locator('#match-list tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.match));
      expect(rows).toEqual(Array.from({ length: 10 }, (_, i) => `run${9 - i}`));
      await open(page, '/ladders/marathon/players/runner?page=6');
      const middle = await page.locator('#match-list tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.match));
      expect(middle).toEqual(Array.from({ length: 20 }, (_, i) => `run${count - 101 - i}`));
    });
  });

  it("a rule-set queue's page shows the rule set's teams and role slots, its matches by team name and role, and why tickets wait", async () => {
    const ruleSet = {
      name: 'squads',
      ruleLanguageVersion: '1.0',
      playerAttributes: [],
      teams: [{ name: 'squad', minPlayers: 2, maxPlayers: 2, quantity: 2, roles: { tank: 1, healer: 1 } }],
      rules: [],
    };
    await api.post('/v1/ladders', { id: 'roles', system: 'elo', public: true, matchmaking: { ruleSet } });
    const accepts: Record<string, string[]> = { r1: ['tank'], r2: ['healer'], r3: ['tank'], r4: ['healer'] };
    for (const [player, roles] of Object.entries(accepts)) await api.post('/v1/ladders/roles/tickets', { id: `t-${player}`, players: [{ id: player, pings: { eu: 20 }, roles }] });
    expect(await dashboard.service.matchmakeNow()).toBe(1);
    const { recent } = await api.get('/v1/ladders/roles/queue');
    await withPage('rule-set-queue', async (page) => {
      await open(page, '/ladders/roles/matchmaking');
      expect(await page.locator('#rule-set-heading').innerText()).toBe('Rule set: squads');
      expect(await cellTexts(page, '#rule-set-teams tbody td')).toEqual(['squad', '2–2', '2', '1 tank, 1 healer']);
      await page.waitForSelector('#recent-table');
      const shown = await page.locator(`#recent-table tr[data-match="${recent[0].matchId}"] td.teams`).innerText();
      const expected = recent[0].players
        .map((team: string[], i: number) => `${recent[0].teamNames[i]}: ${team.map((p) => `${p} (${recent[0].roles[p]})`).join(', ')}`)
        .join(' vs ');
      expect(shown).toBe(expected);
      expect(shown).toMatch(/^squad_1: .+ vs squad_2: /);
    });
    // A lone ticket: too few players for a match, which the page says is what holds it.
    await api.post('/v1/ladders/roles/tickets', { id: 't-r5', players: [{ id: 'r5', pings: { eu: 20 }, roles: ['tank'] }] });
    await dashboard.service.matchmakeNow();
    expect((await api.get('/v1/ladders/roles/queue')).whyWaiting.heldBy).toEqual({ minPlayers: 1 });
    await withPage('rule-set-why', async (page) => {
      await open(page, '/ladders/roles/matchmaking');
      await page.waitForSelector('#why-table');
      expect(await cellTexts(page, '#why-table tbody td')).toEqual(['minPlayers', '1']);
    });
  });
});
