// The MCP endpoint's own resource (RFC 8707) for OAuth tokens, and its rate limits as REST's.
import t from 'tap';
import * as client from 'openid-client';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';
import { authorizationRequest, browserProfile, callbackReached, registerClient, signInOnConsentPage, startOAuthTestBed } from '../support/oauth.ts';

const ACCEPT = 'application/json, text/event-stream';
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } },
};
const post = (url: string, token: string, body: unknown = initialize, headers: Record<string, string> = {}, path = '/mcp') =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });

t.test(
  'OAuth: a token for /mcp is served there and refused by the REST API; a token for /api is refused at /mcp; a read-only token gets insufficient_scope',
  async (t) => {
    const { app, base, browser, callback } = await startOAuthTestBed(t);
    const config = await registerClient(app, callback);
    const tokenFor = async (resource: string, scope: string) => {
      const attempt = await authorizationRequest(config, { scope, resource });
      const { page, context } = await browserProfile(browser);
      t.teardown(() => context.close());
      await page.goto(attempt.url.href);
      await signInOnConsentPage(app, page, 'mcp-oauth@example.com');
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();
      const response = await callbackReached(callback, page).catch(async (err) => {
        throw new Error(`${err.message}: ${await page.textContent('body')}`);
      });
      return (await client.authorizationCodeGrant(config, response, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state })).access_token;
    };

    const mcpToken = await tokenFor(`${base}/mcp`, 'profile:read marketplace:read');
    const opened = await post(base, mcpToken);
    t.equal(opened.status, 200, 'an MCP token at /mcp');
    const sessionId = opened.headers.get('mcp-session-id')!;
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_wallet', arguments: {} } };
    const refused = await post(base, mcpToken, call, { 'mcp-session-id': sessionId });
    t.equal(refused.status, 403, 'the token lacks wallet:read');
    const challenge = refused.headers.get('www-authenticate') ?? '';
    t.match(challenge, /^Bearer error="insufficient_scope"/);
    t.match(challenge, 'scope="wallet:read"', 'naming the scope the tool needs');
    t.match(challenge, `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const rest = await api(app, 'GET', '/api/v1/users/me', { token: mcpToken });
    t.equal(rest.status, 401, 'an MCP token is refused by the REST API');

    const apiToken = await tokenFor(`${base}/api`, 'profile:read');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: apiToken })).status, 200);
    const atMcp = await post(base, apiToken);
    t.equal(atMcp.status, 401, 'an API token is refused at /mcp');
    t.match(atMcp.headers.get('www-authenticate'), `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    // The router decodes the path before it matches: /%6dcp is the MCP route, and its resource is the route's.
    const encoded = await post(base, apiToken, initialize, {}, '/%6dcp');
    t.equal(encoded.status, 401, 'an API token is refused at a percent-encoded /mcp too');
  },
);

t.test("MCP requests count against the caller's tier: 429 JSON-RPC with Retry-After", async (t) => {
  const app = await startTestApp({ config: { RATE_LIMIT_FREE_PER_MIN: '3' } });
  t.teardown(() => app.close());
  const user = await signIn(app, 'mcp-limited@example.test');
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < 5; i++) {
    last = await post(app.url, user.accessToken);
    statuses.push(last.status);
  }
  t.same(statuses.slice(-2), [429, 429], `statuses ${statuses}`);
  t.ok(Number(last!.headers.get('retry-after')) > 0, 'Retry-After');
  t.match(await last!.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, data: { reason: 'RATE_LIMITED' } } });
});
