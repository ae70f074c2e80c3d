// The official MCP conformance runner's authorization-server scenarios (the metadata endpoint, then
// authorization-code-grant) against our OAuth 2.1
// server, for the MCP resource: the runner registers nothing itself, so the test registers a
// public client (RFC 7591) whose redirect URI is the runner's own callback server; the runner
// prints the authorization URL and waits, headless Chromium signs a user in on our real consent
// page and allows; the runner then exchanges the code (PKCE, the `resource` of /mcp) and checks
// the token answer (JSON, `Cache-Control: no-store`, `access_token`, `token_type`, `iss`).
import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as client from 'openid-client';
import { browserProfile, freePort, signInOnConsentPage, startOAuthTestBed } from '../support/oauth.ts';

const RUNNER = join(process.cwd(), 'node_modules/.bin/conformance');

t.test('authorization-server-metadata-endpoint and authorization-code-grant: the runner gets a token for /mcp through our consent page', async (t) => {
  const { app, base, browser } = await startOAuthTestBed(t);
  const port = await freePort();
  const registered = await client.dynamicClientRegistration(
    new URL(base),
    { client_name: 'MCP conformance runner', redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: 'none' },
    client.None(),
    { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
  );
  const clientId = registered.clientMetadata().client_id;

  // Every authorization-server scenario (the grant reads what the metadata scenario found first).
  const args = ['authorization', '--url', base, '--client-id', clientId, '--resource', `${base}/mcp`, '--port', String(port)];
  const runner = spawn(process.execPath, [RUNNER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void runner.kill('SIGKILL'));
  let output = '';
  const authorizationUrl = new Promise<string>((resolve, reject) => {
    const look = (d: Buffer) => {
      output += d.toString('utf8');
      const url = output.split('\n').find((line) => line.startsWith(`${base}/`) && line.includes('response_type=code'));
      if (url) resolve(url.trim());
    };
    runner.stdout.on('data', look);
    runner.stderr.on('data', look);
    runner.on('close', () => reject(new Error(`the runner ended without an authorization URL:\n${output}`)));
  });
  const finished = new Promise<number | null>((resolve) => runner.on('close', resolve));

  const { page } = await browserProfile(browser);
  await page.goto(await authorizationUrl);
  await signInOnConsentPage(app, page, 'mcp-grant@example.test');
  await page.getByRole('button', { name: 'Allow' }).click();

  const code = await finished;
  if (code !== 0) t.comment(output);
  t.equal(code, 0, 'the runner passed');
  t.match(output, /authorization-server-metadata-endpoint: \d+ passed, 0 failed/);
  t.match(output, /authorization-code-grant: 1 passed, 0 failed/);
});
