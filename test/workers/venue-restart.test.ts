// The service's own venue (VENUE_URL unset, nothing injected) across a restart of the service on
// the same database and Redis: the real pools it funded are still funded (the reconciliation finds
// no gap), a reclaim sent before the stop and due while the service was down settles after it, and
// a withdrawal asked after the restart is paid.
import t from 'tap';
import { poolId } from '../../domain/pool/state.ts';
import { api, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { until } from '../support/until.ts';

const SUBS = '/api/v1/users/me/subscriptions';
const RECLAIM_MS = 1_000;

t.test('the simulated venue keeps its books across a restart: no gap, and real withdrawals are paid', async (t) => {
  const app = await startTestApp({
    config: {
      ADMIN_EMAILS: 'admin@example.test',
      RECONCILIATION_INTERVAL_MS: '100',
      VENUE_SIM_CHAIN_MS: '200',
      VENUE_SIM_DEPOSIT_MS: '200',
      VENUE_SIM_RECLAIM_MS: String(RECLAIM_MS),
    },
  });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'restarted@example.test');
  const agent = (venue: 'SPOT_VENUE' | 'PERP_VENUE') =>
    followableAgent(
      app,
      { developer: dev.accessToken, admin: admin.accessToken },
      { name: `Restarted ${venue}`, venue, minAllocationUsd: 10, ...(venue === 'PERP_VENUE' ? { maxLeverage: 2 } : {}) },
      { live: true },
    );
  const record = async (u: SignedIn, agentId: string) =>
    ((await api(app, 'GET', `${SUBS}?walletContext=real`, { token: u.accessToken })).body.data as any[]).find((s) => s.agent === agentId);
  const realBalance = async () =>
    ((await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken })).body.data.wallets as any[]).find((w) => w.walletContext === 'real')
      .balanceUsd as number;
  /** the pool as the venue and the ledger agree on it: settled, observed IN_SYNC at `venueEquityUsd` */
  const inSync = (agentId: string, venueEquityUsd: number) =>
    until(`${agentId} in sync at ${venueEquityUsd} USD`, async () => {
      const r = await record(user, agentId);
      return (
        r?.pendingDeltaUsd === 0 &&
        r.allocationBalanceAudit.reconciliationStatus === 'IN_SYNC' &&
        r.allocationBalanceAudit.venueEquityUsd === venueEquityUsd &&
        r
      );
    });

  t.equal((await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 1000 } })).status, 200);
  const spot = await agent('SPOT_VENUE');
  const perp = await agent('PERP_VENUE');
  for (const [agentId, amount] of [
    [spot, 300],
    [perp, 400],
  ] as const) {
    const followed = await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, walletContext: 'real', allocationAmountUsd: amount } });
    t.equal(followed.status, 200, JSON.stringify(followed.body));
  }
  await inSync(spot, 300);
  await inSync(perp, 400);

  // A reclaim the venue took before the stop, due while the service is down.
  const out = await api(app, 'POST', `${SUBS}/${perp}/allocation/withdraw`, { token: user.accessToken, body: { amountUsd: 150, walletContext: 'real' } });
  t.equal(out.status, 200, JSON.stringify(out.body));
  await until('the reclaim at the bridge', async () => (await record(user, perp)).bridgeStatus === 'BRIDGING');
  await app.restart(() => new Promise((r) => setTimeout(r, RECLAIM_MS)));

  await until('the reclaim paid to the wallet', async () => (await realBalance()) === 300 + 150);
  t.match(await inSync(perp, 250), { allocatedUsd: 250, bridgeStatus: 'CONFIRMED' });

  const paid = await api(app, 'POST', `${SUBS}/${spot}/allocation/withdraw`, { token: user.accessToken, body: { amountUsd: 100, walletContext: 'real' } });
  t.equal(paid.status, 200, JSON.stringify(paid.body));
  await until('the withdrawal paid to the wallet', async () => (await realBalance()) === 450 + 100);
  t.match(await inSync(spot, 200), { allocatedUsd: 200 });

  for (const agentId of [spot, perp]) {
    const events = await app.deps.store.readStream(`pool-${poolId(user.userId, agentId, 'real')}`);
    const observed = events.filter((e) => e.type === 'ReconciliationObserved').map((e) => (e.data as { status: string }).status);
    t.same([...new Set(observed)], ['IN_SYNC'], `${agentId}: every observation in sync, before and after the restart`);
    t.notOk(
      events.some((e) => e.type === 'AllocationSettled' && (e.data as { outcome: string }).outcome === 'failed'),
      `${agentId}: no leg failed`,
    );
  }
});
