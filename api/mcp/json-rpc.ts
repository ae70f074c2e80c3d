// Answers of the MCP endpoint outside a server instance: JSON-RPC 2.0 errors, never the REST envelope.
import type { ErrorReason } from '../../domain/shared/errors.ts';
import { codeOf, statusOf } from '../plugins/error-status.ts';

/** A JSON-RPC error answer with no request id (the request was refused before it was read as one). */
export const jsonRpcErrorBody = (code: number, message: string, data?: Record<string, unknown>) => ({
  jsonrpc: '2.0' as const,
  error: { code, message, ...(data ? { data } : {}) },
  id: null,
});

export const jsonRpcError = (status: number, code: number, message: string) => Response.json(jsonRpcErrorBody(code, message), { status });

/**
 * A refusal of the REST catalogue (401, 403, 429, 4xx of the framework) as JSON-RPC: the HTTP status
 * stays the catalogue's, the error code is the implementation-defined server error (-32000, or
 * -32600 for a malformed request), and `data` carries the REST `code` and `reason`.
 */
export function refusalBody(reason: ErrorReason, message: string, details?: Record<string, unknown>) {
  const status = statusOf(reason);
  const code = status === 400 || status === 413 || status === 415 ? -32600 : -32000;
  return { status, body: jsonRpcErrorBody(code, message, { ...details, code: codeOf(reason), reason }) };
}
