// The inbound webhook's signature: HMAC-SHA256 over timestamp and body, as sent or as canonical
// JSON, constant-time, 5 minutes of skew either way, every refusal of the headers named.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { MAX_SKEW_MS, readWebhookHeaders, signsBytes, signsValue, signWebhookBody, type WebhookSignature } from '../../infra/signing/webhook.ts';

const secret = 'whsec_test-secret';
const nowMs = Date.UTC(2025, 5, 1, 12);
const body = { signalId: 's-1', action: 'open', side: 'long', token: 'BTC', entry: [67_000, 67_500], stopLoss: 66_000.5 };
type Headers = { timestampHeader?: string | string[]; signatureHeader?: string | string[] };
const read = (headers: Headers, at = nowMs) =>
  readWebhookHeaders({ timestampHeader: headers.timestampHeader, signatureHeader: headers.signatureHeader, nowMs: at });
function signatureOf(headers: Headers, at = nowMs): WebhookSignature {
  const result = read(headers, at);
  if (!result.ok) throw new Error(`headers refused: ${result.reason}`);
  return result.signature;
}
const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');

t.test('a body signed with the secret is accepted, whatever its key order', async (t) => {
  const signature = signatureOf(signWebhookBody({ secret, body, timestampMs: nowMs }));
  t.equal(signature.timestampMs, nowMs);
  t.ok(signsValue(secret, signature, body));
  const reordered = { stopLoss: 66_000.5, entry: [67_000, 67_500], token: 'BTC', side: 'long', action: 'open', signalId: 's-1' };
  t.ok(signsValue(secret, signature, reordered));
  t.ok(
    signsValue(
      secret,
      signature,
      JSON.parse(' { "stopLoss" : 66000.50, "entry":[67000,67500.0],"token":"BTC","side":"long","action":"open","signalId":"s-1"}'),
    ),
  );
});

t.test('the signature is the hex HMAC-SHA256 of timestamp, a dot and the canonical JSON', async (t) => {
  const expected = hmac(`${nowMs}.{"a":[1,"x"],"b":1.5}`);
  t.strictSame(signWebhookBody({ secret, body: { b: 1.5, a: [1, 'x'] }, timestampMs: nowMs }), {
    timestampHeader: String(nowMs),
    signatureHeader: `sha256=${expected}`,
  });
  t.ok(
    signsValue(secret, signatureOf({ timestampHeader: String(nowMs), signatureHeader: `sha256=${expected.toUpperCase()}` }), { a: [1, 'x'], b: 1.5 }),
    'hex in any case',
  );
});

t.test('the same HMAC over the bytes as sent is accepted without parsing them', async (t) => {
  const sent = Buffer.from(' {"b": 1.5,\n "a": [1, "x"]} ');
  const signature = signatureOf({ timestampHeader: String(nowMs), signatureHeader: `sha256=${hmac(`${nowMs}.${sent.toString('utf8')}`)}` });
  t.ok(signsBytes(secret, signature, sent));
  t.notOk(signsValue(secret, signature, JSON.parse(sent.toString('utf8'))), 'not the canonical JSON: that signature is another');
  t.notOk(signsBytes(secret, signature, Buffer.from('{"b":1.5,"a":[1,"x"]}')), 'other bytes of the same value');
  const canonical = Buffer.from('{"a":[1,"x"],"b":1.5}');
  t.ok(
    signsBytes(secret, signatureOf(signWebhookBody({ secret, body: JSON.parse(canonical.toString('utf8')), timestampMs: nowMs })), canonical),
    'canonical JSON sent as signed passes the bytes check',
  );
});

t.test('another secret, a tampered body or another timestamp does not match', async (t) => {
  const headers = signWebhookBody({ secret, body, timestampMs: nowMs });
  t.notOk(signsValue('whsec_other', signatureOf(headers), body));
  t.notOk(signsValue(secret, signatureOf(headers), { ...body, stopLoss: 66_000 }));
  t.notOk(signsValue(secret, signatureOf(headers), { ...body, extra: null }));
  t.notOk(signsValue(secret, signatureOf({ ...headers, timestampHeader: String(nowMs + 1) }), body));
  t.notOk(signsValue(secret, signatureOf(headers), { n: NaN }), 'a value without JSON text matches nothing');
});

t.test('a timestamp more than 5 minutes away either way is TIMESTAMP_SKEW', async (t) => {
  for (const skew of [MAX_SKEW_MS, -MAX_SKEW_MS]) t.equal(read(signWebhookBody({ secret, body, timestampMs: nowMs + skew })).ok, true, `${skew} ms is within`);
  for (const skew of [MAX_SKEW_MS + 1, -MAX_SKEW_MS - 1, -nowMs + Math.floor(nowMs / 1000)]) {
    t.strictSame(read(signWebhookBody({ secret, body, timestampMs: nowMs + skew })), { ok: false, reason: 'TIMESTAMP_SKEW' }, `${skew} ms`);
  }
});

t.test('missing or malformed headers are named', async (t) => {
  const { timestampHeader, signatureHeader } = signWebhookBody({ secret, body, timestampMs: nowMs });
  const cases: Array<[Headers, string]> = [
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
  for (const [headers, reason] of cases) t.strictSame(read(headers), { ok: false, reason }, JSON.stringify(headers));
  t.throws(() => signWebhookBody({ secret, body: { n: Infinity }, timestampMs: nowMs }), RangeError);
});
