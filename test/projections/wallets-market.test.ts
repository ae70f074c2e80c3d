// The wallets and market-prices read models: they agree with the streams, a rebuild equals the
// live model row for row, and the wallets batch path equals applying events one by one.
import t from 'tap';
import { walletDecider, type WalletCommand } from '../../domain/wallet/decide.ts';
import { balanceOf } from '../../domain/wallet/state.ts';
import { inTransaction, migrate } from '../../infra/db.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { checkpointMigrations } from '../../projections/checkpoints.ts';
import { marketPricesProjector } from '../../projections/market/projector.ts';
import { rebuild } from '../../projections/rebuild.ts';
import { walletsProjector } from '../../projections/wallets/projector.ts';
import { api, loadState, startTestApp, type TestApp } from '../support/app.ts';
import { followableAgent } from '../support/agents.ts';
import { signIn } from '../support/auth.ts';
import { freshDatabase } from '../support/db.ts';
import { committedLog } from '../support/log.ts';

const ADMIN = 'admin@example.test';
const START = 10_000_000_000;

/** A wallet command straight to the stream (credits and refunds have no route yet), then read-your-writes. */
async function walletCommand(app: TestApp, userId: string, command: Omit<WalletCommand, 'metadata'>) {
  const metadata = { now: app.deps.clock.now(), actor: 'test', correlationId: `test-${app.deps.ids.uuid()}` };
  const decided = await app.deps.dispatch.room.handle(
    walletDecider.streamOf(userId),
    walletDecider,
    (s) => walletDecider.decide({ ...command, metadata } as WalletCommand, s),
    {
      metadata,
      ids: app.deps.ids,
      deadline: Date.now() + 10_000,
    },
  );
  await app.deps.readYourWrites(decided.position);
}

const allEvents = (app: TestApp): Promise<RecordedEvent[]> => committedLog(app);

