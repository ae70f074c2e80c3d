import type { Test } from 'tap';
import type { PoolFact } from '../../commands/subscriptions/ledger.ts';
import { poolId } from '../../domain/pool/state.ts';
import { oneTrade } from '../domain/pool/fixtures.ts';
import { allProjectors } from '../../projections/index.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { ProjectionRunner } from '../../projections/runner.ts';
import { api, dispatch, startTestApp, type TestApp } from '../support/app.ts';
import { signIn, TEST_USER_AGENT, type SignedIn } from '../support/auth.ts';
import { totpAt, verifyByEmail } from '../support/mfa.ts';
import { signWebhookBody } from '../../infra/signing/webhook.ts';
import { until } from '../support/until.ts';

const ADMIN = 'admin@example.test';
const SUBS = '/api/v1/users/me/subscriptions';

/** Every row of every read model, in a stable order, for comparing live models with a rebuild. */
export async function snapshotReadModels(app: TestApp): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const projector of allProjectors) {
    for (const table of projector.tables) {
      const { rows } = await app.deps.pool.query(`SELECT * FROM ${table}`);
      snapshot[table] = rows.map((r) => JSON.stringify(r)).sort();
    }
  }
  return snapshot;
}

async function listAndApprove(app: TestApp, developer: string, admin: string, name: string) {
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: developer,
    body: { name, venue: 'SPOT_VENUE', minAllocationUsd: 50, successFeePercent: 10, description: `${name} trades` },
  });
  const approved = await api(app, 'POST', `/api/admin/developer-agents/${listed.body.data?.id}/approve`, {
    token: admin,
    body: { notes: 'looks safe', safetyScore: 80 },
  });
  return { listed, approved };
}

/**
 * What the user sees after a step: GET /api/v1/wallet (balances per context) and GET
 * subscriptions (one row per pool, oldest first), each row matched against `pools`.
 */
async function expectSeen(
  t: Test,
  app: TestApp,
  user: SignedIn,
  step: string,
  expected: { wallet: { virtual: number; real: number }; pools: Array<Record<string, unknown>> },
): Promise<Array<Record<string, any>>> {
  const wallet = await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken });
  t.equal(wallet.status, 200, `${step}: GET /api/v1/wallet`);
  const balances = Object.fromEntries((wallet.body.data.wallets as Array<{ walletContext: string; balanceUsd: number }>).map((w) => [w.walletContext, w.balanceUsd]));
  t.same(balances, expected.wallet, `${step}: the wallet's balances`);
  const subs = await api(app, 'GET', SUBS, { token: user.accessToken });
  t.equal(subs.status, 200, `${step}: GET subscriptions`);
  t.equal(subs.body.data.length, expected.pools.length, `${step}: ${expected.pools.length} subscription row(s)`);
  expected.pools.forEach((pool, i) => t.match(subs.body.data[i], pool, `${step}: row ${i} (${pool.walletContext ?? ''})`));
  return subs.body.data;
}

/**
 * The first complete flow: a developer lists an agent, an administrator approves it, a user
 * signs in by emailed code and follows it with a virtual pool, and every read model shows it;
 * then the pool ledger through real HTTP (add, withdraw, an administrator's deposit and a real
 * follow pending at the venue, a trade opened, marked and closed with profit, a venue
 * observation, stop following), the wallet and the subscriptions checked after each step;
 * projectors stopped mid-flow resume exactly where they were; a rebuild equals the live models.
 */
