/**
 * README's quickstart, as a newcomer follows it: the first start prints the
 * admin key on standard error in the line the README quotes, and the three
 * curl calls (create a ladder, post a match, read the leaderboard) succeed
 * against `ladder serve` with that key.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { codeBlocks } from './support/markdown.js';
import { type Served, startServe, stopServe } from './support/serve.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const quickstart = readme.slice(readme.indexOf('## Quickstart'), readme.indexOf('\n## ', readme.indexOf('## Quickstart') + 1));
const blocks = codeBlocks('README.md', quickstart);

interface CurlCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The curl calls of a shell block: `-X`, `-H` and `-d` with single or double quotes, lines joined at `\`. */
function curlCalls(text: string): CurlCall[] {
  return text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.startsWith('curl '))
    .map((line) => {
      const words = [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!).slice(1);
      const call: CurlCall = { method: 'GET', url: '', headers: {} };
      for (let i = 0; i < words.length; i++) {
        const word = words[i]!;
        if (word === '-X') call.method = words[++i]!;
        else if (word === '-H') {
          const [name, ...value] = words[++i]!.split(':');
          call.headers[name!.trim()] = value.join(':').trim();
        } else if (word === '-d') call.body = words[++i]!;
        else call.url = word;
      }
      return call;
    });
}

let server: Served | undefined;
let url = '';
const data = mkdtempSync(join(tmpdir(), 'ladder-quickstart-'));

beforeAll(async () => {
  // No LADDER_ADMIN_KEY: the first start makes one and prints it.
  server = await startServe({ args: ['--data', join(data, 'db')], timeoutMs: 110_000 });
  url = server.url;
}, 120_000);

afterAll(async () => {
  if (server) await stopServe(server.child);
  rmSync(data, { recursive: true, force: true });
});

describe('README quickstart', () => {
  it('quotes the line the first start prints the admin key in', () => {
    const quoted = blocks.find((block) => block.text.includes('first admin key'))!.text.trim();
    const prefix = quoted.replace(/lk_…$/, '');
    expect(prefix).toBe('ladder: first admin key (shown once, store it now): ');
    expect(server!.stderr()).toContain(prefix);
  });

  it('sets its own admin key with LADDER_ADMIN_KEY of at least 16 characters, the same KEY the curl calls use', () => {
    const own = /LADDER_ADMIN_KEY=(\S+) npm start/.exec(quickstart)?.[1];
    expect(own?.length).toBeGreaterThanOrEqual(16);
    expect(quickstart).toContain(`KEY=${own}`);
    expect(quickstart).toContain('npm start -- --port ');
  });

  it('creates a ladder, rates a match and reads the leaderboard with the curl calls as written', async () => {
    const key = /first admin key \(shown once, store it now\): (\S+)/.exec(server!.stderr())![1]!;
    const calls = curlCalls(blocks.find((block) => block.text.includes('curl '))!.text);
    expect(calls.map((call) => `${call.method} ${new URL(call.url).pathname}`)).toEqual(['POST /v1/ladders', 'POST /v1/ladders/duel/matches', 'GET /v1/ladders/duel/leaderboard']);
    const answers: unknown[] = [];
    for (const call of calls) {
      const headers = Object.fromEntries(Object.entries(call.headers).map(([name, value]) => [name, value.replace('$KEY', key)]));
      const response = await fetch(call.url.replace('http://127.0.0.1:8080', url), { method: call.method, headers, body: call.body });
      expect(response.status, `${call.method} ${call.url}: ${await response.clone().text()}`).toBeLessThan(300);
      answers.push(await response.json());
    }
    const rated = answers[1] as { players: Array<{ id: string; after: { rating: number; rd: number } }> };
    const ann = rated.players.find((player) => player.id === 'ann')!;
    // The README's "ann 1500 → 1662.3, RD 350 → 290.3".
    expect(ann.after.rating.toFixed(1)).toBe('1662.3');
    expect(ann.after.rd.toFixed(1)).toBe('290.3');
    expect(answers[2]).toMatchObject({ total: 0, entries: [] });
  });
});
