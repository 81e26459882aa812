/**
 * No test reaches the database, Redis or settings of the user's shell: the
 * service's variables (DATABASE_URL, REDIS_URL, LADDER_*, …) are gone
 * before any test runs, even when exported, and every child process a test
 * starts gets `childEnv()` (test/support/test-env.ts).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { childEnv, isServiceVariable, testNameTime, withoutServiceVariables } from './support/test-env.js';

/** Variables the service and CLI read (src/cli/serve.ts, src/cli/rebuild.ts, src/service, src/eval). */
const READ_BY_THE_SERVICE = [
  'DATABASE_URL',
  'DATABASE_SCHEMA',
  'REDIS_URL',
  'REDIS_PREFIX',
  'LADDER_ADMIN_KEY',
  'LADDER_CORS_ORIGINS',
  'LADDER_DATA',
  'LADDER_MATCHMAKING_INTERVAL_MS',
  'LADDER_MATCHMAKING_TRACE',
  'LADDER_WRITE_BATCH',
  'LADDER_WRITE_PIPELINE',
];

describe('the environment of the tests', () => {
  it('this worker sees none of the service variables', () => {
    expect(Object.keys(process.env).filter(isServiceVariable)).toEqual([]);
    expect(process.env.LADDER_TEST_RUN).toMatch(/^[0-9a-z]{12}$/);
  });

  it('every variable the service reads counts as one', () => {
    const source = ['src/cli/serve.ts', 'src/cli/rebuild.ts', 'src/service/index.ts', 'src/eval/datasets.ts'].map((file) => readFileSync(join(ROOT, file), 'utf8')).join('\n');
    const read = new Set([...source.matchAll(/process\.env\.([A-Z_]+)/g), ...source.matchAll(/positiveEnv\('([A-Z_]+)'\)/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(5);
    for (const name of [...read, ...READ_BY_THE_SERVICE]) expect(isServiceVariable(name), name).toBe(true);
    for (const name of ['PATH', 'HOME', 'TMPDIR', 'CHROMIUM_PATH', 'LADDER_TEST_DATABASE_URL', 'LADDER_TEST_RUN', 'NODE_OPTIONS'])
      expect(isServiceVariable(name), name).toBe(false);
  });

  it('childEnv keeps no service variable of the parent, and every one the test names', () => {
    const name = fc.oneof(fc.constantFrom(...READ_BY_THE_SERVICE, 'PATH', 'HOME', 'LADDER_TEST_REDIS_URL', 'LADDER_X'), fc.stringMatching(/^[A-Z][A-Z_]{0,12}$/));
    fc.assert(
      fc.property(fc.dictionary(name, fc.string()), fc.dictionary(name, fc.string()), (parent, extra) => {
        const saved = { ...process.env };
        try {
          for (const key of Object.keys(process.env)) delete process.env[key];
          Object.assign(process.env, parent);
          const env = childEnv(extra);
          for (const [key, value] of Object.entries(env)) {
            if (key in extra) expect(value).toBe(extra[key]);
            else if (key !== 'TMPDIR') {
              expect(isServiceVariable(key), key).toBe(false);
              expect(value).toBe(parent[key]);
            }
          }
          for (const key of Object.keys(extra)) expect(env[key]).toBe(extra[key]);
          expect(withoutServiceVariables(parent)).toEqual(Object.fromEntries(Object.entries(parent).filter(([key]) => !isServiceVariable(key))));
        } finally {
          for (const key of Object.keys(process.env)) delete process.env[key];
          Object.assign(process.env, saved);
        }
      }),
    );
  });

  it('test names carry the time they were made', () => {
    const now = Date.UTC(2026, 10, 25);
    expect(testNameTime(`ladder_test_${now.toString(36)}beef_0123abcd`)).toBe(now);
    expect(testNameTime(`lt_${now.toString(36)}_0123abcd`)).toBe(now);
    expect(testNameTime('ladder_bench_abc')).toBeUndefined();
    expect(testNameTime('public')).toBeUndefined();
  });

  it('exported DATABASE_URL, REDIS_URL and LADDER_* do not reach a test (a vitest run of the first test above)', { timeout: 180_000 }, () => {
    const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
    const run = spawnSync(process.execPath, [vitest, 'run', 'test/test-env.test.ts', '-t', 'this worker sees none'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: childEnv({
        DATABASE_URL: 'postgres://must-not-be-used@127.0.0.1:1/none',
        DATABASE_SCHEMA: 'must_not_be_used',
        REDIS_URL: 'redis://127.0.0.1:1',
        REDIS_PREFIX: 'must-not-be-used:',
        LADDER_ADMIN_KEY: 'must-not-be-used-0123456789',
        LADDER_DATA: '/must/not/be/used',
        // A run of its own.
        LADDER_TEST_RUN: undefined,
        LADDER_TEST_RUN_OWNER: undefined,
        LADDER_TEST_RUN_DIR: undefined,
      }),
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/1 passed/);
  });
});

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The text of the call that opens at `start` (the index of its '('), up to the matching ')'; strings are skipped. */
function callText(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return text.slice(start, i + 1);
  }
  return text.slice(start);
}

describe('child processes of the tests', () => {
  it('each is given childEnv(...) as its environment', () => {
    const unguarded: string[] = [];
    let calls = 0;
    for (const file of sources(join(ROOT, 'test'))) {
      const text = readFileSync(file, 'utf8');
      const imported = /import\s*\{([^}]*)\}\s*from\s*'node:child_process'/.exec(text);
      if (!imported) continue;
      const names = imported[1]!
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '' && !n.startsWith('type '));
      // `const run = promisify(execFile)` makes `run` a way to start one too.
      for (const alias of text.matchAll(/const\s+(\w+)\s*=\s*promisify\((\w+)\)/g)) if (names.includes(alias[2]!)) names.push(alias[1]!);
      for (const name of names) {
        for (const call of text.matchAll(new RegExp(`(?<![\\w.])(?:${name}|promisify\\(${name}\\))\\(`, 'g'))) {
          const args = callText(text, call.index + call[0].length - 1);
          calls++;
          if (!/\benv:\s*childEnv\(/.test(args)) unguarded.push(`${relative(ROOT, file)}:${text.slice(0, call.index).split('\n').length} ${name}${args.slice(0, 80)}`);
        }
      }
    }
    expect(calls).toBeGreaterThan(10);
    expect(unguarded).toEqual([]);
  });
});