export function flowSuite(t: Test, eventStore: 'postgres' | 'esdb') {
  // Each flow has its own app (database, Redis keys, SMTP server); the first one spends seconds
  // waiting for read-your-writes time-outs while its projectors are stopped: side by side.
  t.jobs = 2;
  t.test(`the signal flow end to end on ${eventStore}`, (t) => signalFlow(t, eventStore));
  t.test(`the first flow end to end on ${eventStore}`, async (t) => {
    // The simulated chain takes an hour: the real pool's add stays pending through the flow
    // (test/workers/reconciliation.test.ts settles them). An empty database: the service creates
    // its whole schema at start, as in production (other test apps start on a copy of it).
    const app = await startTestApp({
      eventStore,
      emptyDatabase: true,
      config: { ADMIN_EMAILS: ADMIN, READ_YOUR_WRITES_TIMEOUT_MS: '3000', VENUE_SIM_CHAIN_MS: '3600000' },
    });
    t.teardown(() => app.close());
    t.equal(app.deps.store.kind, eventStore);

    const developer = await signIn(app, 'dev@example.test');
    const admin = await signIn(app, ADMIN);
    const user = await signIn(app, 'follower@example.test');

    const { listed, approved } = await listAndApprove(app, developer.accessToken, admin.accessToken, 'Momentum');
    t.equal(listed.status, 201);
    t.match(listed.body.data.inboundWebhookSigningSecretReveal, /\S{20,}/, 'the signing secret is shown once');
    t.equal(approved.status, 200);
    t.equal(approved.body.data.betaStatus, 'beta');
    const agentId: string = listed.body.data.id;

    const agents = await api(app, 'GET', '/api/v1/agents', { token: user.accessToken });
    t.ok(agents.body.data.items.some((a: { id: string }) => a.id === agentId), 'the approved agent is followable');

    const follow = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId, tradeMode: 'AUTO_TRADING', walletContext: 'virtual', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 1500 },
    });
    t.equal(follow.status, 200, JSON.stringify(follow.body));
    t.equal(follow.body.data.subscription.allocatedUsd, 1500, 'the response shows its own effect');

    const subs = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
    t.equal(subs.body.data.length, 1);
    t.match(subs.body.data[0], {
      agent: agentId,
      walletContext: 'virtual',
      allocatedUsd: 1500,
      currentBalanceUsd: 1500,
      withdrawableUsd: 1500,
      allocationBalanceAudit: { depositedUsd: 1500, reconciliationStatus: 'IN_SYNC' },
    });
    const reviews = await api(app, 'GET', `/api/v1/developers/agents/${agentId}/reviews`, { token: developer.accessToken });
    t.equal(reviews.body.data.items[0].status, 'approve');
    const me = await api(app, 'GET', '/api/v1/users/me', { token: developer.accessToken });
    t.equal(me.body.data.role, 'developer', 'listing an agent made the user a developer');
    // The profile's columns of the users read model, for the rebuild's comparison below.
    const profile = (method: string, path: string, body?: unknown) => api(app, method, path, { token: user.accessToken, ...(body ? { body } : {}) });
    t.equal((await profile('POST', '/api/v1/users/me/guide-agent', { guideAgentId: agentId })).status, 200, 'the agent is the guide');
    t.equal((await profile('POST', '/api/v1/users/me/interests', { interests: ['Momentum', 'momentum', 'spot'] })).status, 200, 'interests');
    t.equal((await profile('POST', `/api/v1/agents/${agentId}/pin`)).status, 200, 'pinned');
    // MFA on for the developer, then a sign-in with a recovery code: the users row's count of codes left is in the rebuild's comparison.
    const { secret } = (await api(app, 'POST', '/api/v1/users/me/mfa/enrol', { token: developer.accessToken })).body.data;
    const confirmed = await api(app, 'POST', '/api/v1/users/me/mfa/confirm', { token: developer.accessToken, body: { code: totpAt(secret, new Date()) } });
    const { tokens } = (await verifyByEmail(app, 'dev@example.test')).body.data;
    const body = { mfaAccessToken: tokens.mfaAccessToken, recoveryCode: confirmed.body.data.recoveryCodes[0] };
    t.equal((await api(app, 'POST', '/api/auth/mfa/verify', { headers: { 'user-agent': TEST_USER_AGENT }, body })).status, 200, 'a recovery code completes a sign-in');
    t.equal((await api(app, 'GET', '/api/v1/users/me', { token: developer.accessToken })).body.data.mfaRecoveryCodesLeft, 9);

    await ledgerFlow(t, app, { user, admin, agentId });

    // Projectors stop; the flow goes on; new projectors resume from the stored checkpoints.
    await app.runtime.runner!.stop();
    const second = await listAndApprove(app, developer.accessToken, admin.accessToken, 'Breakout');
    t.equal(second.listed.status, 201, 'commands are accepted while no projector runs');
    const secondId: string = second.listed.body.data.id;
    const resumed = new ProjectionRunner(app.deps.store, app.deps.pool, allProjectors);
    await resumed.start();
    t.teardown(() => resumed.stop());
    const follow2 = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
      token: user.accessToken,
      body: { agentId: secondId, allocationMode: 'PERCENTAGE_RANGE', allocationPercentageMax: 10 },
    });
    t.equal(follow2.status, 200, JSON.stringify(follow2.body));
    await profile('POST', `/api/v1/agents/${secondId}/pin`);
    t.same((await profile('DELETE', `/api/v1/agents/${agentId}/pin`)).body.data.pinnedAgentIds, [secondId], 'pins follow the resumed projector');
    t.match((await profile('GET', '/api/v1/users/me')).body.data, { guideAgentId: agentId, interests: ['Momentum', 'spot'], pinnedAgentIds: [secondId] });
    await app.deps.readYourWrites(undefined);
    const deadline = Date.now() + 10_000;
    let after = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
    while (after.body.data.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await api(app, 'GET', '/api/v1/users/me/subscriptions', { token: user.accessToken });
    }
    const byAgent = new Map(after.body.data.map((s: { agent: string; allocatedUsd: number }) => [s.agent, s.allocatedUsd]));
    t.equal(byAgent.get(agentId), 0, "the real pool's credit still waits for the venue");
    t.equal(byAgent.get(secondId), 1012, '10% of the 10120 USD in the virtual wallet');
    const reviews2 = await api(app, 'GET', `/api/v1/developers/agents/${secondId}/reviews`, { token: developer.accessToken });
    t.equal(reviews2.body.data.pagination.total, 1, 'the resumed projector applied the approval once');
    const owned = await api(app, 'GET', '/api/v1/developers/agents', { token: developer.accessToken });
    t.equal(owned.body.data.pagination.total, 2, 'each listing applied once');

    await new Promise((r) => setTimeout(r, 200));
    await resumed.stop();
    const live = await snapshotReadModels(app);
    for (const projector of allProjectors) await rebuild(app.deps.store, app.deps.pool, projector);
    const rebuilt = await snapshotReadModels(app);
    t.same(Object.keys(rebuilt), Object.keys(live), 'a rebuild makes the same tables');
    // Table by table, and only the rows that differ, so a failure names what the rebuild got wrong.
    for (const table of Object.keys(live)) {
      const [was, now] = [new Set(live[table]), new Set(rebuilt[table])];
      t.same(
        { onlyLive: live[table]!.filter((r) => !now.has(r)), onlyRebuilt: rebuilt[table]!.filter((r) => !was.has(r)), rows: rebuilt[table]!.length },
        { onlyLive: [], onlyRebuilt: [], rows: live[table]!.length },
        `a rebuild of ${table} equals the live read model row for row`,
      );
    }
  });
}

