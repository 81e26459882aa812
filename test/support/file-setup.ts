/**
 * Vitest setup file, run in the worker before each test file: the service's
 * variables are removed again (the global setup removed them from the
 * process the workers come from; this keeps it so whatever starts the
 * worker), and after the file's own hooks everything the file registered
 * (schemas, Redis keys, temporary folders) is removed, pass or fail.
 */
import { afterAll } from 'vitest';
import { sweepOwned } from './litter.js';
import { stripServiceVariables } from './test-env.js';

stripServiceVariables();

// Registered before the file's hooks, so it runs after them (hooks run in stack order).
afterAll(sweepOwned);
