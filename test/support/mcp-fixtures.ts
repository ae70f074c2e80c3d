// The tools, resources and prompts the MCP conformance runner asks for by name (tools-call-*,
// resources-*, prompts-*, elicitation-*, input-required-result-*, json-schema-2020-12, and the
// diagnostic tools of server-stateless), registered on every MCP server of the test's process
// (api/mcp/server.ts registerOnEveryServer). Never registered by the service.
// Input from the client (elicitation, sampling, roots) is asked for one way in both revisions: the
// handler returns `inputRequired(...)`; on 2026-07-28 that is the answer (the client retries with
// `inputResponses`), on a 2025-11-25 session the SDK sends the requests on the POST's stream and
// calls the handler again with the answers (api/mcp/session-requests.ts routes them back).
import { z } from 'zod';
import {
  CLIENT_CAPABILITIES_META_KEY,
  completable,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  ResourceTemplate,
  type ElicitRequestFormParams,
  type InputRequests,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { registerOnEveryServer } from '../../api/mcp/server.ts';
import { BUS_CHANNEL } from '../../api/mcp/resource-watch.ts';
import { mintRequestState } from '../../api/mcp/request-state.ts';

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

type ProgressContext = {
  mcpReq: { _meta?: { progressToken?: string | number }; notify(n: { method: string; params: Record<string, unknown> }): Promise<void> };
};

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
  registerLoggingTools(server);
  registerInputTools(server);
  registerInputRequiredTools(server);
  // http-custom-header-server-validation: a parameter mirrored into an `Mcp-Param-Region` header, which the SDK checks against the body.
  const headerSchema = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] };
  server.registerTool(
    'test_custom_headers',
    { description: 'conformance fixture: a header parameter', inputSchema: fromJsonSchema(headerSchema) },
    async (args: unknown) => text(`region ${(args as { region: string }).region}`),
  );
  // server-stateless: a change of the tool or prompt list, for the listen streams that asked for it (through the bus, to every process).
  for (const [name, kind] of [
    ['test_trigger_tool_change', 'tools_list_changed'],
    ['test_trigger_prompt_change', 'prompts_list_changed'],
  ] as const) {
    server.registerTool(name, { description: `conformance fixture: ${kind}` }, async (ctx: ServerContext) => {
      const { redis } = (ctx.http!.authInfo!.extra!.request as FastifyRequest).server.deps;
      await redis.publish(`${redis.options.keyPrefix ?? ''}${BUS_CHANNEL}`, JSON.stringify([{ kind }]));
      return text(kind);
    });
  }
  server.registerTool(
    'json_schema_2020_12_tool',
    { description: 'Tool with JSON Schema 2020-12 features', inputSchema: fromJsonSchema(JSON_SCHEMA_2020_12) },
    async () => text('schema kept'),
  );
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Three info notices 50 ms apart (tools-call-with-logging at 2025; server-stateless's no-log-without-logLevel at 2026). */
function registerLoggingTools(server: McpServer): void {
  for (const name of ['test_tool_with_logging', 'test_logging_tool']) {
    server.registerTool(name, { description: 'conformance fixture: log notices' }, async (ctx: ServerContext) => {
      for (const [i, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
        if (i) await pause(50);
        await ctx.mcpReq.log('info', message);
      }
      return text('logged three notices');
    });
  }
}

const elicit = (message: string, requestedSchema: Record<string, unknown>) =>
  inputRequired.elicit({ message, requestedSchema: requestedSchema as ElicitRequestFormParams['requestedSchema'] });
const answered = (ctx: ServerContext, key: string) => inputResponse(ctx.mcpReq.inputResponses, key);

/** One input from the client, then a text naming what came back (tools-call-sampling, tools-call-elicitation, elicitation-sep1034/1330). */
function registerInputTools(server: McpServer): void {
  const once = (name: string, inputSchema: z.ZodObject, ask: (args: Record<string, string>) => InputRequests[string]) =>
    server.registerTool(name, { description: `conformance fixture: ${name}`, inputSchema }, (async (args: Record<string, string>, ctx: ServerContext) => {
      const answer = answered(ctx, 'answer');
      if (answer.kind === 'missing') return inputRequired({ inputRequests: { answer: ask(args) } });
      if (answer.kind === 'sampling') return text(`LLM response: ${JSON.stringify(answer.result.content)}`);
      return text(
        `User response: action=${answer.kind === 'elicit' ? answer.action : answer.kind}, content=${JSON.stringify(answer.kind === 'elicit' ? answer.content : {})}`,
      );
    }) as never);
  once('test_sampling', z.object({ prompt: z.string() }), ({ prompt }) =>
    inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt! } }], maxTokens: 100 }),
  );
  once('test_elicitation', z.object({ message: z.string() }), ({ message }) =>
    elicit(message!, {
      type: 'object',
      properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
      required: ['username', 'email'],
    }),
  );
  once('test_elicitation_sep1034_defaults', z.object({}), () =>
    elicit('Defaults for every primitive type', {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    }),
  );
  once('test_elicitation_sep1330_enums', z.object({}), () =>
    elicit('Every kind of enum', {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: {
          type: 'array',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    }),
  );
}

