/** API keys (admin only). */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { ApiKey } from '../../keys.js';
import { createKeySchema, idParams } from '../../schemas.js';
import { requireScope } from '../access.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export function keyJson(key: ApiKey) {
  return { id: key.id, name: key.name, scopes: key.scopes, createdAt: new Date(key.createdAt).toISOString(), revokedAt: key.revokedAt === null ? null : new Date(key.revokedAt).toISOString() };
}

export const keyRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app, { ctx }) => {
  app.post('/v1/keys', { schema: { body: createKeySchema } }, async (request, reply) => {
    requireScope(request, 'admin');
    const { key, apiKey } = await ctx.keys.create(request.body.name, request.body.scopes);
    return reply.code(201).send({ key, ...keyJson(apiKey) });
  });
  app.get('/v1/keys', async (request) => {
    requireScope(request, 'admin');
    return { keys: (await ctx.keys.list()).map(keyJson) };
  });
  app.delete('/v1/keys/:id', { schema: { params: idParams } }, async (request) => {
    requireScope(request, 'admin');
    return keyJson(await ctx.keys.revoke(request.params.id));
  });
};
