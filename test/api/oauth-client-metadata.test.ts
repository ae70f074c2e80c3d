// Client ID metadata documents and redirect URIs, tried as an attacker would: a client_id URL naming
// the server's own network (every way of writing 127.0.0.1, link-local, private) must not make the
// server connect anywhere; fetches are counted per client address; a document is fetched once per
// request, within its time and size bounds, never through a redirect; and neither a registration nor
// a document may name a plain-http redirect URI off the loopback.
import t from 'tap';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import * as client from 'openid-client';
import {
  CLIENT_METADATA_FETCHES_PER_MIN,
  CLIENT_METADATA_MAX_BYTES,
  CLIENT_METADATA_TIMEOUT_MS,
  clientMetadataFetchKey,
} from '../../api/oauth/client-metadata.ts';
import { createAuthorizationServer } from '../../api/oauth/server.ts';
import { createPublicFetch } from '../../infra/public-fetch.ts';
import { clientAddressDigest } from '../../infra/tokens.ts';
import { apiWithConfig, startTestApp } from '../support/app.ts';
import { startClientMetadataHost } from '../support/oauth.ts';

const CALLBACK = 'https://connector.example/callback';
const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());

/** GET /oauth/authorize for `clientId`, as a browser sends it: the status, where it leads, the page's text, how long it took. */
async function authorize(base: string, clientId: string, redirectUri = CALLBACK) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'profile:read',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'cimd',
  });
  const started = performance.now();
  const res = await fetch(`${base}/oauth/authorize?${query}`, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), text: await res.text(), ms: performance.now() - started };
}

const metadata = (clientId: string, redirectUris = [CALLBACK]) => ({
  client_id: clientId,
  client_name: 'Metadata connector',
  redirect_uris: redirectUris,
  token_endpoint_auth_method: 'none',
});

