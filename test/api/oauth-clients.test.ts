// Retention of dynamically registered OAuth clients with the real provider, a real client library and
// the consent page in Chromium (infra/oauth-store.ts): what the registration response says, the expiry
// a registration and a consent give a client, the housekeeping purge (an unused client past its
// TTL gone, a used one kept), and a purged client's token refused by the API.
import t from 'tap';
import * as client from 'openid-client';
import { IDLE_CLIENT_DAYS, purgeOAuthRecords } from '../../infra/oauth-store.ts';
import { api } from '../support/app.ts';
import { authorizationRequest, browserProfile, callbackReached, registerClient, signInOnConsentPage, startOAuthTestBed } from '../support/oauth.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

t.test('registered OAuth clients expire', async (t) => {
  const { app, browser, callback } = await startOAuthTestBed(t, { config: { OAUTH_UNUSED_CLIENT_TTL_HOURS: '2' } });

  const expiryOf = async (model: string, id: string) => {
    const { rows } = await app.deps.pool.query<{ expires_at: Date }>('SELECT expires_at FROM oauth_records WHERE model = $1 AND id = $2', [model, id]);
    return rows[0]?.expires_at.getTime();
  };
  const grantsOf = async (clientId: string) => {
    const { rows } = await app.deps.pool.query<{ id: string }>(`SELECT id FROM oauth_records WHERE model = 'Grant' AND payload->>'clientId' = $1`, [clientId]);
    return rows.map((r) => r.id);
  };
  /** Where the provider sends a browser that starts an authorization request for this client: 303 on to the consent page, 400 for a client it does not know. */
  const authorizationStatus = async (config: client.Configuration) => (await fetch((await authorizationRequest(config)).url, { redirect: 'manual' })).status;

  /** A connector registered, then approved by a new user on the consent page: its configuration and access token. */
  const connect = async (email: string) => {
    const config = await registerClient(app, callback);
    const attempt = await authorizationRequest(config);
    const { page, context } = await browserProfile(browser);
    try {
      await page.goto(attempt.url.href);
      await signInOnConsentPage(app, page, email);
      await page.getByRole('button', { name: 'Allow' }).click();
      const response = await callbackReached(callback, page);
      const tokens = await client.authorizationCodeGrant(config, response, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state });
      return { config, clientId: config.clientMetadata().client_id, accessToken: tokens.access_token };
    } finally {
      await context.close();
    }
  };

  await t.test('the registration response: client_id_issued_at; a secret that does not expire by itself (client_secret_expires_at 0)', async (t) => {
    const now = Math.floor(Date.now() / 1000);
    const pub = (await registerClient(app, callback)).clientMetadata();
    t.ok(Math.abs((pub.client_id_issued_at as number) - now) < 60, 'issued now');
    t.equal(pub.client_secret, undefined, 'a public client has no secret');
    t.equal(pub.client_secret_expires_at, undefined, 'so no secret expiry either');
    const confidential = (await registerClient(app, callback, { token_endpoint_auth_method: 'client_secret_basic' })).clientMetadata();
    t.type(confidential.client_secret, 'string');
    t.equal(confidential.client_secret_expires_at, 0);
  });

  await t.test(
    `a registration lapses after OAUTH_UNUSED_CLIENT_TTL_HOURS unless a user approves it; then ${IDLE_CLIENT_DAYS} days after its grant; the purge keeps the used one`,
    async (t) => {
      const registered = Date.now();
      const unused = await registerClient(app, callback);
      const unusedId = unused.clientMetadata().client_id;
      const used = await connect('retention-used@example.com');
      t.ok(Math.abs((await expiryOf('Client', unusedId))! - (registered + 2 * HOUR)) < 60_000, 'the unused client: 2 hours (the setting)');
      const [grantId] = await grantsOf(used.clientId);
      const grantExpiry = (await expiryOf('Grant', grantId!))!;
      t.ok(Math.abs(grantExpiry - (registered + 14 * DAY)) < 60_000, 'the consent saved a 14-day grant naming the client');
      t.equal(await expiryOf('Client', used.clientId), grantExpiry + IDLE_CLIENT_DAYS * DAY, 'the approved client: 90 days after its grant');

      await purgeOAuthRecords(app.deps.pool, new Date(registered + 3 * HOUR));
      t.equal(await expiryOf('Client', unusedId), undefined, 'the unused client is purged');
      t.equal(await authorizationStatus(unused), 400, 'its authorization requests are refused');
      t.ok(await expiryOf('Client', used.clientId), 'the approved client is kept');
      t.same(await grantsOf(used.clientId), [grantId], 'with its grant');
      t.equal(await authorizationStatus(used.config), 303, 'and still starts authorizations');
    },
  );

  await t.test("a purged client's token is refused by the API (401) and by /status, its introspection by the provider", async (t) => {
    const { config, clientId, accessToken } = await connect('retention-retired@example.com');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: accessToken })).status, 200, 'the token works');
    // The client is retired while its grant and token are live (an operator's retirement): only the purge's cascade ends them.
    await app.deps.pool.query(`UPDATE oauth_records SET expires_at = now() - interval '1 second' WHERE model = 'Client' AND id = $1`, [clientId]);
    const now = new Date();
    t.ok((await purgeOAuthRecords(app.deps.pool, now)) >= 3, 'the client, its grant and its token');
    t.equal(await purgeOAuthRecords(app.deps.pool, now), 0, 'a second purge finds nothing more');
    t.same(await grantsOf(clientId), []);

    const me = await api(app, 'GET', '/api/v1/users/me', { token: accessToken });
    t.equal(me.status, 401, 'the API refuses the token');
    t.same((await api(app, 'GET', '/status', { token: accessToken })).body.data, { active: false });
    const introspection = await client.tokenIntrospection(config, accessToken).then(
      () => 'answered',
      (err: { error?: string }) => err.error,
    );
    t.equal(introspection, 'invalid_client', 'the client itself is unknown');
  });
}).catch(t.threw);
