// node --import=tsx bench/conventional/check.ts [--lean]: the baseline (either build) must be the same follow, the same
// withdrawal and the same manual buy and sell, or the bench compares nothing. Sends one sequence of requests to our app and to the
// conventional server, checks that both answer alike (timestamps aside), and checks the
// conventional rows after each step.
import { isDeepStrictEqual } from 'node:util';
import { poolId } from '../../domain/pool/state.ts';
import { api, dispatch, startTestApp } from '../../test/support/app.ts';
import { followableAgent } from '../../test/support/agents.ts';
import { oneTrade } from '../../test/domain/pool/fixtures.ts';
import { signIn } from '../../test/support/auth.ts';
import { startConventional } from './start.ts';

const PATH = '/api/v1/users/me/subscriptions';
/** `--lean`: check the lean build instead of the like-for-like one */
const LEAN = process.argv.includes('--lean');
const ADMIN = 'check-admin@example.test';
const agentBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  venue: 'SPOT_VENUE',
  avatarUrl: 'https://img.example.test/a.png',
  minAllocationUsd: 25.5,
  ...extra,
});

/** Timestamps and fresh ids (a trade's id, its venue transaction) differ between two services by nature; everything else must be equal. */
function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !['subscribedAt', 'createdAt', 'updatedAt', 'timestamp', 'tradeId', 'transactionId'].includes(k))
      .map(([k, v]) => [k, withoutTimes(v)]),
  );
}

let problems = 0;
function expect(ok: boolean, what: string, detail?: unknown) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) {
    problems++;
    if (detail !== undefined) console.log(JSON.stringify(detail, null, 2));
  }
}

