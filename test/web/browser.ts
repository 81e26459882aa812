/**
 * Chromium for the dashboard tests: Debian's /usr/bin/chromium (or
 * CHROMIUM_PATH) driven by playwright-core (no browser download). `npm test`
 * installs it when missing (test/support/prepare.ts); without it the
 * dashboard tests fail, saying so, rather than being skipped.
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

/** Why the dashboard tests cannot run here, and the command that fixes it. */
export function missingChromiumMessage(): string {
  return `Chromium is missing at ${CHROMIUM_PATH} (set CHROMIUM_PATH to another): install it with \`apt-get install -y chromium\` (\`npm test\` does when run as root)`;
}

export async function launchChromium(): Promise<Browser> {
  if (!chromiumAvailable()) throw new Error(missingChromiumMessage());
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
