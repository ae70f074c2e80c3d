// The tools' JSON Schemas are converted once per process (api/mcp/listing-cache.ts): tools/list
// over real HTTP with the SDK's v2 client, in both eras and for callers with different scope sets
// (a signed-in user with every scope, an API key with one), must equal what the uncached
// construction answers: a fresh McpServer per request with the tools registered with their own zod
// schemas, which the SDK converts itself, served by the SDK's handler in this process (no cache,
// no auth) to the same client. The listing
// does not differ by caller (a tool's scopes are checked when it is called), and the test shows it.
import t from 'tap';
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { convertedEachTime, convertedOncePerProcess } from '../../api/mcp/listing-cache.ts';
import { SERVER_INFO, toolConfig } from '../../api/mcp/server.ts';
import { mcpTools } from '../../api/mcp/tools/index.ts';
import { requestSignature } from '../../infra/api-keys.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

type Era = '2025-11-25' | '2026-07-28';
const ERAS: Era[] = ['2025-11-25', '2026-07-28'];

const app = await startTestApp();
t.teardown(() => app.close());
const user = await signIn(app, 'listing-user@example.test');
const created = await api(app, 'POST', '/api/api-keys', { token: user.accessToken, body: { name: 'listing', scopes: ['subscriptions:read'] } });
if (created.status !== 201) throw new Error(JSON.stringify(created.body));
const { apiKey, secretKey } = created.body.data as { apiKey: string; secretKey: string };

/** Every request signed as an API-key caller signs it (a signature is good for one request). */
const signedFetch: FetchLike = async (url, init) => {
  const body = typeof init?.body === 'string' ? init.body : '';
  const method = init?.method ?? 'GET';
  const timestamp = String(Date.now());
  const headers = new Headers(init?.headers);
  headers.set('x-api-key', apiKey);
  headers.set('x-timestamp', timestamp);
  headers.set('x-signature', requestSignature(secretKey, { timestamp, method, path: new URL(url).pathname, body }));
  return fetch(url, { ...init, headers });
};

const callers = {
  'a signed-in user (every scope)': { requestInit: { headers: { authorization: `Bearer ${user.accessToken}` } } },
  'an API key with subscriptions:read only': { fetch: signedFetch },
};

const clientFor = (era: Era) =>
  new Client({ name: 'listing', version: '1.0.0' }, { versionNegotiation: { mode: era === '2025-11-25' ? 'legacy' : { pin: era } } });

async function listOverHttp(era: Era, options: { fetch?: FetchLike; requestInit?: RequestInit }) {
  const client = clientFor(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), options));
  try {
    t.equal(client.getNegotiatedProtocolVersion(), era);
    return { first: await client.listTools(), again: await client.listTools() };
  } finally {
    await client.close();
  }
}

/** The uncached construction: per request, the tools registered with their zod schemas, converted by the SDK for that listing. */
const reference = createMcpHandler(
  () => {
    const server = new McpServer(SERVER_INFO);
    for (const tool of mcpTools) {
      server.registerTool(tool.name, toolConfig(tool, convertedEachTime), () => {
        throw new Error('listing only');
      });
    }
    return server;
  },
  { legacy: 'stateless' },
);
t.teardown(() => reference.close());

async function listUncached(era: Era) {
  const client = clientFor(era);
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://reference.test/mcp'), { fetch: (url, init) => reference.fetch(new Request(url, init)) }),
  );
  try {
    t.equal(client.getNegotiatedProtocolVersion(), era);
    return await client.listTools();
  } finally {
    await client.close();
  }
}

for (const era of ERAS) {
  t.test(`${era}: the cached tools/list equals the uncached construction's, for each caller`, async (t) => {
    const reference = await listUncached(era);
    t.equal(reference.tools.length, mcpTools.length);
    t.ok(
      reference.tools.every((tool) => tool.inputSchema.type === 'object' && tool.outputSchema),
      'every tool lists its input and output schema',
    );
    for (const [caller, options] of Object.entries(callers)) {
      const { first, again } = await listOverHttp(era, options);
      t.same(first.tools, reference.tools, `${caller}: the same listing as the uncached construction`);
      t.same(again.tools, reference.tools, `${caller}: and again, from the cache`);
    }
  });
}

t.test('the cached schemas are shared and frozen, and validate with zod as before', async (t) => {
  const [listAgents] = mcpTools;
  const schemas = convertedOncePerProcess(listAgents!);
  t.equal(convertedOncePerProcess(listAgents!), schemas, 'one conversion per tool');
  const json = schemas.input['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
  t.equal(schemas.input['~standard'].jsonSchema.input({ target: 'draft-2020-12' }), json, 'converted once, then reused');
  t.ok(
    Object.isFrozen(json) && Object.isFrozen(Object.values(json.properties as object)[0]),
    'frozen all the way down: no request can change it for the others',
  );

  const client = clientFor('2026-07-28');
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), callers['a signed-in user (every scope)']));
  t.teardown(() => client.close());
  const refused = await client.callTool({ name: 'list_agents', arguments: { limit: 1000 } });
  t.equal(refused.isError, true, 'input beyond the schema is refused');
  t.match((refused.content as Array<{ text: string }>)[0]!.text, /Input validation error.*limit/);
  const listed = await client.callTool({ name: 'list_agents', arguments: { limit: 3 } });
  t.match(listed.structuredContent, { agents: Array, limit: 3 }, 'and valid input is served');
});
