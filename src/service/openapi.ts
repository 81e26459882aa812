/** /openapi.json from the same zod schemas that validate requests, and a plain HTML docs page. */
import { z } from 'zod';
import { createKeySchema, createLadderSchema, matchSchema, performanceSchema, roundSchema, ticketSchema } from './schemas.js';

type Operation = { summary: string; auth: string; body?: z.ZodType; query?: string[]; headers?: string[]; ok: string };

const ERROR = {
  type: 'object',
  properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, field: { type: 'string' } }, required: ['code', 'message'] } },
};

const ROUTES: Record<string, Record<string, Operation>> = {
  '/healthz': { get: { summary: 'Liveness and database check', auth: 'none', ok: '200 {"ok":true}' } },
  '/metrics': { get: { summary: 'Prometheus metrics: request latency, matches rated, tickets waiting and wait times per queue', auth: 'none', ok: '200 text/plain' } },
  '/v1/keys': {
    post: { summary: 'Create an API key (the key is shown once)', auth: 'admin', body: createKeySchema, ok: '201 {key,id,name,scopes,createdAt}' },
    get: { summary: 'List API keys (never the keys themselves)', auth: 'admin', ok: '200 {keys:[...]}' },
  },
  '/v1/keys/{id}': { delete: { summary: 'Revoke an API key', auth: 'admin', ok: '200 key' } },
  '/v1/ladders': {
    post: { summary: 'Create a ladder', auth: 'admin', body: createLadderSchema, ok: '201 Ladder' },
    get: { summary: 'List ladders (public ones without a key)', auth: 'public or read', ok: '200 {ladders:[Ladder]}' },
  },
  '/v1/ladders/{ladder}': { get: { summary: 'One ladder with its player and match counts', auth: 'public ladder or read', ok: '200 Ladder' } },
  '/v1/ladders/{ladder}/matches': {
    post: {
      summary: 'Rate one match. With an Idempotency-Key, a repeat gets the stored answer and is not rated again; the same key with another body is 409.',
      auth: 'write',
      body: matchSchema,
      headers: ['Idempotency-Key'],
      ok: '201 {match:{id,seq,at},winProbability,players:[{id,team,before,after,terms}]}',
    },
    get: { summary: 'Matches, newest first, with the win probability predicted before rating', auth: 'public ladder or read', query: ['limit', 'offset'], ok: '200 {matches:[...]}' },
  },
  '/v1/ladders/{ladder}/players/{player}': {
    get: { summary: 'Rating, RD and volatility where the system has them, matches, rank, percentile, division or placement matches left', auth: 'public ladder or read', ok: '200 Player' },
  },
  '/v1/ladders/{ladder}/players/{player}/history': {
    get: { summary: "A player's rating changes, newest first", auth: 'public ladder or read', query: ['limit', 'offset'], ok: '200 {player,history:[...]}' },
  },
  '/v1/ladders/{ladder}/leaderboard': {
    get: { summary: 'Ranked players, best first; `around` centres the page on a player, `search` filters by id prefix', auth: 'public ladder or read', query: ['limit', 'offset', 'around', 'search'], ok: '200 {total,offset,entries}' },
  },
  '/v1/ladders/{ladder}/rounds': {
    post: { summary: 'Rate a World-vs-World round (one rating period); answers the new ratings and the next round groups', auth: 'write', body: roundSchema, headers: ['Idempotency-Key'], ok: '201 {round,matches,ratings,groups}' },
    get: { summary: 'Rounds, oldest first, with groups, score shares and ratings after each', auth: 'public ladder or read', ok: '200 {rounds:[...]}' },
  },
  '/v1/ladders/{ladder}/tickets': { post: { summary: 'Join the matchmaking queue (solo or party)', auth: 'write', body: ticketSchema, ok: '201 {ticket}' } },
  '/v1/tickets/{id}': {
    get: { summary: 'A ticket: waiting, or the match and team it was placed in', auth: 'public ladder or read', ok: '200 Ticket' },
    delete: { summary: 'Leave the queue', auth: 'write', ok: '200 {id,status}' },
  },
  '/v1/ladders/{ladder}/queue': { get: { summary: 'Queue summary: waiting tickets by region and band, recent matches', auth: 'public ladder or read', ok: '200 Queue' } },
  '/v1/ladders/{ladder}/assignments': { get: { summary: 'Server-sent events: `assignment` for each match the matchmaker forms', auth: 'public ladder or read', ok: '200 text/event-stream' } },
  '/v1/performance': { post: { summary: 'Every performance rating of a game record (algorithm of 400, maximum likelihood, netzero, unordered netzero) and the Elo path', auth: 'none', body: performanceSchema, ok: '200 {algo400,maxLikelihood,netzero,netzeroUnordered,path}' } },
};

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, ops] of Object.entries(ROUTES)) {
    paths[path] = {};
    for (const [method, op] of Object.entries(ops)) {
      const parameters: unknown[] = [];
      for (const name of path.match(/\{(\w+)\}/g) ?? []) parameters.push({ name: name.slice(1, -1), in: 'path', required: true, schema: { type: 'string' } });
      for (const name of op.query ?? []) parameters.push({ name, in: 'query', required: false, schema: { type: name === 'limit' || name === 'offset' ? 'integer' : 'string' } });
      for (const name of op.headers ?? []) parameters.push({ name, in: 'header', required: false, schema: { type: 'string', maxLength: 200 } });
      const [status, ...description] = op.ok.split(' ');
      paths[path]![method] = {
        summary: op.summary,
        'x-auth': op.auth,
        ...(op.auth === 'none' ? { security: [] } : {}),
        parameters,
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(op.body, { target: 'openapi-3.0' }) } } } } : {}),
        responses: {
          [status!]: { description: description.join(' ') },
          '4XX': { description: 'Invalid input (names the field), unauthorized, forbidden, not found, conflict, rate limited or too large', content: { 'application/json': { schema: ERROR } } },
        },
      };
    }
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Ladder', version: '0.1.0', description: 'Ratings, standings and matchmaking for competitive online games.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}

/** The reference page's style, inline; the page's content security policy allows exactly this text by its hash. */
export const DOCS_STYLE = 'body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}h2{font-size:1rem;margin:1.5rem 0 .3rem}pre{background:#f5f5f5;padding:.6rem;overflow:auto;font-size:12px}section{border-top:1px solid #ddd}';

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A self-contained reference page: every route, who may call it, and its request schema. */
export function docsPage(openapi: Record<string, unknown>): string {
  const paths = openapi.paths as Record<string, Record<string, { summary: string; 'x-auth': string; requestBody?: { content: { 'application/json': { schema: unknown } } }; responses: Record<string, { description: string }> }>>;
  const sections = Object.entries(paths)
    .flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => {
        const ok = Object.entries(op.responses)[0]!;
        const schema = op.requestBody ? `<details><summary>Request body schema</summary><pre>${escape(JSON.stringify(op.requestBody.content['application/json'].schema, null, 2))}</pre></details>` : '';
        return `<section><h2><code>${method.toUpperCase()} ${escape(path)}</code></h2><p>${escape(op.summary)}</p><p>Auth: <b>${escape(op['x-auth'])}</b> · Answer: <code>${escape(ok[0])} ${escape(ok[1].description)}</code></p>${schema}</section>`;
      }),
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Ladder API</title>
<style>${DOCS_STYLE}</style></head>
<body><h1>Ladder API</h1><p>JSON over HTTP. Send <code>Authorization: Bearer &lt;key&gt;</code>. Errors are <code>{"error":{"code","message","field"}}</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
${sections}</body></html>`;
}
