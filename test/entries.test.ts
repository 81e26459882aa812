/**
 * Every script run on its own (the benchmarks, the evaluation report,
 * `npm start`) answers `--help` with its usage and exit 0 before any work,
 * and an unknown option with exit 2 naming it. The entries are found, not
 * listed: each module that starts on `isEntry(import.meta.url)`, and the
 * benchmark runner. Each runs from source (tsx, the source condition) in an
 * empty folder, with LADDER_DATA pointing at a folder that does not exist,
 * so a run that did its work would leave files, print its progress, or fail
 * for want of data. The options the docs show for each script are ones its
 * usage lists.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { tempDir } from './support/litter.js';
import { projectDocs } from './support/markdown.js';
import { withoutSourceCondition } from './support/source-condition.js';
import { childEnv } from './support/test-env.js';

/** Every .ts file under `dir`, tests excluded, relative to the project. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const all = [...sources('src'), ...sources('packages/core/src')];
const entries = [...all.filter((file) => /\bisEntry\(import\.meta\.url\)/.test(readFileSync(join(ROOT, file), 'utf8'))), 'src/bench/run.ts', 'scripts/start.mjs'];

/** The command the docs use for an entry: `dist/bench/load.js` for src/bench/load.ts. */
const builtPath = (entry: string) => entry.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js');

const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  /** What the run left in its working folder. */
  left: string[];
}

function run(entry: string, args: readonly string[]): Promise<Run> {
  const cwd = tempDir('ladder-entry-');
  const child: ChildProcess = spawn(process.execPath, ['--import', TSX, join(ROOT, entry), ...args], {
    cwd,
    // `npm start` runs the built command line, which resolves ladder-core as an installed copy does.
    env: childEnv({ LADDER_DATA: join(cwd, 'no-data-here'), ...(entry.endsWith('.mjs') && { NODE_OPTIONS: withoutSourceCondition() }) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  return new Promise((done) => child.on('close', (status) => done({ status, stdout, stderr, left: readdirSync(cwd) })));
}

const help = new Map<string, Run>();
const unknown = new Map<string, Run>();
let peersLeftOut: Run;

beforeAll(async () => {
  await Promise.all([
    ...entries.flatMap((entry) => [
      run(entry, ['--help']).then((r) => help.set(entry, r)),
      // The valid-looking operand after it must not be taken for work either.
      run(entry, ['--no-such-option', '1']).then((r) => unknown.set(entry, r)),
    ]),
    run('src/eval/report.ts', ['owl', '--no-peers', '--out', 'docs']).then((r) => {
      peersLeftOut = r;
    }),
  ]);
}, 480_000);

describe('script entries', () => {
  it('are found: the benchmarks that take options and the evaluation report among them', () => {
    expect(entries).toEqual(expect.arrayContaining(['src/eval/report.ts', 'src/bench/corrections.ts', 'src/bench/availability.ts', 'src/bench/load.ts', 'src/bench/run.ts']));
  });

  it('all start through isEntry, so none is missed here', () => {
    const own = all.filter((file) => file !== 'src/cli/script-args.ts' && /process\.argv\[1\]/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(own).toEqual([]);
  });

  it.each(entries)('%s --help prints its usage and exits 0 without doing the work', (entry) => {
    const r = help.get(entry)!;
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: \S/);
    expect(r.stdout).not.toMatch(/loaded|writing the report|building/i);
    expect(r.left).toEqual([]);
  });

  it.each(entries.filter((entry) => entry !== 'scripts/start.mjs'))('%s with an unknown option exits 2 naming it, without doing the work', (entry) => {
    const r = unknown.get(entry)!;
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^[\w-]+: unknown option --no-such-option \(see .* --help\)\n$/);
    expect(r.stdout).toBe('');
    expect(r.left).toEqual([]);
  });

  it('the report refuses to leave the peers out of the tracked tables, before any work', () => {
    expect(peersLeftOut.status).toBe(2);
    expect(peersLeftOut.stderr).toMatch(/^report: --no-peers with --out docs would drop the peers' rows/);
    expect(peersLeftOut.left).toEqual([]);
  });

  it('the report lists every option it reads, and the data sets', () => {
    const text = help.get('src/eval/report.ts')!.stdout;
    for (const option of ['--out DIR', '--no-peers', '--keep', '--help']) expect(text).toContain(option);
    expect(text).toMatch(/tennis-kdd19.*owl/);
  });
});

describe('script commands in the docs', () => {
  // `node … dist/bench/load.js --backend both` in a code block or between backticks: the options after the script (NAME.js is a placeholder).
  const uses = projectDocs().flatMap(([file, text]) =>
    text.split('\n').flatMap((line, i) =>
      [...line.matchAll(/\b(dist\/(?:bench|eval)\/[a-z][a-z0-9-]*\.js)([^`\n]*)/g)].map((m) => ({
        where: `${file}:${i + 1}`,
        script: m[1]!,
        options: [...m[2]!.matchAll(/(?:^|[\s[|])(--[a-z][\w-]*)/g)].map((o) => o[1]!),
      })),
    ),
  );

  it('are found', () => expect(uses.filter((use) => use.options.length > 0).length).toBeGreaterThan(5));

  it.each(uses.map((use) => [`${use.where} ${use.script}`, use] as const))('%s names only options its usage lists', (_, use) => {
    const entry = entries.find((e) => builtPath(e) === use.script);
    expect(entry, `${use.script} is an entry`).toBeDefined();
    const usage = help.get(entry!)!.stdout;
    expect(use.options.filter((option) => !new RegExp(`^\\s+${option}\\b`, 'm').test(usage))).toEqual([]);
  });

  it('`npm run bench -- NAME` names a benchmark the runner has', () => {
    const names = /^Names: (.*)\.$/m.exec(help.get('src/bench/run.ts')!.stdout)![1]!.split(', ');
    const named = projectDocs().flatMap(([, text]) => [...text.matchAll(/npm run bench -- ([a-z][\w-]*)/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((name) => !names.includes(name))).toEqual([]);
  });
});
