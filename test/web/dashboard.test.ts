/**
 * The dashboard in a real browser against the real service: known data goes
 * in through the API, the pages must show the API's numbers.
 */
import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { PHONE, useDashboard } from './harness.js';
import { type Api, WORLDS } from './seed.js';
import { DASHBOARD_CSP } from '../../src/web/csp.js';
import { describeSystem } from 'ladder-core/core/registry.js';

// Formatting rules of src/web/public/ui.js, restated so the test reads the API's numbers the way a person does
// (the decimals are each system's, from the registry that GET /v1/systems serves).
const rating = (value: number, system: string) => value.toFixed(describeSystem(system).display.decimals);
const fixed = (value: number | null | undefined, digits: number) => (value === null || value === undefined ? '–' : value.toFixed(digits));
const signed = (value: number, digits: number) => (value > 0 ? `+${value.toFixed(digits)}` : value.toFixed(digits));

describe('dashboard in chromium', () => {
  const dashboard = useDashboard();
  const { withPage, open } = dashboard;
  // Read when a test runs, after the hooks have started them.
  let api: Api;
  let service: typeof dashboard.service;
  beforeEach(() => {
    api = dashboard.api;
    service = dashboard.service;
  });

  const cellTexts = (page: Page, selector: string) => page.locator(selector).allInnerTexts();

  it('ladders overview lists every ladder with the API counts', async () => {
    await withPage('ladders-overview', async (page) => {
      await open(page, '/ladders');
      const { ladders } = await api.get('/v1/ladders');
      expect(ladders.map((ladder: { id: string }) => ladder.id).sort()).toEqual(['duel', 'squad', 'worlds']);
      for (const ladder of ladders) {
        const card = page.locator(`#ladder-list li[data-ladder="${ladder.id}"]`);
        expect(await card.locator('.players').innerText()).toBe(String(ladder.players));
        expect(await card.locator('.matches').innerText()).toBe(String(ladder.matches));
      }
      const duel = ladders.find((ladder: { id: string }) => ladder.id === 'duel');
      expect(duel.matches).toBe(150);
    });
  });

  it('takes labels, decimals and tabs from GET /v1/systems, naming no system itself', async () => {
    await withPage('systems-endpoint', async (page) => {
      // The service's descriptions, changed on the way: what the pages show must follow them.
      await page.route('**/v1/systems', async (route) => {
        const response = await route.fetch();
        const body = await response.json();
        for (const system of body.systems) {
          system.label = `Label of ${system.name}`;
          system.display.decimals = 3;
          system.capabilities.rounds = !system.capabilities.rounds;
        }
        await route.fulfill({ response, json: body });
      });
      await open(page, '/ladders');
      const { ladders } = await api.get('/v1/ladders');
      for (const ladder of ladders) {
        const card = page.locator(`#ladder-list li[data-ladder="${ladder.id}"]`);
        expect(await card.locator('.meta').innerText()).toContain(`Label of ${ladder.system}`);
        // A system rated in rounds links to its rounds, the others to matchmaking: here the other way round.
        const rounds = describeSystem(ladder.system).capabilities.rounds;
        expect(await card.locator('.links a').nth(1).innerText()).toBe(rounds ? 'Matchmaking' : `Label of ${ladder.system}`);
      }
      await open(page, '/ladders/duel');
      const board = await api.get('/v1/ladders/duel/leaderboard?limit=25&offset=0');
      expect(await cellTexts(page, '#leaderboard tbody td.rating')).toEqual(board.entries.map((entry: { rating: number }) => entry.rating.toFixed(3)));
    });
  });

  it('leaderboard pages, searches and centres on a player like the API', async () => {
    await withPage('leaderboard', async (page) => {
      await open(page, '/ladders');
      await page.click('#ladder-list li[data-ladder="duel"] h2 a');
      await page.waitForSelector('#leaderboard');

      const first = await api.get('/v1/ladders/duel/leaderboard?limit=25&offset=0');
      expect(first.total).toBeGreaterThan(25);
      const checkRows = async (board: { entries: Array<Record<string, any>> }) => {
        expect(await cellTexts(page, '#leaderboard tbody td.player')).toEqual(board.entries.map((entry) => entry.id));
        expect(await cellTexts(page, '#leaderboard tbody td.rank')).toEqual(board.entries.map((entry) => String(entry.rank)));
        expect(await cellTexts(page, '#leaderboard tbody td.rating')).toEqual(board.entries.map((entry) => rating(entry.rating, 'glicko2')));
        expect(await cellTexts(page, '#leaderboard tbody td.rd')).toEqual(board.entries.map((entry) => fixed(entry.rd, 1)));
        expect(await cellTexts(page, '#leaderboard tbody td.percentile')).toEqual(board.entries.map((entry) => (entry.percentile === null ? '–' : String(entry.percentile))));
        expect(await cellTexts(page, '#leaderboard tbody td.division')).toEqual(board.entries.map((entry) => entry.division ?? '–'));
      };
      await checkRows(first);
      expect(await page.locator('#leaderboard-status').innerText()).toBe(`Showing 1–25 of ${first.total} players.`);

      // Paging: next page is the API's offset 25.
      await page.click('#next-page');
      await page.waitForFunction(() => document.querySelector('#page-number')?.textContent?.startsWith('Page 2'));
      const second = await api.get('/v1/ladders/duel/leaderboard?limit=25&offset=25');
      await checkRows(second);
      await page.click('#previous-page');
      await page.waitForFunction(() => document.querySelector('#page-number')?.textContent?.startsWith('Page 1'));
      await checkRows(first);

      // Search by keyboard: type into the labelled field and press Enter.
      await page.getByLabel('Search players').fill('duelist-1');
      await page.getByLabel('Search players').press('Enter');
      // The status line is written with the searched page's rows: until it names the search, the old rows may still be shown.
      await page.waitForFunction(
        () => location.hash.includes('search=duelist-1') && document.querySelector('main:not([aria-busy]) #leaderboard-status')?.textContent?.includes('matching'),
      );
      const searched = await api.get('/v1/ladders/duel/leaderboard?limit=25&search=duelist-1');
      expect(searched.entries.length).toBeGreaterThan(0);
      await checkRows(searched);

      // Around me: the page centred on the last-ranked player (offset 30 - 1 - 12 = 17), their row marked.
      const target = second.entries[second.entries.length - 1].id as string;
      await page.getByLabel('Around me').fill(target);
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForSelector(`#leaderboard tr.me[data-player="${target}"]`);
      const around = await api.get(`/v1/ladders/duel/leaderboard?limit=25&around=${target}`);
      expect(around.offset).toBeGreaterThan(0);
      await checkRows(around);
      expect(await page.locator('#leaderboard tr[aria-current="true"] td.player').innerText()).toBe(target);
    });
  });

  it('a Glicko-2 player page shows the API rating, history chart with RD band and the terms of each match', async () => {
    await withPage('player-glicko2', async (page) => {
      const board = await api.get('/v1/ladders/duel/leaderboard?limit=5');
      const playerId = board.entries[2].id as string;
      await open(page, '/ladders/duel');
      await page.click(`#leaderboard td.player a:text-is("${playerId}")`);
      await page.waitForSelector('#match-list');
      expect(await page.locator('h1').innerText()).toBe(playerId);
      // Focus moved to the heading after the click (keyboard and screen reader users land on the content).
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');

      const player = await api.get(`/v1/ladders/duel/players/${playerId}`);
      const stat = (key: string) => page.locator(`#player-stats [data-stat="${key}"] dd`).innerText();
      expect(await stat('rating')).toBe(rating(player.rating, 'glicko2'));
      expect(await stat('rd')).toBe(fixed(player.rd, 1));
      expect(await stat('volatility')).toBe(fixed(player.volatility, 4));
      expect(await stat('rank')).toBe(`#${player.rank}`);
      expect(await stat('percentile')).toBe(String(player.percentile));
      expect(await stat('division')).toBe(player.division ?? '–');
      expect(await stat('matches')).toBe(String(player.matches));

      const { history } = await api.get(`/v1/ladders/duel/players/${playerId}/history?limit=20`);
      expect(history.length).toBeGreaterThan(0);
      expect(await page.locator('#match-list tbody tr').count()).toBe(Math.min(20, player.matches));
      expect(await cellTexts(page, '#match-list td.before')).toEqual(history.map((entry: any) => rating(entry.before.rating, 'glicko2')));
      expect(await cellTexts(page, '#match-list td.after')).toEqual(history.map((entry: any) => rating(entry.after.rating, 'glicko2')));
      expect(await cellTexts(page, '#match-list td.expected')).toEqual(history.map((entry: any) => fixed(entry.terms.expected, 3)));
      expect(await cellTexts(page, '#match-list td.score')).toEqual(history.map((entry: any) => fixed(entry.terms.score, 3)));
      expect(await cellTexts(page, '#match-list td.surprise')).toEqual(history.map((entry: any) => signed(entry.terms.surprise, 3)));
      expect(await cellTexts(page, '#match-list td.result')).toEqual(history.map((entry: any) => entry.result));

      // The chart drew: uPlot's canvas, a legend with the RD band series.
      await page.waitForSelector('.chart .uplot canvas');
      const legend = await page.locator('.chart .u-legend').innerText();
      expect(legend).toContain('+2 RD');
      expect(legend).toContain('−2 RD');
    });
  });

  it('a team rank player page shows the average-rank and quitter modifiers from the API', async () => {
    await withPage('player-teamrank', async (page) => {
      const playerId = await firstQuitter(api);
      await open(page, `/ladders/squad/players/${playerId}`);
      await page.waitForSelector('#match-list');
      const { history } = await api.get(`/v1/ladders/squad/players/${playerId}/history?limit=20`);
      expect(await cellTexts(page, '#match-list td.average-modifier')).toEqual(history.map((entry: any) => fixed(entry.terms.averageModifier, 3)));
      expect(await cellTexts(page, '#match-list td.quitter-modifier')).toEqual(history.map((entry: any) => fixed(entry.terms.quitterModifier, 3)));
      expect(await cellTexts(page, '#match-list td.outcome')).toEqual(history.map((entry: any) => String(entry.terms.outcome)));
      expect(await cellTexts(page, '#match-list td.change')).toEqual(history.map((entry: any) => signed(entry.after.rating - entry.before.rating, 2)));
      // A quitter's match moves by a modifier other than 1.
      expect(history.some((entry: any) => Math.abs(entry.terms.quitterModifier - 1) > 1e-9)).toBe(true);
    });
  });

  it("a team rank ladder calls its players' number a rating, as the API and the command line do", async () => {
    await withPage('teamrank-name', async (page) => {
      // docs/RATING.md: "rank" is a leaderboard position, so team rank's number is a rating everywhere.
      const { systems } = await api.get('/v1/systems');
      expect(systems.find((s: { name: string }) => s.name === 'teamrank').display.quantity).toBe('rating');
      await open(page, '/ladders/squad');
      // Text as written (the style shows headers in capitals).
      const headers = await page.locator('#leaderboard thead th').allTextContents();
      expect(headers).toEqual(expect.arrayContaining(['Rank', 'Rating']));
      expect(headers.indexOf('Rating')).toBe(headers.indexOf('Player') + 1);
      const playerId = await firstQuitter(api);
      await open(page, `/ladders/squad/players/${playerId}`);
      expect(await page.locator('#player-stats [data-stat="rating"] dt').textContent()).toBe('Rating');
      const { rating } = await api.get(`/v1/ladders/squad/players/${playerId}`);
      expect(await page.locator('#player-stats [data-stat="rating"] dd').innerText()).toBe(rating.toFixed(2));
    });
  });

  it('World vs World shows the tiers, score shares and ratings of the latest round', async () => {
    await withPage('wvw', async (page) => {
      await open(page, '/ladders/worlds/wvw');
      const { rounds } = await api.get('/v1/ladders/worlds/rounds');
      const latest = rounds[rounds.length - 1];
      expect(await page.locator('#round').inputValue()).toBe(latest.round);
      const tiers = await page.locator('#tiers li.tier').all();
      const expectedTiers = latest.groups?.length ? latest.groups : latest.matches.map((match: any) => Object.keys(match.worlds));
      expect(tiers.length).toBe(expectedTiers.length);
      for (const [index, tier] of tiers.entries()) {
        expect(await tier.locator('.world-name').allInnerTexts()).toEqual(expectedTiers[index]);
        const ratingsShown = await tier.locator('.world-rating').allInnerTexts();
        expect(ratingsShown).toEqual(expectedTiers[index].map((world: string) => fixed(latest.ratings[world].rating, 1)));
      }
      const shares = await page.locator('#shares .share').allInnerTexts();
      const expectedShares = latest.matches.flatMap((match: any) => Object.keys(match.worlds).map((world) => `${world} ${(match.shares[world] * 100).toFixed(0)}%`));
      expect(shares).toEqual(expectedShares);
      await page.waitForSelector('.chart .uplot canvas');

      // An earlier round through the select.
      await page.selectOption('#round', rounds[0].round);
      await page.waitForFunction((round) => location.hash.includes(`round=${round}`) && document.querySelector('#tiers'), rounds[0].round);
      await page.waitForSelector('main:not([aria-busy]) #world-ratings');
      expect(await page.locator('#world-ratings caption').innerText()).toBe(`Ratings after round ${rounds[0].round}`);
    });
  });

  it('matchmaking shows the queue by band and region and updates live', async () => {
    await withPage('matchmaking', async (page) => {
      const ticket = (id: string, percentile: number, region: string) => ({
        id,
        players: [{ id, percentile, pings: { [region]: 30 }, filter: { within: 2, strict: true, maxPing: 80 } }],
      });
      await api.post('/v1/ladders/squad/tickets', ticket('solo-eu-1', 15, 'eu'));
      await api.post('/v1/ladders/squad/tickets', ticket('solo-na-1', 85, 'na'));
      await open(page, '/ladders/squad/matchmaking');
      const queue = await api.get('/v1/ladders/squad/queue');
      await page.waitForFunction((waiting) => document.querySelector('#queue-summary')?.textContent?.startsWith(`${waiting} `), queue.waiting);
      for (const [region, count] of Object.entries(queue.byRegion)) {
        expect(await page.locator(`#region-table tr[data-region="${region}"] td.num`).innerText()).toBe(String(count));
      }
      for (const band of queue.byBand) {
        expect(await page.locator(`#band-bars li[data-band="${band.band}"] .bar-value`).innerText()).toBe(String(band.count));
      }
      expect(await page.locator('#queue-summary').getAttribute('aria-live')).toBe('polite');
      // The waiting tickets' own wait figures, from the queue's waitSeconds.
      expect(queue.waitSeconds.max).toBeGreaterThanOrEqual(queue.waitSeconds.mean);
      await page.waitForFunction(() => /^Waiting so far: .+ on average, .+ at most\.$/.test(document.querySelector('#queue-waits')?.textContent ?? ''));

      // Live: a ticket posted now shows up without reloading.
      await api.post('/v1/ladders/squad/tickets', ticket('solo-eu-2', 55, 'eu'));
      const after = await api.get('/v1/ladders/squad/queue');
      expect(after.waiting).toBe(queue.waiting + 1);
      await page.waitForFunction((waiting) => document.querySelector('#queue-summary')?.textContent?.startsWith(`${waiting} `), after.waiting, { timeout: 10_000 });

      // Six tickets around the 50th percentile in eu make one 3v3 match; it shows in the recent list.
      for (let index = 1; index <= 6; index += 1) {
        await api.post('/v1/ladders/squad/tickets', {
          id: `party-${index}`,
          players: [{ id: `squad-0${index}`, percentile: 50 + index, pings: { eu: 20 + index }, filter: { within: 10, strict: false, maxPing: 80 } }],
        });
      }
      expect(await service.matchmakeNow()).toBeGreaterThan(0);
      const formed = await api.get('/v1/ladders/squad/queue');
      expect(formed.recent.length).toBeGreaterThan(0);
      await page.waitForSelector('#recent-table tbody tr', { timeout: 10_000 });
      expect(await cellTexts(page, '#recent-table td.win-probability')).toEqual(
        formed.recent.map((match: any) => (match.winProbability === null ? '–' : `${(match.winProbability * 100).toFixed(1)}%`)),
      );
      await page.waitForFunction((waiting) => document.querySelector('#queue-summary')?.textContent?.startsWith(`${waiting} `), formed.waiting, { timeout: 10_000 });

      // Rated matches carry the prediction made before rating.
      const { matches } = await api.get('/v1/ladders/squad/matches?limit=10');
      const predicted = await cellTexts(page, '#rated-table td.win-probability');
      expect(predicted).toEqual(matches.map((match: any) => match.winProbability.map((p: number) => `${(p * 100).toFixed(0)}%`).join(' / ')));
    });
  });

  it('performance page shows the four performance ratings of a pasted run', async () => {
    await withPage('performance', async (page) => {
      await open(page, '/performance');
      const games = '1700 win\n1650 win\n1400 loss\n1750 win 0.5';
      await page.getByLabel('Games', { exact: true }).fill(games);
      await page.getByLabel('Elo K for the path and netzero').fill('24');
      await page.getByRole('button', { name: 'Rate this run' }).click();
      const expected = await api.post('/v1/performance', {
        k: 24,
        games: [
          { opponent: 1700, result: 'win' },
          { opponent: 1650, result: 'win' },
          { opponent: 1400, result: 'loss' },
          { opponent: 1750, result: 'win', weight: 0.5 },
        ],
      });
      await page.waitForFunction(() => document.querySelectorAll('#performance-games tbody tr').length === 4);
      for (const key of ['algo400', 'maxLikelihood', 'netzero', 'netzeroUnordered']) {
        expect(await page.locator(`#performance-ratings [data-algorithm="${key}"] dd`).innerText(), key).toBe(fixed(expected[key], 1));
      }
      await page.waitForSelector('#performance-output .uplot canvas');
      expect(await cellTexts(page, '#performance-games tbody td:last-child')).toEqual(expected.path.map((value: number) => fixed(value, 1)));

      // Bad input names the line.
      await page.getByLabel('Games', { exact: true }).fill('1500 win\n15x0 loss');
      await page.getByRole('button', { name: 'Rate this run' }).click();
      await expect.poll(() => page.locator('#performance-output .error').innerText()).toContain('line 2');
    });
  });

  it('every page runs under the strict Content Security Policy the web plugin sends', async () => {
    await withPage('content-security-policy', async (page, problems) => {
      // Every file the dashboard serves carries the policy and nosniff; the API's answers are the service's business.
      const served: string[] = [];
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.origin !== service.url || url.pathname.startsWith('/v1/')) return;
        served.push(url.pathname);
        const headers = response.headers();
        if (headers['content-security-policy'] !== DASHBOARD_CSP) problems.push(`${url.pathname}: content-security-policy ${headers['content-security-policy'] ?? 'missing'}`);
        if (headers['x-content-type-options'] !== 'nosniff') problems.push(`${url.pathname}: x-content-type-options ${headers['x-content-type-options'] ?? 'missing'}`);
      });
      const board = await api.get('/v1/ladders/duel/leaderboard?limit=5');
      const duelist = board.entries[1].id as string;
      const quitter = await firstQuitter(api);
      const charted = '.chart .uplot canvas';
      const pages: Array<[string, string | null]> = [
        ['/ladders', '#ladder-list'],
        ['/ladders/duel', '#leaderboard'],
        ['/ladders/duel?search=duelist&limit=10', '#next-page'],
        [`/ladders/duel?around=${duelist}`, '#leaderboard tr.me'],
        ['/ladders/duel?offset=500', '#back-to-list'],
        [`/ladders/duel/players/${duelist}`, charted],
        [`/ladders/squad/players/${quitter}`, charted],
        ['/ladders/squad', '#leaderboard'],
        ['/ladders/squad/matchmaking', '#band-bars'],
        ['/ladders/squad/matches', '#match-table'],
        ['/ladders/duel?season=1', '#leaderboard'],
        ['/ladders/worlds', '#leaderboard-status'],
        ['/ladders/worlds/wvw', charted],
        ['/ladders/worlds/wvw?round=w1', charted],
        ['/ladders/worlds/players/Aurora', charted],
        ['/performance', '#performance-output .uplot canvas'],
        ['/no/such/page', null],
      ];
      await page.goto(`${service.url}/`);
      await page.waitForSelector('main:not([aria-busy]) h1');
      for (const [route, ready] of pages) {
        await open(page, route);
        if (ready) await page.waitForSelector(ready);
      }
      // The interactive parts: a clamped run, a player's games, the key warning.
      await open(page, '/performance');
      await page.waitForSelector('#performance-ratings');
      await page.selectOption('#preset', 'all-wins');
      await page.waitForSelector('#performance-clamped');
      await page.fill('#run-player', duelist);
      await page.click('#run-load');
      await page.waitForFunction(() => document.querySelector('.pick-run p.meta')?.textContent?.startsWith('Loaded'));
      await page.evaluate(() => sessionStorage.setItem('ladder.apiKey', 'not-a-key'));
      await page.reload();
      await page.waitForSelector('#forget-key');
      await page.click('#forget-key');
      await page.waitForSelector('#key-problem', { state: 'hidden' });
      // Chromium logs the refused key's 401 as a failed load; that one is expected.
      const refused = problems.filter((problem) => problem.includes('status of 401'));
      expect(refused.length).toBeGreaterThan(0);
      problems.splice(0, problems.length, ...problems.filter((problem) => !refused.includes(problem)));

      await page.waitForTimeout(200);
      for (const path of ['/', '/web/app.js', '/web/style.css', '/web/pages/wvw.js', '/web/vendor/uPlot.esm.js', '/web/vendor/uPlot.min.css']) expect(served, path).toContain(path);
      expect(problems.filter((problem) => /Content Security Policy|CSP/i.test(problem))).toEqual([]);
    });
  });

  it('on a phone, no world label of the World vs World page is clipped', async () => {
    await withPage(
      'wvw-phone',
      async (page) => {
        // Real world names are longer than the seed's: the service's answers, renamed on the way.
        const longNames: Record<string, string> = Object.fromEntries(WORLDS.map((world, i) => [world, LONG_WORLD_NAMES[i]!]));
        const seedName = new RegExp(`\\b(${WORLDS.join('|')})\\b`, 'g');
        await page.route('**/v1/ladders/worlds/**', async (route) => {
          const response = await route.fetch();
          await route.fulfill({ response, body: (await response.text()).replace(seedName, (world) => longNames[world]!) });
        });
        await open(page, '/ladders/worlds/wvw');
        await page.waitForSelector('#shares .share');
        // Every label naming a world: in the tier cards, on the score-share bars, in the ratings table.
        const clipped = await page.evaluate(() => {
          const out: string[] = [];
          for (const element of document.querySelectorAll<HTMLElement>('#tiers .world-name, #tiers .world-rating, #shares .share, #world-ratings td, #world-ratings th')) {
            const box = element.getBoundingClientRect();
            const parent = (element.closest('.share-bar, li, table') as HTMLElement).getBoundingClientRect();
            const cut = element.scrollWidth > element.clientWidth + 0.5 || element.scrollHeight > element.clientHeight + 0.5;
            const outside = box.left < parent.left - 0.5 || box.right > parent.right + 0.5 || box.right > window.innerWidth;
            if (cut || outside)
              out.push(
                `${element.className || element.tagName}: ${element.textContent} (${element.scrollWidth}x${element.scrollHeight} in ${element.clientWidth}x${element.clientHeight})`,
              );
          }
          return out;
        });
        expect(clipped).toEqual([]);
        // Each world's name and share is there to read on its bar.
        const { rounds } = await api.get('/v1/ladders/worlds/rounds');
        const latest = rounds[rounds.length - 1];
        const expectedShares = latest.matches.flatMap((match: any) => Object.keys(match.worlds).map((world) => `${longNames[world]} ${(match.shares[world] * 100).toFixed(0)}%`));
        expect(await page.locator('#shares .share').allTextContents()).toEqual(expectedShares);
      },
      PHONE,
    );
  });

  it('works on a phone-sized screen without sideways scrolling of the page', async () => {
    await withPage(
      'phone',
      async (page) => {
        for (const route of ['/ladders', '/ladders/duel', '/ladders/duel/players/duelist-01', '/ladders/worlds/wvw', '/performance']) {
          await open(page, route);
          await page.waitForTimeout(100);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          expect(overflow, route).toBeLessThanOrEqual(0);
        }
      },
      PHONE,
    );
  });
});

/** World names as long as real ones, for the seed's six worlds. */
const LONG_WORLD_NAMES = ['Sea of Sorrows', 'Henge of Denravi', 'Fort Aspenwood', 'Jade Quarry', "Yak's Bend", 'Stormbluff Isle'];

/** A squad player who quit in a seeded match (the seed puts a quitter third on team one of every fourth match). */
async function firstQuitter(api: Api): Promise<string> {
  const { matches } = await api.get('/v1/ladders/squad/matches?limit=500');
  const quitters: string[] = matches.flatMap((match: any) => match.teams.flatMap((team: any) => team.quitters ?? []));
  expect(quitters.length, 'seeded matches with a quitter').toBeGreaterThan(0);
  return quitters[quitters.length - 1];
}
