/** The entry module of the service's worker threads (see pool.ts). */
import { JOB_KINDS } from './kinds.js';
import { lowerThreadPriority, serveJobs } from './serve.js';

// Four clients looping 64-player balances on a 2-core machine: the other ladders' write p50 was 241 ms with the worker at the same priority, 152 ms at nice 10 (38 ms with no balances).
lowerThreadPriority(10);
serveJobs(JOB_KINDS);
