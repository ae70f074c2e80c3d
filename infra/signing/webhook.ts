// The signature of inbound signal webhooks (docs/domain-rules.md, Agent trades and signals): `X-SVC-Timestamp` is epoch milliseconds,
// `X-SVC-Signature` is `sha256=<hex HMAC-SHA256(secret, timestamp + "." + canonical JSON of the
// body)>`, RFC 8785 canonical JSON, so a client may serialise its body in any key order or spacing.
// The same HMAC over the body's bytes as sent is accepted too: it is checked first, without
// parsing, and a client that sends its canonical JSON (as the spec's examples do) passes it.
// The headers are read before the body arrives; compared in constant time; a timestamp more than
// 5 minutes from now either way is refused. Refusing a signature replayed inside the window needs
// a shared store (Redis) and is the route's.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../domain/shared/canonical-json.ts';

export const TIMESTAMP_HEADER = 'x-svc-timestamp';
export const SIGNATURE_HEADER = 'x-svc-signature';
export const MAX_SKEW_MS = 5 * 60_000;

const TIMESTAMP = /^\d{1,16}$/;
const SIGNATURE = /^sha256=([0-9a-fA-F]*)$/;
const DIGEST_BYTES = 32;

/** A header as Node gives it: absent, once, or repeated. */
type Header = string | string[] | undefined;

export type WebhookSignatureRefusal =
  | 'MISSING_TIMESTAMP'
  | 'MALFORMED_TIMESTAMP'
  | 'TIMESTAMP_SKEW'
  | 'MISSING_SIGNATURE'
  | 'MALFORMED_SIGNATURE'
  | 'BAD_SIGNATURE'
  /** no JSON body came with the headers: there is nothing they could sign */
  | 'UNSIGNABLE_BODY';

/** A delivery's signature headers, well formed and fresh: what the body must match. */
export interface WebhookSignature {
  timestamp: string;
  timestampMs: number;
  /** the header as sent (the replay check spends it) */
  header: string;
  digest: Buffer;
}

export type WebhookHeadersResult = { ok: true; signature: WebhookSignature } | { ok: false; reason: WebhookSignatureRefusal };

/** The signature headers of a delivery sent at most 5 minutes from `nowMs`; the reason when they are not. */
export function readWebhookHeaders(input: { timestampHeader: Header; signatureHeader: Header; nowMs: number }): WebhookHeadersResult {
  const { timestampHeader, signatureHeader, nowMs } = input;
  if (timestampHeader === undefined) return { ok: false, reason: 'MISSING_TIMESTAMP' };
  if (typeof timestampHeader !== 'string' || !TIMESTAMP.test(timestampHeader)) return { ok: false, reason: 'MALFORMED_TIMESTAMP' };
  const timestampMs = Number(timestampHeader);
  if (Math.abs(nowMs - timestampMs) > MAX_SKEW_MS) return { ok: false, reason: 'TIMESTAMP_SKEW' };
  if (signatureHeader === undefined) return { ok: false, reason: 'MISSING_SIGNATURE' };
  const hex = typeof signatureHeader === 'string' ? SIGNATURE.exec(signatureHeader)?.[1] : undefined;
  if (hex === undefined || hex.length !== DIGEST_BYTES * 2) return { ok: false, reason: 'MALFORMED_SIGNATURE' };
  return { ok: true, signature: { timestamp: timestampHeader, timestampMs, header: signatureHeader as string, digest: Buffer.from(hex, 'hex') } };
}

const hmacOf = (secret: string, timestamp: string, signed: string | Buffer) => createHmac('sha256', secret).update(`${timestamp}.`).update(signed).digest();

/** Whether the signature covers these bytes of the body, as received: no parsing needed. */
export function signsBytes(secret: string, signature: WebhookSignature, bytes: Buffer): boolean {
  return timingSafeEqual(signature.digest, hmacOf(secret, signature.timestamp, bytes));
}

/** Whether the signature covers the canonical JSON of the parsed body (any key order or spacing was sent). */
export function signsValue(secret: string, signature: WebhookSignature, body: unknown): boolean {
  const canonical = canonicalText(body);
  return canonical !== undefined && timingSafeEqual(signature.digest, hmacOf(secret, signature.timestamp, canonical));
}

function canonicalText(body: unknown): string | undefined {
  try {
    return canonicalJson(body);
  } catch {
    return undefined;
  }
}

/** The two header values a client sends with `body` at `timestampMs` (tests, SDKs, the replay tool): over its canonical JSON, as the spec asks. */
export function signWebhookBody(input: { secret: string; body: unknown; timestampMs: number }): { timestampHeader: string; signatureHeader: string } {
  const canonical = canonicalText(input.body);
  if (canonical === undefined) throw new RangeError('the body has no JSON text to sign');
  return signWebhookText({ secret: input.secret, text: canonical, timestampMs: input.timestampMs });
}

/** The two header values for a body sent exactly as `text` (its bytes as UTF-8), which a delivery also accepts. */
export function signWebhookText(input: { secret: string; text: string; timestampMs: number }): { timestampHeader: string; signatureHeader: string } {
  const timestampHeader = String(Math.trunc(input.timestampMs));
  return { timestampHeader, signatureHeader: `sha256=${hmacOf(input.secret, timestampHeader, Buffer.from(input.text, 'utf8')).toString('hex')}` };
}

/** What the outbound signing key is derived under: a label no inbound signature uses. */
const OUTBOUND_LABEL = 'svc-developer-webhooks/v1';

/**
 * The key developer webhooks (outbound) are signed with: HMAC-SHA256 of a fixed label under the
 * agent's signing secret, hex. Outbound and inbound signatures never share a key, so a delivery
 * seen by anyone (a receiver's logs, a request bin) is never a valid signal to the agent's webhook.
 * A receiver derives it once from the secret its listing revealed.
 */
export function outboundSigningKey(secret: string): string {
  return createHmac('sha256', secret).update(OUTBOUND_LABEL).digest('hex');
}
