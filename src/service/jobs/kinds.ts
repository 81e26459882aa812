/**
 * Every kind of job the service's workers run: one entry each. Adding a
 * kind is a module exporting a pure function of plain data (no I/O, no
 * class instances in or out: inputs and outputs are structured-cloned) and
 * one line here; the worker (worker.ts) and inline runs read this table.
 */
import { balanceJob } from './balance-job.js';
import { integrityJob } from './integrity-job.js';
import { predictJob } from './predict-job.js';

export const JOB_KINDS = Object.freeze({
  balance: balanceJob,
  predict: predictJob,
  integrity: integrityJob,
});

export type ServiceJobKinds = typeof JOB_KINDS;
export type JobKind = keyof ServiceJobKinds;