/**
 * Capital in and out of the Momentum pools through real HTTP, from a virtual pool of 1500 USD and
 * an untouched wallet (8500 virtual, 0 real). Trades and venue observations have no route yet:
 * they enter as the pool facts the signal and reconciliation work will send.
 */
async function ledgerFlow(t: Test, app: TestApp, { user, admin, agentId }: { user: SignedIn; admin: SignedIn; agentId: string }) {
  const token = user.accessToken;
  const virtualPool = poolId(user.userId, agentId, 'virtual');
  const realPool = poolId(user.userId, agentId, 'real');
  const fact = (id: string, f: PoolFact) => dispatch(app, 'RecordPoolFact', { poolId: id, fact: f });
  const withdraw = (body: unknown) => api(app, 'POST', `${SUBS}/${agentId}/allocation/withdraw`, { token, body });
  const virtualRow = (figures: Record<string, unknown>) => ({ agent: agentId, walletContext: 'virtual', ...figures });

  await expectSeen(t, app, user, 'after the follow', { wallet: { virtual: 8500, real: 0 }, pools: [virtualRow({ allocatedUsd: 1500 })] });

  const added = await api(app, 'POST', `${SUBS}/${agentId}/allocation/add`, { token, body: { amountUsd: 500 } });
  t.equal(added.status, 200, JSON.stringify(added.body));
  t.match(added.body.data, { success: true, message: 'Added 500 USD to the allocation', agentName: 'Momentum' });
  let rows = await expectSeen(t, app, user, 'add 500 USD', {
    wallet: { virtual: 8000, real: 0 },
    pools: [virtualRow({ allocatedUsd: 2000, currentBalanceUsd: 2000, withdrawableUsd: 2000, pendingDeltaUsd: 0 })],
  });
  t.same(added.body.data.subscription, rows[0], "the add's answer is the row the read model holds");

  const withdrawn = await withdraw({ amountUsd: 250.5 });
  t.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
  t.equal(withdrawn.body.data.message, 'Withdrew 250.5 USD from the allocation', 'virtual: confirmed at once');
  rows = await expectSeen(t, app, user, 'withdraw 250.5 USD', {
    wallet: { virtual: 8250.5, real: 0 },
    pools: [virtualRow({ allocatedUsd: 1749.5, currentBalanceUsd: 1749.5, withdrawableUsd: 1749.5, pendingDeltaUsd: 0 })],
  });
  t.same(withdrawn.body.data.subscription, rows[0], "the withdrawal's answer is the row the read model holds");
  const tooMuch = await withdraw({ amountUsd: 5000 });
  t.equal(tooMuch.status, 400);
  t.match(tooMuch.body.error, { reason: 'EXCEEDS_WITHDRAWABLE', withdrawableUsd: 1749.5, requestedUsd: 5000 });

  const deposited = await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 1000 } });
  t.equal(deposited.status, 200, JSON.stringify(deposited.body));
  await expectSeen(t, app, user, "an administrator's deposit of 1000 USD to the real wallet", {
    wallet: { virtual: 8250.5, real: 1000 },
    pools: [virtualRow({ allocatedUsd: 1749.5 })],
  });

  const real = await api(app, 'POST', SUBS, {
    token,
    body: { agentId, walletContext: 'real', allocationMode: 'USD_AMOUNT', allocationAmountUsd: 400 },
  });
  t.equal(real.status, 200, JSON.stringify(real.body));
  const pendingRow = {
    agent: agentId,
    walletContext: 'real',
    walletMode: 'REAL',
    allocatedUsd: 0,
    pendingDeltaUsd: 400,
    allocationBalanceAudit: { depositedUsd: 0, pendingDeltaUsd: 400, reconciliationStatus: 'UNKNOWN' },
  };
  t.match(real.body.data.subscription, pendingRow, 'a real follow is a pending credit until the venue confirms it');
  rows = await expectSeen(t, app, user, 'a real follow of 400 USD', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [virtualRow({ allocatedUsd: 1749.5 }), pendingRow],
  });
  t.same(real.body.data.subscription, rows[1], "the real follow's answer is the row the read model holds");

  await fact(virtualPool, { type: 'OpenTrade', data: oneTrade('flow-trade', 700_000_000) });
  const trading = {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [
      virtualRow({ allocatedUsd: 1749.5, inUseUsd: 700, availableUsd: 1049.5, withdrawableUsd: 1049.5, allocationBalanceAudit: { lockedMarginUsd: 700 } }),
      pendingRow,
    ],
  };
  rows = await expectSeen(t, app, user, 'a trade opens with 700 USD of margin', trading);
  const refused = await fact(virtualPool, { type: 'OpenTrade', data: oneTrade('flow-trade-refused', 1_049_500_001) });
  t.equal(refused.result.pool.trades.get('flow-trade-refused'), 'refused', 'a trade asking more than is free is refused, and the refusal recorded');
  t.same(await expectSeen(t, app, user, 'a refused trade', trading), rows, 'a refusal changes no record, not even its updatedAt');
  const inUse = await withdraw({ amountUsd: 1100 });
  t.equal(inUse.status, 409);
  t.match(inUse.body.error, { code: 'ALLOCATION_FUNDS_IN_USE', withdrawableUsd: 1049.5 }, 'the open trade locks what it uses');

  await fact(virtualPool, { type: 'MarkTrade', data: { tradeId: 'flow-trade', unrealizedPnlMicro: 50_000_000 } });
  await expectSeen(t, app, user, 'the trade is marked 50 USD up', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [
      virtualRow({
        currentBalanceUsd: 1749.5,
        withdrawableUsd: 1049.5,
        allocationBalanceAudit: { unrealizedPnlUsd: 50, estimatedSuccessFeeUsd: 5, pendingPlatformFeeUsd: 0, pendingCreatorFeeUsd: 0, netUserPayoutUsd: 1794.5 },
      }),
      pendingRow,
    ],
  });

  await fact(virtualPool, { type: 'CloseTrade', data: { tradeId: 'flow-trade', realizedPnlMicro: 120_000_000 } });
  await expectSeen(t, app, user, 'the trade closes 120 USD up', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [
      virtualRow({
        allocatedUsd: 1749.5,
        currentBalanceUsd: 1869.5,
        inUseUsd: 0,
        // the 10% success fee on the realized 120 USD is owed (virtual pools show it, settle nothing)
        withdrawableUsd: 1857.5,
        allocationBalanceAudit: {
          realizedPnlUsd: 120,
          unrealizedPnlUsd: 0,
          lockedMarginUsd: 0,
          netRealizedProfitUsd: 120,
          estimatedSuccessFeeUsd: 12,
          pendingPlatformFeeUsd: 2.4,
          pendingCreatorFeeUsd: 9.6,
          netUserPayoutUsd: 1857.5,
        },
      }),
      pendingRow,
    ],
  });

  const observed = { status: 'GAP', venueEquityMicro: 390_000_000, venueFreeMarginMicro: 385_000_000, gapMicro: -10_000_000 } as const;
  await fact(realPool, { type: 'ObserveVenue', data: observed });
  const observedRow = {
    ...pendingRow,
    allocationBalanceAudit: { ...pendingRow.allocationBalanceAudit, reconciliationStatus: 'GAP', venueEquityUsd: 390, venueFreeMarginUsd: 385, venueGapUsd: -10 },
  };
  await expectSeen(t, app, user, 'the venue is observed 10 USD short of the real pool', {
    wallet: { virtual: 8250.5, real: 600 },
    pools: [virtualRow({ currentBalanceUsd: 1869.5 }), observedRow],
  });

  const stopped = await api(app, 'DELETE', `${SUBS}/${agentId}?walletContext=virtual`, { token });
  t.equal(stopped.status, 200, JSON.stringify(stopped.body));
  t.match(stopped.body.data, { success: true, message: 'Stopped following; 1869.5 USD returned to the wallet' });
  t.notOk(stopped.body.data.subscription, 'the stopped pool leaves the list');
  await expectSeen(t, app, user, 'stop following the virtual pool', {
    wallet: { virtual: 10_120, real: 600 },
    pools: [observedRow],
  });
}