const app = await startTestApp({ durable: false, config: { ADMIN_EMAILS: ADMIN } });
try {
  const admin = await signIn(app, ADMIN);
  const dev = await signIn(app, 'check-dev@example.test');
  const tokens = { developer: dev.accessToken, admin: admin.accessToken };
  const live = await followableAgent(app, tokens, agentBody('Live Spot'), { live: true });
  const perp = await followableAgent(app, tokens, agentBody('Beta Perp', { venue: 'PERP_VENUE', maxLeverage: 5, maxBetaUsers: 1, minAllocationUsd: 0 }));
  const pending = await api(app, 'POST', '/api/v1/developers/agents', { token: dev.accessToken, body: agentBody('Pending') });
  const pendingId = pending.body.data.id as string;
  const u1 = await signIn(app, 'check-u1@example.test');
  const u2 = await signIn(app, 'check-u2@example.test');
  const trader = await signIn(app, 'check-trader@example.test');
  const setPrice = (priceUsd: number) => api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: { SOL: priceUsd } } });
  await setPrice(100);

  const conv = await startConventional(app, { userIds: [u1.userId, u2.userId, trader.userId], agentIds: [live, perp, pendingId] }, 4, LEAN);
  try {
    const both = async (what: string, method: string, token: string | undefined, body?: unknown, path = PATH) => {
      const ours = await api(app, method, path, { token, body });
      const theirs = await api({ url: conv.url }, method, path, { token, body });
      expect(
        ours.status === theirs.status && isDeepStrictEqual(withoutTimes(ours.body), withoutTimes(theirs.body)),
        `${what}: ${ours.status} on both sides, same body`,
        { ours: ours.body, conventional: theirs.body, status: [ours.status, theirs.status] },
      );
      return theirs;
    };
    const row = async (sql: string, values: unknown[]) => (await conv.db.query(sql, values)).rows[0];
    const wallet = async () => Number((await row('SELECT balance_micro FROM wallets WHERE user_id = $1', [u1.userId]))?.balance_micro);
    const audits = async () => Number((await row('SELECT count(*) AS n FROM follow_audit WHERE user_id = $1', [u1.userId])).n);
    const allocated = async () =>
      Number((await row('SELECT confirmed_in_micro FROM subscriptions WHERE user_id = $1 AND agent_id = $2', [u1.userId, live])).confirmed_in_micro);

    const first = await both('first follow of 100 USD', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 100 });
    expect(first.body.data?.message === 'Now following Live Spot', 'first follow says "Now following"');
    expect(first.body.data?.subscription?.allocatedUsd === 100, 'the answer carries the subscription record, 100 USD allocated');
    expect((await wallet()) === 9_900_000_000, 'the wallet opened at 10000 USD and paid 100 USD');
    expect((await allocated()) === 100_000_000, 'the pool row holds 100 USD');
    expect((await audits()) === 1, 'one audit row');

    await both('follow again with 250 USD', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 250 });
    expect((await wallet()) === 9_750_000_000 && (await allocated()) === 250_000_000, 'tops up by 150 USD, not 250');
    expect((await audits()) === 2, 'a second audit row');

    await both('follow again with 50 USD and ALERTS_ONLY', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 50, tradeMode: 'ALERTS_ONLY' });
    expect((await wallet()) === 9_750_000_000 && (await allocated()) === 250_000_000, 'a lower target withdraws nothing');

    await both('follow again with the same settings', 'POST', u1.accessToken, { agentId: live });
    await both('20000 USD: insufficient funds', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 20_000 });
    expect((await wallet()) === 9_750_000_000 && (await audits()) === 4, 'the refused follow changed nothing (rolled back)');

    await both('10 USD, below the minimum of 25.5', 'POST', u2.accessToken, { agentId: live, allocationAmountUsd: 10 });
    await both('a beta perp agent, 1% of the balance', 'POST', u1.accessToken, { agentId: perp, allocationPercentageMax: 1 });
    await both('the only beta seat is taken', 'POST', u2.accessToken, { agentId: perp, allocationAmountUsd: 5 });
    await both('an agent pending review', 'POST', u1.accessToken, { agentId: pendingId });
    await both('an unknown agent', 'POST', u1.accessToken, { agentId: 'no-such-agent' });
    await both('two allocation modes without a mode', 'POST', u1.accessToken, { agentId: live, allocationAmountUsd: 1, allocationAmountSol: 1 });
    await both('SOL amount in the real context (no funds)', 'POST', u2.accessToken, { agentId: live, allocationAmountSol: 1, walletContext: 'real' });
    await both('no token', 'POST', undefined, { agentId: live });
    await both('GET subscriptions', 'GET', u1.accessToken);
    await both('GET subscriptions of an empty user', 'GET', u2.accessToken);

    // Withdrawals: the same figures, refusals and records; the conventional rows move as ours.
    const withdrawPath = (agentId: string) => `${PATH}/${encodeURIComponent(agentId)}/allocation/withdraw`;
    const withdraw = (what: string, token: string | undefined, agentId: string, body?: unknown) => both(what, 'POST', token, body, withdrawPath(agentId));
    const withdrawals = async () => Number((await row('SELECT count(*) AS n FROM withdraw_audit WHERE user_id = $1', [u1.userId])).n);
    const withdrawn = async () =>
      Number((await row('SELECT confirmed_out_micro FROM subscriptions WHERE user_id = $1 AND agent_id = $2', [u1.userId, live])).confirmed_out_micro);
    // Our pool's open trade locks margin; the baseline models no trades, its row's locked column stands for it.
    const lock = async (marginMicro: number) => {
      const id = poolId(u1.userId, live, 'virtual');
      const fact =
        marginMicro > 0
          ? ({ type: 'OpenTrade', data: oneTrade('check-trade', marginMicro) } as const)
          : ({ type: 'CloseTrade', data: { tradeId: 'check-trade', realizedPnlMicro: 0 } } as const);
      const { pool } = (await dispatch(app, 'RecordPoolFact', { poolId: id, fact })).result;
      const locked = pool.followed ? (pool.openTrades['check-trade']?.marginMicro ?? 0) : 0;
      expect(locked === marginMicro, `our pool locks ${marginMicro} micro-USD in the trade`, { locked });
      await conv.db.query('UPDATE subscriptions SET locked_micro = $3 WHERE user_id = $1 AND agent_id = $2', [u1.userId, live, marginMicro]);
    };

    const before = await wallet();
    const out = await withdraw('withdraw 20.25 USD from the 250 USD pool', u1.accessToken, live, { amountUsd: 20.25 });
    expect(out.body.data?.message === 'Withdrew 20.25 USD from the allocation', 'the answer says what was withdrawn');
    expect(out.body.data?.subscription?.allocatedUsd === 229.75 && out.body.data?.subscription?.withdrawableUsd === 229.75, 'the record shows 229.75 USD left');
    expect((await wallet()) === before + 20_250_000 && (await withdrawn()) === 20_250_000, 'the wallet row gained 20.25 USD, the pool row paid it');
    expect((await withdrawals()) === 1, 'one withdrawal audit row');
    await withdraw('withdraw the 0.01 USD minimum, context named', u1.accessToken, live, { amountUsd: 0.01, walletContext: 'virtual' });
    await withdraw('withdraw 229.75 USD, above the 229.74 withdrawable', u1.accessToken, live, { amountUsd: 229.75 });
    expect((await wallet()) === before + 20_260_000 && (await withdrawals()) === 2, 'the refused withdrawal changed nothing (rolled back)');

    // A trade opens only in a pool that trades (the follow above made it ALERTS_ONLY): both sides back to AUTO_TRADING first.
    await both('back to AUTO_TRADING', 'POST', u1.accessToken, { agentId: live, tradeMode: 'AUTO_TRADING' });
    await lock(200_000_000);
    await withdraw('withdraw 50 USD while a trade locks 200 USD', u1.accessToken, live, { amountUsd: 50 });
    await withdraw('withdraw the 29.74 USD the trade leaves free', u1.accessToken, live, { amountUsd: 29.74 });
    await lock(0);
    await withdraw('withdraw the last 200 USD once the trade closed', u1.accessToken, live, { amountUsd: 200 });
    expect((await wallet()) === before + 250_000_000 && (await withdrawn()) === 250_000_000, 'the whole 250 USD is back in the wallet row');
    await withdraw('withdraw 0.01 USD from an empty pool', u1.accessToken, live, { amountUsd: 0.01 });

    await withdraw('withdraw 97.25 USD of the 97.5 USD perp pool', u1.accessToken, perp, { amountUsd: 97.25 });
    await withdraw('withdraw 0.25 USD, above what the perp fee buffer leaves (0.249375)', u1.accessToken, perp, { amountUsd: 0.25 });
    await withdraw('withdraw 0.249375 USD, to the micro-USD', u1.accessToken, perp, { amountUsd: 0.249375 });

    await withdraw('withdraw from an agent the user does not follow', u1.accessToken, pendingId, { amountUsd: 1 });
    await withdraw('withdraw from an unknown agent', u1.accessToken, 'no-such-agent', { amountUsd: 1 });
    await withdraw('withdraw from the real context (another pool, none)', u1.accessToken, live, { amountUsd: 1, walletContext: 'real' });
    await withdraw('withdraw by a user who never used the wallet', u2.accessToken, live, { amountUsd: 1 });
    for (const [what, body] of [
      ['no body', undefined],
      ['an empty body', {}],
      ['0.001 USD, below the minimum', { amountUsd: 0.001 }],
      ['the amount as a string', { amountUsd: '10' }],
      ['a negative amount', { amountUsd: -1 }],
      ['seven decimals', { amountUsd: 1.0000001 }],
      ['1e300 USD', { amountUsd: 1e300 }],
      ['an unknown wallet context', { amountUsd: 1, walletContext: 'paper' }],
    ] as const) {
      await withdraw(`withdraw with ${what}`, u1.accessToken, live, body);
    }
    await withdraw('withdraw with a blank agent id', u1.accessToken, ' ', { amountUsd: 1 });
    await withdraw('withdraw without a token', undefined, live, { amountUsd: 1 });
    expect((await withdrawals()) === 6, 'six withdrawals went through, each with its audit row');
    await both('GET subscriptions after the withdrawals', 'GET', u1.accessToken);

    // Manual buys and sells (bench/wallet.ts): the same answers, and the lot rows move as our lots.
    const price = async (usd: number) => {
      await setPrice(usd);
      await conv.db.query(`UPDATE market_prices SET price = $1 WHERE symbol = 'SOL'`, [String(usd)]);
    };
    const trade = (what: string, side: 'buy' | 'sell', body: unknown, token: string | null = trader.accessToken) =>
      both(what, 'POST', token ?? undefined, body, `/api/v1/wallet/${side}`);
    const lotRows = async () =>
      (await conv.db.query('SELECT units::float8 AS units, cost_micro::float8 AS cost FROM wallet_lots WHERE user_id = $1 ORDER BY opened_at', [trader.userId]))
        .rows;
    const cash = async () =>
      Number((await row(`SELECT balance_micro FROM wallets WHERE user_id = $1 AND wallet_context = 'virtual'`, [trader.userId])).balance_micro);
    const bought = await trade('buy 100 USD of SOL at 100', 'buy', { mint: 'SOL', amountUsd: 100 });
    expect(bought.body.data?.message === 'Bought 1 SOL for 100 USD at 100 USD each', 'the buy says what it bought');
    await price(200);
    await trade('buy 400 USD of SOL at 200', 'buy', { mint: 'SOL', amountUsd: 400 });
    await price(150);
    const sold = await trade('sell 1.5 SOL at 150, oldest lot first', 'sell', { mint: 'SOL', amount: 1.5 });
    expect(sold.body.data?.realizedPnlUsd === 25, 'realized PnL 25 USD (225 for lots that cost 100 + 100)');
    expect(
      JSON.stringify(await lotRows()) === JSON.stringify([{ units: 1_500_000, cost: 300_000_000 }]),
      'the first lot row deleted, the second reduced to 1.5 SOL costing 300 USD',
    );
    expect((await cash()) === 10_000_000_000 - 500_000_000 + 225_000_000, 'the wallet row paid 500 USD and got 225 USD');
    await trade('sell 1.500001 SOL, beyond the lots', 'sell', { mint: 'SOL', amount: 1.500001 });
    await trade('sell a mint never bought', 'sell', { mint: 'BONK', amount: 1 });
    await trade('sell the spend stablecoin (no mint)', 'sell', { amount: 1 });
    await trade('buy beyond the funds', 'buy', { mint: 'SOL', amountUsd: 20_000 });
    await trade('buy a mint without a price', 'buy', { mint: 'NOPRICE', amountUsd: 10 });
    await trade('sell with a malformed amount', 'sell', { mint: 'SOL', amount: 1.0000001 });
    await trade('sell without a token', 'sell', { mint: 'SOL', amount: 1 }, null);
    await trade('sell the last 1.5 SOL', 'sell', { mint: 'SOL', amount: 1.5 });
    expect((await lotRows()).length === 0 && (await cash()) === 10_000_000_000 - 500_000_000 + 450_000_000, 'no lot row left, 450 USD back in all');
  } finally {
    await conv.stop();
  }
} finally {
  await app.close();
}
console.log(problems ? `${problems} problem(s)` : 'the conventional baseline answers as ours does');
process.exit(problems ? 1 : 0);
