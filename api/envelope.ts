import type { FastifyReply } from 'fastify';
import { z } from 'zod';

export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

/**
 * The success envelope around data a read model stored already serialized (the bytes the route's
 * response schema would have written): sent as is, the serializer skipped.
 */
export function okRendered(reply: FastifyReply, dataJson: string | RenderedOk): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(typeof dataJson === 'string' ? `{"success":true,"data":${dataJson}}` : dataJson.bytes);
}

/** A success envelope rendered once into its UTF-8 bytes, for an answer kept and sent many times (no encoding per send). */
export interface RenderedOk {
  bytes: Buffer;
}
export const renderedOk = (dataJson: string): RenderedOk => ({ bytes: Buffer.from(`{"success":true,"data":${dataJson}}`) });

export const paginationQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export type PaginationQuery = z.infer<typeof paginationQuery>;

function pagination(total: number, { page, limit }: PaginationQuery) {
  const totalPages = Math.ceil(total / limit);
  return { total, limit, page, totalPages, hasNextPage: page < totalPages, hasPreviousPage: page > 1 };
}

export function paginated<T>(items: T[], total: number, query: PaginationQuery) {
  return ok({ items, pagination: pagination(total, query) });
}

/** `paginated` around items a read model stored already serialized (`itemsJson`: a JSON array), sent as is. */
export function okPaginatedRendered(reply: FastifyReply, itemsJson: string, total: number, query: PaginationQuery): FastifyReply {
  return okRendered(reply, `{"items":${itemsJson},"pagination":${JSON.stringify(pagination(total, query))}}`);
}

/** zod schema of a success envelope around `data`, for OpenAPI. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}