t.test('wallets and market prices: the read models agree with the streams and rebuild to the same rows', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'dev@example.test');
  const agentId = await followableAgent(app, { developer: dev.accessToken, admin: admin.accessToken }, { name: 'Ledger', venue: 'SPOT_VENUE' });
  const users = [await signIn(app, 'a@example.test'), await signIn(app, 'b@example.test'), await signIn(app, 'c@example.test')];
  const frozenOnly = await signIn(app, 'd@example.test');

  for (const [i, user] of users.slice(0, 2).entries()) {
    for (const amountUsd of [100 + i, 0.000001, 42.5]) {
      const res = await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd } });
      t.equal(res.status, 200, JSON.stringify(res.body));
    }
    for (const walletContext of ['virtual', 'real']) {
      const res = await api(app, 'POST', '/api/v1/users/me/subscriptions', {
        token: user.accessToken,
        body: { agentId, walletContext, allocationMode: 'USD_AMOUNT', allocationAmountUsd: 25 + i },
      });
      t.equal(res.status, 200, JSON.stringify(res.body));
    }
  }
  // A debit given back, and transfers coming back to the wallet (the first user's, and a wallet never used before).
  const plan = {
    transferId: 'tr-refunded',
    amountMicro: 7_000_000,
    from: { kind: 'wallet' as const, userId: users[0]!.userId, walletContext: 'virtual' as const },
    to: { kind: 'pool' as const, userId: users[0]!.userId, agentId: 'gone', walletContext: 'virtual' as const },
  };
  await walletCommand(app, users[0]!.userId, { type: 'DebitWallet', data: { transfer: plan, virtualStartMicro: START } });
  await walletCommand(app, users[0]!.userId, { type: 'RefundWallet', data: { transferId: 'tr-refunded' } });
  await walletCommand(app, users[0]!.userId, {
    type: 'CreditWallet',
    data: { transferId: 'tr-back', walletContext: 'real', amountMicro: 3_000_001, from: 'pool:x', virtualStartMicro: START },
  });
  await walletCommand(app, users[2]!.userId, {
    type: 'CreditWallet',
    data: { transferId: 'tr-back', walletContext: 'virtual', amountMicro: 5, from: 'pool:y', virtualStartMicro: START },
  });
  // Freezes: one kept, one undone, and a wallet never used that opens frozen.
  for (const [userId, action] of [
    [users[1]!.userId, 'freeze'],
    [users[0]!.userId, 'freeze'],
    [users[0]!.userId, 'unfreeze'],
    [frozenOnly.userId, 'freeze'],
  ]) {
    const res = await api(app, 'POST', `/api/admin/wallets/${userId}/${action}`, {
      token: admin.accessToken,
      ...(action === 'freeze' ? { body: { reason: 'review' } } : {}),
    });
    t.equal(res.status, 200, JSON.stringify(res.body));
  }
  for (const prices of [{ SOL: 150, BONK: 0.00002 }, { SOL: 151.5, 'JUP/USDC': 0.91 }, { BONK: 0.000021 }]) {
    const res = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices } });
    t.equal(res.status, 200, JSON.stringify(res.body));
  }

  const events = await allEvents(app);
  const kinds = new Set(events.filter((e) => e.streamName.startsWith('wallet-')).map((e) => e.type));
  t.same(
    [...kinds].sort(),
    ['WalletCredited', 'WalletDebited', 'WalletDeposited', 'WalletFrozen', 'WalletOpened', 'WalletRefunded', 'WalletUnfrozen'],
    'every kind of wallet event is covered',
  );

  await t.test('each user’s row holds the balances the wallet stream decides on', async (t) => {
    for (const user of [...users, frozenOnly, admin]) {
      const { state } = await loadState(app, walletDecider, user.userId);
      const res = await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken });
      const shown = Object.fromEntries((res.body.data.wallets as any[]).map((w) => [w.walletContext, Math.round(w.balanceUsd * 1e6)]));
      t.same(shown, { virtual: balanceOf(state, 'virtual', START), real: balanceOf(state, 'real', START) }, user.userId);
      t.equal(res.body.data.frozen, state.frozen, `${user.userId} frozen`);
    }
    const { rows } = await app.deps.pool.query('SELECT count(*)::int AS n FROM wallets');
    t.equal(rows[0].n, 4, 'rows only for wallets ever used (a freeze opens one)');
  });

  await t.test('a rebuild equals the live read models row for row', async (t) => {
    const snapshot = async () => ({
      wallets: (await app.deps.pool.query('SELECT * FROM wallets ORDER BY user_id')).rows,
      prices: (await app.deps.pool.query('SELECT * FROM market_prices ORDER BY symbol')).rows,
    });
    const live = await snapshot();
    t.equal(live.prices.length, 3);
    for (const projector of [walletsProjector, marketPricesProjector]) await rebuild(app.deps.store, app.deps.pool, projector);
    t.same(await snapshot(), live);
  });

  await t.test('the wallets batch path gives the rows of applying the events one by one', async (t) => {
    const db = await freshDatabase('walletsbatch');
    t.teardown(() => db.drop());
    await migrate(db.pool, [...checkpointMigrations, ...walletsProjector.migrations]);
    const rows = async () => (await db.pool.query('SELECT * FROM wallets ORDER BY user_id')).rows;
    await inTransaction(db.pool, async (c) => {
      for (const e of events) await walletsProjector.apply(c, e);
    });
    const oneByOne = await rows();
    t.equal(oneByOne.length, 4);
    t.same(
      oneByOne
        .filter((r) => r.frozen)
        .map((r) => r.user_id)
        .sort(),
      [users[1]!.userId, frozenOnly.userId].sort(),
    );
    for (const size of [events.length, 7, 3, 1]) {
      await db.pool.query('DELETE FROM wallets');
      await inTransaction(db.pool, async (c) => {
        for (let i = 0; i < events.length; i += size) await walletsProjector.applyBatch!(c, events.slice(i, i + size));
      });
      t.same(await rows(), oneByOne, `batches of ${size}`);
    }
  });
});
