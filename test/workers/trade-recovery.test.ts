// A trade's transfers interrupted by a crash are finished by the transfer recovery worker: an open
// that died after the pool locked the margin opens the trade; a close that died after the trade
// settled pays the pool back. Nothing is applied twice.
import t from 'tap';
import { createDispatcher } from '../../commands/dispatch.ts';
import { tradeIdOf } from '../../commands/signals/execute.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId } from '../../domain/pool/state.ts';
import { tradeDecider } from '../../domain/trade/decide.ts';
import { poolEndpointOf } from '../../domain/transfer/plan.ts';
import { api, dispatch, loadState, startTestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { DIED, dyingStore } from '../support/crash.ts';
import { noLimits } from '../domain/pool/fixtures.ts';
import { until } from '../support/until.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('trade transfers interrupted by a crash are finished by the recovery', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: 'admin@example.test', TRANSFER_RECOVERY_INTERVAL_MS: '250', TRANSFER_RECOVERY_GRACE_MS: '500' } });
  t.teardown(() => app.close());
  const admin = await signIn(app, 'admin@example.test');
  const dev = await signIn(app, 'dev@example.test');
  const user = await signIn(app, 'trader@example.test');
  const agentId = await followableAgent(
    app,
    { developer: dev.accessToken, admin: admin.accessToken },
    { name: 'Recovered', venue: 'PERP_VENUE', maxLeverage: 5 },
  );
  t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 50_000 } } })).status, 200);
  t.equal((await api(app, 'POST', '/api/v1/users/me/subscriptions', { token: user.accessToken, body: { agentId, allocationAmountUsd: 1000 } })).status, 200);
  const pool = poolId(user.userId, agentId, 'virtual');
  const tradeId = tradeIdOf(pool, 'crash-signal', 0);
  const request = {
    token: 'BTC',
    decimals: 9,
    side: 'long' as const,
    leverage: 4,
    entry: { kind: 'market' as const },
    stopLossMicro: 45_000_000_000,
    takeProfits: [],
    slippageBps: 50,
    feeBps: 5,
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
  };

  await t.test('an open that died after the pool locked the margin: the trade opens, once', async (t) => {
    // What a crash leaves: the pool's lock with its plan recorded, the trade never requested.
    const transfer = { transferId: tradeId, amountMicro: 0, from: poolEndpointOf(pool), to: { kind: 'trade' as const, tradeId, poolId: pool, request } };
    await dispatch(app, 'RecordPoolFact', {
      poolId: pool,
      fact: {
        type: 'OpenTrade',
        data: { limits: noLimits, trades: [{ tradeId, size: { marginMicro: 100_000_000 }, token: 'BTC', side: 'long', signalId: 'crash-signal', transfer }] },
      },
    });
    const trade = await until('the recovery to open the trade', async () => {
      const { state } = await loadState(app, tradeDecider, tradeId);
      return state.status === 'open' ? state : false;
    });
    t.equal(trade.notionalMicro, 400_000_000, 'the margin the pool locked × leverage 4');
    const { state } = await loadState(app, poolDecider, pool);
    t.equal(state.followed && state.ledger.locked, 100_000_000, 'the margin stays locked, once');
    const rows = await app.deps.pool.query('SELECT status FROM transfers WHERE transfer_id = $1', [tradeId]);
    await until(
      'the transfer to show completed',
      async () => (await app.deps.pool.query('SELECT status FROM transfers WHERE transfer_id = $1', [tradeId])).rows[0]?.status === 'completed',
    );
    t.ok(rows.rows.length === 1);
  });

  await t.test('a close that died after the trade settled: the pool gets the margin and PnL back, once', async (t) => {
    t.equal((await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { BTC: 55_000 } } })).status, 200);
    const { deps } = app;
    const dying = createDispatcher({
      store: dyingStore(deps.store, (s) => s.startsWith('pool-')),
      redis: deps.redis,
      mailer: { send: async () => {} },
      ids: deps.ids,
      swaps: deps.swaps,
      config: deps.config,
    });
    const died = await dying({
      type: 'CloseUserTrade',
      data: { tradeId, userId: user.userId },
      metadata: { now: deps.clock.now(), actor: user.userId, correlationId: 'crashed-close' },
    }).then(
      () => false,
      (err: unknown) => err instanceof Error && err.message === DIED,
    );
    t.ok(died, 'the close died before the pool was paid back');
    const trade = (await loadState(app, tradeDecider, tradeId)).state;
    if (trade.status !== 'closed') throw new Error(`trade ${trade.status}`);
    const before = (await loadState(app, poolDecider, pool)).state;
    t.equal(before.followed && before.ledger.locked, 100_000_000, 'the pool still holds the margin as locked');
    const after = await until('the recovery to pay the pool back', async () => {
      const { state } = await loadState(app, poolDecider, pool);
      return state.followed && state.ledger.locked === 0 ? state : false;
    });
    t.equal(after.ledger.realized, trade.realizedPnlMicro, "the pool realizes the trade's PnL, once");
    t.ok(trade.realizedPnlMicro > 0);
    await sleep(1_000);
    const again = (await loadState(app, poolDecider, pool)).state;
    t.equal(again.followed && again.ledger.realized, trade.realizedPnlMicro, 'later sweeps change nothing');
  });
});
