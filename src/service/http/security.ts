/**
 * Security headers on every response, and CORS. The API's own policy is the
 * strictest there is (a JSON API loads nothing); a plugin serving pages (the
 * dashboard, /docs) sets its own content security policy on its replies, and
 * this hook leaves a policy already set alone.
 */
import type { FastifyInstance } from 'fastify';

export interface CorsOptions {
  /** Origins allowed to call the API from a browser, e.g. `https://game.example`. Empty: CORS off. */
  origins: readonly string[];
  /** Seconds a browser may cache a preflight answer. @default 600 */
  maxAgeSeconds?: number;
}

export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const FIXED_HEADERS = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' };
const FIXED_HEADERS_WITH_POLICY = { ...FIXED_HEADERS, 'content-security-policy': API_CONTENT_SECURITY_POLICY };

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOWED_HEADERS = 'authorization, content-type, idempotency-key';

export function registerSecurity(app: FastifyInstance, cors: CorsOptions | undefined): void {
  const origins = new Set(cors?.origins ?? []);
  // A callback hook (no promise per response), the fixed headers set at once.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.headers(reply.hasHeader('content-security-policy') ? FIXED_HEADERS : FIXED_HEADERS_WITH_POLICY);
    if (origins.size > 0) {
      const origin = request.headers.origin;
      reply.header('vary', 'Origin');
      if (typeof origin === 'string' && origins.has(origin)) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-expose-headers', 'retry-after');
      }
    }
    done(null, payload);
  });
  if (origins.size === 0) return;
  // Preflight: answered before authentication (browsers send no credentials with it).
  app.options('*', { config: { preflight: true } }, async (request, reply) => {
    const origin = request.headers.origin;
    if (typeof origin === 'string' && origins.has(origin)) {
      reply.header('access-control-allow-methods', ALLOWED_METHODS);
      reply.header('access-control-allow-headers', ALLOWED_HEADERS);
      reply.header('access-control-max-age', String(cors?.maxAgeSeconds ?? 600));
    }
    return reply.code(204).send();
  });
}
