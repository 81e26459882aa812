/**
 * Chromium for the dashboard tests: Debian's /usr/bin/chromium driven by
 * playwright-core (no browser download). `.ci/run` installs chromium when missing.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** Page errors and failed requests, so a test can assert the page ran cleanly. */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()} ${message.location().url}`);
  });
  return problems;
}

/** Saves a full-page screenshot to test-results/ (gitignored) and returns its path. */
export async function saveFailureScreenshot(page: Page, testName: string): Promise<string | undefined> {
  const folder = join(process.cwd(), 'test-results');
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${testName.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`);
  try {
    await page.screenshot({ path: file, fullPage: true });
    return file;
  } catch {
    return undefined;
  }
}
