// The signature of inbound signal webhooks (domain.md): `X-SVC-Timestamp` is epoch milliseconds,
// `X-SVC-Signature` is `sha256=<hex HMAC-SHA256(secret, timestamp + "." + canonical JSON of the
// body)>`, RFC 8785 canonical JSON, so a client may serialise its body in any key order or spacing.
// Compared in constant time; a timestamp more than 5 minutes from now either way is refused.
// Refusing a signature replayed inside the window needs a shared store (Redis) and is the route's.
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
  /** the body has no JSON text (NaN, a bigint…): it cannot have been signed */
  | 'UNSIGNABLE_BODY';
export type WebhookSignatureResult = { ok: true; timestampMs: number } | { ok: false; reason: WebhookSignatureRefusal };

function digest(secret: string, timestamp: string, body: unknown): Buffer | undefined {
  let canonical: string;
  try {
    canonical = canonicalJson(body);
  } catch {
    return undefined;
  }
  return createHmac('sha256', secret).update(`${timestamp}.${canonical}`).digest();
}

/** Whether the request was signed with `secret` within 5 minutes of `nowMs`; the reason when not. */
export function verifyWebhookSignature(input: { secret: string; timestampHeader: Header; signatureHeader: Header; body: unknown; nowMs: number }): WebhookSignatureResult {
  const { secret, timestampHeader, signatureHeader, body, nowMs } = input;
  if (timestampHeader === undefined) return { ok: false, reason: 'MISSING_TIMESTAMP' };
  if (typeof timestampHeader !== 'string' || !TIMESTAMP.test(timestampHeader)) return { ok: false, reason: 'MALFORMED_TIMESTAMP' };
  const timestampMs = Number(timestampHeader);
  if (Math.abs(nowMs - timestampMs) > MAX_SKEW_MS) return { ok: false, reason: 'TIMESTAMP_SKEW' };
  if (signatureHeader === undefined) return { ok: false, reason: 'MISSING_SIGNATURE' };
  const hex = typeof signatureHeader === 'string' ? SIGNATURE.exec(signatureHeader)?.[1] : undefined;
  if (hex === undefined || hex.length !== DIGEST_BYTES * 2) return { ok: false, reason: 'MALFORMED_SIGNATURE' };
  const expected = digest(secret, timestampHeader, body);
  if (expected === undefined) return { ok: false, reason: 'UNSIGNABLE_BODY' };
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected) ? { ok: true, timestampMs } : { ok: false, reason: 'BAD_SIGNATURE' };
}

/** The two header values a client sends with `body` at `timestampMs` (tests, SDKs, the replay tool). */
export function signWebhookBody(input: { secret: string; body: unknown; timestampMs: number }): { timestampHeader: string; signatureHeader: string } {
  const timestampHeader = String(Math.trunc(input.timestampMs));
  const signed = digest(input.secret, timestampHeader, input.body);
  if (signed === undefined) throw new RangeError('the body has no JSON text to sign');
  return { timestampHeader, signatureHeader: `sha256=${signed.toString('hex')}` };
}
