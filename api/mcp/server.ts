// One McpServer per served request, for its caller: the tools of api/mcp/tools, each checked against
// the caller's scopes, measured, and logged by name (never with a credential); the resources of
// api/mcp/resources.ts and the prompts of api/mcp/prompts.ts.
import type { FastifyRequest } from 'fastify';
import { McpServer, type AuthInfo, type CallToolResult, type McpRequestContext } from '@modelcontextprotocol/server';
import { DomainError } from '../../domain/shared/errors.ts';
import { codeOf } from '../plugins/error-status.ts';
import { mcpToolCalls } from '../../infra/metrics.ts';
import { publicBaseUrl } from '../routes/developers/record.ts';
import { convertedOncePerProcess, type ToolListing } from './listing-cache.ts';
import type { McpTool, McpToolContext } from './tool.ts';
import { registerLogging } from './logging.ts';
import { registerPrompts } from './prompts.ts';
import { requestStateCodec } from './request-state.ts';
import { registerResources, registerSubscriptions } from './resources.ts';
import { mcpTools } from './tools/index.ts';

export const SERVER_INFO = { name: 'agent-trading-platform', title: 'Agent Trading Platform', version: '1.0.0' };

/** What the transport hands the factory: the authenticated Fastify request (its identity, dispatch and logger). */
export const authInfoOf = (request: FastifyRequest, resourceMetadataUrl: string): AuthInfo => ({
  token: '', // the SDK never needs the credential itself; it stays out of every handler
  clientId: request.identity!.clientId ?? request.identity!.keyId ?? request.identity!.userId,
  scopes: [...request.identity!.scopes],
  resourceMetadataUrl,
  extra: { request },
});

const requestOf = (authInfo: AuthInfo | undefined): FastifyRequest => {
  const request = authInfo?.extra?.request as FastifyRequest | undefined;
  if (!request?.identity) throw new Error('an MCP server was asked for without an authenticated request');
  return request;
};

/** The scopes of `tool` the caller lacks. */
export const missingScopes = (tool: McpTool, held: readonly string[]) => tool.scopes.filter((s) => !held.includes(s));

/** A refusal as the tool's result: the REST `code`, `reason` and message, for the model to read. */
function refusal(error: DomainError): CallToolResult {
  const body = { ...error.details, code: codeOf(error.reason), reason: error.reason, message: error.message };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

async function runTool(tool: McpTool, ctx: McpToolContext, input: unknown, request: FastifyRequest): Promise<CallToolResult> {
  const started = process.hrtime.bigint();
  let outcome = 'ok';
  try {
    const output = (await tool.run(ctx, input as never)) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  } catch (error) {
    if (!(error instanceof DomainError)) {
      outcome = 'error';
      request.log.error({ tool: tool.name, err: error }, 'mcp tool failed');
      return {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify({ code: 'INTERNAL_SERVER_ERROR', reason: 'INTERNAL_ERROR', message: 'internal server error' }) }],
      };
    }
    outcome = 'refused';
    return refusal(error);
  } finally {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    mcpToolCalls.observe({ tool: tool.name, outcome }, seconds);
    // the tool's name in the line itself: a child logger per call cost more than the call's own logging
    request.log.info({ tool: tool.name, outcome, ms: Math.round(seconds * 1000) }, 'mcp tool call');
  }
}

/**
 * A tool's registration but its handler, the same for every request: title, description, the
 * schemas `listing` gives (api/mcp/listing-cache.ts), annotations, and the scope challenge.
 */
