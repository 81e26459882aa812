/**
 * Screenshots of the dashboard's main pages for docs/screenshots, taken in
 * Debian's chromium through playwright-core.
 *
 *   npm run build && node dist/web/screenshots.js            # starts the seeded demo in process
 *   node dist/web/screenshots.js --url http://127.0.0.1:8080  # a running `ladder serve --demo`
 *
 * Options: --out <dir> (default docs/screenshots), --chromium <path> (default
 * /usr/bin/chromium or $CHROMIUM_PATH).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface Shot {
  file: string;
  route: string;
  /** Waits for this selector before the picture. */
  ready: string;
  width?: number;
  height?: number;
  fullPage?: boolean;
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function firstRanked(url: string, ladder: string, index: number): Promise<string> {
  const response = await fetch(`${url}/v1/ladders/${encodeURIComponent(ladder)}/leaderboard?limit=${index + 1}`);
  if (!response.ok) throw new Error(`leaderboard of ${ladder}: HTTP ${response.status}; is the demo seeded?`);
  const board = (await response.json()) as { entries: Array<{ id: string }> };
  const entry = board.entries[index] ?? board.entries[0];
  if (!entry) throw new Error(`leaderboard of ${ladder} is empty`);
  return entry.id;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      out: { type: 'string', default: 'docs/screenshots' },
      chromium: { type: 'string', default: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' },
    },
  });
  const out = resolve(values.out!);
  mkdirSync(out, { recursive: true });

  let url = values.url?.replace(/\/$/, '');
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    // The seeded demo of `npm start`, in a throwaway data folder.
    const { startService } = await import('../service/index.js');
    const { seedDemo } = await import('../service/demo.js');
    const { registerWeb } = await import('./index.js');
    const dataDir = mkdtempSync(join(tmpdir(), 'ladder-screenshots-'));
    // The dashboard is registered by whoever builds the app, as `ladder serve` does.
    const service = await startService({ port: 0, dataDir, matchmakingIntervalMs: 3_600_000, onAdminKey: () => {}, plugins: [(app) => registerWeb(app, {})] });
    await seedDemo(service);
    url = service.url;
    stop = async () => {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }

  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: values.chromium, args: CHROMIUM_ARGS });
  try {
    const teamPlayer = await firstRanked(url, 'ranked-6v6', 4);
    const duelPlayer = await firstRanked(url, 'duel-1v1', 2);
    const shots: Shot[] = [
      { file: 'ladders.png', route: '/ladders', ready: '#ladder-list', height: 640 },
      { file: 'leaderboard.png', route: '/ladders/ranked-6v6?limit=10', ready: '#leaderboard', fullPage: true },
      { file: 'player.png', route: `/ladders/duel-1v1/players/${encodeURIComponent(duelPlayer)}`, ready: '.chart .uplot canvas', height: 1250 },
      { file: 'player-teamrank.png', route: `/ladders/ranked-6v6/players/${encodeURIComponent(teamPlayer)}`, ready: '.chart .uplot canvas', height: 1250 },
      { file: 'wvw.png', route: '/ladders/wvw-eu/wvw', ready: '.chart .uplot canvas', fullPage: true },
      { file: 'matchmaking.png', route: '/ladders/ranked-6v6/matchmaking', ready: '#by-band ul, #by-band p', fullPage: true },
      { file: 'performance.png', route: '/performance', ready: '#performance-output .uplot canvas', fullPage: true },
      { file: 'phone-leaderboard.png', route: '/ladders/ranked-6v6?limit=10', ready: '#leaderboard', width: 390, height: 844 },
      { file: 'phone-player.png', route: `/ladders/duel-1v1/players/${encodeURIComponent(duelPlayer)}`, ready: '.chart .uplot canvas', width: 390, height: 844 },
    ];
    for (const shot of shots) {
      const page = await browser.newPage({ viewport: { width: shot.width ?? 1280, height: shot.height ?? 900 }, deviceScaleFactor: 1 });
      await page.goto(`${url}/#${shot.route}`);
      await page.waitForSelector(shot.ready, { timeout: 15_000 });
      // Let uPlot finish its first resize.
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(out, shot.file), fullPage: shot.fullPage ?? false });
      await page.close();
      process.stdout.write(`${join(out, shot.file)}\n`);
    }
  } finally {
    await browser.close();
    await stop?.();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`screenshots: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
