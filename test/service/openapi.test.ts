/**
 * /openapi.json is usable by client generators: every operation has an
 * operationId, tags and a success schema; every live answer of every
 * operation matches the schema the document declares; and types generated
 * by openapi-typescript from the served document type-check a small client
 * (a response typed `never` would make the client's `@ts-expect-error` unused).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { client, startTestServer, type TestServer } from './helpers.js';
import { childEnv } from '../support/test-env.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let doc: { paths: Record<string, Record<string, { operationId: string; tags: string[]; security: unknown[]; responses: Record<string, { content?: Record<string, { schema: unknown }> }>; parameters?: Array<{ name: string; in: string; schema: { maximum?: number } }> }>> };

beforeAll(async () => {
  server = await startTestServer({ backend: 'pglite', options: { rateLimit: { perSecond: 1e6 } } });
  api = client(server.url, server.admin);
  doc = (await api.get('/openapi.json')).body;
});
afterAll(async () => {
  await server?.dispose();
});

/** The zod schema the route declares for a status. */
function declared(method: string, url: string, status: number): z.ZodType {
  const route = server.app.routeTable.find((r: RouteOptions) => r.url === url && (Array.isArray(r.method) ? r.method : [r.method]).includes(method));
  const body = route?.config?.operation?.responses[status];
  if (!body || typeof body === 'string') throw new Error(`${method} ${url} declares no JSON schema for ${status}`);
  return body;
}

