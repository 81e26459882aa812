/**
 * A match that received 2xx is never lost and never counted twice: the
 * server (a child process) is killed with SIGKILL in the middle of a stream
 * of submissions, restarted on the same data, every submission not
 * acknowledged is sent again with the same Idempotency-Key (and a few
 * acknowledged ones too), and the stored ratings must equal a replay of the
 * acknowledged matches in the server's order.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMatch } from 'ladder-core/core/match.js';
import { Replay } from 'ladder-core/core/replay.js';
import { createSystem } from 'ladder-core/core/systems.js';
import { mulberry32 } from 'ladder-core/core/random.js';
import { startServe } from '../support/serve.js';
import { ADMIN_KEY, BACKENDS, cleanupShared, client, DATABASE_URL, freshDataDir, REDIS_URL, uniqueName, type Backend } from './helpers.js';

function startChild(env: Record<string, string>, dataDir: string | undefined) {
  return startServe({ args: ['--no-matchmaking-warm-up', ...(dataDir ? ['--data', dataDir] : [])], env: { LADDER_ADMIN_KEY: ADMIN_KEY, ...env } });
}

function generate(count: number) {
  const random = mulberry32(99);
  const start = Date.now() - count * 1000;
  return Array.from({ length: count }, (_, i) => {
    const a = Math.floor(random() * 10);
    const b = (a + 1 + Math.floor(random() * 9)) % 10;
    return {
      key: `crash-${i}`,
      body: {
        id: `k${i}`,
        at: start + i * 1000,
        teams: [
          { players: [`p${a}`], rank: 1 },
          { players: [`p${b}`], rank: 2 },
        ],
      },
    };
  });
}

describe.each(BACKENDS)('SIGKILL in the middle of submissions on %s', (backend: Backend) => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('loses no acknowledged match and counts none twice', async () => {
    const dataDir = backend === 'pglite' ? await freshDataDir() : undefined;
    const schema = backend === 'pglite' ? undefined : uniqueName('ladder_crash');
    const prefix = backend === 'pglite' ? undefined : `${uniqueName('lc')}:`;
    const env: Record<string, string> = backend === 'pglite' ? {} : { DATABASE_URL, DATABASE_SCHEMA: schema!, REDIS_URL, REDIS_PREFIX: prefix! };
    cleanup.push(() => cleanupShared(schema, prefix));
    if (dataDir) cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));

    let server = await startChild(env, dataDir);
    cleanup.push(() => {
      server.child.kill('SIGKILL');
    });
    let api = client(server.url, ADMIN_KEY);
    expect((await api.post('/v1/ladders', { id: 'crash', system: 'glicko2' })).status).toBe(201);

    const submissions = generate(300);
    const acknowledged = new Map<string, number>();
    let next = 0;
    let killed = false;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        while (next < submissions.length && !killed) {
          const s = submissions[next++]!;
          try {
            const reply = await api.post('/v1/ladders/crash/matches', s.body, { 'idempotency-key': s.key });
            if (reply.status === 201) acknowledged.set(s.key, reply.body.match.seq);
          } catch {
            // Connection reset by the kill: not acknowledged.
          }
          if (!killed && acknowledged.size >= 120) {
            killed = true;
            server.child.kill('SIGKILL');
          }
        }
      }),
    );
    expect(killed).toBe(true);
    await new Promise((resolve) => (server.child.exitCode !== null || server.child.signalCode !== null ? resolve(null) : server.child.once('exit', resolve)));
    const acknowledgedBeforeKill = new Map(acknowledged);

    server = await startChild(env, dataDir);
    api = client(server.url, ADMIN_KEY);
    // Every acknowledged match survived the kill.
    const stored = (await api.get('/v1/ladders/crash')).body.matches as number;
    expect(stored).toBeGreaterThanOrEqual(acknowledgedBeforeKill.size);
    // Resend everything not acknowledged, plus every acknowledged one (must not rate again).
    for (const s of submissions) {
      const reply = await api.post('/v1/ladders/crash/matches', s.body, { 'idempotency-key': s.key });
      expect(reply.status).toBe(201);
      if (acknowledgedBeforeKill.has(s.key)) expect(reply.body.match.seq).toBe(acknowledgedBeforeKill.get(s.key));
      acknowledged.set(s.key, reply.body.match.seq);
    }
    expect((await api.get('/v1/ladders/crash')).body.matches).toBe(submissions.length);
    expect(new Set(acknowledged.values()).size).toBe(submissions.length);

    const ordered = [...submissions].sort((x, y) => acknowledged.get(x.key)! - acknowledged.get(y.key)!);
    const replay = new Replay(createSystem('glicko2'));
    for (const s of ordered) replay.push(parseMatch(s.body));
    for (const [id, state] of replay.players) {
      const player = (await api.get(`/v1/ladders/crash/players/${id}`)).body;
      expect(player.matches).toBe(state.matches);
      expect(player.rating).toBeCloseTo(state.rating, 9);
      expect(player.rd).toBeCloseTo(state.rd!, 9);
    }
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  });
});