export function toolConfig(tool: McpTool, listing: ToolListing) {
  const { input, output } = listing(tool);
  return {
    title: tool.title,
    description: tool.description,
    inputSchema: input,
    outputSchema: output,
    // shared by every request's server, so frozen: the listing hands them out as they are
    annotations: Object.freeze({ title: tool.title, ...tool.annotations }),
    // A caller without every scope the tool needs is answered 403 insufficient_scope naming them (a step-up for OAuth clients).
    scopeChallenge: ({ authInfo: caller }: { authInfo?: AuthInfo | undefined }) => {
      const missing = missingScopes(tool, caller?.scopes ?? []);
      return missing.length ? { scopes: tool.scopes as [string, ...string[]], errorDescription: `${tool.name} needs ${tool.scopes.join(' ')}` } : undefined;
    },
    _meta: Object.freeze({ scopes: Object.freeze([...tool.scopes]) }),
  };
}

/** Our tools' registrations, made with the first server and reused by every later one. */
let registrations: ReadonlyArray<readonly [McpTool, ReturnType<typeof toolConfig>]> | undefined;

/** Registrations added to every server after our tools: none in the service; tests add the conformance runner's fixtures. */
const extraRegistrations: Array<(server: McpServer) => void> = [];
export const registerOnEveryServer = (register: (server: McpServer) => void) => void extraRegistrations.push(register);

/** Our tools' registrations, made once: each tool with its config, by name. */
function ourRegistrations() {
  return (registrations ??= mcpTools.map((tool) => [tool, toolConfig(tool, convertedOncePerProcess)] as const));
}

/**
 * What a 2026-07-28 request can reach, from its `Mcp-Method` and `Mcp-Name` headers, which the SDK
 * has checked against the body before it asks for a server: a `tools/call` of one of our tools
 * reaches that tool only, a `tools/list` our tools only; anything else (and a name that is not one of
 * our tools) gets the whole server. A 2025 session request gets the whole server (its stream may
 * carry anything).
 */
export function reachable(era: McpRequestContext['era'], headers: Headers | undefined): 'all' | 'tools' | McpTool {
  // extra registrations (the tests' conformance fixtures) could be anything: they get the whole server
  if (era !== 'modern' || !headers || extraRegistrations.length > 0) return 'all';
  const method = headers.get('mcp-method');
  if (method === 'tools/list') return 'tools';
  if (method !== 'tools/call') return 'all';
  const name = headers.get('mcp-name');
  return ourRegistrations().find(([tool]) => tool.name === name)?.[0] ?? 'all';
}

/**
 * The server factory both eras share (createMcpHandler and the 2025 leg): tools for the request's
 * caller. A server is built per request, so it registers only what the request can reach
 * (`reachable`): a tool call builds one tool, not nineteen tools, two prompts and the resources.
 */
export function mcpServerFor({ authInfo, era, requestInfo }: McpRequestContext): McpServer {
  const request = requestOf(authInfo);
  const server = new McpServer(SERVER_INFO, {
    instructions: 'Agent Trading Platform: browse trading agents, review your pools, trades and wallet. Amounts are in USD.',
    requestState: { verify: requestStateCodec(request.server.deps.config).verify },
  });
  const ctx: McpToolContext = {
    deps: request.server.deps,
    identity: request.identity!,
    dispatch: request.dispatch.bind(request),
    requestId: request.id,
    baseUrl: publicBaseUrl(request.server),
  };
  const scope = reachable(era, requestInfo?.headers);
  for (const [tool, config] of ourRegistrations()) {
    if (scope === 'all' || scope === 'tools' || scope === tool) server.registerTool(tool.name, config, (input: unknown) => runTool(tool, ctx, input, request));
  }
  // a tool may log to its caller (`ctx.mcpReq.log`), so every server declares logging
  if (scope !== 'all') {
    registerLogging(server, ctx, null);
    return server;
  }
  registerResources(server, ctx);
  registerPrompts(server, ctx);
  // 2025 only: the 2026 revision has no resources/subscribe (nor logging/setLevel).
  const sessionId = era === 'legacy' ? (requestInfo?.headers.get('mcp-session-id') ?? null) : null;
  if (era === 'legacy') registerSubscriptions(server, ctx, sessionId);
  registerLogging(server, ctx, sessionId);
  for (const register of extraRegistrations) register(server);
  return server;
}