/**
 * Agent trades from signals: a signed open executes in the follower's pool (margin locked), the
 * price watcher marks it, a text follow-up closes it (PnL realized); the trades list, the inbox and
 * the subscription show it; a rebuild of every read model equals the live ones.
 */
async function signalFlow(t: Test, eventStore: 'postgres' | 'esdb') {
  const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: ADMIN, PRICE_WATCH_INTERVAL_MS: '200' } });
  t.teardown(() => app.close());
  const developer = await signIn(app, 'signal-dev@example.test');
  const admin = await signIn(app, ADMIN);
  const user = await signIn(app, 'signal-follower@example.test');
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: developer.accessToken,
    body: { name: 'Signal flow', venue: 'PERP_VENUE', maxLeverage: 5, successFeePercent: 10, minTradeUsd: 1 },
  });
  t.equal(listed.status, 201);
  const agentId = listed.body.data.id as string;
  const secret = listed.body.data.inboundWebhookSigningSecretReveal as string;
  t.equal((await api(app, 'POST', `/api/admin/developer-agents/${agentId}/approve`, { token: admin.accessToken, body: {} })).status, 200);
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { ETH: 3000 } } })).status, 200);
  t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 500 } })).status, 200);
  await api(app, 'GET', SUBS, { token: user.accessToken });
  const deliver = (body: unknown) => {
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    return api(app, 'POST', `/api/v1/signals/${agentId}`, { body, headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader } });
  };

  const opened = await deliver({ signalId: 'eth-1', action: 'open', side: 'long', token: 'ETH', leverage: 3, sizeUsd: 100, stopLoss: 2800 });
  t.equal(opened.status, 200, JSON.stringify(opened.body));
  t.match(opened.body.data, { outcome: 'executed', executionResults: [{ status: 'executed' }] });
  const pool = poolId(user.userId, agentId, 'virtual');
  const row = async () => (await api(app, 'GET', SUBS, { token: user.accessToken })).body.data.find((p: { agent: string }) => p.agent === agentId);
  // The webhook answers once the pools decided; the follower's views follow within the projection lag.
  await until('the pool to show the margin', async () => (await row()).lockedInPositionsUsd > 0);
  t.match(await row(), { lockedInPositionsUsd: 100, allocationBalanceAudit: { lockedMarginUsd: 100 } }, 'the margin is locked in the pool');
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { ETH: 3150 } } })).status, 200);
  await until('the price watcher to mark the pool up', async () => (await row()).allocationBalanceAudit.unrealizedPnlUsd > 0);

  const closed = await deliver({ signalId: 'eth-2', text: 'ETH long: close all, +5% 🎯' });
  t.equal(closed.status, 200, JSON.stringify(closed.body));
  t.equal(closed.body.data.outcome, 'executed', JSON.stringify(closed.body.data));
  await until('the pool to release the margin', async () => (await row()).allocationBalanceAudit.lockedMarginUsd === 0);
  const after = await row();
  t.equal(after.allocationBalanceAudit.lockedMarginUsd, 0, 'the margin is released');
  t.ok(after.allocationBalanceAudit.realizedPnlUsd > 0, `the profit is realized (${after.allocationBalanceAudit.realizedPnlUsd} USD)`);
  await until('the trade to be listed closed', async () => (await api(app, 'GET', '/api/v1/trades?status=closed', { token: user.accessToken })).body.data.items.length > 0);
  const trades = await api(app, 'GET', '/api/v1/trades', { token: user.accessToken });
  t.match(trades.body.data.items, [{ token: 'ETH', status: 'closed', closeReason: 'SIGNAL' }]);
  const inbox = await api(app, 'GET', `/api/v1/developers/agents/${agentId}/signals`, { token: developer.accessToken });
  t.same(inbox.body.data.items.map((i: { signalId: string; outcome: string }) => [i.signalId, i.outcome]), [['eth-2', 'executed'], ['eth-1', 'executed']]);
  t.notOk(JSON.stringify(inbox.body).includes(user.userId), 'the inbox never shows the follower');
  t.ok(pool.length > 0);
  await walletFlow(t, app, user, admin);

  await app.runtime.workers?.close();
  await app.runtime.runner!.stop();
  const live = await snapshotReadModels(app);
  for (const projector of allProjectors) await rebuild(app.deps.store, app.deps.pool, projector);
  const rebuilt = await snapshotReadModels(app);
  for (const table of Object.keys(live)) t.same(rebuilt[table], live[table], `a rebuild of ${table} equals the live read model`);
}

