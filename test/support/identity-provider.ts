// A real OpenID Connect provider for the social-login tests: oidc-provider on a random port, one
// static confidential client, accounts the test defines, and an interaction that signs in whichever
// account the test chose next (no login page). `browse` plays the browser: plain fetch with manual
// redirects and a cookie jar, from the authorization URL to the redirect back to the client.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestAccount {
  sub: string;
  email: string;
  email_verified: boolean;
}

export interface IdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** the account the next interaction signs in */
  signInAs(account: TestAccount): void;
  /**
   * Opens `authorizationUrl` as a browser would and follows the provider's redirects until it sends
   * the browser to the client's redirect URI: its query (code, state, iss), or the provider's error.
   */
  browse(authorizationUrl: string): Promise<URLSearchParams>;
  close(): Promise<void>;
}

// oidc-provider ships no type declarations: the few members used here, typed by hand.
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ prompt: { name: string; details: Record<string, unknown> }; params: Record<string, unknown>; session?: { accountId?: string } }>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  Grant: new (init: { accountId: string; clientId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
}
type ProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

const OIDC_PROVIDER = 'oidc-provider';

export async function startIdentityProvider(options: { redirectUri: string }): Promise<IdentityProvider> {
  const { default: Provider } = (await import(OIDC_PROVIDER)) as { default: ProviderConstructor };
  const accounts = new Map<string, TestAccount>();
  let next: TestAccount | undefined;
  const clientId = 'platform-test-client';
  const clientSecret = 'platform-test-client-secret-0123456789';

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // As Google does: the scope's claims in the ID token itself, not only at the userinfo endpoint.
    conformIdTokenClaims: false,
    scopes: ['openid', 'email', 'profile'],
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    ttl: { AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // The test's consent is implied: every scope asked for is granted.
    async loadExistingGrant(ctx: any) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(String(ctx.oidc.params.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
  });

  const handle = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/')) {
      // The "login page": signs the chosen account in at once.
      void (async () => {
        try {
          if (!next) throw new Error('the test chose no account: call signInAs first');
          accounts.set(next.sub, next);
          await provider.interactionDetails(req, res);
          await provider.interactionFinished(req, res, { login: { accountId: next.sub } }, { mergeWithLastSubmission: false });
        } catch (err) {
          res.statusCode = 500;
          res.end(String(err));
        }
      })();
      return;
    }
    handle(req, res);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(account) {
      next = account;
    },
    async browse(authorizationUrl) {
      const jar = new Map<string, string>();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 10; hop++) {
        if (url.origin !== issuer) return url.searchParams;
        const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
        const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair!.indexOf('=');
          jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
        }
        const location = res.headers.get('location');
        if (res.status < 300 || res.status >= 400 || !location) {
          throw new Error(`the provider answered ${res.status} at ${url.pathname}: ${(await res.text()).slice(0, 300)}`);
        }
        await res.arrayBuffer();
        url = new URL(location, url);
      }
      throw new Error('too many redirects');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
