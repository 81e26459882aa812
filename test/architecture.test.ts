import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SYSTEM_NAMES } from 'ladder-core/core/registry.js';

const src = join(import.meta.dirname, '../src');
/** The rating library's sources (the `ladder-core` package). */
const packageSrc = join(import.meta.dirname, '../packages/core/src');
const core = join(packageSrc, 'core');
/** The rating core's sources, its subfolders' (such as `whr/`) included, relative to it. */
const sources = readdirSync(core, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

/** Every .ts file under `dir`, tests excluded. */
function tree(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Every .ts file of both packages, tests excluded. */
function allSources(): string[] {
  return [...tree(src), ...tree(packageSrc)];
}

function importsOf(text: string): string[] {
  // `from '…'`, a bare `import '…'` and `import('…')`.
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)'([^']+)'/g)].map((m) => m[1]!);
}

describe('the rating core', () => {
  it('imports nothing outside itself and no I/O module', () => {
    for (const file of sources) {
      const text = readFileSync(join(core, file), 'utf8');
      const imports = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
      for (const target of imports) {
        const inside = target.startsWith('.') && !relative(core, resolve(core, file, '..', target)).startsWith('..');
        expect(inside, `${file} imports ${target}`).toBe(true);
      }
      expect(/\bprocess\.|console\.|require\(/.test(text), `${file} does I/O`).toBe(false);
    }
  });

  it('is a package with no dependency: its sources import only each other, never Node or another package', () => {
    const files = tree(packageSrc);
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      // Every specifier: `from '…'`, a bare `import '…'` and `import('…')`.
      for (const [, target] of readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) {
        const inside = target!.startsWith('.') && !relative(packageSrc, resolve(file, '..', target!)).startsWith('..');
        expect(inside, `${relative(packageSrc, file)} imports ${target}`).toBe(true);
      }
    }
    const pkg = JSON.parse(readFileSync(join(packageSrc, '../package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies']) expect(pkg[field], field).toBeUndefined();
  });

  it('exports by name only from index.ts', () => {
    const index = readFileSync(join(core, 'index.ts'), 'utf8');
    expect(index).not.toMatch(/export\s+default/);
    expect(index).not.toMatch(/export\s+\*/);
  });
});

/** The imports of each file under `dir` (tests excluded) that stay under `dir`, as absolute paths. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tree(dir)) {
    const targets = importsOf(readFileSync(file, 'utf8'))
      .filter((target) => target.startsWith('.'))
      .map((target) => {
        const path = join(dirname(file), target.replace(/\.js$/, '.ts'));
        return existsSync(path) ? path : join(path.replace(/\.ts$/, ''), 'index.ts');
      })
      .filter((path) => path.startsWith(dir));
    graph.set(file, targets);
  }
  return graph;
}

/** Each import circle among the files under `dir`, as the files on it (relative to src). */
function circles(dir: string): string[][] {
  const graph = importGraph(dir);
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at !== -1) {
      found.push(path.slice(at).map((f) => relative(src, f)));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe('the service', () => {
  // A statement starts with one of these keywords inside a string literal or template.
  const SQL = /['`]\s*(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|WITH\s+\w+\s+AS|CREATE\s+TABLE|ALTER\s+TABLE|DROP\s+SCHEMA|DROP\s+TABLE)\b/i;

  it('has all its SQL in src/store', () => {
    for (const file of allSources()) {
      const path = relative(src, file);
      if (path.startsWith('store/')) continue;
      expect(SQL.test(readFileSync(file, 'utf8')), `${path} holds SQL`).toBe(false);
    }
  });

  it('keeps every file of src/service under 800 lines: a file past that holds more than one concern', () => {
    const files = tree(join(src, 'service')).filter((file) => !file.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) expect(readFileSync(file, 'utf8').split('\n').length, relative(src, file)).toBeLessThanOrEqual(800);
  });

  it('routes only call the domain: no route file imports the store', () => {
    const routes = tree(join(src, 'service/http/routes'));
    expect(routes.length).toBeGreaterThan(5);
    for (const file of routes) {
      for (const target of importsOf(readFileSync(file, 'utf8'))) expect(target.includes('/store/'), `${relative(src, file)} imports ${target}`).toBe(false);
    }
  });

  it('does not import the dashboard, and the store imports neither the service nor the web', () => {
    for (const file of tree(join(src, 'service'))) {
      for (const target of importsOf(readFileSync(file, 'utf8'))) expect(target.includes('/web/'), `${relative(src, file)} imports ${target}`).toBe(false);
    }
    for (const file of tree(join(src, 'store'))) {
      for (const target of importsOf(readFileSync(file, 'utf8'))) {
        expect(/\/(service|web|cli)\//.test(target), `${relative(src, file)} imports ${target}`).toBe(false);
      }
    }
  });

  it('does not depend on the simulator: production code generates what it needs itself', () => {
    const files = tree(join(src, 'service'));
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      for (const target of importsOf(readFileSync(file, 'utf8'))) expect(/(^|\/)sim\//.test(target), `${relative(src, file)} imports ${target}`).toBe(false);
    }
  });

  it('has no import circles', () => {
    expect(circles(join(src, 'service'))).toEqual([]);
  });

  it('sets HTTP status codes only in its HTTP layer', () => {
    for (const file of tree(join(src, 'service'))) {
      const path = relative(src, file);
      if (path.startsWith('service/http/')) continue;
      const text = readFileSync(file, 'utf8');
      expect(/\.code\(\d{3}\)|statusCode\s*=|\bstatus:\s*[45]\d\d\b|HttpError/.test(text), `${path} deals in HTTP statuses`).toBe(false);
    }
  });

  it('parses no error message back with a regular expression', () => {
    for (const file of [...tree(join(src, 'service')), ...tree(join(src, 'store'))]) {
      const text = readFileSync(file, 'utf8');
      expect(/\.message\.(replace|match)\(/.test(text), `${relative(src, file)} parses an error message`).toBe(false);
    }
  });
});

/**
 * Logic keyed on an error's text: a search in its `message` or `detail`
 * (`.detail.includes(`, `String(e.message).startsWith(`, `/x/.test(e.message)`)
 * or a comparison with it. A decision reads a type, a field or a code.
 */
function textDecisions(text: string): string[] {
  const patterns = [
    /\.(?:message|detail)\)?\.(?:includes|startsWith|endsWith|indexOf|lastIndexOf|search|match|matchAll)\(/,
    /\.test\([^)]*\.(?:message|detail)\)/,
    /\.(?:message|detail)\s*[!=]==?\s*['"`]/,
  ];
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (patterns.some((pattern) => pattern.test(line))) found.push(`${i + 1}: ${line.trim()}`);
  });
  return found;
}

describe('the library tests', () => {
  it('do not import the benchmarks', () => {
    const tests = [src, packageSrc]
      .flatMap((root) => readdirSync(root, { withFileTypes: true, recursive: true }))
      .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
      .map((e) => join(e.parentPath, e.name))
      .filter((file) => !relative(src, file).startsWith('bench/'));
    expect(tests.length).toBeGreaterThan(20);
    for (const file of tests) {
      for (const target of importsOf(readFileSync(file, 'utf8'))) expect(/(^|\/)bench\//.test(target), `${relative(src, file)} imports ${target}`).toBe(false);
    }
  });
});

describe('errors', () => {
  it('finds decisions keyed on error text, and not reading the text out', () => {
    for (const decision of [
      "if (error.field === 'id' && error.detail.includes('already queued')) return;",
      "if (!String((error as Error).message).includes('no such key')) throw error;",
      'if (/NOSCRIPT/.test(error.message)) retry();',
      "if (e.message === 'gone') return;",
      'e.detail.startsWith(`x`)',
    ]) {
      expect(textDecisions(decision), decision).toHaveLength(1);
    }
    for (const reading of ['reply.send({ detail: error.detail });', "const text = error.message + '.';", 'throw new UnavailableError(error.message);']) {
      expect(textDecisions(reading), reading).toEqual([]);
    }
  });

  it('are never told apart by their text in src: a decision reads the type, a field or a code', () => {
    const decisions = allSources().flatMap((file) => textDecisions(readFileSync(file, 'utf8')).map((line) => `${relative(src, file)}:${line}`));
    expect(decisions).toEqual([]);
  });
});

/**
 * The places a system's name is branched on: compared (`=== 'glicko2'`,
 * `'elo' !==`), switched on (`case 'elo':`), tested for membership
 * (`['elo', 'glicko2'].includes(`) or used as the keys of a lookup table
 * (`{ teamrank: …, glicko2: … }`). Naming a system as data (`system:
 * 'elo'`, `createSystem('elo')`) is no branch.
 */
function nameBranches(text: string, names: readonly string[]): string[] {
  const name = `(?:${names.join('|')})`;
  const quoted = `(['"\`])${name}\\1`;
  const patterns = [
    new RegExp(`[=!]==?\\s*${quoted}`),
    new RegExp(`${quoted}\\s*[=!]==?`),
    new RegExp(`\\bcase\\s+${quoted}\\s*:`),
    new RegExp(`\\[\\s*${quoted}(?:\\s*,\\s*(['"\`])${name}\\2)+\\s*\\]\\s*\\.(?:includes|indexOf|some)\\(`),
  ];
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const keys = new Set([...line.matchAll(new RegExp(`(?:^|[{,]\\s*)(${name})\\s*:`, 'g'))].map((m) => m[1]));
    if (patterns.some((pattern) => pattern.test(line)) || keys.size >= 2) found.push(`${i + 1}: ${line.trim()}`);
  });
  return found;
}

describe('the rating systems', () => {
  it('finds branches on a name, and not names given as data', () => {
    const names = ['glicko2', 'elo', 'teamrank'];
    for (const branch of [
      "if (x === 'glicko2') y();",
      "if ('elo' !== system) y();",
      '  case `teamrank`:',
      "const ok = ['elo', 'glicko2'].includes(system);",
      "const labels = { teamrank: 'Team rank', glicko2: 'Glicko-2' };",
    ]) {
      expect(nameBranches(branch, names), branch).toHaveLength(1);
    }
    for (const data of ["createSystem('elo');", "{ label: 'elo, K 32', system: 'elo' },", "const x = { system: 'glicko2', k: 1 };", "fitOf('glicko2')"]) {
      expect(nameBranches(data, names), data).toEqual([]);
    }
  });

  it('are never told apart by name outside the core: everything else reads their descriptors', () => {
    const files = [
      ...allSources().filter((file) => !relative(src, file).startsWith('core/') && relative(core, file).startsWith('..')),
      ...readdirSync(join(src, 'web/public'), { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith('.js'))
        .map((e) => join(e.parentPath, e.name)),
    ];
    expect(files.length).toBeGreaterThan(50);
    const branches = files.flatMap((file) => nameBranches(readFileSync(file, 'utf8'), SYSTEM_NAMES).map((line) => `${relative(src, file)}:${line}`));
    expect(branches).toEqual([]);
  });
});
