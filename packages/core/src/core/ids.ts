/**
 * The one definition of a valid identifier — player, match, round, world,
 * ticket, key, ladder — shared by the match readers, the matchmaker, the CLI
 * and the service. An identifier is text a database, a log line and a JSON
 * document all hold unchanged: well-formed Unicode (a lone UTF-16 surrogate
 * would be stored as U+FFFD and alias another id), no control characters
 * (PostgreSQL cannot store U+0000 in text; the others corrupt logs and
 * terminals), and at most `MAX_ID_LENGTH` characters.
 */
import { InvalidInputError } from './errors.js';

export const MAX_ID_LENGTH = 200;

/** C0 controls, DEL and C1 controls. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `value` is not a valid identifier, or undefined when it is. */
export function identifierProblem(value: string, maxLength = MAX_ID_LENGTH): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (it holds a lone UTF-16 surrogate)';
  const control = CONTROL.exec(value);
  if (control) return `must not contain control characters (U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at position ${control.index})`;
  return undefined;
}

export function isIdentifier(value: string, maxLength = MAX_ID_LENGTH): boolean {
  return identifierProblem(value, maxLength) === undefined;
}

/** Returns `value` when it is a valid identifier; else throws InvalidInputError naming `field`. */
export function checkIdentifier(value: string, field: string, maxLength = MAX_ID_LENGTH): string {
  const problem = identifierProblem(value, maxLength);
  if (problem !== undefined) throw new InvalidInputError(problem, { field });
  return value;
}
