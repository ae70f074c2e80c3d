// Sends one developer webhook (docs/decisions.md, "Developer webhooks: outbox, order and retries"):
// a POST of the body's exact text, signed as inbound signal webhooks are verified
// (infra/signing/webhook.ts: `X-SVC-Timestamp`, and `X-SVC-Signature` = `sha256=` HMAC-SHA256 of
// `timestamp + "." + body` under the agent's signing secret), through the public-only fetch
// (infra/public-fetch.ts: https, public addresses resolved once and pinned, no redirect, time and
// size bounds). It reports what happened; it never throws for the receiver's failures.
import { createPublicFetch } from './public-fetch.ts';
import { SIGNATURE_HEADER, signWebhookText, TIMESTAMP_HEADER } from './signing/webhook.ts';

export const WEBHOOK_ID_HEADER = 'x-svc-webhook-id';
export const WEBHOOK_TYPE_HEADER = 'x-svc-webhook-type';
/** The most bytes of a receiver's answer read: its body is not used, only its status. */
export const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_CHARS = 300;

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** tests only: a receiver on 127.0.0.1 counts as public */
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

function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'TimeoutError') return 'timeout';
  return `${e?.code ?? e?.name ?? 'Error'}: ${e?.message ?? String(err)}`.slice(0, MAX_ERROR_CHARS);
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const fetch = createPublicFetch({ ...options, maxBytes: WEBHOOK_MAX_RESPONSE_BYTES });
  return {
    async send(input) {
      const { timestampHeader, signatureHeader } = signWebhookText({ secret: input.secret, text: input.body, timestampMs: input.now.getTime() });
      const started = performance.now();
      const headers = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(input.body)),
        'user-agent': 'svc-webhooks/1',
        [TIMESTAMP_HEADER]: timestampHeader,
        [SIGNATURE_HEADER]: signatureHeader,
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