t.test('client ID metadata documents and redirect URIs', async (t) => {
  const app = await startTestApp();
  t.teardown(() => app.close());
  const { JWT_SECRET } = app.deps.config;
  const freshFetchBudget = () => app.deps.redis.del(clientMetadataFetchKey(JWT_SECRET, '127.0.0.1'));

  // A port that accepts connections and never answers: what an internal service looks like to a scan.
  const connections: string[] = [];
  const listener = createTcpServer((socket: Socket) => {
    connections.push(`${socket.remoteAddress}`);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  const port = (listener.address() as AddressInfo).port;

  await t.test('a client_id naming a loopback, private or link-local host in any form: 400 at once, no connection made', async (t) => {
    await freshFetchBudget();
    await fetch(`${app.url}/.well-known/oauth-authorization-server`); // the provider loads at the first OAuth request: not timed below
    const hosts = ['127.0.0.1', 'localhost', '2130706433', '127.1', '0x7f000001', '[::ffff:127.0.0.1]', '[::1]', '169.254.169.254', '10.0.0.1', '[fd00::1]'];
    for (const host of hosts) {
      const answer = await authorize(app.url, `https://${host}:${port}/c.json`);
      t.equal(answer.status, 400, host);
      t.match(answer.text, 'client_id metadata document fetch failed', host);
      t.ok(answer.ms < 1_500, `${host}: answered in ${Math.round(answer.ms)} ms, not after a connection's time-out (${CLIENT_METADATA_TIMEOUT_MS} ms)`);
    }
    t.same(connections, [], 'the listener saw no connection');
  });

  await t.test(`${CLIENT_METADATA_FETCHES_PER_MIN} documents fetched a minute per client address, then 429 without fetching`, async (t) => {
    await freshFetchBudget();
    for (let i = 0; i < CLIENT_METADATA_FETCHES_PER_MIN; i++) {
      t.equal((await authorize(app.url, `https://127.0.0.1:${port}/c${i}.json`)).status, 400);
    }
    const over = await authorize(app.url, `https://127.0.0.1:${port}/over.json`);
    t.equal(over.status, 429);
    t.match(over.text, 'too many client ID metadata documents fetched for this address');
    t.same(connections, []);
  });

  await t.test('GET /oauth/authorize counts in the anonymous per-address budget', async (t) => {
    await app.deps.redis.del(`ratelimit:address:${clientAddressDigest(JWT_SECRET, '127.0.0.1')}`);
    const limited = await apiWithConfig(app, { RATE_LIMIT_ANONYMOUS_PER_MIN: 2 });
    t.teardown(() => limited.close());
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await authorize(limited.url, 'not-a-client')).status);
    t.same(statuses, [400, 400, 429]);
  });

  await t.test('registration (RFC 7591): plain http redirect URIs on the loopback only', async (t) => {
    const register = async (redirectUris: string[]) => {
      const res = await fetch(`${app.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Connector', redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
      });
      return { status: res.status, body: (await res.json()) as { error?: string; error_description?: string } };
    };
    for (const uris of [['http://evil.example/cb'], [CALLBACK, 'http://evil.example/cb'], ['http://10.0.0.1/cb'], ['http://127.0.0.2/cb']]) {
      const refused = await register(uris);
      t.equal(refused.status, 400, uris.join(' '));
      t.equal(refused.body.error, 'invalid_redirect_uri', uris.join(' '));
      t.match(refused.body.error_description, 'redirect_uris must use https, or http on the loopback');
    }
    for (const uri of [CALLBACK, 'http://127.0.0.1:49152/cb', 'http://[::1]:49152/cb', 'http://localhost:49152/cb']) {
      t.equal((await register([uri])).status, 201, uri);
    }
  });

  await t.test('a client stored with a cleartext redirect URI before this rule can no longer start a request (400, not 500)', async (t) => {
    const res = await fetch(`${app.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Old connector', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }),
    });
    const { client_id: clientId } = (await res.json()) as { client_id: string };
    await app.deps.pool.query(
      `UPDATE oauth_records SET payload = jsonb_set(payload, '{redirect_uris}', '["http://evil.example/cb"]') WHERE model = 'Client' AND id = $1`,
      [clientId],
    );
    const answer = await authorize(app.url, clientId, 'http://evil.example/cb');
    t.equal(answer.status, 400);
    t.equal(answer.location, null, 'nothing delivered to it');
    t.match(answer.text, 'redirect_uris must use https');
  });

  await t.test('documents on an https host (on 127.0.0.1, which only a test transport may reach)', async (t) => {
    const host = await startClientMetadataHost();
    t.teardown(() => host.close());
    const transport = createPublicFetch({ timeoutMs: CLIENT_METADATA_TIMEOUT_MS, maxBytes: CLIENT_METADATA_MAX_BYTES, allowLoopback: true, ca: host.ca });
    const server = await createAuthorizationServer(app.deps, app.runtime.app!.oauth.settings(), { fetch: transport as typeof fetch });
    const http = createHttpServer((req, res) => void server.handle(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => http.close(() => resolve())));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    /** Serves a document at `path` naming these redirect URIs (and `extra` fields); its client_id. */
    const documentAt = (path: string, redirectUris = [CALLBACK], extra = {}) => {
      const id = `${host.origin}${path}`;
      host.serve(path, { ...metadata(id, redirectUris), ...extra });
      return id;
    };
    const requestsFor = (path: string) => host.requests.filter((r) => r.startsWith(`GET ${path} `));

    await t.test('a document stands for a registration: fetched once, as JSON, and on to the consent page', async (t) => {
      await freshFetchBudget();
      const id = documentAt('/ok.json');
      const answer = await authorize(base, id);
      t.equal(answer.status, 303);
      t.match(answer.location, `${server.issuer}/oauth/consent/`);
      t.same(requestsFor('/ok.json'), ['GET /ok.json application/json']);
    });

    await t.test('a host name is resolved once and connected to at the checked address, its certificate checked against the name', async (t) => {
      await freshFetchBudget();
      const id = `${host.origin.replace('127.0.0.1', 'localhost')}/named.json`;
      host.serve('/named.json', metadata(id));
      t.equal((await authorize(base, id)).status, 303);
      t.same(requestsFor('/named.json'), ['GET /named.json application/json']);
    });

    await t.test('its redirect URIs: plain http off the loopback refused, on the loopback accepted', async (t) => {
      await freshFetchBudget();
      const cleartext = await authorize(base, documentAt('/cleartext.json', ['http://evil.example/cb']), 'http://evil.example/cb');
      t.equal(cleartext.status, 400);
      t.equal(cleartext.location, null);
      t.match(cleartext.text, 'redirect_uris must use https, or http on the loopback');
      const native = await authorize(base, documentAt('/native.json', ['http://127.0.0.1:49152/cb']), 'http://127.0.0.1:49152/cb');
      t.equal(native.status, 303);
    });

    await t.test('a host that never answers: one connection, given up within the time bound', async (t) => {
      await freshFetchBudget();
      host.serve('/silent.json', () => {});
      const answer = await authorize(base, `${host.origin}/silent.json`);
      t.equal(answer.status, 400);
      t.ok(answer.ms >= CLIENT_METADATA_TIMEOUT_MS - 100 && answer.ms < CLIENT_METADATA_TIMEOUT_MS + 1_000, `answered after ${Math.round(answer.ms)} ms`);
      t.equal(requestsFor('/silent.json').length, 1, 'the error page does not fetch it a second time');
    });

    await t.test(`a body over ${CLIENT_METADATA_MAX_BYTES} bytes, a redirect: refused, the redirect not followed`, async (t) => {
      await freshFetchBudget();
      const large = documentAt('/large.json', [CALLBACK], { padding: 'x'.repeat(CLIENT_METADATA_MAX_BYTES) });
      t.match((await authorize(base, large)).text, 'client_id metadata document fetch failed');
      documentAt('/target.json');
      host.serve('/moved.json', (_req, res) => void res.writeHead(302, { location: `${host.origin}/target.json` }).end());
      const moved = await authorize(base, `${host.origin}/moved.json`);
      t.equal(moved.status, 400);
      t.match(moved.text, 'client_id metadata document fetch failed');
      t.same(requestsFor('/target.json'), [], 'the redirect was not followed');
    });
  });
}).catch(t.threw);
