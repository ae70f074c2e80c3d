// Bounded work before parsing, through HTTP: a body's keys and elements are counted before it is
// parsed, each route takes the largest body it needs and no more, the signal webhook authenticates
// a delivery before parsing its body and counts the refused ones per address and per agent, and a
// validation error names a few problems rather than echoing the body. (The event loop's latency
// under a flood is bench/stalls.ts's figure.)
import { createHmac } from 'node:crypto';
import t from 'tap';
import { jsonMembersMessage, MAX_JSON_MEMBERS } from '../../api/plugins/json-bounds.ts';
import { signWebhookBody } from '../../infra/signing/webhook.ts';
import { api, apiWithConfig, startTestApp } from '../support/app.ts';
import { listedFollowableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';
const LISTING_MEMBERS = 4_096;
const webhook = (agentId: string) => `/api/v1/signals/${agentId}`;
/** n keys, left unterminated: JSON.parse would answer a syntax error, so a refusal naming the members shows it never ran. */
const unterminatedKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}`;

let signedAt = Date.now();
/** The headers of a delivery signed over these bytes as sent; each gets a timestamp of its own, so no signature repeats. */
function signedBytes(secret: string, text: string): Record<string, string> {
  const timestamp = String((signedAt = Math.max(Date.now(), signedAt + 1)));
  const digest = createHmac('sha256', secret).update(`${timestamp}.${text}`).digest('hex');
  return { 'x-svc-timestamp': timestamp, 'x-svc-signature': `sha256=${digest}` };
}

/** A listing with every list at its longest and the descriptions in a script of three UTF-8 bytes a character. */
function largestListing() {
  const long = (prefix: string, i: number, length: number) => `${prefix}${i} `.padEnd(length, 'x');
  const keywordLists = [
    'buyKeywords',
    'sellKeywords',
    'longKeywords',
    'shortKeywords',
    'tpKeywords',
    'slKeywords',
    'leverageKeywords',
    'cancelKeywords',
    'breakevenKeywords',
    'partialCloseKeywords',
    'breakoutAboveKeywords',
    'breakoutBelowKeywords',
    'entryZoneKeywords',
  ];
  const rule = Object.fromEntries(keywordLists.map((field, f) => [field, Array.from({ length: 100 }, (_, i) => long(`kw${f}n`, i, 100))]));
  const channel = (i: number) => ({
    channelId: long('id', i, 200),
    channelUsername: long('user', i, 200),
    channelName: long('name', i, 200),
    channelIconUrl: `https://example.test/${'i'.repeat(150)}/${i}.png`,
    inviteUrl: `https://t.me/${'j'.repeat(150)}${i}`,
    linkedChatInput: 'c'.repeat(500),
    lastVerificationError: 'e'.repeat(1000),
    lastVerificationErrorCode: 'E'.repeat(100),
  });
  return {
    name: 'Largest listing',
    description: '漢'.repeat(2000),
    strategyDescription: '漢'.repeat(5000),
    tags: Array.from({ length: 20 }, (_, i) => long('tag', i, 40)),
    connectedChannels: Array.from({ length: 20 }, (_, i) => channel(i)),
    signalDetectionRule: { ...rule, strategyPrefix: 'p'.repeat(100) },
    signalExecutionDefaults: {
      takeProfitTiers: Array.from({ length: 20 }, (_, i) => ({ closePercent: 5, whenPositionPercent: i + 1 })),
      tokenWhitelist: Array.from({ length: 500 }, (_, i) => long('white', i, 100)),
      tokenBlacklist: Array.from({ length: 500 }, (_, i) => long('black', i, 100)),
    },
  };
}

