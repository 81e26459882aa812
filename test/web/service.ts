/** The real service, in process, on a free port, with PGlite in a temporary folder. */
import { rmSync } from 'node:fs';
import { startService as startLadderService } from '../../src/service/index.js';
import { registerWeb } from '../../src/web/index.js';
import { ADMIN_KEY } from './seed.js';
import { tempDir } from '../support/litter.js';

export interface RunningService {
  url: string;
  matchmakeNow(): Promise<number>;
  close(): Promise<void>;
}

export async function startService(): Promise<RunningService> {
  const dataDir = tempDir('ladder-web-test-');
  const service = await startLadderService({
    port: 0,
    dataDir,
    adminKey: ADMIN_KEY,
    // The seed posts a few hundred requests in a burst.
    rateLimit: { perSecond: 100_000, burst: 100_000 },
    // Tests trigger matchmaking themselves, so the queue holds still while asserted.
    matchmakingIntervalMs: 3_600_000,
    plugins: [(app) => registerWeb(app)],
  });
  return {
    url: service.url,
    matchmakeNow: service.matchmakeNow,
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