const askName = () => elicit('What is your name?', { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
const askSampling = (prompt: string, maxTokens: number) =>
  inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens });

/** The 2026-07-28 multi round trip (input-required-result-*, server-stateless's diagnostic tools). */
function registerInputRequiredTools(server: McpServer): void {
  const tool: FixtureTool = (name, run) =>
    void server.registerTool(name, { description: `conformance fixture: ${name}` }, ((ctx: ServerContext) => run(ctx)) as never);
  tool('test_input_required_result_elicitation', async (ctx) => {
    const name = answered(ctx, 'user_name');
    if (name.kind !== 'elicit' || typeof name.content?.name !== 'string') return inputRequired({ inputRequests: { user_name: askName() } });
    return text(`Hello, ${name.content.name}!`);
  });
  tool('test_input_required_result_sampling', async (ctx) => {
    const reply = answered(ctx, 'capital_question');
    if (reply.kind !== 'sampling') return inputRequired({ inputRequests: { capital_question: askSampling('What is the capital of France?', 100) } });
    return text(`The model said: ${JSON.stringify(reply.result.content)}`);
  });
  tool('test_input_required_result_list_roots', async (ctx) => {
    const roots = answered(ctx, 'client_roots');
    if (roots.kind !== 'roots') return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return text(`Roots: ${roots.roots.map((r) => r.uri).join(', ')}`);
  });
  registerStatefulInputTools(tool);
  registerDiagnosticTools(tool);
  registerInputRequiredPrompt(server);
}

type FixtureTool = (name: string, run: (ctx: ServerContext) => Promise<unknown>) => void;

/** Rounds carried by a sealed requestState (request-state, tampered-state, multiple-input-requests, multi-round). */
function registerStatefulInputTools(tool: FixtureTool): void {
  // The state comes back sealed (api/mcp/request-state.ts): an altered one is refused before this runs.
  for (const name of ['test_input_required_result_request_state', 'test_input_required_result_tampered_state']) {
    tool(name, async (ctx) => {
      const confirm = answered(ctx, 'confirm');
      const state = ctx.mcpReq.requestState<{ round: number }>();
      if (confirm.kind !== 'elicit' || state?.round !== 1) {
        const ask = elicit('Please confirm', { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] });
        return inputRequired({ inputRequests: { confirm: ask }, requestState: await mintRequestState(ctx, { round: 1 }) });
      }
      return text(`Confirmed: ${JSON.stringify(confirm.content)} (state round ${state.round})`);
    });
  }
  tool('test_input_required_result_multiple_inputs', async (ctx) => {
    const [name, greeting, roots] = [answered(ctx, 'user_name'), answered(ctx, 'greeting'), answered(ctx, 'client_roots')];
    if (name.kind !== 'elicit' || greeting.kind !== 'sampling' || roots.kind !== 'roots') {
      const inputRequests = { user_name: askName(), greeting: askSampling('Generate a greeting', 50), client_roots: inputRequired.listRoots() };
      return inputRequired({ inputRequests, requestState: await mintRequestState(ctx, { asked: Object.keys(inputRequests) }) });
    }
    return text(`Name ${JSON.stringify(name.content)}, greeting ${JSON.stringify(greeting.result.content)}, ${roots.roots.length} root(s)`);
  });
  // Two rounds: the state says which one answered, and carries the first answer into the second.
  tool('test_input_required_result_multi_round', async (ctx) => {
    const state = ctx.mcpReq.requestState<{ round: number; name?: string }>();
    const step1 = answered(ctx, 'step1');
    const step2 = answered(ctx, 'step2');
    if (state?.round === 2 && step2.kind === 'elicit' && typeof step2.content?.color === 'string') return text(`${state.name} likes ${step2.content.color}`);
    if (state?.round === 1 && step1.kind === 'elicit' && typeof step1.content?.name === 'string') {
      const ask = elicit('Step 2: What is your favorite color?', { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] });
      return inputRequired({ inputRequests: { step2: ask }, requestState: await mintRequestState(ctx, { round: 2, name: step1.content.name }) });
    }
    const ask = elicit('Step 1: What is your name?', { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    return inputRequired({ inputRequests: { step1: ask }, requestState: await mintRequestState(ctx, { round: 1 }) });
  });
}

