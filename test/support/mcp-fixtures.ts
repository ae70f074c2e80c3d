// The tools, resources and prompts the MCP conformance runner asks for by name (tools-call-*,
// resources-*, prompts-*), registered on every MCP server of the test's process (api/mcp/server.ts
// registerOnEveryServer): each answers one kind of content. Never registered by the service.
import { z } from 'zod';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
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

type ProgressContext = { mcpReq: { _meta?: { progressToken?: string | number }; notify(n: { method: string; params: Record<string, unknown> }): Promise<void> } };

function registerFixtures(server: McpServer): void {
  for (const [name, content] of Object.entries(answers)) {
    server.registerTool(name, { description: `conformance fixture: ${name}` }, async () => ({ content }) as never);
  }
  server.registerTool('test_error_handling', { description: 'conformance fixture: an error result' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'The fixture fails on purpose.' }],
  }));
  registerResources(server);
  registerPrompts(server);
  // Three progress notifications on the request's own stream, then the result.
  server.registerTool('test_tool_with_progress', { description: 'conformance fixture: progress' }, (async (ctx: ProgressContext) => {
    const progressToken = ctx.mcpReq._meta?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
    return { content: [{ type: 'text', text: String(progressToken) }] };
  }) as never);
}

function registerResources(server: McpServer): void {
  server.registerResource('static-text', 'test://static-text', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Static text of the conformance fixture.' }],
  }));
  server.registerResource('static-binary', 'test://static-binary', { mimeType: 'image/png' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource('template', new ResourceTemplate('test://template/{id}/data', { list: undefined }), { mimeType: 'application/json' }, async (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id }) }],
  }));
}

function registerPrompts(server: McpServer): void {
  const user = (content: Record<string, unknown>) => ({ messages: [{ role: 'user' as const, content }] }) as never;
  server.registerPrompt('test_simple_prompt', { description: 'conformance fixture: a plain prompt' }, () => user({ type: 'text', text: 'A plain prompt.' }));
  server.registerPrompt('test_prompt_with_arguments', { description: 'conformance fixture: arguments', argsSchema: z.object({ arg1: z.string(), arg2: z.string() }) }, ({ arg1, arg2 }) =>
    user({ type: 'text', text: `First ${arg1}, second ${arg2}.` }),
  );
  server.registerPrompt('test_prompt_with_embedded_resource', { description: 'conformance fixture: a resource', argsSchema: z.object({ resourceUri: z.string() }) }, ({ resourceUri }) =>
    user({ type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'An embedded resource.' } }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'conformance fixture: an image' }, () => user({ type: 'image', data: PNG, mimeType: 'image/png' }));
}

let registered = false;
/** Registers the fixtures once for this process (every app it starts then serves them). */
export function useConformanceFixtures(): void {
  if (!registered) registerOnEveryServer(registerFixtures);
  registered = true;
}
