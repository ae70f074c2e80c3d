// Fee claims through real HTTP: POST /api/v1/developers/agents/{id}/fees/claim pays the creator fees
// an agent's real pools settled into its developer's real wallet, as a transfer from the agent's fee
// account. The dashboard, the wallet, the streams and the auditors' replay agree afterwards; parallel
// claims never pay twice. Fees are earned through the real routes, the workers and the simulated venue.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { feesClaimedSchema } from '../../domain/fees/events.ts';
import { feeAccountStream } from '../../domain/fees/state.ts';
import { walletCreditedSchema } from '../../domain/wallet/events.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import { anonymizedSubscriberId } from '../../infra/anonymize.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { earnFees } from '../support/fees.ts';
import { until } from '../support/until.ts';

const M = 1_000_000;
const claimPath = (agentId: string) => `/api/v1/developers/agents/${agentId}/fees/claim`;

t.test('fee claims: the developer takes the creator fees to their real wallet', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', VENUE_SIM_CHAIN_MS: '0', RECONCILIATION_INTERVAL_MS: '100' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'claim-dev@example.test');
  const stranger = await signIn(app, 'claim-stranger@example.test');
  const [u1, u2, u3, u4] = (await Promise.all([1, 2, 3, 4].map((n) => signIn(app, `claim-u${n}@example.test`)))) as SignedIn[] as [
    SignedIn,
    SignedIn,
    SignedIn,
    SignedIn,
  ];
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const listAgent = (name: string) => followableAgent(app, tokens, { name, venue: 'SPOT_VENUE', successFeePercent: 20 }, { live: true });

  const claim = (agentId: string, body?: unknown, token = dev.accessToken, headers?: Record<string, string>) =>
    api(app, 'POST', claimPath(agentId), { token, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  const realBalance = async (u: SignedIn) =>
    ((await api(app, 'GET', '/api/v1/wallet', { token: u.accessToken })).body.data.wallets as Array<{ walletContext: string; balanceUsd: number }>).find(
      (w) => w.walletContext === 'real',
    )!.balanceUsd;
  const dashboard = async (agentId: string) =>
    (await api(app, 'GET', `/api/v1/developers/agents/${agentId}/subscribers`, { token: dev.accessToken })).body.data.items as Array<{
      anonymizedSubscriberId: string;
      walletContext: string;
      claimableFeesUsd: number;
      totalFeesEarnedUsd: number;
      totalFeesClaimedUsd: number;
    }>;
  const realItem = async (agentId: string, u: SignedIn) =>
    (await dashboard(agentId)).find(
      (i) => i.walletContext === 'real' && i.anonymizedSubscriberId === anonymizedSubscriberId(app.deps.config.JWT_SECRET, agentId, u.userId),
    )!;
  const credits = async (agentId: string) =>
    (await app.deps.store.readStream(walletStream(dev.userId)))
      .filter((e) => e.type === 'WalletCredited')
      .map((e) => walletCreditedSchema.parse(e.data))
      .filter((c) => c.from === `fees:${agentId}`);

  // Agent A: 50 USD of profit in u1's pool (a 10 USD fee, 8 to the creator), 25 in u2's (4).
  const agentA = await listAgent('Claims A');
  const p1 = await earnFees(app, admin, u1, agentA, 50, 'a-u1');
  const p2 = await earnFees(app, admin, u2, agentA, 25, 'a-u2');
  t.same([p1.earnedMicro, p2.earnedMicro], [8 * M, 4 * M], 'the creator earned 8 and 4 USD');
  const before = await realBalance(dev);
  t.equal(before, 0, 'the developer’s real wallet starts empty');

  await t.test('only the agent’s developer: 401 without a token, 403 for anyone else, 404 for an unknown agent', async (t) => {
    t.equal((await api(app, 'POST', claimPath(agentA))).status, 401);
    for (const other of [stranger, admin, u1]) {
      const res = await claim(agentA, {}, other.accessToken);
      t.equal(res.status, 403);
      t.match(res.body.error, { code: 'FORBIDDEN', reason: 'NOT_AGENT_OWNER' });
    }
    const unknown = await claim('00000000-0000-4000-8000-000000000000');
    t.equal(unknown.status, 404);
    t.match(unknown.body.error, { code: 'NOT_FOUND', reason: 'AGENT_NOT_FOUND' });
  });

  await t.test('400: below 0.01, more than 6 decimals, not a number, an unknown field, more than claimable', async (t) => {
    for (const body of [{ amountUsd: 0.001 }, { amountUsd: 0 }, { amountUsd: -1 }, { amountUsd: 1.0000001 }, { amountUsd: '5' }, { amount: 5 }]) {
      const res = await claim(agentA, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.match(res.body.error, { code: 'BAD_REQUEST', reason: 'VALIDATION_FAILED' }, JSON.stringify(body));
    }
    const over = await claim(agentA, { amountUsd: 12.01 });
    t.equal(over.status, 400);
    t.match(over.body.error, { code: 'BAD_REQUEST', reason: 'EXCEEDS_CLAIMABLE', claimableFeesUsd: 12, requestedUsd: 12.01 });
    t.equal(await realBalance(dev), 0, 'nothing moved');
    t.same(await credits(agentA), []);
  });

  await t.test('a part, with an Idempotency-Key: paid once, the dashboard and the wallet follow', async (t) => {
    const headers = { 'idempotency-key': 'claim-part-1' };
    const res = await claim(agentA, { amountUsd: 5 }, dev.accessToken, headers);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data, { agentId: agentA, walletContext: 'real', claimedUsd: 5, claimableFeesUsd: 7, totalFeesEarnedUsd: 12, totalFeesClaimedUsd: 5 });
    t.equal(await realBalance(dev), 5, 'GET /api/v1/wallet: the real context holds the claim');
    // The oldest accrual first: the pools accrued together in pool id order.
    const [first] = [p1, p2].sort((a, b) => (a.pool < b.pool ? -1 : 1)) as [typeof p1];
    const claimedOf = (p: typeof p1) => (p === first ? Math.min(5 * M, first.earnedMicro) : 5 * M - Math.min(5 * M, first.earnedMicro));
    for (const [u, p] of [
      [u1, p1],
      [u2, p2],
    ] as const) {
      const item = await realItem(agentA, u);
      t.same(
        [item.totalFeesEarnedUsd, item.totalFeesClaimedUsd, item.claimableFeesUsd],
        [p.earnedMicro / M, claimedOf(p) / M, (p.earnedMicro - claimedOf(p)) / M],
        `the dashboard of ${p === first ? 'the first' : 'the second'} pool`,
      );
    }
    const again = await claim(agentA, { amountUsd: 5 }, dev.accessToken, headers);
    t.equal(again.status, 200);
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.same(again.body, res.body, 'the first answer again');
    const other = await claim(agentA, { amountUsd: 4 }, dev.accessToken, headers);
    t.equal(other.status, 422, 'the same key for another body');
    t.equal(await realBalance(dev), 5, 'paid once');
    const paid = await credits(agentA);
    t.same(
      paid.map((c) => c.amountMicro),
      [5 * M],
      'one WalletCredited from the fee account in the wallet’s history',
    );
    t.equal(paid[0]!.transferId, res.body.data.transferId);
  });

  await t.test('everything left (no body), then nothing left to claim', async (t) => {
    const res = await claim(agentA);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data, { claimedUsd: 7, claimableFeesUsd: 0, totalFeesEarnedUsd: 12, totalFeesClaimedUsd: 12 });
    t.equal(await realBalance(dev), 12);
    for (const u of [u1, u2]) {
      const item = await realItem(agentA, u);
      t.equal(item.claimableFeesUsd, 0);
      t.equal(item.totalFeesClaimedUsd, item.totalFeesEarnedUsd, 'claimed all the pool earned');
    }
    const none = await claim(agentA, {});
    t.equal(none.status, 400);
    t.match(none.body.error, { reason: 'EXCEEDS_CLAIMABLE', claimableFeesUsd: 0 });
    t.equal(await realBalance(dev), 12, 'nothing more');
  });

  await t.test('fees settled after a claim are claimable in turn', async (t) => {
    const more = await earnFees(app, admin, u1, agentA, 10, 'a-u1-2'); // 2 USD fee, 1.6 to the creator
    t.equal(more.earnedMicro, 9.6 * M);
    await until('the dashboard shows the new fee', async () => (await realItem(agentA, u1)).claimableFeesUsd === 1.6);
    const res = await claim(agentA);
    t.match(res.body.data, { claimedUsd: 1.6, claimableFeesUsd: 0, totalFeesEarnedUsd: 13.6, totalFeesClaimedUsd: 13.6 });
    t.equal(await realBalance(dev), 13.6);
  });

  await t.test('10 parallel claims of everything pay it once; the others are told nothing is left', async (t) => {
    const agentB = await listAgent('Claims B');
    await earnFees(app, admin, u3, agentB, 50, 'b-u3');
    await earnFees(app, admin, u4, agentB, 50, 'b-u4');
    const wallet = await realBalance(dev);
    const answers = await Promise.all(Array.from({ length: 10 }, () => claim(agentB)));
    const paid = answers.filter((a) => a.status === 200);
    t.equal(paid.length, 1, 'one claim took everything');
    t.equal(paid[0]!.body.data.claimedUsd, 16);
    for (const a of answers.filter((x) => x.status !== 200))
      t.match({ status: a.status, reason: a.body.error.reason }, { status: 400, reason: 'EXCEEDS_CLAIMABLE' });
    t.equal(await realBalance(dev), wallet + 16, 'the wallet got exactly what was claimable');
    t.same(
      (await credits(agentB)).map((c) => c.amountMicro),
      [16 * M],
    );
  });

  await t.test('10 parallel claims of 3 USD out of 12: four are paid, six refused, never more than claimable', async (t) => {
    const agentC = await listAgent('Claims C');
    await earnFees(app, admin, u3, agentC, 75, 'c-u3'); // a 15 USD fee, 12 to the creator
    const wallet = await realBalance(dev);
    const answers = await Promise.all(Array.from({ length: 10 }, () => claim(agentC, { amountUsd: 3 })));
    t.same(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 400, 400, 400, 400, 400, 400]);
    t.equal(await realBalance(dev), wallet + 12);
    const claims = (await app.deps.store.readStream(feeAccountStream(agentC)))
      .filter((e) => e.type === 'FeesClaimed')
      .map((e) => feesClaimedSchema.parse(e.data));
    t.same(
      claims.map((c) => c.transfer.amountMicro),
      [3 * M, 3 * M, 3 * M, 3 * M],
      'the fee account recorded four claims',
    );
    t.equal((await dashboard(agentC))[0]!.claimableFeesUsd, 0);
  });

  await t.test('a deleted agent’s fees stay claimable by its developer, and by no one else', async (t) => {
    const agentD = await listAgent('Claims D');
    await earnFees(app, admin, u4, agentD, 25, 'd-u4'); // a 5 USD fee, 4 to the creator
    t.equal((await api(app, 'DELETE', `/api/v1/agents/${agentD}`, { token: dev.accessToken })).status, 200);
    t.equal((await claim(agentD, {}, stranger.accessToken)).status, 403);
    const wallet = await realBalance(dev);
    const res = await claim(agentD);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data, { claimedUsd: 4, claimableFeesUsd: 0, totalFeesClaimedUsd: 4 });
    t.equal(await realBalance(dev), wallet + 4);
  });

  await t.test('the auditors’ replay agrees: every pool, every pool’s fees, every claim paid once', async (t) => {
    const res = await api(app, 'GET', '/api/admin/audit/pools?limit=100', { token: admin.accessToken });
    t.equal(res.status, 200);
    const statuses = (res.body.data.items as Array<{ status: string }>).map((i) => i.status);
    t.ok(statuses.length > 0 && statuses.every((s) => s === 'MATCH'), JSON.stringify(statuses));
    const verify = spawnSync(process.execPath, ['--import=tsx', 'scripts/audit.ts', 'verify'], {
      env: { ...process.env, DATABASE_URL: app.databaseUrl, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(verify.status, 0, verify.stdout + verify.stderr);
    // agent A: 3 claims; B: 1; C: 4; D: 1; every fee-earning pool matches
    t.match(verify.stdout, /verified the fees of 6 pools and 9 claims: 6 match, 0 different, 9 paid, 0 in flight, 0 wrongly credited\n$/);
  });
});
