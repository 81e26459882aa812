// registerWeb serves the page, the client modules and uPlot, and nothing outside them.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, dashboardCsp } from '../../src/web/csp.js';
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
    for (const file of [
      'app.js',
      'api.js',
      'ui.js',
      'charts.js',
      'style.css',
      'pages/player.js',
      'pages/performance.js',
      'pages/matches.js',
      'pages/void.js',
      'pages/integrity.js',
    ]) {
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

  it('sends the Content Security Policy and nosniff with everything it serves, 404s included', async () => {
    for (const url of ['/', '/web/app.js', '/web/style.css', '/web/vendor/uPlot.esm.js', '/web/nothing.js', '/web/vendor/package.json']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.headers['content-security-policy'], url).toBe(dashboardCsp({ apiBase: '/api' }));
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});

describe('the dashboard Content Security Policy', () => {
  it('wins over a policy the service sets for all its answers', async () => {
    const service = Fastify();
    service.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
      return payload;
    });
    service.get('/v1/thing', async () => ({ ok: true }));
    await registerWeb(service, {});
    for (const url of ['/', '/web/app.js', '/web/nothing.js']) {
      expect((await service.inject({ method: 'GET', url })).headers['content-security-policy'], url).toBe(DASHBOARD_CSP);
    }
    expect((await service.inject({ method: 'GET', url: '/v1/thing' })).headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    await service.close();
  });

  it("allows only the dashboard's own origin, no inline code, no plugins, no framing", () => {
    const directives = Object.fromEntries(DASHBOARD_CSP.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]));
    expect(directives).toEqual({
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'font-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    });
    expect(DASHBOARD_CSP).not.toMatch(/unsafe-|\*/);
  });

  it('comes with the dashboard when it is registered as a plugin', async () => {
    const plugged = Fastify();
    await plugged.register(registerWeb, { path: '/board' });
    const page = await plugged.inject({ method: 'GET', url: '/board/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    await plugged.close();
  });

  it('lets the page call an API on another origin when apiBase names one', () => {
    expect(dashboardCsp({ apiBase: 'https://api.example.org/ladder' })).toContain("connect-src 'self' https://api.example.org;");
    expect(dashboardCsp({ apiBase: '/api' })).toBe(DASHBOARD_CSP);
  });

  it('the client holds nothing the policy refuses', () => {
    const root = findPublicDir();
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => /\.(html|js|css)$/.test(file));
    expect(files.length).toBeGreaterThan(8);
    const refused: Array<[RegExp, string]> = [
      [/<script(?![^>]*\bsrc=)[^>]*>/i, 'inline <script>'],
      [/<style[\s>]/i, 'inline <style>'],
      [/\sstyle\s*=\s*["'`]/i, 'style="..." attribute'],
      [/\bstyle\s*:\s*[`'"]/, 'h() style given as a string'],
      [/setAttribute\(\s*['"](style|on\w+)['"]/i, 'style or handler set as an attribute'],
      [/<[a-z][^>]*\son[a-z]+\s*=/i, 'on*= handler attribute'],
      [/javascript:/i, 'javascript: URL'],
      [/\beval\s*\(|new Function\s*\(|set(Timeout|Interval)\(\s*['"`]/, 'eval or code in a string'],
      [/\.innerHTML\s*=|insertAdjacentHTML|document\.write/, 'HTML built from strings'],
    ];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [pattern, what] of refused) expect(pattern.test(text), `${file}: ${what}`).toBe(false);
    }
  });
});
