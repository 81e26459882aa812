/**
 * Typed routes from zod schemas: a Fastify type provider (handlers see
 * `request.body`, `params` and `query` as the schemas' output types) and the
 * validator compiler that runs those schemas, turning the first issue into an
 * InvalidInputError that names the field.
 */
import type { FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import type { z } from 'zod';
import { InvalidInputError } from 'ladder-core/core/errors.js';
import { validate } from '../schemas.js';

export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

/** Which part of the request a schema checks, for errors that name no deeper field. */
const PART: Record<string, string> = { body: 'body', params: 'path', querystring: 'query', headers: 'headers' };

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data: unknown) => {
    try {
      return { value: validate(schema, data, PART[httpPart ?? 'body'] ?? 'body') };
    } catch (error) {
      if (error instanceof InvalidInputError) return { error };
      throw error;
    }
  };
