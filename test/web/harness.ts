/**
 * One seeded service and one Chromium per test file, and a page helper that
 * fails a test on page errors, console errors and Content Security Policy
 * violations, saving a screenshot when it does.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { chromiumAvailable, collectProblems, launchChromium, missingChromiumMessage, saveFailureScreenshot } from './browser.js';
import { type Api, apiClient, seedKnownData } from './seed.js';
import { startService, type RunningService } from './service.js';

export interface Viewport {
  width: number;
  height: number;
}

export const DESKTOP: Viewport = { width: 1280, height: 900 };
export const PHONE: Viewport = { width: 390, height: 844 };

export interface Dashboard {
  readonly service: RunningService;
  readonly api: Api;
  readonly browser: Browser;
  /** Opens a page; on failure saves a screenshot to test-results/ and fails with the page's problems attached. */
  withPage(name: string, run: (page: Page, problems: string[]) => Promise<void>, viewport?: Viewport): Promise<void>;
  /** Goes to a dashboard route and waits until the page has rendered. */
  open(page: Page, route: string): Promise<void>;
}

/**
 * Reports every `securitypolicyviolation` event of every document the page
 * loads into `problems`. The listener is added by the browser itself before
 * any page script, and reports through a binding, so the policy under test
 * does not apply to it.
 */
export async function watchCsp(page: Page, problems: string[]): Promise<void> {
  await page.exposeBinding('__ladderCspViolation', (_source, text: string) => {
    problems.push(`CSP violation: ${text}`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { __ladderCspViolation(text: string): void }).__ladderCspViolation;
      report(`${event.effectiveDirective} refused ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber} ${event.sample}`);
    });
  });
}

/** Registers the hooks of a test file: the seeded service, the API client and Chromium. */
export function useDashboard(): Dashboard {
  let service: RunningService | undefined;
  let browser: Browser | undefined;
  let api: Api | undefined;

  beforeAll(async () => {
    // Before the service and its seed: without Chromium every test of the file fails at once, saying why.
    if (!chromiumAvailable()) throw new Error(missingChromiumMessage());
    service = await startService();
    api = apiClient(service.url);
    await seedKnownData(api);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started`);
    return value;
  };

  const dashboard: Dashboard = {
    get service() {
      return ready(service, 'the service');
    },
    get api() {
      return ready(api, 'the API client');
    },
    get browser() {
      return ready(browser, 'chromium');
    },
    async withPage(name, run, viewport = DESKTOP) {
      const page = await dashboard.browser.newPage({ viewport });
      const problems = collectProblems(page);
      await watchCsp(page, problems);
      try {
        await run(page, problems);
        expect(problems, 'errors in the page').toEqual([]);
      } catch (error) {
        const file = await saveFailureScreenshot(page, name);
        if (error instanceof Error) error.message += `\nscreenshot: ${file}\npage problems: ${problems.join('\n') || 'none'}`;
        throw error;
      } finally {
        await page.close();
      }
    },
    async open(page, route) {
      await page.goto(`${dashboard.service.url}/#${route}`);
      await page.waitForSelector('main:not([aria-busy]) h1');
    },
  };
  return dashboard;
}
