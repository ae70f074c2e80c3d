// A client of API key mode: it signs each request as the spec's Authentication point 3 says, with
// the ability to tamper with any part of it after signing (for the attack tests).
import { requestSignature } from '../../infra/api-keys.ts';
import type { TestApp } from './app.ts';

export interface ApiKeyCredentials {
  apiKey: string;
  secretKey: string;
}

export interface SignedRequestOptions {
  body?: unknown;
  /** epoch ms written in x-timestamp (default now) */
  timestampMs?: number;
  /** no x-signature / x-timestamp at all */
  unsigned?: boolean;
  /** what is signed, when it differs from what is sent (tampering) */
  signed?: { method?: string; path?: string; body?: string; timestamp?: string };
  /** a signature to send instead (replays) */
  signature?: string;
}

export async function signedApi(app: Pick<TestApp, 'url'>, key: ApiKeyCredentials, method: string, path: string, options: SignedRequestOptions = {}) {
  const body = options.body === undefined ? '' : JSON.stringify(options.body);
  const timestamp = String(options.timestampMs ?? Date.now());
  const signature =
    options.signature ??
    requestSignature(key.secretKey, {
      timestamp: options.signed?.timestamp ?? timestamp,
      method: options.signed?.method ?? method,
      path: options.signed?.path ?? path,
      body: options.signed?.body ?? body,
    });
  const headers: Record<string, string> = { 'x-api-key': key.apiKey };
  if (!options.unsigned) Object.assign(headers, { 'x-timestamp': timestamp, 'x-signature': signature });
  if (body) headers['content-type'] = 'application/json';
  const res = await fetch(`${app.url}${path}`, { method, headers, ...(body ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers, signature };
}
