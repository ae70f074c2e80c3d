// The floor under an MCP tools/call, for the bench only (never in the service): a second app on the
// same database and Redis with one extra route, POST /bench/mcp-floor, that answers a 2026-07-28
// tools/call of one of our tools with none of the SDK: behind the same auth, limiter and hooks as
// /mcp, it runs the tool with zod on its input and output and writes the JSON-RPC result the SDK
// writes (the text content, `structuredContent`, `resultType`, `_meta` serverInfo). What it costs
// beyond a REST GET is what any MCP answer of this shape costs (a parsed POST body, the answer twice
// over, the envelope); what /mcp costs beyond it is the SDK's protocol work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildApp } from '../api/app.ts';
import { SERVER_INFO } from '../api/mcp/server.ts';
import type { McpToolContext } from '../api/mcp/tool.ts';
import { mcpTools } from '../api/mcp/tools/index.ts';
import { publicBaseUrl } from '../api/routes/developers/record.ts';
import type { TestApp } from '../test/support/app.ts';

export const FLOOR_PATH = '/bench/mcp-floor';

interface CallBody {
  id: number | string;
  params: { name: string; arguments?: unknown };
}

async function answer(request: FastifyRequest, reply: FastifyReply) {
  const { id, params } = request.body as CallBody;
  const tool = mcpTools.find((t) => t.name === params.name);
  if (!tool || !request.identity)
    return reply.code(400).send({ jsonrpc: '2.0', id, error: { code: -32602, message: 'the floor serves our tools to a caller' } });
  const ctx: McpToolContext = {
    deps: request.server.deps,
    identity: request.identity,
    dispatch: request.dispatch.bind(request),
    requestId: request.id,
    baseUrl: publicBaseUrl(request.server),
  };
  const output = tool.output.parse(await tool.run(ctx, tool.input.parse(params.arguments ?? {})));
  const result = {
    content: [{ type: 'text', text: JSON.stringify(output) }],
    structuredContent: output,
    resultType: 'complete',
    _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
  };
  return reply.type('application/json').send(JSON.stringify({ result, jsonrpc: '2.0', id }));
}

/** The service's app on `app`'s database and Redis, with the floor route beside its own, listening. */
export async function floorApp(app: Pick<TestApp, 'deps'>): Promise<{ url: string; server: FastifyInstance; close(): Promise<void> }> {
  const server = await buildApp(app.deps);
  // the same route settings as /mcp: its OAuth resource, the same body bound, hidden from the document
  server.post(FLOOR_PATH, { bodyLimit: 256 * 1024, schema: { hide: true }, config: { oauthResource: 'mcp' as const } }, answer);
  const url = await server.listen({ port: 0, host: '127.0.0.1' });
  return { url, server, close: () => server.close() };
}
