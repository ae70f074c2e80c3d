// Signed statements through real HTTP (api/routes/statements/): replayed from the events, verified as
// an auditor would (jose against the JWKS the service publishes, the payload being the statement's
// RFC 8785 canonical JSON), refused when one figure is changed, in agreement with the ledger route at
// the same instant, for administrators under the admin scope, and as a PDF read back with poppler.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import canonicalize from 'canonicalize';
import { compactVerify, createLocalJWKSet, flattenedVerify, type JSONWebKeySet } from 'jose';
import t from 'tap';
import { EQUITY_COLOUR } from '../../api/routes/statements/pdf.ts';
import { poolId } from '../../domain/pool/state.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { api, dispatch, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { firstPage, pdfText } from '../support/pdf.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const b64u = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

async function verifies(app: TestApp, signed: { statement: unknown; signature: { protected: string; signature: string; jws: string } }) {
  const jwks = (await api(app, 'GET', '/.well-known/jwks.json')).body as JSONWebKeySet;
  const keys = createLocalJWKSet(jwks);
  const payload = b64u(canonicalize(signed.statement)!);
  try {
    await flattenedVerify({ protected: signed.signature.protected, signature: signed.signature.signature, payload }, keys);
    const [head, , signature] = signed.signature.jws.split('.');
    await compactVerify(`${head}.${payload}.${signature}`, keys);
    return true;
  } catch {
    return false;
  }
}

async function pdfOf(app: TestApp, path: string, token: string, accept = 'application/pdf'): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept } });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

