/**
 * The library snippets of README.md and docs/*.md (```ts blocks that import
 * something) use the package's own entry points (`ladder`, `ladder/…`, never
 * `./src/…`), type-check under `strict`, and run. Each entry point is mapped
 * to the source its `exports` target is built from (dist/X.d.ts ← src/X.ts,
 * the build's rootDir and outDir), so the snippets are checked against what
 * the package exports without building it first.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';
import { codeBlocks, projectDocs } from './support/markdown.js';
import { SOURCE_CONDITION } from './support/source-condition.js';
import { typeErrors } from './support/tsc.js';
import { childEnv } from './support/test-env.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types: string }> };

/** `ladder`, `ladder/standings`, … → the TypeScript source of each export's types target. */
const entryPoints = Object.fromEntries(
  Object.entries(pkg.exports).map(([subpath, targets]) => [
    subpath === '.' ? pkg.name : `${pkg.name}/${subpath.replace(/^\.\//, '')}`,
    join(ROOT, targets.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts')),
  ]),
);

const snippets = projectDocs()
  .flatMap(([file, text]) => codeBlocks(file, text))
  .filter((block) => ['ts', 'typescript'].includes(block.language) && /^import /m.test(block.text))
  .map((block) => ({ ...block, name: `${block.file.replace(/[/.]/g, '-')}-${block.line}.ts` }));

// Inside the project (.tmp/ is ignored by git) so the snippets resolve node_modules as the sources do.
const dir = join(ROOT, '.tmp', `snippets-${process.pid}`);
const tsconfig = join(dir, 'tsconfig.json');

beforeAll(() => {
  mkdirSync(dir, { recursive: true });
  for (const snippet of snippets) writeFileSync(join(dir, snippet.name), `${snippet.text}\nexport {};\n`);
  writeFileSync(
    tsconfig,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        // The entry points re-export `ladder-core` (packages/core), read from its sources as the project's own tsconfig does.
        customConditions: [SOURCE_CONDITION],
        paths: Object.fromEntries(Object.entries(entryPoints).map(([name, source]) => [name, [source]])),
      },
      files: snippets.map((snippet) => snippet.name),
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('library snippets in the docs', () => {
  it('are found, and every entry point they may use exists', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(5);
    expect(Object.keys(entryPoints)).toEqual(expect.arrayContaining(['ladder', 'ladder/standings', 'ladder/matchmaking']));
    for (const source of Object.values(entryPoints)) expect(existsSync(source), source).toBe(true);
  });

  it.each(snippets.map((s) => [`${s.file}:${s.line}`, s] as const))('%s imports only from the package', (_, snippet) => {
    const specifiers = [...snippet.text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((specifier) => !(specifier in entryPoints))).toEqual([]);
  });

  it('type-check', async () => {
    expect(await typeErrors(tsconfig)).toBe('');
  }, 120_000);

  it.each(snippets.map((s) => [`${s.file}:${s.line}`, s] as const))(
    '%s runs',
    async (_, snippet) => {
      const result = await run(process.execPath, ['--import', 'tsx', join(dir, snippet.name)], { cwd: dir, env: childEnv({ TSX_TSCONFIG_PATH: tsconfig }) });
      expect(result.stderr).toBe('');
      // A snippet that shows its output (`// prints: …` lines) prints exactly that.
      const shown = [...snippet.text.matchAll(/^\/\/ prints: (.*)$/gm)].map((m) => m[1]!);
      if (shown.length > 0) expect(result.stdout.trim().split('\n')).toEqual(shown);
    },
    60_000,
  );
});