describe('the OpenAPI document', () => {
  it('names, tags and types every operation, with public reads marked optional-auth and real limits', () => {
    const ids = new Set<string>();
    let operations = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        operations++;
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        expect(ids.has(op.operationId), `${op.operationId} twice`).toBe(false);
        ids.add(op.operationId);
        expect(op.tags.length, `${op.operationId} tags`).toBeGreaterThan(0);
        const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
        expect(success.length, `${op.operationId} success`).toBeGreaterThan(0);
        for (const [, response] of success) expect(Object.values(response.content ?? {})[0]?.schema, `${op.operationId} schema`).toBeDefined();
      }
    }
    expect(operations).toBeGreaterThanOrEqual(21);
    expect(doc.paths['/v1/ladders/{ladder}/leaderboard']!.get!.security).toEqual([{}, { bearer: [] }]);
    expect(doc.paths['/v1/ladders/{ladder}/matches']!.post!.security).toEqual([{ bearer: [] }]);
    const limit = doc.paths['/v1/ladders/{ladder}/leaderboard']!.get!.parameters!.find((p) => p.name === 'limit')!;
    expect(limit.schema.maximum).toBe(500);
    expect(JSON.stringify(doc)).not.toContain('SYSTEMS.md');
  });

  it('matches every live answer', async () => {
    const check = (method: string, url: string, status: number, reply: { status: number; body: unknown }) => {
      expect(reply.status, `${method} ${url}: ${JSON.stringify(reply.body).slice(0, 200)}`).toBe(status);
      const parsed = declared(method, url, status).safeParse(reply.body);
      expect(parsed.success, `${method} ${url}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 3))}`).toBe(true);
    };
    check('GET', '/healthz', 200, await api.get('/healthz'));
    check('GET', '/v1/systems', 200, await api.get('/v1/systems'));
    check('POST', '/v1/keys', 201, await api.post('/v1/keys', { name: 'reader', scopes: ['read'] }));
    const keys = await api.get('/v1/keys');
    check('GET', '/v1/keys', 200, keys);
    check('POST', '/v1/ladders', 201, await api.post('/v1/ladders', { id: 'oa', system: 'glicko2', public: true, standings: { placementMatches: 0 } }));
    await api.post('/v1/ladders', { id: 'oa-w', system: 'wvw', public: true });
    check('GET', '/v1/ladders', 200, await api.get('/v1/ladders'));
    check('GET', '/v1/ladders/:ladder', 200, await api.get('/v1/ladders/oa'));
    check('POST', '/v1/ladders/:ladder/matches', 201, await api.post('/v1/ladders/oa/matches', { teams: [{ players: ['ann'], rank: 1 }, { players: ['bob'], rank: 2 }] }));
    check('GET', '/v1/ladders/:ladder/matches', 200, await api.get('/v1/ladders/oa/matches'));
    check('GET', '/v1/ladders/:ladder/players/:player', 200, await api.get('/v1/ladders/oa/players/ann'));
    check('GET', '/v1/ladders/:ladder/players/:player/history', 200, await api.get('/v1/ladders/oa/players/ann/history'));
    check('GET', '/v1/ladders/:ladder/leaderboard', 200, await api.get('/v1/ladders/oa/leaderboard?search=a'));
    check('POST', '/v1/ladders/:ladder/rounds', 201, await api.post('/v1/ladders/oa-w/rounds', { matches: [{ worlds: { A: 3, B: 2, C: 1 } }] }));
    check('GET', '/v1/ladders/:ladder/rounds', 200, await api.get('/v1/ladders/oa-w/rounds'));
    const ticket = await api.post('/v1/ladders/oa/tickets', { players: [{ id: 'ann', pings: { eu: 20 } }] });
    check('POST', '/v1/ladders/:ladder/tickets', 201, ticket);
    check('GET', '/v1/tickets/:id', 200, await api.get(`/v1/tickets/${ticket.body.ticket.id}`));
    check('GET', '/v1/ladders/:ladder/queue', 200, await api.get('/v1/ladders/oa/queue'));
    check('DELETE', '/v1/tickets/:id', 200, await api.del(`/v1/tickets/${ticket.body.ticket.id}`));
    const backfill = await api.post('/v1/ladders/oa/backfills', { declared: true, match: 'live-1', region: 'eu', teams: [['cy'], []] });
    check('POST', '/v1/ladders/:ladder/backfills', 201, backfill);
    await api.post('/v1/ladders/oa/tickets', { id: 'oa-fill', players: [{ id: 'dee', pings: { eu: 20 } }] });
    await server.matchmakeNow();
    check('GET', '/v1/backfills/:id', 200, await api.get(`/v1/backfills/${backfill.body.id}`));
    const filledTicket = await api.get('/v1/tickets/oa-fill');
    check('GET', '/v1/tickets/:id', 200, filledTicket);
    expect(filledTicket.body.match.backfill).toBe(backfill.body.id);
    check('GET', '/v1/ladders/:ladder/queue', 200, await api.get('/v1/ladders/oa/queue'));
    check('DELETE', '/v1/backfills/:id', 200, await api.del(`/v1/backfills/${(await api.post('/v1/ladders/oa/backfills', { declared: true, match: 'live-2', region: 'eu', teams: [['eve'], []] })).body.id}`));
    check('POST', '/v1/performance', 200, await api.post('/v1/performance', { games: [{ opponent: 1500, result: 'win' }, { opponent: 1400, result: 'loss' }] }));
    check('DELETE', '/v1/keys/:id', 200, await api.del(`/v1/keys/${keys.body.keys.at(-1).id}`));
  });

  it('generates TypeScript types with openapi-typescript that a small client type-checks against', async () => {
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const dir = mkdtempSync(join(tmpdir(), 'ladder-openapi-'));
    try {
      writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc as never)));
      writeFileSync(
        join(dir, 'client.ts'),
        `import type { paths } from './api.js';
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { 'application/json': infer T } } } } ? T : never;
type Board = Json<'/v1/ladders/{ladder}/leaderboard', 'get', 200>;
type Rated = Json<'/v1/ladders/{ladder}/matches', 'post', 201>;
export function best(board: Board): string | undefined {
  const total: number = board.total;
  // @ts-expect-error a leaderboard has no such field (fails if the type were never or any)
  void board.noSuchField;
  return total > 0 ? board.entries[0]?.id : undefined;
}
export function firstAfter(rated: Rated): number | undefined {
  return rated.players[0]?.after.rating;
}
type Body = paths['/v1/ladders/{ladder}/matches']['post']['requestBody'];
export const body: NonNullable<Body>['content']['application/json'] = { teams: [{ players: ['a'], rank: 1 }, { players: ['b'], rank: 2 }] };
`,
      );
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', skipLibCheck: false, types: [] }, files: ['client.ts', 'api.d.ts'] }));
      const tsc = join(import.meta.dirname, '../../node_modules/typescript/bin/tsc');
      let output = '';
      try {
        execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', env: childEnv() });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout ?? error);
      }
      expect(output).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
