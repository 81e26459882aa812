/** The rating systems: what a ladder may use, with options, capabilities and display hints. */
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import { systemListResponse } from '../../responses.js';
import { systemsJson } from '../../systems.js';
import type { RouteOptions } from '../context.js';
import type { ZodTypeProvider } from '../zod-provider.js';

export const systemRoutes: FastifyPluginAsync<RouteOptions, RawServerDefault, ZodTypeProvider> = async (app) => {
  // The registry does not change while the process runs: one answer, built once.
  const body = systemsJson();
  app.get(
    '/v1/systems',
    {
      config: {
        operation: {
          operationId: 'listSystems',
          tags: ['systems'],
          summary: 'The rating systems: options with defaults and ranges, capabilities, how their numbers are shown, and which a ladder may use',
          auth: 'none',
          responses: { 200: systemListResponse },
        },
      },
    },
    async () => body,
  );
};
