/** The entry module of the service's worker threads (see pool.ts). */
import { JOB_KINDS } from './kinds.js';
import { serveJobs } from './serve.js';

serveJobs(JOB_KINDS);
