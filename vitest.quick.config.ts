import { defineConfig } from 'vitest/config';
import { conditions, useSourceCondition } from './test/support/source-condition.js';

/**
 * `npm run test:quick`: the pure units (rating core, standings, matchmaking,
 * match files, the CLI run from source), with no PostgreSQL, Redis, service
 * or browser, so no `pretest` preparation and no dist/ build. Leaves out the
 * cross-system conformance suite (minutes of property runs) and the files
 * whose every test starts the `ladder` command as a child process (a second
 * or so each under tsx: half the quick run's time); the in-process tests of
 * the same commands stay. `npm test` runs everything.
 */
useSourceCondition();

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: [
      'packages/core/src/core/**/*.test.ts',
      'packages/core/src/standings/**/*.test.ts',
      'packages/core/src/matchmaking/**/*.test.ts',
      'test/io/**/*.test.ts',
      'test/cli/replay*.test.ts',
      'test/cli/progress.test.ts',
      'test/matchmaking/**/*.test.ts',
      'test/cli-performance.test.ts',
    ],
    exclude: ['packages/core/src/core/conformance.test.ts', 'test/matchmaking/cli.test.ts', 'test/matchmaking/cli-rule-set.test.ts'],
    globalSetup: ['test/support/run-setup.ts'],
    setupFiles: ['test/support/file-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
