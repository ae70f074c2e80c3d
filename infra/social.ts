// The social identity provider (type GOOGLE): one OpenID Connect provider, spoken to through
// openid-client. Discovery happens on first use and is kept (retried after a failure); the
// authorization code grant checks state, PKCE (S256) and nonce, and the ID token (issuer, audience,
// expiry, signature against the provider's keys).
import * as oidc from 'openid-client';

export interface SocialSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/** Who the provider says signed in. */
export interface SocialIdentity {
  /** the provider's stable subject identifier (`sub`) */
  subject: string;
  email?: string;
  emailVerified: boolean;
}

/** `unavailable`: the provider did not answer (retry later); `rejected`: it refused, or its answer did not verify. */
export class SocialProviderError extends Error {
  override name = 'SocialProviderError';
  constructor(
    readonly kind: 'unavailable' | 'rejected',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface SocialProvider {
  /** The address the browser is sent to: code flow, PKCE S256 challenge of `codeVerifier`, the state and the nonce. */
  authorizationUrl(request: { state: string; nonce: string; codeVerifier: string }): Promise<string>;
  /**
   * Exchanges the code the provider sent back with `state` (and `iss`, RFC 9207, when the client
   * passed it on; else the configured issuer, the only one a state can belong to).
   */
  exchange(response: { code: string; state: string; iss?: string; nonce: string; codeVerifier: string }): Promise<SocialIdentity>;
}

const SCOPE = 'openid email';
const TIMEOUT_SECONDS = 10;

export function createSocialProvider(settings: SocialSettings): SocialProvider {
  let discovered: Promise<oidc.Configuration> | undefined;

  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= discover(settings).catch((err: unknown) => {
      discovered = undefined;
      throw new SocialProviderError('unavailable', 'the identity provider’s discovery failed', { cause: err });
    });
    return discovered;
  };

  return {
    async authorizationUrl({ state, nonce, codeVerifier }) {
      const config = await configuration();
      return oidc
        .buildAuthorizationUrl(config, {
          redirect_uri: settings.redirectUri,
          scope: SCOPE,
          response_type: 'code',
          code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        })
        .toString();
    },

    async exchange({ code, state, iss, nonce, codeVerifier }) {
      const config = await configuration();
      const callback = new URL(settings.redirectUri);
      callback.searchParams.set('code', code);
      callback.searchParams.set('state', state);
      if (iss !== undefined || config.serverMetadata().authorization_response_iss_parameter_supported) {
        callback.searchParams.set('iss', iss ?? config.serverMetadata().issuer);
      }
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          expectedNonce: nonce,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) throw new SocialProviderError('rejected', 'the provider returned no ID token');
        return {
          subject: claims.sub,
          ...(typeof claims.email === 'string' ? { email: claims.email } : {}),
          emailVerified: claims.email_verified === true || claims.email_verified === 'true',
        };
      } catch (err) {
        throw asProviderError(err);
      }
    },
  };
}

async function discover(settings: SocialSettings): Promise<oidc.Configuration> {
  const insecure = new URL(settings.issuer).protocol === 'http:'; // a local provider; production requires https (infra/config.ts)
  // The ID token's signature is checked against the provider's published keys too, not only trusted
  // because it came over the token endpoint's connection.
  const execute = [oidc.enableNonRepudiationChecks, ...(insecure ? [oidc.allowInsecureRequests] : [])];
  return oidc.discovery(
    new URL(settings.issuer),
    settings.clientId,
    { client_secret: settings.clientSecret, redirect_uris: [settings.redirectUri] },
    oidc.ClientSecretBasic(settings.clientSecret),
    { timeout: TIMEOUT_SECONDS, execute },
  );
}

/** A network failure or a 5xx is the provider being unavailable; every other failure is a refusal. */
function asProviderError(err: unknown): SocialProviderError {
  if (err instanceof SocialProviderError) return err;
  if (err instanceof TypeError && err.cause !== undefined)
    return new SocialProviderError('unavailable', 'the identity provider did not answer', { cause: err });
  if (err instanceof oidc.ClientError && err.cause instanceof Response && err.cause.status >= 500) {
    return new SocialProviderError('unavailable', `the identity provider answered ${err.cause.status}`, { cause: err });
  }
  const detail = err instanceof oidc.ResponseBodyError ? err.error : err instanceof Error ? ((err as { code?: string }).code ?? err.name) : 'unknown';
  return new SocialProviderError('rejected', `the identity provider’s answer was refused (${detail})`, { cause: err });
}
