/**
 * The writer's ordered connection on PostgreSQL keeps its statements in
 * order itself: pg deprecates handing a client a query while it runs one
 * ("Calling client.query() when the client is already executing a query",
 * removed in pg 9), so nothing of Ladder may take that path: a burst of
 * matches on several ladders, two batches of each in flight, prints no
 * deprecation warning (pg warns once per process: one test per file).
 * The connection itself: ordered-statements.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanupShared, client, startTestServer } from './helpers.js';

const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
beforeAll(() => {
  process.on('warning', onWarning);
});
afterAll(() => {
  process.off('warning', onWarning);
});

it('writes a burst of matches on three ladders with two batches in flight each and no deprecation warning', { timeout: 60_000 }, async () => {
  const server = await startTestServer({ backend: 'postgres+redis', options: { rateLimit: { perSecond: 1e6 } } });
  try {
    const api = client(server.url, server.admin);
    for (const id of ['o1', 'o2', 'o3']) expect((await api.post('/v1/ladders', { id, system: 'glicko2', public: true })).status).toBe(201);
    const replies = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        api.post(`/v1/ladders/o${(i % 3) + 1}/matches`, {
          teams: [
            { players: [`p${i % 7}`], rank: 1 },
            { players: [`p${(i % 7) + 1}`], rank: 2 },
          ],
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 201));
    for (const id of ['o1', 'o2', 'o3']) expect((await api.get(`/v1/ladders/${id}`)).body.matches).toBe(50);
    expect(server.writer.writes.fast).toBeGreaterThan(0);
  } finally {
    await server.dispose();
    await cleanupShared(server.schema, server.prefix);
  }
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.filter((w) => w.startsWith('DeprecationWarning'))).toEqual([]);
});
