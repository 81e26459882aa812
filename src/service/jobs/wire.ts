/**
 * Errors across the thread boundary. Structured cloning keeps an Error's
 * message but not its class or its properties, and the HTTP edge maps by
 * class (an InvalidInputError is a 400 naming its field): a job that throws
 * in a worker must answer exactly as it would have inline.
 */
import { ConvergenceError, InvalidInputError, LadderError } from 'ladder-core/core/errors.js';

export interface WireError {
  name: string;
  message: string;
  /** InvalidInputError's message without its prefix. */
  detail?: string;
  field?: string;
  line?: number;
  /** Whether it was a LadderError (raised on purpose) of a class not rebuilt by name. */
  ladder: boolean;
}

/** A job's request to a worker. */
export interface JobMessage {
  id: number;
  kind: string;
  input: unknown;
}

/** A worker's answer to one job, or its first message once its modules are loaded. */
export type JobReply = { id: number; ok: true; output: unknown } | { id: number; ok: false; error: WireError } | { ready: true };

export function toWire(error: unknown): WireError {
  if (error instanceof InvalidInputError) return { name: error.name, message: error.message, detail: error.detail, field: error.field, line: error.line, ladder: true };
  if (error instanceof Error) return { name: error.name, message: error.message, ladder: error instanceof LadderError };
  return { name: 'Error', message: String(error), ladder: false };
}

export function fromWire(wire: WireError): Error {
  if (wire.name === 'InvalidInputError') return new InvalidInputError(wire.detail ?? wire.message, { field: wire.field, line: wire.line });
  if (wire.name === 'ConvergenceError') return new ConvergenceError(wire.message);
  const error = wire.ladder ? new LadderError(wire.message) : new Error(wire.message);
  error.name = wire.name;
  return error;
}
