// The statements' signing keys and their signatures (docs/decisions.md, "Signed statements"): a
// detached JWS (RFC 7515, appendix F) over the statement's RFC 8785 canonical JSON. Keys come from
// STATEMENT_SIGNING_KEYS (private JWKs, Ed25519 or P-256, each with its `kid`): the first signs,
// the others stay published for verification, so a key is rotated by putting the new one first.
// Without it (development and test only: production refuses to start, infra/config.ts) one Ed25519
// key is derived from JWT_SECRET, so every process of a deployment signs with the same key.
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { flattenedVerify, FlattenedSign, importJWK, type JWK } from 'jose';
import { z } from 'zod';
import { canonicalJson } from '../domain/shared/canonical-json.ts';
import { deriveKey } from './secrets.ts';

const okp = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), d: z.string().min(1), x: z.string().min(1), kid: z.string().min(1).max(100) });
const ec = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  d: z.string().min(1),
  x: z.string().min(1),
  y: z.string().min(1),
  kid: z.string().min(1).max(100),
});

/** STATEMENT_SIGNING_KEYS: a JSON array of private JWKs with distinct `kid`s, the signing key first. */
export const statementSigningKeysSchema = z
  .array(z.discriminatedUnion('kty', [okp, ec]))
  .min(1, 'must hold at least one private JWK')
  .refine((keys) => new Set(keys.map((k) => k.kid)).size === keys.length, 'each key needs a kid of its own');
export type StatementSigningKey = z.infer<typeof statementSigningKeysSchema>[number];

/** A JSON text of private JWKs, parsed (for the configuration schema). */
export const statementSigningKeysText = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON array of private JWKs' });
    return z.NEVER;
  }
});

/** PKCS #8 prefix of an Ed25519 private key (RFC 8410): the 32 bytes that follow are the seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

type Alg = 'EdDSA' | 'ES256';
export interface PublicStatementKey {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: Alg;
  use: 'sig';
}

export interface StatementKeys {
  /** the key that signs: its private half never leaves this object */
  signer: { kid: string; alg: Alg; key: KeyObject };
  /** every key's public half, the signing key first: GET /.well-known/jwks.json */
  jwks: { keys: PublicStatementKey[] };
}

function publicHalf(privateKey: KeyObject, kid: string, alg: Alg): PublicStatementKey {
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
  return { kty: kty!, crv: crv!, x: x!, ...(y ? { y } : {}), kid, alg, use: 'sig' };
}

/** The development key: Ed25519 from the master secret, its kid naming its public key's digest. */
function developmentKey(masterSecret: string): { kid: string; alg: Alg; key: KeyObject } {
  const seed = deriveKey(masterSecret, 'statement-signing-key');
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const x = createPublicKey(key).export({ format: 'jwk' }).x!;
  return { kid: `dev-${createHash('sha256').update(x).digest('hex').slice(0, 12)}`, alg: 'EdDSA', key };
}

const cache = new WeakMap<object, StatementKeys>();

/** The keys of a configuration (parsed once per configuration object). */
export function statementKeys(config: { STATEMENT_SIGNING_KEYS?: StatementSigningKey[] | undefined; JWT_SECRET: string }): StatementKeys {
  const cached = cache.get(config);
  if (cached) return cached;
  const keys = config.STATEMENT_SIGNING_KEYS?.map(({ kid, ...jwk }) => ({
    kid,
    alg: (jwk.kty === 'OKP' ? 'EdDSA' : 'ES256') as Alg,
    key: createPrivateKey({ key: jwk, format: 'jwk' }),
  })) ?? [developmentKey(config.JWT_SECRET)];
  const made = { signer: keys[0]!, jwks: { keys: keys.map((k) => publicHalf(k.key, k.kid, k.alg)) } };
  cache.set(config, made);
  return made;
}

/** The detached signature of a statement, and what an auditor needs to check it. */
export interface StatementSignature {
  /** RFC 8785 */
  canonicalization: 'JCS';
  kid: string;
  alg: Alg;
  /** the JWS protected header, base64url */
  protected: string;
  signature: string;
  /** the same JWS in compact form with the payload left out: `<protected>..<signature>` */
  jws: string;
  /** SHA-256 of the canonical JSON signed, hex */
  digest: string;
}

/** The bytes a statement's signature covers: its RFC 8785 canonical JSON, UTF-8. */
export const statementBytes = (statement: unknown): Uint8Array => new TextEncoder().encode(canonicalJson(statement));

export const statementDigest = (statement: unknown): string => createHash('sha256').update(statementBytes(statement)).digest('hex');

export async function signStatement(keys: StatementKeys, statement: unknown): Promise<StatementSignature> {
  const { kid, alg, key } = keys.signer;
  const bytes = statementBytes(statement);
  const jws = await new FlattenedSign(bytes).setProtectedHeader({ alg, kid }).sign(key);
  return {
    canonicalization: 'JCS',
    kid,
    alg,
    protected: jws.protected!,
    signature: jws.signature,
    jws: `${jws.protected}..${jws.signature}`,
    digest: createHash('sha256').update(bytes).digest('hex'),
  };
}

/**
 * Whether `signature` signs `statement` under one of the published keys (found by its `kid`): the
 * detached payload goes back in as the base64url of the canonical JSON (README, "For auditors").
 */
export async function verifyStatement(
  jwks: { keys: JWK[] },
  statement: unknown,
  signature: Pick<StatementSignature, 'protected' | 'signature'>,
): Promise<boolean> {
  try {
    await flattenedVerify(
      { protected: signature.protected, signature: signature.signature, payload: Buffer.from(statementBytes(statement)).toString('base64url') },
      async (header) => {
        const jwk = jwks.keys.find((k) => k.kid === header.kid);
        if (!jwk || !header.alg) throw new RangeError('no published key has this kid');
        return importJWK(jwk, header.alg);
      },
    );
    return true;
  } catch {
    return false;
  }
}
