import { defineConfig } from 'vitest/config';
import { conditions, useSourceCondition } from './test/support/source-condition.js';

useSourceCondition();

/** Runs after every other test file of a run: it lists what the run left behind. */
const LEFTOVERS = 'test/leftovers.test.ts';

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // Builds dist/ if a fresh clone has none (test/package.test.ts packs it); then strips the
    // service's variables and gives the run its id and temporary folder (test/support/test-env.ts).
    globalSetup: ['test/support/build-dist.ts', 'test/support/run-setup.ts'],
    setupFiles: ['test/support/file-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'ladder', include: ['src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'test/**/*.test.ts'], exclude: [LEFTOVERS] } },
      // A later group: starts when every file of the first has finished.
      { extends: true, test: { name: 'leftovers', include: [LEFTOVERS], sequence: { groupOrder: 1 } } },
    ],
  },
});
