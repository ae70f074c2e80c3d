// The reconciliation worker on the real app (workers running, real PostgreSQL and Redis): real
// context adds and withdrawals on both venues stay pending until the simulated venue is final;
// a deferred reclaim is retried once collateral frees up; a failed leg gives the money back, and the
// record and the ledger say why; the venue's figures enter the ledger as observations. The venue
// runs on a clock the test moves.
import t from 'tap';
import { until } from '../support/until.ts';
import { poolId } from '../../domain/pool/state.ts';
import { api, type TestApp, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { CHAIN_MS, DEPOSIT_MS, RECLAIM_MS, simulated } from '../infra/venues/fixtures.ts';

const SUBS = '/api/v1/users/me/subscriptions';

t.test('reconciliation against the simulated venues', async (t) => {
  /** the reason each leg made to fail fails with */
  const failing = new Map<string, string>();
  const { clock, venues } = simulated({ failTransfer: (id) => failing.get(id) ?? null });
  const app: TestApp = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', RECONCILIATION_INTERVAL_MS: '100' }, venues });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const agent = (venue: 'SPOT_VENUE' | 'PERP_VENUE') =>
    followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: `Reconciled ${venue}`, venue, minAllocationUsd: 10, ...(venue === 'PERP_VENUE' ? { maxLeverage: 2 } : {}) },
      { live: true },
    );
  let n = 0;
  const funded = async (usd: number) => {
    const u = await signIn(app, `real${++n}@example.test`);
    const res = await api(app, 'POST', `/api/admin/wallets/${u.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: usd } });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return u;
  };
  const record = async (u: SignedIn, agentId: string) =>
    ((await api(app, 'GET', `${SUBS}?walletContext=real`, { token: u.accessToken })).body.data as any[]).find((s) => s.agent === agentId);
  const realBalance = async (u: SignedIn) =>
    ((await api(app, 'GET', '/api/v1/wallet', { token: u.accessToken })).body.data.wallets as any[]).find((w) => w.walletContext === 'real')
      .balanceUsd as number;
  /** The pool's latest spot leg, once the worker has sent it to the chain (the clock may move on then). */
  const sentLeg = (id: string) =>
    until(`the latest leg of ${id} at the chain`, async () => {
      const legs = (await app.deps.store.readStream(`pool-${id}`)).flatMap((e) =>
        e.type === 'AllocationPending'
          ? [(e.data as { transferId: string }).transferId]
          : e.type === 'WithdrawalRequested'
            ? [(e.data as { transfer: { transferId: string } }).transfer.transferId]
            : [],
      );
      const leg = legs.at(-1);
      return leg !== undefined && (await venues.spot.chain.status(leg)) !== null && leg;
    });

  await t.test('spot: an add and a withdrawal are pending until the chain transfer is final', async (t) => {
    const u = await funded(1000);
    const spot = await agent('SPOT_VENUE');
    const followed = await api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId: spot, walletContext: 'real', allocationAmountUsd: 300 } });
    t.equal(followed.status, 200, JSON.stringify(followed.body));
    t.match(followed.body.data.subscription, { allocatedUsd: 0, pendingDeltaUsd: 300, bridgeStatus: null });
    t.equal(await realBalance(u), 700, 'the wallet paid at once');
    // The worker submits the chain transfer; it stays pending until the chain is final.
    await until('the chain transfer', async () => (await venues.spot.chain.status(`${poolId(u.userId, spot, 'real')}#add-1`)) ?? undefined);
    await new Promise((r) => setTimeout(r, 300));
    t.equal((await record(u, spot)).allocatedUsd, 0, 'not before the chain is final');
    clock.advance(CHAIN_MS);
    const confirmed = await until('the add confirmed', async () => {
      const r = await record(u, spot);
      return r.allocatedUsd === 300 && r;
    });
    t.equal(confirmed.pendingDeltaUsd, 0);
    const synced = await until('the venue observed', async () => {
      const r = await record(u, spot);
      return r.allocationBalanceAudit.reconciliationStatus === 'IN_SYNC' && r;
    });
    t.equal(synced.allocationBalanceAudit.venueEquityUsd, 300);
    t.equal(synced.allocationBalanceAudit.venueGapUsd, 0);

    const out = await api(app, 'POST', `${SUBS}/${spot}/allocation/withdraw`, { token: u.accessToken, body: { amountUsd: 100, walletContext: 'real' } });
    t.equal(out.status, 200);
    t.match(out.body.data.subscription, { allocatedUsd: 300, pendingDeltaUsd: -100, withdrawableUsd: 200 });
    t.match(out.body.data.message, /pending until the venue confirms/);
    await sentLeg(poolId(u.userId, spot, 'real'));
    clock.advance(CHAIN_MS);
    await until('the withdrawal confirmed and credited', async () => (await realBalance(u)) === 800);
    t.match(await record(u, spot), { allocatedUsd: 200, pendingDeltaUsd: 0 });

    // Stop following: the payout waits for the chain, and the answer names it.
    const stopped = await api(app, 'DELETE', `${SUBS}/${spot}?walletContext=real`, { token: u.accessToken });
    t.equal(stopped.status, 200, JSON.stringify(stopped.body));
    t.match(stopped.body.data.message, /200 USD returned to the wallet \(pending until the venue confirms it\)/);
    t.notOk(await record(u, spot), 'the pool leaves the list at once');
    await sentLeg(poolId(u.userId, spot, 'real'));
    clock.advance(CHAIN_MS);
    await until('the payout credited', async () => (await realBalance(u)) === 1000);
  });

  await t.test('perp: the bridge lifecycle, a deferred reclaim retried when collateral frees up, and min(requested, free)', async (t) => {
    const u = await funded(1000);
    const perp = await agent('PERP_VENUE');
    const id = poolId(u.userId, perp, 'real');
    const followed = await api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId: perp, walletContext: 'real', allocationAmountUsd: 400 } });
    t.match(followed.body.data.subscription, { pendingDeltaUsd: 400, bridgeStatus: 'PENDING_BRIDGE' });
    await until('BRIDGING', async () => (await record(u, perp)).bridgeStatus === 'BRIDGING');
    t.match((await record(u, perp)).bridgeTransactionId, /\S/);
    clock.advance(DEPOSIT_MS);
    await until('CONFIRMED', async () => {
      const r = await record(u, perp);
      return r.bridgeStatus === 'CONFIRMED' && r.allocatedUsd === 400;
    });

    // All of the pool's collateral is in use at the venue: the reclaim is deferred.
    await venues.perp.account.lockMargin({ poolId: id, positionId: 'p-1', amountMicro: 400_000_000 });
    const out = await api(app, 'POST', `${SUBS}/${perp}/allocation/withdraw`, { token: u.accessToken, body: { amountUsd: 150, walletContext: 'real' } });
    t.equal(out.status, 200);
    await until('RECLAIM_DEFERRED', async () => (await record(u, perp)).bridgeStatus === 'RECLAIM_DEFERRED');
    t.equal((await record(u, perp)).pendingDeltaUsd, -150);
    // 100 frees up: the worker starts the reclaim again and it takes min(150, 100).
    await venues.perp.account.releaseMargin({ poolId: id, positionId: 'p-1', pnlMicro: 0 });
    await venues.perp.account.lockMargin({ poolId: id, positionId: 'p-2', amountMicro: 300_000_000 });
    await until('BRIDGING again', async () => (await record(u, perp)).bridgeStatus === 'BRIDGING');
    clock.advance(RECLAIM_MS);
    await until('the partial reclaim credited', async () => (await realBalance(u)) === 600 + 100);
    t.match(await record(u, perp), { allocatedUsd: 300, pendingDeltaUsd: 0, bridgeStatus: 'CONFIRMED' });
  });

  await t.test('a failed bridge deposit gives the money back to the wallet', async (t) => {
    const u = await funded(500);
    const perp = await agent('PERP_VENUE');
    failing.set(`${poolId(u.userId, perp, 'real')}#add-1`, 'the bridge dropped it');
    const followed = await api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId: perp, walletContext: 'real', allocationAmountUsd: 200 } });
    t.equal(followed.status, 200);
    t.equal(await realBalance(u), 300);
    await until('BRIDGING', async () => (await record(u, perp)).bridgeStatus === 'BRIDGING');
    clock.advance(DEPOSIT_MS);
    await until('refunded', async () => (await realBalance(u)) === 500);
    t.match(await record(u, perp), {
      allocatedUsd: 0,
      pendingDeltaUsd: 0,
      bridgeStatus: 'FAILED',
      lastFailedTransfer: { transferId: `${poolId(u.userId, perp, 'real')}#add-1`, direction: 'add', amountUsd: 200, reason: 'the bridge dropped it' },
    });
  });

  await t.test('a withdrawal the venue fails stays in the pool, and the record and the ledger say why', async (t) => {
    const u = await funded(500);
    const spot = await agent('SPOT_VENUE');
    const id = poolId(u.userId, spot, 'real');
    t.equal((await api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId: spot, walletContext: 'real', allocationAmountUsd: 300 } })).status, 200);
    await sentLeg(id);
    clock.advance(CHAIN_MS);
    await until('the add confirmed', async () => (await record(u, spot)).allocatedUsd === 300);

    t.equal(
      (await api(app, 'POST', `${SUBS}/${spot}/allocation/withdraw`, { token: u.accessToken, body: { amountUsd: 100, walletContext: 'real' } })).status,
      200,
    );
    const leg = await sentLeg(id);
    failing.set(leg, 'INSUFFICIENT_FUNDS');
    clock.advance(CHAIN_MS);
    const failed = await until('the failure in the record', async () => {
      const r = await record(u, spot);
      return r.lastFailedTransfer && r;
    });
    t.match(failed, {
      allocatedUsd: 300,
      pendingDeltaUsd: 0,
      lastFailedTransfer: { transferId: leg, direction: 'withdrawal', amountUsd: 100, reason: 'INSUFFICIENT_FUNDS' },
    });
    t.equal(await realBalance(u), 200, 'nothing was paid out');
    const items = (await api(app, 'GET', `${SUBS}/${spot}/ledger?walletContext=real&limit=100`, { token: u.accessToken })).body.data.items as any[];
    t.match(
      items.filter((i) => i.type === 'AllocationSettled'),
      [
        { outcome: 'confirmed', amounts: { amountUsd: 300 } },
        { outcome: 'failed', reason: 'INSUFFICIENT_FUNDS', amounts: { amountUsd: 0 } },
      ],
    );

    // A later withdrawal the venue confirms: the failure is behind the pool, the record drops it.
    t.equal(
      (await api(app, 'POST', `${SUBS}/${spot}/allocation/withdraw`, { token: u.accessToken, body: { amountUsd: 50, walletContext: 'real' } })).status,
      200,
    );
    await sentLeg(id);
    clock.advance(CHAIN_MS);
    await until('the second withdrawal paid', async () => (await realBalance(u)) === 250);
    const after = await record(u, spot);
    t.match(after, { allocatedUsd: 250, pendingDeltaUsd: 0 });
    t.notOk('lastFailedTransfer' in after, 'no failure since the last confirmed movement');
  });

  await t.test('a venue figure that differs from the ledger by a cent or more is a GAP, recorded as an event', async (t) => {
    const u = await funded(100);
    const perp = await agent('PERP_VENUE');
    const id = poolId(u.userId, perp, 'real');
    await api(app, 'POST', SUBS, { token: u.accessToken, body: { agentId: perp, walletContext: 'real', allocationAmountUsd: 50 } });
    await until('BRIDGING', async () => (await record(u, perp)).bridgeStatus === 'BRIDGING');
    clock.advance(DEPOSIT_MS);
    await until('IN_SYNC', async () => (await record(u, perp)).allocationBalanceAudit.reconciliationStatus === 'IN_SYNC');
    // A loss at the venue the ledger does not know of.
    await venues.perp.account.lockMargin({ poolId: id, positionId: 'gap', amountMicro: 10_000_000 });
    await venues.perp.account.releaseMargin({ poolId: id, positionId: 'gap', pnlMicro: -2_500_000 });
    const gap = await until('GAP', async () => {
      const r = await record(u, perp);
      return r.allocationBalanceAudit.reconciliationStatus === 'GAP' && r;
    });
    t.match(gap.allocationBalanceAudit, { venueEquityUsd: 47.5, venueGapUsd: -2.5 });
    t.equal(gap.perpVenueTotalEquityUsd, 47.5);
    const observed = (await app.deps.store.readStream(`pool-${id}`)).filter((e) => e.type === 'ReconciliationObserved');
    t.same(
      observed.map((e) => (e.data as { status: string }).status),
      ['IN_SYNC', 'GAP'],
      'each change once, not every sweep',
    );
  });
});
