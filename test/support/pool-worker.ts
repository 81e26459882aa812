/** A worker entry for the pool's tests: the test kinds behind the service's own loop. */
import { lowerThreadPriority, serveJobs } from '../../src/service/jobs/serve.js';
import { TEST_KINDS } from './pool-kinds.js';

lowerThreadPriority(10);
serveJobs(TEST_KINDS);
