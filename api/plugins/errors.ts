import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import pg from 'pg';
import { DomainError, errorCatalogue, type ErrorReason, InvariantViolation } from '../../domain/shared/errors.ts';
import { problemsMessage } from '../../domain/shared/echo.ts';
import { NUL_PROBLEM } from '../../domain/shared/storable-text.ts';
import { isRedisUnavailable } from '../../infra/redis.ts';
import { codeOf, statusOf } from './error-status.ts';

/** The error envelope: `code` as the spec says, `reason` from the catalogue, `message` for people. */
export function errorBody(reason: ErrorReason, message: string, details?: Record<string, unknown>) {
  return { success: false as const, error: { ...details, code: codeOf(reason), reason, message } };
}

function send(reply: FastifyReply, reason: ErrorReason, message: string, details?: Record<string, unknown>) {
  if (reason === 'BUSY') reply.header('retry-after', String(details?.retryAfterSeconds ?? 1));
  return reply.code(statusOf(reason)).send(errorBody(reason, message, details));
}

/**
 * The catalogue as the OpenAPI document shows it: the error envelope's schema, whose `reason` lists
 * every name with its status and meaning (also as `x-error-catalogue`, for tools).
 */
export function errorEnvelopeSchema() {
  const reasons = Object.keys(errorCatalogue) as ErrorReason[];
  return {
    type: 'object' as const,
    required: ['success', 'error'],
    properties: {
      success: { type: 'boolean' as const, enum: [false] },
      error: {
        type: 'object' as const,
        required: ['code', 'reason', 'message'],
        properties: {
          code: { type: 'string' as const, description: "Derived from the HTTP status, or one of the spec's named codes" },
          reason: {
            type: 'string' as const,
            enum: reasons,
            description: reasons.map((r) => `- \`${r}\` (${statusOf(r)}): ${errorCatalogue[r].description}`).join('\n'),
          },
          message: { type: 'string' as const },
        },
      },
    },
    'x-error-catalogue': reasons.map((reason) => ({ reason, status: statusOf(reason), code: codeOf(reason), description: errorCatalogue[reason].description })),
  };
}

/** The catalogue name of a framework refusal (malformed JSON, wrong content type, body too large…). */
export const FRAMEWORK_REASONS: Record<number, ErrorReason> = {
  400: 'MALFORMED_REQUEST',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  413: 'BODY_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'HEADERS_TOO_LARGE',
};

/**
 * PostgreSQL refuses text it cannot store or compare: the NUL character (22P05 in jsonb, 22021 in
 * text parameters). Only a request's own text gets there, so it is the request's fault; the
 * statement failed as a whole, so nothing was written.
 */
function isUnstorableText(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.code === '22021' || error.code === '22P05');
}

/** The one place errors become HTTP: refusals by their catalogue reason, validation 400, framework 4xx, invariants and else 500. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) return send(reply, error.reason, error.message, error.details);
    if (error instanceof InvariantViolation) {
      // A bug, never the client's fault: logged (to page someone) with its message, which the answer keeps to itself.
      request.log.error({ err: error }, `invariant violated: ${error.message}`);
      return send(reply, 'INTERNAL_ERROR', 'internal server error');
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const problems = error.validation.map((v) => {
        const field = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
        return field ? `${field}: ${v.message}` : String(v.message);
      });
      return send(reply, 'VALIDATION_FAILED', problemsMessage(problems));
    }
    if (isUnstorableText(error)) return send(reply, 'MALFORMED_REQUEST', NUL_PROBLEM);
    if (isRedisUnavailable(error)) {
      // Fail closed where Redis guards the request (signatures spent, login throttles, MFA): at once, never a stall.
      request.log.warn({ err: error }, 'Redis does not answer');
      return send(reply, 'SERVICE_UNAVAILABLE', 'a dependency does not answer: retry shortly');
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Framework errors (malformed JSON, wrong content type, body too large): their message is safe.
      return send(reply, FRAMEWORK_REASONS[status] ?? 'MALFORMED_REQUEST', error.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, 'INTERNAL_ERROR', 'internal server error');
  });

  app.setNotFoundHandler((request, reply) => send(reply, 'ROUTE_NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`));
}
