// The `logging` capability: log notices (`notifications/message`) to the client about the request
// it sent, never about anyone else's and never with a credential. 2026-07-28: the request's own
// `_meta` log level decides (the SDK's `ctx.mcpReq.log` sends nothing without one). 2025-11-25: the
// session's `logging/setLevel`, kept in its Redis record (api/mcp/sessions.ts) so that every process
// serving the session honours it; a session that never set one gets warnings and worse.
import type { LoggingLevel, McpServer } from '@modelcontextprotocol/server';
import { mcpSessions } from './sessions.ts';
import type { McpToolContext } from './tool.ts';

/** Declares `logging`; on a 2025 session, `logging/setLevel` keeps the level for the session. */
export function registerLogging(server: McpServer, ctx: McpToolContext, sessionId: string | null): void {
  server.server.registerCapabilities({ logging: {} });
  if (!sessionId) return; // 2026-07-28: logging/setLevel is not a method of the revision (the SDK answers -32601)
  const sessions = mcpSessions(ctx.deps.redis, ctx.deps.config.MCP_SESSION_TTL_SECONDS);
  server.server.setRequestHandler('logging/setLevel', async ({ params }) => {
    await sessions.setLogLevel(sessionId, params.level);
    seedLogLevel(server, params.level);
    return {};
  });
}

/**
 * The SDK keeps a connection's level on its Server instance (set by `logging/setLevel`), keyed by
 * the transport's session id; a per-request instance of a 2025 session has neither, so the level
 * held in Redis is put where `ctx.mcpReq.log` reads it (the SDK has no public seam for it).
 */
export function seedLogLevel(server: McpServer, level: LoggingLevel | undefined): void {
  const internals = server.server as unknown as { _loggingLevels: Map<string | undefined, LoggingLevel> };
  internals._loggingLevels.set(undefined, level ?? DEFAULT_LEVEL);
}

/** What a 2025 session that never sent `logging/setLevel` gets (the spec lets the server choose). */
export const DEFAULT_LEVEL: LoggingLevel = 'warning';
