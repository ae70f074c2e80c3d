// Sends one developer webhook (docs/decisions.md, "Developer webhooks: outbox, order and retries"):
// a POST of the body's exact text, signed with the inbound scheme's maths under a key of its own
// (infra/signing/webhook.ts `outboundSigningKey`: `X-SVC-Webhook-Signature` = `sha256=` HMAC-SHA256 of
// `timestamp + "." + body` under HMAC-SHA256(secret, label), never the secret itself, so a delivery
// is never a valid inbound signal), through the public-only fetch
// (infra/public-fetch.ts: https, public addresses resolved once and pinned, no redirect, time and
// size bounds). It reports what happened; it never throws for the receiver's failures.
import { createPublicFetch, NotPublicAddressError } from './public-fetch.ts';
import { outboundSigningKey, signWebhookText } from './signing/webhook.ts';

export const WEBHOOK_TIMESTAMP_HEADER = 'x-svc-webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'x-svc-webhook-signature';
export const WEBHOOK_ID_HEADER = 'x-svc-webhook-id';
export const WEBHOOK_TYPE_HEADER = 'x-svc-webhook-type';
/** The most bytes of a receiver's answer read: its body is not used, only its status. */
export const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** development and tests only (WEBHOOK_ALLOW_LOOPBACK, or a test's receiver): a receiver on loopback counts as public, over http too */
  allowLoopback?: boolean;
  /** tests only: the certificate authority the receiver's certificate is trusted by */
  ca?: string;
}

export interface WebhookSend {
  url: string;
  secret: string;
  /** the JSON text sent, exactly as signed */
  body: string;
  id: string;
  type: string;
  now: Date;
}

export interface WebhookSendResult {
  /** the receiver's status; null when no answer came */
  statusCode: number | null;
  /** why no answer came (a refused address, a time-out, a connection error) */
  error: string | null;
  durationMs: number;
}

export interface WebhookSender {
  send(input: WebhookSend): Promise<WebhookSendResult>;
}

/**
 * What a developer is told of a failed attempt: a category, never the error's text, which could
 * name what an internal host name resolves to (an address check's message) or whether it exists.
 */
export function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timeout';
  const code = e?.code ?? '';
  if (err instanceof NotPublicAddressError) return /only https/.test(err.message) ? 'https_required' : 'address_not_allowed';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failure';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (/^ERR_TLS|CERT|SSL/i.test(code) || /certificate|TLS/i.test(e?.message ?? '')) return 'tls_error';
  if (/^response body over/.test(e?.message ?? '')) return 'response_too_large';
  return 'connection_error';
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  // connections kept open: an agent's deliveries go one after another to one receiver
  const fetch = createPublicFetch({ ...options, maxBytes: WEBHOOK_MAX_RESPONSE_BYTES, loopbackHttp: options.allowLoopback === true, keepAlive: true });
  return {
    async send(input) {
      const { timestampHeader, signatureHeader } = signWebhookText({
        secret: outboundSigningKey(input.secret),
        text: input.body,
        timestampMs: input.now.getTime(),
      });
      const started = performance.now();
      const headers = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(input.body)),
        'user-agent': 'svc-webhooks/1',
        [WEBHOOK_TIMESTAMP_HEADER]: timestampHeader,
        [WEBHOOK_SIGNATURE_HEADER]: signatureHeader,
        [WEBHOOK_ID_HEADER]: input.id,
        [WEBHOOK_TYPE_HEADER]: input.type,
      };
      try {
        const res = await fetch(input.url, { method: 'POST', headers, body: input.body });
        return { statusCode: res.status, error: null, durationMs: Math.round(performance.now() - started) };
      } catch (err) {
        return { statusCode: null, error: describe(err), durationMs: Math.round(performance.now() - started) };
      }
    },
  };
}
