// The authorization server's keys, all derived from the master secret (config.JWT_SECRET, whose
// development default production refuses) with infra/secrets.ts, one HKDF purpose each: every API
// process derives the same keys, so cookies and signatures made by one are read by the others.
import { createHmac, createPrivateKey, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../../infra/secrets.ts';

/** PKCS #8 prefix of an Ed25519 private key (RFC 8410): the 32 bytes that follow are the seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface OAuthKeys {
  /** the provider's signing key set (an Ed25519 key; it signs nothing we issue today, see docs/decisions.md) */
  jwks: { keys: Array<Record<string, unknown>> };
  /** keys of the provider's signed cookies (session, interaction) */
  cookieKeys: string[];
  /** the consent page's CSRF token of an interaction */
  csrfToken(uid: string): string;
  csrfTokenMatches(uid: string, token: string | undefined): boolean;
}

export function oauthKeys(masterSecret: string): OAuthKeys {
  const seed = deriveKey(masterSecret, 'oauth-signing-key');
  const jwk = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  const csrfKey = deriveKey(masterSecret, 'oauth-consent-csrf');
  const csrfToken = (uid: string) => createHmac('sha256', csrfKey).update(uid).digest('base64url');
  return {
    jwks: { keys: [{ ...jwk, kid: 'oauth-ed25519-1', alg: 'EdDSA', use: 'sig' }] },
    cookieKeys: [deriveKey(masterSecret, 'oauth-cookies').toString('base64url')],
    csrfToken,
    csrfTokenMatches(uid, token) {
      if (!token) return false;
      const expected = Buffer.from(csrfToken(uid));
      const given = Buffer.from(token);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
