/** API keys (admin only). */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { ApiKey } from '../../keys.js';
import { createKeySchema, idParams } from '../../schemas.js';
import { requireEveryLadder, requireScope } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';
import { apiKeyResponse, createdKeyResponse, keyListResponse } from '../../responses.js';

export function keyJson(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    ladders: key.ladders,
    createdAt: new Date(key.createdAt).toISOString(),
    revokedAt: key.revokedAt === null ? null : new Date(key.revokedAt).toISOString(),
  };
}

export const keyRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post(
    '/v1/keys',
    {
      schema: { body: createKeySchema },
      config: {
        operation: {
          operationId: 'createKey',
          tags: ['keys'],
          summary: 'Create an API key (the key is shown once)',
          auth: 'admin',
          responses: { 201: createdKeyResponse },
          example: { name: 'game-server-eu', scopes: ['write'] },
        },
      },
    },
    async (request, reply) => {
      requireScope(request, 'admin');
      requireEveryLadder(request);
      const ladders = request.body.ladders === undefined ? null : [...new Set(request.body.ladders)];
      const { key, apiKey } = await ctx.keys.create(request.body.name, request.body.scopes, undefined, ladders);
      return reply.code(201).send({ key, ...keyJson(apiKey) });
    },
  );
  app.get(
    '/v1/keys',
    {
      config: { operation: { operationId: 'listKeys', tags: ['keys'], summary: 'List API keys (never the keys themselves)', auth: 'admin', responses: { 200: keyListResponse } } },
    },
    async (request) => {
      requireScope(request, 'admin');
      requireEveryLadder(request);
      return { keys: (await ctx.keys.list()).map(keyJson) };
    },
  );
  app.delete(
    '/v1/keys/:id',
    {
      schema: { params: idParams },
      config: { operation: { operationId: 'revokeKey', tags: ['keys'], summary: 'Revoke an API key', auth: 'admin', responses: { 200: apiKeyResponse } } },
    },
    async (request) => {
      requireScope(request, 'admin');
      requireEveryLadder(request);
      return keyJson(await ctx.keys.revoke(request.params.id));
    },
  );
};