t.test('bounded work before parsing', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'bounded-dev@example.test');
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const agent = await listedFollowableAgent(app, tokens, { name: 'Bounded' }, { live: true });

  await t.test('60,000 keys are refused before they are parsed: by size where bodies are small, by count where they may be large', async (t) => {
    const lookup = await api(app, 'POST', '/api/auth/lookup', { rawBody: `${unterminatedKeys(60_000)}}` });
    t.equal(lookup.status, 413);
    t.equal(lookup.body.error.reason, 'BODY_TOO_LARGE');
    const listing = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, rawBody: unterminatedKeys(60_000) });
    t.equal(listing.status, 413, 'within the listing route’s 1 MiB');
    t.match(listing.body.error, { reason: 'BODY_TOO_LARGE', message: jsonMembersMessage(LISTING_MEMBERS) }, 'refused by the count, not by JSON.parse');
    const small = await api(app, 'POST', '/api/auth/lookup', { rawBody: `[${'0,'.repeat(MAX_JSON_MEMBERS)}` });
    t.equal(small.status, 413);
    t.equal(small.body.error.message, jsonMembersMessage(MAX_JSON_MEMBERS), `a small body of more than ${MAX_JSON_MEMBERS} elements too`);
  });

  await t.test('each route takes the largest body it needs, and no more', async (t) => {
    const escapedText = `{"signalId":"long-text","text":"${'\\u6f22'.repeat(10_000)}"}`;
    const longest = await api(app, 'POST', webhook(agent.agentId), { rawBody: escapedText, headers: signedBytes(agent.secret, escapedText) });
    t.equal(longest.status, 200, `a text signal of 10,000 escaped characters (${escapedText.length} bytes)`);
    t.equal(longest.body.data?.outcome, 'unmatched');
    const tooLong = JSON.stringify({ signalId: 'too-long', text: 'a'.repeat(70_000) });
    const refused = await api(app, 'POST', webhook(agent.agentId), { rawBody: tooLong, headers: signedBytes(agent.secret, tooLong) });
    t.equal(refused.status, 413, 'a signed delivery over 64 KiB');
    t.equal(refused.body.error?.reason, 'BODY_TOO_LARGE');
    const captcha = await api(app, 'POST', '/api/auth/lookup', { body: { email: 'big@example.test', fingerprint: 'fp', recaptcha: 'r'.repeat(17_000) } });
    t.equal(captcha.status, 413, 'a sign-in body over 16 KiB');

    const largest = largestListing();
    const listed = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: largest });
    t.equal(listed.status, 201, `the largest listing (${Buffer.byteLength(JSON.stringify(largest))} bytes): ${JSON.stringify(listed.body).slice(0, 300)}`);
    const notes = `{"notes":"${'\\u6f22'.repeat(5000)}"}`;
    const reviewed = await api(app, 'POST', `/api/admin/developer-agents/${listed.body.data.id}/approve`, { token: admin.accessToken, rawBody: notes });
    t.equal(reviewed.status, 200, `review notes of 5,000 escaped characters (${notes.length} bytes)`);
    const prices = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`${i}`.padStart(64, 'S'), 1_000.123456]));
    const priced = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices } });
    t.equal(priced.status, 200, `500 prices of 64-character symbols (${JSON.stringify({ prices }).length} bytes, 501 members)`);
  });

  await t.test('the webhook authenticates a delivery before parsing its body', async (t) => {
    const path = webhook(agent.agentId);
    const unsigned = await api(app, 'POST', path, { rawBody: '{"text": not json' });
    t.equal(unsigned.status, 401, 'unsigned: refused on its headers, the body never parsed');
    t.match(unsigned.body.error, { reason: 'INVALID_SIGNATURE', signatureProblem: 'MISSING_TIMESTAMP' });
    const forged = signWebhookBody({ secret: 'not-the-secret', body: {}, timestampMs: Date.now() });
    const forgedHeaders = { 'x-svc-timestamp': forged.timestampHeader, 'x-svc-signature': forged.signatureHeader };
    for (const rawBody of ['{"text": not json', `${unterminatedKeys(MAX_JSON_MEMBERS + 1)}}`]) {
      const res = await api(app, 'POST', path, { rawBody, headers: forgedHeaders });
      t.equal(res.status, 401, 'a forged signature learns nothing of its body: not its syntax, not its size');
      t.match(res.body.error, { reason: 'INVALID_SIGNATURE', signatureProblem: 'BAD_SIGNATURE' });
    }
    const spaced = '{ "text" : "gm, as sent",  "signalId": "bytes-1" }';
    const bytes = await api(app, 'POST', path, { rawBody: spaced, headers: signedBytes(agent.secret, spaced) });
    t.equal(bytes.status, 200, 'signed over the bytes as sent, spacing and key order included');
    t.equal(bytes.body.data?.signalId, 'bytes-1');
    const canonical = { signalId: 'canonical-1', text: 'gm' };
    const signed = signWebhookBody({ secret: agent.secret, body: canonical, timestampMs: Date.now() });
    const reordered = await api(app, 'POST', path, {
      rawBody: '{"text":"gm","signalId":"canonical-1"}',
      headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
    });
    t.equal(reordered.status, 200, 'signed over the canonical JSON, sent in another order (the spec’s form)');
    const broken = '{"text": not json';
    const malformed = await api(app, 'POST', path, { rawBody: broken, headers: signedBytes(agent.secret, broken) });
    t.equal(malformed.status, 400, 'signed: its syntax error is told');
    t.equal(malformed.body.error.reason, 'MALFORMED_REQUEST');
    const many = `${unterminatedKeys(MAX_JSON_MEMBERS + 1)}}`;
    const counted = await api(app, 'POST', path, { rawBody: many, headers: signedBytes(agent.secret, many) });
    t.equal(counted.status, 413, 'signed: too many members is told');
    const empty = await api(app, 'POST', path, { headers: signedBytes(agent.secret, '') });
    t.equal(empty.status, 401, 'headers without a JSON body sign nothing');
    t.match(empty.body.error, { signatureProblem: 'UNSIGNABLE_BODY' });
  });

  await t.test('refused deliveries are counted per address and per agent; signed ones never', async (t) => {
    const limited = await apiWithConfig(app, {
      TRUST_PROXY: 1,
      RATE_LIMIT_WEBHOOK_REFUSED_PER_ADDRESS_PER_MIN: 5,
      RATE_LIMIT_WEBHOOK_REFUSED_PER_AGENT_PER_MIN: 8,
    });
    t.teardown(() => limited.close());
    const target = await listedFollowableAgent(app, tokens, { name: 'Counted' }, { live: true });
    const path = webhook(target.agentId);
    const from = (address: string, headers: Record<string, string> = {}) => ({ ...headers, 'x-forwarded-for': address });
    let n = 0;
    const signed = (address: string) => {
      const text = JSON.stringify({ signalId: `counted-${n++}`, text: 'gm' });
      return api(limited, 'POST', path, { rawBody: text, headers: from(address, signedBytes(target.secret, text)) });
    };
    const unsigned = (address: string) => api(limited, 'POST', path, { body: { text: 'gm' }, headers: from(address) });

    const statuses: number[] = [];
    let last = await unsigned('203.0.113.1');
    statuses.push(last.status);
    for (let i = 0; i < 6; i++) statuses.push((last = await unsigned('203.0.113.1')).status);
    t.same(statuses, [401, 401, 401, 401, 401, 429, 429], 'five refusals a minute from one address');
    t.match(last.body.error, { reason: 'RATE_LIMITED' });
    t.ok(Number(last.headers.get('retry-after')) > 0, 'Retry-After');
    t.equal((await signed('203.0.113.1')).status, 429, 'that address is refused whatever it sends, until the minute ends');
    t.equal((await signed('203.0.113.2')).status, 200, 'another address’s signed delivery goes through');
    const steady = [];
    for (let i = 0; i < 8; i++) steady.push((await signed('203.0.113.3')).status);
    t.same(steady, Array(8).fill(200), 'signed deliveries never count: more than either budget from one address');

    for (let i = 0; i < 3; i++) t.equal((await unsigned('203.0.113.4')).status, 401, 'refusals from other addresses add up for the agent');
    const overAgent = await unsigned('203.0.113.5');
    t.equal(overAgent.status, 429, 'the agent has had 8 refused deliveries this minute: an unsigned one is refused at once');
    const forged = signWebhookBody({ secret: 'not-the-secret', body: { text: 'gm' }, timestampMs: Date.now() });
    const forgedRes = await api(limited, 'POST', path, {
      body: { text: 'gm' },
      headers: from('203.0.113.5', { 'x-svc-timestamp': forged.timestampHeader, 'x-svc-signature': forged.signatureHeader }),
    });
    t.equal(forgedRes.status, 401, 'one that carries a signature is still verified');
    t.equal((await signed('203.0.113.5')).status, 200, 'so the agent’s own signals are never starved by the flood');
  });

  await t.test('a validation error names its first problems, cut short, not the whole body', async (t) => {
    const user = await signIn(app, 'bounded-user@example.test');
    const unknown = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`unknown-key-${i}-${'u'.repeat(40)}`, 1]));
    const patched = await api(app, 'PATCH', '/api/v1/users/me', { token: user.accessToken, body: unknown });
    t.equal(patched.status, 400);
    t.equal(patched.body.error.reason, 'VALIDATION_FAILED');
    t.match(patched.body.error.message, /unknown-key-0-/, 'names the first unknown key');
    t.ok(
      JSON.stringify(patched.body).length < 600,
      `a small answer for a ${JSON.stringify(unknown).length}-byte body (${JSON.stringify(patched.body).length} bytes)`,
    );
    const lookup = await api(app, 'POST', '/api/auth/lookup', {
      body: Object.fromEntries(
        [
          'email',
          'recaptcha',
          'fingerprint',
          'username',
          'receiveMarketingOffers',
          'agreedToTerms',
          'promoCode',
          'referralCode',
          'referrerUsername',
          'referrerUserId',
        ].map((k) => [k, ['wrong']]),
      ),
    });
    t.equal(lookup.status, 400);
    t.match(lookup.body.error.message, /, and 5 more$/, 'ten wrong fields: five named, then how many more');
    const chatter = { text: 'gm', ...unknown };
    const headers = signWebhookBody({ secret: agent.secret, body: chatter, timestampMs: Date.now() });
    const signal = await api(app, 'POST', webhook(agent.agentId), {
      body: chatter,
      headers: { 'x-svc-timestamp': headers.timestampHeader, 'x-svc-signature': headers.signatureHeader },
    });
    t.equal(signal.status, 400, 'a signed text signal with 200 unknown keys');
    t.ok(JSON.stringify(signal.body).length < 1_000, `its answer is small too (${JSON.stringify(signal.body).length} bytes)`);
  });
});
