// registerWeb serves the page, the client modules and uPlot, and nothing outside them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPublicDir, registerWeb } from '../../src/web/index.js';

const app = Fastify();
beforeAll(async () => {
  await registerWeb(app, { apiBase: '/api' });
});
afterAll(() => app.close());

describe('registerWeb', () => {
  it('serves the page with the API base and asset paths filled in', async () => {
    const response = await app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.body).toContain('<meta name="ladder-api-base" content="/api">');
    expect(response.body).toContain('src="/web/app.js"');
    expect(response.body).not.toContain('__ASSETS__');
  });

  it('serves every client module the page imports', async () => {
    for (const file of ['app.js', 'api.js', 'ui.js', 'charts.js', 'style.css', 'pages/player.js', 'pages/performance.js']) {
      const response = await app.inject({ method: 'GET', url: `/web/${file}` });
      expect(response.statusCode, file).toBe(200);
      expect(response.body).toBe(readFileSync(join(findPublicDir(), file), 'utf8'));
    }
  });

  it('serves uPlot from node_modules', async () => {
    const uplotDist = dirname(createRequire(import.meta.url).resolve('uplot'));
    const response = await app.inject({ method: 'GET', url: '/web/vendor/uPlot.esm.js' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/javascript/);
    expect(response.body).toBe(readFileSync(join(uplotDist, 'uPlot.esm.js'), 'utf8'));
  });

  it('refuses paths outside the client folder and unknown file types', async () => {
    for (const url of ['/web/../index.ts', '/web/%2e%2e/index.ts', '/web/..%2f..%2fpackage.json', '/web/vendor/package.json', '/web/nothing.js']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
    }
  });

  it('mounts under a prefix', async () => {
    const prefixed = Fastify();
    await registerWeb(prefixed, { path: '/dashboard' });
    const page = await prefixed.inject({ method: 'GET', url: '/dashboard/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('src="/dashboard/web/app.js"');
    expect((await prefixed.inject({ method: 'GET', url: '/dashboard' })).statusCode).toBe(200);
    expect((await prefixed.inject({ method: 'GET', url: '/dashboard/web/app.js' })).statusCode).toBe(200);
    await prefixed.close();
  });
});
