// Keys derived from the master secret (config.JWT_SECRET), and the secrets the service must show
// again to itself (signing secrets) but never store in the clear: AES-256-GCM under such a key.
// Each purpose derives its own key, so a ciphertext of one purpose never opens under another.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const SALT = 'agent-trading/secrets/v1';
const IV_BYTES = 12;

/**
 * The one key derivation from the master secret: HKDF-SHA256, one key per purpose, so a key leaked
 * from one use (a digest key, a cipher key) neither signs tokens nor opens another purpose's data.
 * Sealed signing secrets depend on these exact values: the salt and the derivation never change.
 */
export function deriveKey(masterSecret: string, purpose: string): Buffer {
  const id = `${purpose}\u0000${masterSecret}`;
  let key = derived.get(id);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', masterSecret, SALT, purpose, 32));
    // A handful of purposes and one or two master secrets per process: the map stays tiny. HKDF on
    // every signed request was a third of its extra cost (bench/access.ts).
    if (derived.size < 64) derived.set(id, key);
  }
  return key;
}

const derived = new Map<string, Buffer>();

/** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function encryptSecret(plaintext: string, masterSecret: string, purpose: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(masterSecret, purpose), iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** Throws when the ciphertext was altered or sealed under another key or purpose. */
export function decryptSecret(sealed: string, masterSecret: string, purpose: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('unsupported secret format');
  const decipher = createDecipheriv('aes-256-gcm', deriveKey(masterSecret, purpose), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(purpose));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/** Purpose of an agent's inbound webhook signing secret. */
export const AGENT_SIGNING_SECRET = 'agent-inbound-signing-secret';
