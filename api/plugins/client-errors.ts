import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { statusOf } from './error-status.ts';
import { errorBody, FRAMEWORK_REASONS } from './errors.ts';
import { malformedPathParameter } from './unstorable-text.ts';

// Errors that happen before a request reaches a route answer the envelope too: the router's
// (a path parameter too long, a malformed percent-encoding) and the HTTP parser's (headers or URL
// too large, a request not received in time, a malformed request).

/** Fastify's `frameworkErrors`: the router refused the URL before any route ran. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const named = error.code === 'FST_ERR_BAD_URL' ? malformedPathParameter(request) : undefined;
  if (named) return void reply.code(statusOf(named.reason)).send(errorBody(named.reason, named.message, named.details));
  const status = error.statusCode ?? 500;
  let message = error.message;
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') message = 'a path parameter is too long';
  else if (error.code === 'FST_ERR_BAD_URL') message = 'the URL has a malformed percent-encoding';
  const reason = FRAMEWORK_REASONS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'MALFORMED_REQUEST');
  if (reason === 'INTERNAL_ERROR') {
    request.log.error({ err: error }, 'router error');
    message = 'internal server error';
  }
  reply.code(statusOf(reason)).send(errorBody(reason, message));
}

/** Status and message of the HTTP parser's and the server's time-out errors; anything else is a 400. */
const PARSER_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'the request headers (the URL included) are too large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'the chunk extensions are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request was not received in time'],
};

type InFlight = { _httpMessage?: { headersSent?: boolean } | null };

/**
 * The server's `clientError` listener (Fastify's `clientErrorHandler`). Only the error code is
 * logged: the raw packet may hold credentials. As Node's own listener does, the answer is written
 * only when no response has started on the connection, and the connection is closed.
 */
export function clientErrorHandler(logger: FastifyBaseLogger) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, message] = PARSER_ERRORS[error.code ?? ''] ?? [400, 'malformed HTTP request'];
    logger.debug({ code: error.code, status }, 'client error');
    const inFlight = (socket as Socket & InFlight)._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const body = JSON.stringify(errorBody(FRAMEWORK_REASONS[status] ?? 'MALFORMED_REQUEST', message));
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(error);
  };
}
