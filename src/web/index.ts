/**
 * The web dashboard: a single HTML page with hash routing and hand-written ES
 * modules, served straight from the source tree so nobody has to run a bundler.
 * The page talks to the service's own `/v1` API from the browser.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardSecurityHeaders } from './csp.js';

export interface WebOptions {
  /**
   * Where the dashboard page is mounted. Assets live under `<path>web/`.
   * @default '/'
   */
  path?: string;
  /**
   * Base URL of the JSON API as the browser should call it.
   * @default '' (same origin as the dashboard)
   */
  apiBase?: string;
  /**
   * Folder holding index.html, app.js and the rest of the client. Found next
   * to this module when run from source, or in `src/web/public` when run from
   * `dist/web`.
   * @default the folder found by {@link findPublicDir}
   */
  publicDir?: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

/**
 * The client folder. tsc compiles only .ts files into dist/, so when this
 * module runs from dist/web the hand-written client is still in src/web/public.
 */
export function findPublicDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'public'), join(here, '..', '..', 'src', 'web', 'public')];
  for (const candidate of candidates) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`web dashboard files not found; looked in ${candidates.join(', ')}`);
}

/** uPlot's browser build, resolved the way Node resolves the package. */
export function findUplotDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('uplot'));
}

/** Only files under `root`; rejects `..` and absolute paths. */
function safeJoin(root: string, relative: string): string | undefined {
  const target = normalize(join(root, relative));
  return target.startsWith(root + sep) ? target : undefined;
}

async function sendFile(reply: FastifyReply, file: string | undefined): Promise<FastifyReply> {
  const type = file ? CONTENT_TYPES[extname(file)] : undefined;
  if (!file || !type) return reply.code(404).send({ error: { code: 'not_found', message: 'no such file' } });
  try {
    const body = await readFile(file);
    // Short cache: files change with the source tree during development.
    return reply.type(type).header('cache-control', 'no-cache').send(body);
  } catch {
    return reply.code(404).send({ error: { code: 'not_found', message: 'no such file' } });
  }
}

/**
 * Serves the dashboard on a Fastify app: the page at `path`, client modules at
 * `<path>web/*` and uPlot at `<path>web/vendor/*`. Every response it serves,
 * 404s included, carries the dashboard's Content Security Policy (src/web/csp.ts)
 * and `x-content-type-options: nosniff`. Works called directly or as a plugin
 * (`app.register(registerWeb, options)`).
 */

export async function registerWeb(app: FastifyInstance, options: WebOptions = {}): Promise<void> {
  const mount = (options.path ?? '/').replace(/\/?$/, '/');
  const publicDir = options.publicDir ?? findPublicDir();
  const uplotDir = findUplotDir();
  const apiBase = options.apiBase ?? '';
  const security = dashboardSecurityHeaders({ apiBase });
  // A route-level onSend hook runs after every app-wide one, so the dashboard's policy is the one its
  // responses carry even when the service sets a stricter default for its JSON answers; and it runs for
  // the 404s and errors of these routes too.
  const route = {
    onSend: async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      reply.headers(security);
      return payload;
    },
  };
  const vendorFiles: Record<string, string> = {
    'uPlot.esm.js': join(uplotDir, 'uPlot.esm.js'),
    'uPlot.min.css': join(uplotDir, 'uPlot.min.css'),
  };

  const page = async (_request: unknown, reply: FastifyReply) => {
    const html = await readFile(join(publicDir, 'index.html'), 'utf8');
    // The page reads its API base from a meta tag, so one client works behind any prefix.
    const withBase = html.replace('__API_BASE__', escapeAttribute(apiBase)).replaceAll('__ASSETS__', `${mount}web/`);
    return reply.type(CONTENT_TYPES['.html']).header('cache-control', 'no-cache').send(withBase);
  };
  app.get(mount, route, page);
  if (mount !== '/') app.get(mount.slice(0, -1), route, page);

  app.get(`${mount}web/vendor/:file`, route, async (request, reply) => {
    const { file } = request.params as { file: string };
    return sendFile(reply, vendorFiles[file]);
  });
  app.get(`${mount}web/*`, route, async (request, reply) => {
    const { '*': rest } = request.params as { '*': string };
    return sendFile(reply, safeJoin(publicDir, rest));
  });
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
