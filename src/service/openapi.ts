/**
 * /openapi.json and the /docs page, built from the routes as registered: each
 * route's zod schemas (params, query, body) and its `config.operation`
 * (operationId, tags, auth, response schemas, examples). One source, so the
 * document cannot drift from what the server accepts and answers.
 */
import type { RouteOptions as FastifyRouteOptions } from 'fastify';
import { z } from 'zod';
import { errorResponse } from './responses.js';

/** Who may call an operation. */
export type OperationAuth = 'none' | 'public ladder or read' | 'read' | 'write' | 'correct' | 'admin';

export interface OperationDoc {
  operationId: string;
  tags: string[];
  summary: string;
  auth: OperationAuth;
  /** Success answers: a zod schema of the JSON body, or a media type for other bodies. */
  responses: Record<number, z.ZodType | 'text/plain' | 'text/html' | 'text/event-stream'>;
  /** Request headers the operation reads. */
  headers?: string[];
  /** An example request body. */
  example?: unknown;
  /** Error statuses beyond those its auth and input imply. */
  errors?: number[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    operation?: OperationDoc;
  }
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input; `field` names the offending field',
  401: 'An unknown or revoked API key (refused on every operation, even one that needs none), or no key where one is needed',
  403: 'The key lacks the scope, or is limited to other ladders',
  404: 'Not found (a private ladder answers so to a caller who may not read it)',
  409: 'Conflicts with what is stored',
  410: 'Gone: lost with the queue\'s shared state (`reason: "queue-lost"`)',
  413: 'Body too large',
  415: 'The body is not sent as application/json',
  429: 'Rate limited; see Retry-After',
  503: 'A dependency (database, Redis) is unavailable; retry after Retry-After',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): unknown {
  return nullableEnums(z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }));
}

/**
 * OpenAPI 3.0.3 says `nullable` adds null to the types but not to an `enum`:
 * a nullable enum must list null itself, or a strict validator refuses null
 * (zod leaves it out).
 */
function nullableEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableEnums);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = nullableEnums(value);
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

/** The OpenAPI path (`/v1/ladders/{ladder}`) of a Fastify route (`/v1/ladders/:ladder`). */
function openApiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

function errorStatuses(doc: OperationDoc, hasInput: boolean, hasBody: boolean): number[] {
  // A presented key is verified before any route runs (src/service/http/access.ts): a bad one is 401 everywhere.
  const statuses = [401, 429, 503];
  if (hasInput) statuses.push(400);
  // Public reads too: a key limited to other ladders is refused (403), a private ladder hidden (404).
  if (doc.auth !== 'none') statuses.push(403, 404);
  if (doc.auth === 'write' || doc.auth === 'correct' || doc.auth === 'admin') statuses.push(409);
  if (hasInput) statuses.push(413);
  if (hasBody) statuses.push(415);
  statuses.push(...(doc.errors ?? []));
  return [...new Set(statuses)].sort();
}

export function buildOpenApi(routes: readonly FastifyRouteOptions[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const doc = route.config?.operation;
    if (!doc) continue;
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toLowerCase()).filter((m) => m !== 'head');
    const schema = (route.schema ?? {}) as { params?: z.ZodObject; querystring?: z.ZodObject; body?: z.ZodType };
    const parameters: unknown[] = [];
    for (const [name, value] of Object.entries(schema.params?.shape ?? {})) parameters.push({ name, in: 'path', required: true, schema: jsonSchema(value as z.ZodType, 'input') });
    for (const [name, value] of Object.entries(schema.querystring?.shape ?? {}))
      parameters.push({ name, in: 'query', required: false, schema: jsonSchema(value as z.ZodType, 'input') });
    for (const name of doc.headers ?? []) parameters.push({ name, in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 200 } });
    const responses: Record<string, unknown> = {};
    for (const [status, body] of Object.entries(doc.responses)) {
      responses[status] =
        typeof body === 'string'
          ? { description: body, content: { [body]: { schema: { type: 'string' } } } }
          : { description: 'Success', content: { 'application/json': { schema: jsonSchema(body, 'output') } } };
    }
    const hasInput = schema.body !== undefined || schema.params !== undefined || schema.querystring !== undefined;
    for (const status of errorStatuses(doc, hasInput, schema.body !== undefined)) {
      responses[String(status)] = { description: ERROR_DESCRIPTIONS[status], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    const security = doc.auth === 'none' ? [] : doc.auth === 'public ladder or read' ? [{}, { bearer: [] }] : [{ bearer: [] }];
    for (const method of methods) {
      paths[openApiPath(route.url)] ??= {};
      paths[openApiPath(route.url)]![method] = {
        operationId: doc.operationId,
        tags: doc.tags,
        summary: doc.summary,
        description: `Auth: ${doc.auth}.`,
        security,
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(schema.body
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: jsonSchema(schema.body, 'input'), ...(doc.example !== undefined ? { example: doc.example } : {}) } },
              },
            }
          : {}),
        responses,
      };
    }
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Ladder', version: '0.1.0', description: 'Ratings, standings and matchmaking for competitive online games.' },
    // Relative: the server that serves this document, whatever name or proxy it is reached through.
    servers: [{ url: '/' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: { Error: jsonSchema(errorResponse, 'output') } },
    security: [{ bearer: [] }],
    paths,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The reference page's style, inline; the page's content security policy allows exactly this text by its hash. */
export const DOCS_STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}h2{font-size:1rem;margin:1.5rem 0 .3rem}pre{background:#f5f5f5;padding:.6rem;overflow:auto;font-size:12px}section{border-top:1px solid #ddd}';

type DocOperation = {
  operationId: string;
  summary: string;
  description: string;
  requestBody?: { content: { 'application/json': { schema: unknown; example?: unknown } } };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};

/** A self-contained reference page: every operation, who may call it, an example request and its schemas. */
export function docsPage(openapi: Record<string, unknown>): string {
  const paths = openapi.paths as Record<string, Record<string, DocOperation>>;
  const sections = Object.entries(paths)
    .flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => {
        const body = op.requestBody?.content['application/json'];
        const example =
          body?.example !== undefined
            ? `<p>Example:</p><pre>curl -X ${method.toUpperCase()} http://127.0.0.1:8080${escapeHtml(path)} -H 'Authorization: Bearer $KEY' -H 'Content-Type: application/json' \\\n  -d '${escapeHtml(JSON.stringify(body.example))}'</pre>`
            : '';
        const request = body ? `<details><summary>Request body schema</summary><pre>${escapeHtml(JSON.stringify(body.schema, null, 2))}</pre></details>` : '';
        const [status, ok] = Object.entries(op.responses)[0]!;
        const answer = ok.content?.['application/json']
          ? `<details><summary>${escapeHtml(status)} answer schema</summary><pre>${escapeHtml(JSON.stringify(ok.content['application/json'].schema, null, 2))}</pre></details>`
          : `<p>Answer: ${escapeHtml(status)} ${escapeHtml(Object.keys(ok.content ?? {})[0] ?? '')}</p>`;
        return `<section><h2><code>${method.toUpperCase()} ${escapeHtml(path)}</code> · <code>${escapeHtml(op.operationId)}</code></h2><p>${escapeHtml(op.summary)}</p><p>${escapeHtml(op.description)}</p>${example}${request}${answer}</section>`;
      }),
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Ladder API</title>
<style>${DOCS_STYLE}</style></head>
<body><h1>Ladder API</h1><p>JSON over HTTP. Send <code>Authorization: Bearer &lt;key&gt;</code> (public ladders are readable without one). Errors are <code>{"error":{"code","message","field"}}</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
${sections}</body></html>`;
}
