/**
 * The last test of a run (a project of its own in vitest.config.ts, started
 * when every other file has finished): the run left nothing behind. No row
 * in the public schema of the test database and no key under the service's
 * default Redis prefix `ladder:` (where a test that reached the service's
 * defaults would write), no schema or key carrying the run's id, and
 * nothing in the run's temporary folder. Each test file removes what it
 * made; the global teardown then removes the rest anyway, so a failure here
 * names the litter once and does not pile it up.
 */
import { describe, expect, it } from 'vitest';
import { findLeftovers } from './support/litter.js';
import { testDatabaseUrl, testRedisUrl } from './support/test-env.js';

describe('after every other test of the run', () => {
  it('nothing is left in the test database, the test Redis or the temporary folder', async () => {
    const run = process.env.LADDER_TEST_RUN;
    const runDir = process.env.LADDER_TEST_RUN_DIR;
    expect(run, 'LADDER_TEST_RUN (set by test/support/run-setup.ts)').toBeTruthy();
    expect(runDir, 'LADDER_TEST_RUN_DIR (set by test/support/run-setup.ts)').toBeTruthy();
    const left = await findLeftovers(run!, runDir!);
    expect(left.publicRows, `rows in the public schema of ${testDatabaseUrl()}`).toEqual([]);
    expect(left.defaultPrefixKeys, `keys under ladder: in ${testRedisUrl()}`).toEqual([]);
    expect(left.schemas, `schemas of this run in ${testDatabaseUrl()}`).toEqual([]);
    expect(left.keys, `keys of this run in ${testRedisUrl()}`).toEqual([]);
    expect(left.files, `entries in this run's temporary folder ${runDir}`).toEqual([]);
  });
});
