import type { FastifyReply } from 'fastify';
import { z } from 'zod';

export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

/**
 * The success envelope around data a read model stored already serialized (the bytes the route's
 * response schema would have written): sent as is, the serializer skipped.
 */
export function okRendered(reply: FastifyReply, dataJson: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(`{"success":true,"data":${dataJson}}`);
}

export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export type PaginationQuery = z.infer<typeof paginationQuery>;

export function paginated<T>(items: T[], total: number, { page, limit }: PaginationQuery) {
  const totalPages = Math.ceil(total / limit);
  return ok({
    items,
    pagination: { total, limit, page, totalPages, hasNextPage: page < totalPages, hasPreviousPage: page > 1 },
  });
}

/** zod schema of a success envelope around `data`, for OpenAPI. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}
