/**
 * Validates live answers against the JSON Schema /openapi.json declares,
 * with Ajv in strict mode (unknown keywords, formats and loose types are
 * errors, so a schema Ajv cannot read fails the test instead of passing
 * everything).
 *
 * The document is OpenAPI 3.0, whose schemas are JSON Schema plus
 * `nullable`; Ajv reads standard JSON Schema. The conversion follows the
 * OpenAPI 3.0.3 meaning of `nullable`: it adds null to the allowed types,
 * and an `enum` beside it still restricts the value, so a nullable enum
 * that does not list null refuses null. Hence
 * `{type, nullable: true, ...rest}` becomes `{anyOf: [{type, ...rest}, {type: 'null'}]}`,
 * with any `enum` kept outside the anyOf. References to
 * `#/components/schemas/*` are inlined (the only ones the document uses).
 */
import { Ajv, type ValidateFunction } from 'ajv';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaNode = { [key: string]: Json };

export interface OpenApiDocument {
  components?: { schemas?: Record<string, Json> };
  paths: Record<string, Record<string, OpenApiOperation>>;
  [key: string]: unknown;
}

export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  security: unknown[];
  responses: Record<string, { description?: string; content?: Record<string, { schema: Json }> }>;
  parameters?: Array<{ name: string; in: string; schema: { maximum?: number } }>;
  [key: string]: unknown;
}

/** An OpenAPI 3.0 schema as the JSON Schema Ajv validates. */
export function toJsonSchema(schema: Json, components: Record<string, Json> = {}, seen: readonly string[] = []): Json {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, components, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
    if (name === undefined || !(name in components)) throw new Error(`unresolvable $ref ${ref}`);
    if (seen.includes(name)) throw new Error(`recursive $ref ${ref}`);
    return toJsonSchema(components[name]!, components, [...seen, name]);
  }
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) {
    // Under `properties` the keys are property names, not keywords.
    if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toJsonSchema(sub, components, seen)]));
    } else {
      out[key] = toJsonSchema(value, components, seen);
    }
  }
  if (out.nullable === undefined) return out;
  const { nullable, enum: allowed, description, ...rest } = out;
  if (nullable !== true) return rest;
  return {
    ...(description !== undefined ? { description } : {}),
    anyOf: [rest, { type: 'null' }],
    ...(allowed !== undefined ? { enum: allowed } : {}),
  };
}

/** Validators of every declared answer of a document, by operation and status. */
export class AnswerValidator {
  private readonly ajv = new Ajv({ strict: true, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {}

  /** The operation at an OpenAPI path (`/v1/ladders/{ladder}`) and method. */
  operation(method: string, path: string): OpenApiOperation {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`the document has no ${method} ${path}`);
    return op;
  }

  /**
   * Problems of an answer against what its operation declares for its
   * status: '' when it validates. A status the operation does not declare,
   * or a media type other than the declared one, is a problem too.
   */
  problems(method: string, path: string, answer: { status: number; contentType: string; body: unknown }): string {
    const op = this.operation(method, path);
    const declared = op.responses[String(answer.status)];
    if (!declared) return `${op.operationId} does not declare status ${answer.status} (declares ${Object.keys(op.responses).join(', ')})`;
    const media = Object.keys(declared.content ?? {});
    const type = answer.contentType.split(';')[0]!.trim();
    if (!media.includes(type)) return `${op.operationId} ${answer.status}: content type ${type}, declared ${media.join(', ')}`;
    const key = `${op.operationId} ${answer.status} ${type}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(declared.content![type]!.schema, this.doc.components?.schemas) as object);
      this.cache.set(key, validate);
    }
    if (validate(answer.body)) return '';
    return `${key}: ${this.ajv.errorsText(validate.errors?.slice(0, 5), { separator: '; ' })}`;
  }
}
