import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { envelopeOf } from '../../envelope.ts';

/**
 * Where this deployment is reached: PUBLIC_BASE_URL, else the address the server listens on
 * (its real port, so a server started on port 0 still names a reachable URL).
 */
export function publicBaseUrl(app: FastifyInstance): string {
  const { PUBLIC_BASE_URL, HOST, PORT } = app.deps.config;
  if (PUBLIC_BASE_URL) return PUBLIC_BASE_URL.replace(/\/+$/, '');
  const address = app.server.address();
  return `http://${HOST}:${address && typeof address === 'object' ? address.port : PORT}`;
}

const pagination = z.object({
  total: z.number(),
  limit: z.number(),
  page: z.number(),
  totalPages: z.number(),
  hasNextPage: z.boolean(),
  hasPreviousPage: z.boolean(),
});

/** zod schema of a paginated success envelope, for OpenAPI and the serializer. */
export const paginatedOf = <T extends z.ZodType>(item: T) => envelopeOf(z.object({ items: z.array(item), pagination }));

export const agentIdParams = z.object({ id: z.string().min(1).max(100) });