t.test('signed statements: replayed from the events, verified against the JWKS, as JSON and PDF', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'statement-dev@example.test');
  const user = await signIn(app, 'statement-user@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Stated', venue: 'SPOT_VENUE', successFeePercent: 10 },
    { live: true },
  );
  const id = poolId(user.userId, agentId, 'virtual');
  const get = (path: string, token = user.accessToken) => api(app, 'GET', path, { token });
  const statement = (query = '', token = user.accessToken) => get(`${SUBS}/${agentId}/statement${query}`, token);
  const ok = (res: { status: number; body: unknown }) => t.equal(res.status, 200, res.status === 200 ? 'answered' : JSON.stringify(res.body));

  const beforeFollow = new Date(Date.now() - 60_000).toISOString();
  ok(await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 100 } }));
  ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 50.5 } }));
  await dispatch(app, 'RecordPoolFact', { poolId: id, fact: { type: 'OpenTrade', data: oneTrade('st-1', 40_000_000) } });
  await dispatch(app, 'RecordPoolFact', { poolId: id, fact: { type: 'CloseTrade', data: { tradeId: 'st-1', realizedPnlMicro: 12_345_678 } } });
  await sleep(5);
  const then = new Date().toISOString();
  await sleep(5);
  ok(await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token: user.accessToken, body: { amountUsd: 7 } }));
  const at = encodeURIComponent(then);

  await t.test('the JWKS publishes public keys only', async (t) => {
    const res = await api(app, 'GET', '/.well-known/jwks.json');
    t.equal(res.status, 200);
    t.equal(res.body.keys.length, 1);
    t.match(res.body.keys[0], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: /^dev-/ });
    t.notOk('d' in res.body.keys[0], 'no private part');
  });

  await t.test('a statement at `at` verifies, and has the figures of that instant, not of the later add', async (t) => {
    const res = await statement(`?at=${at}`);
    ok(res);
    const signed = res.body.data;
    t.ok(await verifies(app, signed), 'the detached JWS verifies over the canonical JSON');
    t.match(signed.signature, { canonicalization: 'JCS', alg: 'EdDSA', kid: /^dev-/, digest: /^[0-9a-f]{64}$/ });
    const { statement: s } = signed;
    t.match(s, { statementVersion: 1, userId: user.userId, at: then, from: null, agentId, globalPosition: { commit: String, prepare: String } });
    t.equal(s.pools.length, 1);
    const [pool] = s.pools;
    t.match(pool.subscription, { agent: agentId, walletContext: 'virtual', allocatedUsd: 150.5, currentBalanceUsd: 162.845678 });
    t.same(pool.fees, { chargedUsd: 0, pendingUsd: 1.234567 });
    t.equal(pool.ledger.length, 5);
    t.same(s.wallet.wallets, [
      { walletContext: 'virtual', balanceUsd: 10_000 - 150.5 },
      { walletContext: 'real', balanceUsd: 0 },
    ]);
    t.same(
      pool.equity.map((p: { equityUsd: number }) => p.equityUsd),
      [0, 100, 150.5, 150.5, 162.845678, 162.845678],
    );

    const now = (await statement()).body.data.statement.pools[0].subscription;
    t.equal(now.allocatedUsd, 157.5, 'without `at`: now, after the later add');
  });

  await t.test('the statement agrees with the ledger route at the same instant', async (t) => {
    const [mine, ledger] = await Promise.all([statement(`?at=${at}`), get(`${SUBS}/${agentId}/ledger?at=${at}&limit=100`)]);
    const [pool] = mine.body.data.statement.pools;
    t.same(pool.subscription, ledger.body.data.subscription, 'the same record');
    t.same(pool.ledger, ledger.body.data.items, 'the same lines');
  });

  await t.test('a tampered statement (one figure changed) or another key does not verify', async (t) => {
    const signed = (await statement(`?at=${at}`)).body.data;
    const tampered = structuredClone(signed);
    tampered.statement.pools[0].subscription.allocatedUsd += 0.000001;
    t.notOk(await verifies(app, tampered), 'a micro-dollar more is refused');
    const moved = structuredClone(signed);
    moved.statement.at = new Date(Date.parse(then) + 1).toISOString();
    t.notOk(await verifies(app, moved), 'another instant is refused');
  });

  await t.test('`from` narrows the lines, the receipts and the equity, not the figures', async (t) => {
    const lines = (await statement(`?at=${at}`)).body.data.statement.pools[0].ledger;
    const from = lines[3].time as string;
    const res = await statement(`?at=${at}&from=${encodeURIComponent(from)}`);
    ok(res);
    const [pool] = res.body.data.statement.pools;
    t.same(
      pool.ledger.map((l: { sequence: number }) => l.sequence),
      [4, 5],
    );
    t.equal(pool.subscription.allocatedUsd, 150.5);
    t.equal(pool.equity[0].time, new Date(from).toISOString());
    t.equal(pool.equity[0].equityUsd, 150.5, 'the equity at `from`');
  });

  await t.test('bad input: a clear 4xx with a reason from the catalogue', async (t) => {
    const refused = async (query: string, status: number, reason: string, agent = agentId) => {
      const res = await get(`${SUBS}/${agent}/statement${query}`);
      t.equal(res.status, status, `${query}: ${JSON.stringify(res.body)}`);
      t.match(res.body, { success: false, error: { reason } });
    };
    await refused('?at=yesterday', 400, 'VALIDATION_FAILED');
    await refused('?from=2025-13-01T00:00:00Z', 400, 'VALIDATION_FAILED');
    await refused(`?at=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`, 400, 'STATEMENT_AT_IN_FUTURE');
    await refused(`?at=${at}&from=${encodeURIComponent(new Date(Date.parse(then) + 1000).toISOString())}`, 400, 'STATEMENT_FROM_AFTER_AT');
    await refused(`?at=${encodeURIComponent(beforeFollow)}`, 404, 'SUBSCRIPTION_NOT_FOUND');
    await refused('', 404, 'SUBSCRIPTION_NOT_FOUND', 'no-such-agent');
    await refused('?walletContext=real', 404, 'SUBSCRIPTION_NOT_FOUND');
    t.equal((await api(app, 'GET', `${SUBS}/${agentId}/statement`)).status, 401, 'no token');
  });

  await t.test("every pool and the wallet; the administrators' route gives the same signed statement", async (t) => {
    const mine = await get(`/api/v1/users/me/statement?at=${at}`);
    ok(mine);
    t.ok(await verifies(app, mine.body.data));
    t.equal(mine.body.data.statement.agentId, null);
    t.same(
      mine.body.data.statement.pools.map((p: { agentId: string }) => p.agentId),
      [agentId],
    );
    const denied = await get(`/api/admin/users/${user.userId}/statement?at=${at}`);
    t.equal(denied.status, 403);
    t.match(denied.body.error, { reason: 'ADMIN_REQUIRED' });
    const theirs = await get(`/api/admin/users/${user.userId}/statement?at=${at}`, admin.accessToken);
    ok(theirs);
    t.same(theirs.body.data, mine.body.data, 'the same statement and signature');
    const unknown = await get(`/api/admin/users/00000000-0000-4000-8000-000000000000/statement`, admin.accessToken);
    t.equal(unknown.status, 404);
    t.match(unknown.body.error, { reason: 'USER_NOT_FOUND' });
    const now = await get('/api/v1/users/me/statement');
    const wallet = (await get('/api/v1/wallet')).body.data;
    t.same(now.body.data.statement.wallet.wallets, wallet.wallets, "the wallet's balances as its read model has them now");
  });

  await t.test("the README's auditor snippet, run as written, verifies a statement", async (t) => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const snippet = /```js\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## For auditors')))?.[1];
    t.ok(snippet, 'the README has the snippet');
    // under the worktree (tap's ignored folder), so that `jose` and `canonicalize` resolve as for a reader who installed them
    const dir = join(process.cwd(), '.tap', `readme-snippet-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'verify.mjs'), snippet!.replace("'http://127.0.0.1:3000'", `'${app.url}'`));
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'verify.mjs')], { env: { ...process.env, TOKEN: user.accessToken } });
    t.match(stdout, /^verified, signed by dev-/);
  });

  await t.test('as a PDF: the figures, the kid and the digest in its text; a drawn equity line on page 1', async (t) => {
    const signed = (await statement(`?at=${at}`)).body.data;
    const pdf = await pdfOf(app, `${SUBS}/${agentId}/statement?at=${at}`, user.accessToken);
    t.equal(pdf.status, 200);
    t.equal(pdf.type, 'application/pdf');
    t.equal(pdf.bytes.subarray(0, 5).toString(), '%PDF-');
    const text = pdfText(pdf.bytes);
    for (const expected of ['allocatedUsd: 150.5 USD', 'currentBalanceUsd: 162.845678 USD', 'fees pending: 1.234567 USD', 'virtual balanceUsd: 9849.5 USD']) {
      t.ok(text.includes(expected), expected);
    }
    t.ok(text.includes(signed.signature.kid), 'the kid');
    t.ok(text.includes(signed.signature.digest), 'the digest of the signed canonical JSON');
    t.ok(text.includes('TradeClosed'), 'the ledger lines');

    const again = await pdfOf(app, `${SUBS}/${agentId}/statement?at=${at}&format=pdf`, user.accessToken, 'application/json');
    t.ok(again.bytes.equals(pdf.bytes), 'format=pdf answers the same bytes: the document is deterministic');

    const page = firstPage(pdf.bytes, 50);
    let ink = 0;
    const line: number[] = [];
    const [r0, g0, b0] = [1, 3, 5].map((i) => Number.parseInt(EQUITY_COLOUR.slice(i, i + 2), 16)) as [number, number, number];
    for (let y = 0; y < page.height; y++) {
      for (let x = 0; x < page.width; x++) {
        const [r, g, b] = page.rgb(x, y);
        if (r + g + b < 600) ink += 1;
        if (Math.abs(r - r0) + Math.abs(g - g0) + Math.abs(b - b0) < 90) line.push(x);
      }
    }
    t.ok(ink > 2000, `the page is not blank (${ink} inked pixels)`);
    t.ok(line.length > 100, `the equity line is drawn (${line.length} pixels of its colour)`);
    const span = Math.max(...line) - Math.min(...line);
    t.ok(span > page.width * 0.6, `it runs across the chart (${span} of ${page.width} pixels)`);
  });
});

t.test('statements have a budget of their own per caller: the third in a minute is 429, another caller still served', async (t) => {
  const app = await startTestApp({ config: { RATE_LIMIT_STATEMENTS_PER_MIN: '2' } });
  t.teardown(() => app.close());
  const [first, second] = [await signIn(app, 'budget-1@example.test'), await signIn(app, 'budget-2@example.test')];
  const at = encodeURIComponent(new Date().toISOString());
  const statement = (token: string) => api(app, 'GET', `/api/v1/users/me/statement?at=${at}`, { token });
  t.equal((await statement(first.accessToken)).status, 200);
  t.equal((await statement(first.accessToken)).status, 200);
  const refused = await statement(first.accessToken);
  t.equal(refused.status, 429);
  t.equal(refused.body.error?.reason, 'RATE_LIMITED');
  t.equal((await statement(second.accessToken)).status, 200, 'another caller has a budget of its own');
});
