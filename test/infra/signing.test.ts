// The inbound webhook's signature: HMAC-SHA256 over timestamp and canonical body, constant-time,
// 5 minutes of skew either way, every refusal named.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { MAX_SKEW_MS, signWebhookBody, verifyWebhookSignature } from '../../infra/signing/webhook.ts';

const secret = 'whsec_test-secret';
const nowMs = Date.UTC(2025, 5, 1, 12);
const body = { signalId: 's-1', action: 'open', side: 'long', token: 'BTC', entry: [67_000, 67_500], stopLoss: 66_000.5 };
const verify = (headers: { timestampHeader?: string | string[]; signatureHeader?: string | string[] }, sent: unknown = body, at = nowMs) =>
  verifyWebhookSignature({ secret, timestampHeader: headers.timestampHeader, signatureHeader: headers.signatureHeader, body: sent, nowMs: at });

t.test('a body signed with the secret is accepted, whatever its key order', async (t) => {
  const headers = signWebhookBody({ secret, body, timestampMs: nowMs });
  t.strictSame(verify(headers), { ok: true, timestampMs: nowMs });
  const reordered = { stopLoss: 66_000.5, entry: [67_000, 67_500], token: 'BTC', side: 'long', action: 'open', signalId: 's-1' };
  t.strictSame(verify(headers, reordered), { ok: true, timestampMs: nowMs });
  t.strictSame(verify(headers, JSON.parse(' { "stopLoss" : 66000.50, "entry":[67000,67500.0],"token":"BTC","side":"long","action":"open","signalId":"s-1"}')), { ok: true, timestampMs: nowMs });
});

t.test('the signature is the hex HMAC-SHA256 of timestamp, a dot and the canonical JSON', async (t) => {
  const expected = createHmac('sha256', secret).update(`${nowMs}.{"a":[1,"x"],"b":1.5}`).digest('hex');
  t.strictSame(signWebhookBody({ secret, body: { b: 1.5, a: [1, 'x'] }, timestampMs: nowMs }), { timestampHeader: String(nowMs), signatureHeader: `sha256=${expected}` });
  t.strictSame(verify({ timestampHeader: String(nowMs), signatureHeader: `sha256=${expected.toUpperCase()}` }, { a: [1, 'x'], b: 1.5 }), { ok: true, timestampMs: nowMs }, 'hex in any case');
});

t.test('another secret, a tampered body or another timestamp is BAD_SIGNATURE', async (t) => {
  const headers = signWebhookBody({ secret, body, timestampMs: nowMs });
  t.strictSame(verifyWebhookSignature({ ...headers, secret: 'whsec_other', body, nowMs }), { ok: false, reason: 'BAD_SIGNATURE' });
  t.strictSame(verify(headers, { ...body, stopLoss: 66_000 }), { ok: false, reason: 'BAD_SIGNATURE' });
  t.strictSame(verify(headers, { ...body, extra: null }), { ok: false, reason: 'BAD_SIGNATURE' });
  t.strictSame(verify({ ...headers, timestampHeader: String(nowMs + 1) }), { ok: false, reason: 'BAD_SIGNATURE' });
});

t.test('a timestamp more than 5 minutes away either way is TIMESTAMP_SKEW', async (t) => {
  for (const skew of [MAX_SKEW_MS, -MAX_SKEW_MS]) t.equal(verify(signWebhookBody({ secret, body, timestampMs: nowMs + skew })).ok, true, `${skew} ms is within`);
  for (const skew of [MAX_SKEW_MS + 1, -MAX_SKEW_MS - 1, -nowMs + Math.floor(nowMs / 1000)]) {
    t.strictSame(verify(signWebhookBody({ secret, body, timestampMs: nowMs + skew })), { ok: false, reason: 'TIMESTAMP_SKEW' }, `${skew} ms`);
  }
});

t.test('missing or malformed headers are named', async (t) => {
  const { timestampHeader, signatureHeader } = signWebhookBody({ secret, body, timestampMs: nowMs });
  const cases: Array<[{ timestampHeader?: string | string[]; signatureHeader?: string | string[] }, string]> = [
    [{ signatureHeader }, 'MISSING_TIMESTAMP'],
    [{ timestampHeader }, 'MISSING_SIGNATURE'],
    [{ timestampHeader: '', signatureHeader }, 'MALFORMED_TIMESTAMP'],
    [{ timestampHeader: `${nowMs}.5`, signatureHeader }, 'MALFORMED_TIMESTAMP'],
    [{ timestampHeader: [timestampHeader, timestampHeader], signatureHeader }, 'MALFORMED_TIMESTAMP'],
    [{ timestampHeader, signatureHeader: signatureHeader.slice(0, -2) }, 'MALFORMED_SIGNATURE'],
    [{ timestampHeader, signatureHeader: `${signatureHeader}00` }, 'MALFORMED_SIGNATURE'],
    [{ timestampHeader, signatureHeader: signatureHeader.replace('sha256=', 'sha1=') }, 'MALFORMED_SIGNATURE'],
    [{ timestampHeader, signatureHeader: signatureHeader.replace('sha256=', '') }, 'MALFORMED_SIGNATURE'],
    [{ timestampHeader, signatureHeader: `sha256=${'z'.repeat(64)}` }, 'MALFORMED_SIGNATURE'],
    [{ timestampHeader, signatureHeader: [signatureHeader, signatureHeader] }, 'MALFORMED_SIGNATURE'],
  ];
  for (const [headers, reason] of cases) t.strictSame(verify(headers), { ok: false, reason }, JSON.stringify(headers));
  t.strictSame(verify({ timestampHeader, signatureHeader }, { n: NaN }), { ok: false, reason: 'UNSIGNABLE_BODY' });
  t.throws(() => signWebhookBody({ secret, body: { n: Infinity }, timestampMs: nowMs }), RangeError);
});
