/**
 * How Ladder starts a worker thread whose entry is one of its own modules.
 * Built code loads the compiled `.js` next to the caller. Run from the
 * TypeScript sources (tests, `tsx`), the worker starts through a bootstrap
 * that registers tsx's loader first, since Node 20 ignores `--import` in a
 * worker's execArgv.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface WorkerStart {
  /** What to pass to `new Worker` as its first argument. */
  target: URL | string;
  /** Whether `target` is code (`eval: true`) rather than a file. */
  eval: boolean;
  /** Carries the entry to the bootstrap; merge the caller's own data under `data`. */
  workerData?: { api: string; entry: string };
}

/**
 * The start of a worker whose entry is `script` (a `.ts` URL under tsx, the
 * `.js` one in a build). When given the `.ts` name while a compiled `.js`
 * exists beside it, the `.js` is used.
 */
export function workerStart(script: URL): WorkerStart {
  if (!script.pathname.endsWith('.ts')) return { target: script, eval: false };
  const js = new URL(script.href.replace(/\.ts$/, '.js'));
  if (existsSync(fileURLToPath(js))) return { target: js, eval: false };
  // tsx's ESM API, found through its package's exports map (require.resolve would give its CommonJS build).
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports;
  const api = new URL(exports['./esm/api']!.import.default, pathToFileURL(manifest)).href;
  const bootstrap = "const { workerData } = require('node:worker_threads'); import(workerData.api).then((tsx) => { tsx.register(); return import(workerData.entry); });";
  return { target: bootstrap, eval: true, workerData: { api, entry: script.href } };
}

/** The URL of a sibling module, `.js` when this file is compiled and `.ts` when it runs from source. */
export function siblingModule(name: string, base: string): URL {
  const extension = base.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${extension}`, base);
}
