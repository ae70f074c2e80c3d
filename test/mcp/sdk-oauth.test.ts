// The SDK clients' own OAuth (both majors): pointed at `<base>/mcp` with no credential, each
// discovers the protected resource metadata from the 401, then our authorization server, registers
// itself (RFC 7591), sends the user to the authorization URL with PKCE and the MCP resource; the
// user signs in and allows on our real consent page in headless Chromium; the SDK exchanges the
// code and calls tools with the token. Nothing of the flow is done by the test but the browser's part.
import t from 'tap';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError as UnauthorizedV1, type OAuthClientProvider as ProviderV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, type OAuthClientProvider as ProviderV2 } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import {
  authorizationRequest,
  browserProfile,
  callbackReached,
  registerClient,
  signInOnConsentPage,
  startOAuthTestBed,
  type ClientCallback,
  type OAuthTestBed,
} from '../support/oauth.ts';

/**
 * What an MCP host keeps for the SDK (client registration, tokens, the PKCE verifier), and its
 * browser: `redirectToAuthorization` opens the URL, signs `email` in, allows, and keeps the URL the
 * browser was sent back to, whose code the test hands to the SDK's `finishAuth` as a host would.
 */
class BrowserHost {
  client: unknown;
  saved: unknown;
  verifier = '';
  requestedScope: string | null = null;
  returned: Promise<URL> | undefined;

  constructor(
    private readonly bed: OAuthTestBed,
    private readonly callback: ClientCallback,
    private readonly email: string,
  ) {}

  get redirectUrl() {
    return this.callback.url;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK host',
      redirect_uris: [this.callback.url],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    };
  }
  clientInformation() {
    return this.client as never;
  }
  saveClientInformation(info: unknown) {
    this.client = info;
  }
  tokens() {
    return this.saved as never;
  }
  saveTokens(tokens: unknown) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  redirectToAuthorization(url: URL) {
    this.requestedScope = url.searchParams.get('scope');
    this.returned = this.consent(this.bed.browser, url);
  }

  private async consent(browser: Browser, url: URL): Promise<URL> {
    const { page, context } = await browserProfile(browser);
    try {
      await page.goto(url.href);
      await signInOnConsentPage(this.bed.app, page, this.email);
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      await page.getByRole('button', { name: 'Allow' }).click();
      return await callbackReached(this.callback, page).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${await page.textContent('body')}`);
      });
    } finally {
      await context.close();
    }
  }

  /** The redirect's parameters the browser came back with (code, state, iss), once it has. */
  async returnedParams(): Promise<URLSearchParams> {
    if (!this.returned) throw new Error('the SDK never sent the user to authorize');
    const back = await this.returned;
    if (!back.searchParams.get('code')) throw new Error(`no code came back: ${back.href}`);
    return back.searchParams;
  }
}

t.test('v1 SDK client (2025-11-25): its own OAuth flow through our consent page, then tools with the token', async (t) => {
  const bed = await startOAuthTestBed(t);
  const host = new BrowserHost(bed, bed.callback, 'sdk-v1@example.test');
  const provider: ProviderV1 = host as unknown as ProviderV1;
  const url = new URL(`${bed.base}/mcp`);

  const first = new TransportV1(url, { authProvider: provider });
  const refused = await new ClientV1({ name: 'v1-host', version: '1.0.0' }).connect(first).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(refused instanceof UnauthorizedV1, `without a token, the SDK is sent to authorize (${String(refused)})`);
  t.ok(host.client, 'it registered itself with our authorization server');
  await first.finishAuth((await host.returnedParams()).get('code')!);
  t.match(host.saved, { token_type: /bearer/i, access_token: String }, 'it exchanged the code for a token');

  const client = new ClientV1({ name: 'v1-host', version: '1.0.0' });
  await client.connect(new TransportV1(url, { authProvider: provider }));
  t.teardown(() => client.close());
  const wallet = await client.callTool({ name: 'get_wallet', arguments: {} });
  t.notOk(wallet.isError, 'the tool answered');
  t.match(wallet.structuredContent, { wallets: Array }, 'a tool answers with the token the SDK got');
});

t.test('v2 SDK client (2026-07-28): its own OAuth flow through our consent page, then tools with the token', async (t) => {
  const bed = await startOAuthTestBed(t);
  const host = new BrowserHost(bed, bed.callback, 'sdk-v2@example.test');
  const provider: ProviderV2 = host as unknown as ProviderV2;
  const url = new URL(`${bed.base}/mcp`);
  const options = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };

  const first = new TransportV2(url, { authProvider: provider });
  const refused = await new ClientV2({ name: 'v2-host', version: '1.0.0' }, options).connect(first).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(refused, `without a token, the SDK is sent to authorize (${String(refused)})`);
  t.ok(host.client, 'it registered itself with our authorization server');
  // v2 checks the redirect's `iss` (RFC 9207) against the authorization server's: it gets the whole query.
  await first.finishAuth(await host.returnedParams());
  t.match(host.saved, { access_token: String }, 'it exchanged the code for a token');

  const client = new ClientV2({ name: 'v2-host', version: '1.0.0' }, options);
  await client.connect(new TransportV2(url, { authProvider: provider }));
  t.teardown(() => client.close());
  t.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const wallet = await client.callTool({ name: 'get_wallet', arguments: {} });
  t.notOk(wallet.isError, 'the tool answered');
  t.match(wallet.structuredContent, { wallets: Array }, 'a tool answers with the token the SDK got');
});

t.test("a registration's scope (RFC 7591, as the SDKs send it) is checked against the scope table and limits what the client may ask", async (t) => {
  const bed = await startOAuthTestBed(t);
  const unknown = await registerClient(bed.app, bed.callback, { scope: 'profile:read launch:missiles' }).then(
    () => null,
    (err: unknown) => err,
  );
  t.equal((unknown as { error?: string } | null)?.error, 'invalid_client_metadata', 'an unknown scope is refused at registration');
  const limited = await registerClient(bed.app, bed.callback, { scope: 'profile:read marketplace:read' });
  const beyond = await fetch((await authorizationRequest(limited, { scope: 'profile:read trades:write' })).url, { redirect: 'manual' });
  t.equal(new URL(beyond.headers.get('location')!).searchParams.get('error'), 'invalid_scope', 'a scope beyond the registered ones is invalid_scope');
  const within = await fetch((await authorizationRequest(limited, { scope: 'marketplace:read' })).url, { redirect: 'manual' });
  t.match(within.headers.get('location'), '/oauth/consent/', 'a registered scope goes on to the consent page');
});
