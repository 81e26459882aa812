import { expect } from 'vitest';
import { InvalidInputError } from 'ladder-core/core/errors.js';

/** Runs `run`, expects an InvalidInputError and returns the field it names. */
export function invalidField(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).field;
  }
  throw new Error('expected an InvalidInputError');
}
