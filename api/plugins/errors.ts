import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import pg from 'pg';
import { DomainError, type ErrorKind } from '../../domain/shared/errors.ts';

const STATUS: Record<ErrorKind, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNPROCESSABLE_ENTITY: 422,
  TOO_MANY_REQUESTS: 429,
};

const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'TOO_MANY_REQUESTS',
  431: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
};

export function errorBody(status: number, message: string, code?: string, details?: Record<string, unknown>) {
  return {
    success: false as const,
    error: { ...details, code: code ?? CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR', message },
  };
}

function send(reply: FastifyReply, status: number, message: string, code?: string, details?: Record<string, unknown>) {
  return reply.code(status).send(errorBody(status, message, code, details));
}

export const NUL_MESSAGE = 'text must not contain the NUL character (\\u0000)';

/** Whether any string (or key) in a parsed JSON value contains the NUL character. */
export function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(hasNul);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\0') || hasNul(v));
  return false;
}

/**
 * PostgreSQL refuses text it cannot store or compare: the NUL character (22P05 in jsonb, 22021 in
 * text parameters). Only a request's own text gets there, so it is the request's fault; the
 * statement failed as a whole, so nothing was written.
 */
function isUnstorableText(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.code === '22021' || error.code === '22P05');
}

/** The one place errors become HTTP: DomainError by kind, validation 400, framework 4xx, else 500. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) {
      return send(reply, STATUS[error.kind], error.message, error.code, error.details);
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const message = error.validation
        .map((v) => {
          const field = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
          return field ? `${field}: ${v.message}` : v.message;
        })
        .join(', ');
      return send(reply, 400, message);
    }
    if (isUnstorableText(error)) return send(reply, 400, NUL_MESSAGE);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Framework errors (malformed JSON, wrong content type, body too large): their message is safe.
      return send(reply, status, error.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, 500, 'internal server error');
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, `route ${request.method} ${request.url.split('?')[0]} not found`),
  );
}