/** Capability checks: input-required-result-capability-check and server-stateless's diagnostic tools. */
function registerDiagnosticTools(tool: FixtureTool): void {
  // Asks only for what the request's client capabilities declare (the SDK refuses anything else with -32021).
  tool('test_input_required_result_capabilities', async (ctx) => {
    const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const declared = envelope[CLIENT_CAPABILITIES_META_KEY] ?? {};
    const inputRequests: InputRequests = {};
    if (declared.sampling) inputRequests.summary = askSampling('Summarise the fixture', 50);
    if (declared.elicitation) inputRequests.user_name = askName();
    if (Object.keys(inputRequests).length === 0 || Object.keys(inputRequests).some((key) => answered(ctx, key).kind === 'missing'))
      return inputRequired({ inputRequests });
    return text('every declared input answered');
  });
  // server-stateless: sampling asked of a client that did not declare it (the SDK answers -32021, HTTP 400) ...
  tool('test_missing_capability', async () => inputRequired({ inputRequests: { summary: askSampling('Needs sampling', 10) } }));
  // ... and an elicitation as an input_required result on the request's own stream, never a request of its own.
  tool('test_streaming_elicitation', async (ctx) =>
    answered(ctx, 'user_name').kind === 'elicit' ? text('answered') : inputRequired({ inputRequests: { user_name: askName() } }),
  );
}

/** input-required-result-non-tool-request: a prompt that asks first. */
function registerInputRequiredPrompt(server: McpServer): void {
  server.registerPrompt('test_input_required_result_prompt', { description: 'conformance fixture: a prompt that asks first' }, ((ctx: ServerContext) => {
    const context = answered(ctx, 'user_context');
    if (context.kind !== 'elicit' || typeof context.content?.context !== 'string') {
      const ask = elicit('What context should the prompt use?', { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] });
      return inputRequired({ inputRequests: { user_context: ask } });
    }
    return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${context.content.context}` } }] };
  }) as never);
}

/** The tool json-schema-2020-12 reads from tools/list: its keywords must come back as written. */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if / then / else
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

function registerResources(server: McpServer): void {
  server.registerResource('static-text', 'test://static-text', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Static text of the conformance fixture.' }],
  }));
  server.registerResource('static-binary', 'test://static-binary', { mimeType: 'image/png' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id }) }],
    }),
  );
  // resources-subscribe / resources-unsubscribe (2025): a fixed resource, so a subscription is accepted and never notified.
  server.registerResource('watched', 'test://watched-resource', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'A resource the runner subscribes to.' }],
  }));
}

function registerPrompts(server: McpServer): void {
  const user = (content: Record<string, unknown>) => ({ messages: [{ role: 'user' as const, content }] }) as never;
  server.registerPrompt('test_simple_prompt', { description: 'conformance fixture: a plain prompt' }, () => user({ type: 'text', text: 'A plain prompt.' }));
  const completeArg1 = (value: string) => ['paris', 'park', 'party', 'test-value'].filter((v) => v.startsWith(value));
  server.registerPrompt(
    'test_prompt_with_arguments',
    { description: 'conformance fixture: arguments', argsSchema: z.object({ arg1: completable(z.string(), completeArg1), arg2: z.string() }) },
    ({ arg1, arg2 }) => user({ type: 'text', text: `First ${arg1}, second ${arg2}.` }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'conformance fixture: a resource', argsSchema: z.object({ resourceUri: z.string() }) },
    ({ resourceUri }) => user({ type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'An embedded resource.' } }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'conformance fixture: an image' }, () =>
    user({ type: 'image', data: PNG, mimeType: 'image/png' }),
  );
}

let registered = false;
/** Registers the fixtures once for this process (every app it starts then serves them). */
export function useConformanceFixtures(): void {
  if (!registered) registerOnEveryServer(registerFixtures);
  registered = true;
}
