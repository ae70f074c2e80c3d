// The tools the MCP conformance runner calls by name in its tools-call-* scenarios, registered on
// every MCP server of the test's process (api/mcp/server.ts registerOnEveryServer): each answers one
// kind of content, or an error result. Never registered by the service.
import type { McpServer } from '@modelcontextprotocol/server';
import { registerOnEveryServer } from '../../api/mcp/server.ts';

/** A 1x1 PNG and a one-sample 16-bit mono WAV, made for these fixtures. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgaPgPAAIDAYAkYfWXAAAAAElFTkSuQmCC';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==';

type Content = Array<Record<string, unknown>>;
const answers: Record<string, Content> = {
  test_simple_text: [{ type: 'text', text: 'Plain text from the conformance fixture.' }],
  test_image_content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  test_audio_content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  test_embedded_resource: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'An embedded resource.' } }],
  test_multiple_content_types: [
    { type: 'text', text: 'Three kinds of content:' },
    { type: 'image', data: PNG, mimeType: 'image/png' },
    { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"fixture":true}' } },
  ],
};

/** The fixtures' names, as tools/list shows them after ours. */
export const FIXTURE_TOOLS = [...Object.keys(answers), 'test_error_handling', 'test_tool_with_progress'];

type ProgressContext = { mcpReq: { _meta?: { progressToken?: string | number }; notify(n: { method: string; params: Record<string, unknown> }): Promise<void> } };

function registerFixtures(server: McpServer): void {
  for (const [name, content] of Object.entries(answers)) {
    server.registerTool(name, { description: `conformance fixture: ${name}` }, async () => ({ content }) as never);
  }
  server.registerTool('test_error_handling', { description: 'conformance fixture: an error result' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'The fixture fails on purpose.' }],
  }));
  // Three progress notifications on the request's own stream, then the result.
  server.registerTool('test_tool_with_progress', { description: 'conformance fixture: progress' }, (async (ctx: ProgressContext) => {
    const progressToken = ctx.mcpReq._meta?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
    return { content: [{ type: 'text', text: String(progressToken) }] };
  }) as never);
}

let registered = false;
/** Registers the fixtures once for this process (every app it starts then serves them). */
export function useConformanceFixtures(): void {
  if (!registered) registerOnEveryServer(registerFixtures);
  registered = true;
}