/**
 * Manual trades: a buy with a stop opens a lot, a sell with an Idempotency-Key reduces it once (its
 * replay answers the same), the stop sells the rest through the price watcher; the wallet shows each.
 */
async function walletFlow(t: Test, app: TestApp, user: SignedIn, admin: SignedIn) {
  const token = user.accessToken;
  const wallet = async () => (await api(app, 'GET', '/api/v1/wallet', { token })).body.data;
  const cashBefore = (await wallet()).wallets[0].balanceUsd;
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { JUP: 2 } } })).status, 200);
  const bought = await api(app, 'POST', '/api/v1/wallet/buy', { token, body: { mint: 'JUP', amountUsd: 100, stopLoss: { price: 1.5 } } });
  t.equal(bought.status, 200, JSON.stringify(bought.body));
  t.match((await wallet()).positions, [{ mint: 'JUP', amount: 50, lots: [{ stopLossUsd: 1.5 }] }]);
  const sell = () => api(app, 'POST', '/api/v1/wallet/sell', { token, body: { mint: 'JUP', amount: 20 }, headers: { 'idempotency-key': 'flow-sell' } });
  const sold = await sell();
  t.equal(sold.status, 200, JSON.stringify(sold.body));
  t.same((await sell()).body, sold.body, 'the replay answers the first sell');
  t.match((await wallet()).positions, [{ mint: 'JUP', amount: 30 }]);
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { JUP: 1.4 } } })).status, 200);
  await until('the stop to sell the lot', async () => (await wallet()).positions.length === 0);
  t.equal((await wallet()).wallets[0].balanceUsd, cashBefore - 100 + 40 + 42, 'bought for 100, sold 20 at 2 and 30 at 1.4');
  t.equal((await api(app, 'POST', '/api/v1/wallet/buy', { token, body: { mint: 'JUP', amountUsd: 14, takeProfit: { percent: 50 } } })).status, 200);
  t.match((await wallet()).positions, [{ mint: 'JUP', amount: 10, lots: [{ takeProfitUsd: 2.1 }] }], 'a lot stays open for the rebuild to compare');
}
