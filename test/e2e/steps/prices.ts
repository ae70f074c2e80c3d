import type { Test } from 'tap';
import { signWebhookBody } from '../../../infra/signing/webhook.ts';
import { api, startTestApp, type TestApp } from '../../support/app.ts';
import { appendFacts } from '../../support/facts.ts';
import { signIn } from '../../support/auth.ts';
import { until } from '../../support/until.ts';
import { ADMIN, SUBS, rebuildEqualsLive } from './support.ts';
import { walletPrices } from './wallet-prices.ts';

interface TradeItem {
  id: string;
  token: string;
  side: string;
  status: string;
  averageFillPrice: number | null;
  sizeUnits: string;
  realizedPnlUsd: number;
  feesPaidUsd: number;
}

/**
 * Prices at both ends of the range, through HTTP (docs/decisions.md, "Prices finer than a
 * micro-USD"): an administrator sets 0.00000001, 0.00000003 and 100,000 USD; agent trades open at
 * those marks and close at the next, their fills shown exactly and their PnL exact in whole micro-USD,
 * rounded against the trader (fee 5 bps); events stored in micro-USD before are read as they meant;
 * the manual wallet buys and sells at both ends too (steps/wallet-prices.ts); a rebuild of every
 * read model (the wallets' and their lots' among them) equals the live ones.
 */
export async function pricesFlow(t: Test, eventStore: 'postgres' | 'esdb') {
  const app = await startTestApp({ eventStore, config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const developer = await signIn(app, 'prices-dev@example.test');
  const admin = await signIn(app, ADMIN);
  const user = await signIn(app, 'prices-follower@example.test');
  const setPrices = async (prices: Record<string, number>) => {
    const res = await api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices } });
    t.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.prices as Array<{ symbol: string; priceUsd: number }>;
  };
  const listed = await api(app, 'POST', '/api/v1/developers/agents', {
    token: developer.accessToken,
    body: { name: 'Price range', venue: 'PERP_VENUE', maxLeverage: 5, minTradeUsd: 1 },
  });
  t.equal(listed.status, 201);
  const agentId = listed.body.data.id as string;
  const secret = listed.body.data.inboundWebhookSigningSecretReveal as string;
  t.equal((await api(app, 'POST', `/api/admin/developer-agents/${agentId}/approve`, { token: admin.accessToken, body: {} })).status, 200);
  const shown = await setPrices({ DUST: 0.00000001, TRI: 0.00000003, BIG: 100_000 });
  t.same(
    shown.map((p) => [p.symbol, p.priceUsd]),
    [
      ['BIG', 100_000],
      ['DUST', 0.00000001],
      ['TRI', 0.00000003],
    ],
    'the prices are answered exactly',
  );
  t.equal((await api(app, 'POST', SUBS, { token: user.accessToken, body: { agentId, allocationAmountUsd: 5000 } })).status, 200);
  await api(app, 'GET', SUBS, { token: user.accessToken });

  const deliver = async (body: Record<string, unknown>) => {
    const signed = signWebhookBody({ secret, body, timestampMs: Date.now() });
    const res = await api(app, 'POST', `/api/v1/signals/${agentId}`, {
      body,
      headers: { 'x-svc-timestamp': signed.timestampHeader, 'x-svc-signature': signed.signatureHeader },
    });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.equal(res.body.data.outcome, 'executed', JSON.stringify(res.body.data));
  };
  const tradeOf = async (token: string, status: string): Promise<TradeItem> => {
    let found: TradeItem | undefined;
    await until(`the ${token} trade to be listed ${status}`, async () => {
      const items = (await api(app, 'GET', '/api/v1/trades', { token: user.accessToken })).body.data.items as TradeItem[];
      found = items.find((i) => i.token === token && i.status === status);
      return found !== undefined;
    });
    return found!;
  };

  // 100 USD at 0.00000001: 10^19 base units (9 decimals); sold at 0.000000015: +50 USD, fees 0.05 + 0.075.
  await deliver({ signalId: 'dust-open', action: 'open', side: 'long', token: 'DUST', leverage: 1, sizeUsd: 100 });
  t.match(await tradeOf('DUST', 'open'), { averageFillPrice: 0.00000001, sizeUnits: '10000000000000000000' });
  await setPrices({ DUST: 0.000000015 });
  await deliver({ signalId: 'dust-close', action: 'close', token: 'DUST' });
  t.match(await tradeOf('DUST', 'closed'), { realizedPnlUsd: 49.875, feesPaidUsd: 0.125 }, 'PnL exact: 50 − 0.05 − 0.075');

  // 1000 USD × 2 at 100,000: 0.02 token; sold at 100,000.5: +0.01 USD, fees 1 + 1.000005.
  await deliver({ signalId: 'big-open', action: 'open', side: 'long', token: 'BIG', leverage: 2, sizeUsd: 1000 });
  t.match(await tradeOf('BIG', 'open'), { averageFillPrice: 100_000, sizeUnits: '20000000' });
  await setPrices({ BIG: 100_000.5 });
  await deliver({ signalId: 'big-close', action: 'close', token: 'BIG' });
  t.match(await tradeOf('BIG', 'closed'), { realizedPnlUsd: -1.990005, feesPaidUsd: 2.000005 }, 'PnL exact: 0.01 − 1 − 1.000005');

  // A short of 100 USD at 0.00000003: 3,333,333,333,333,333,333 units; bought back at 0.00000004 the
  // loss is 33.333333333… USD, rounded to −33.333334 (against the trader), fees 0.05 + 0.066667 (up).
  await deliver({ signalId: 'tri-open', action: 'open', side: 'short', token: 'TRI', leverage: 1, sizeUsd: 100 });
  t.match(await tradeOf('TRI', 'open'), { averageFillPrice: 0.00000003, sizeUnits: '3333333333333333333' });
  await setPrices({ TRI: 0.00000004 });
  await deliver({ signalId: 'tri-close', action: 'close', token: 'TRI' });
  t.match(await tradeOf('TRI', 'closed'), { realizedPnlUsd: -33.450001, feesPaidUsd: 0.116667 }, 'PnL exact: −33.333334 − 0.05 − 0.066667');
  const row = async () => (await api(app, 'GET', SUBS, { token: user.accessToken })).body.data.find((p: { agent: string }) => p.agent === agentId);
  await until('the pool to realize the three trades', async () => (await row()).allocationBalanceAudit.lockedMarginUsd === 0);
  t.equal((await row()).allocationBalanceAudit.realizedPnlUsd, 14.434994, 'the pool realizes the sum to the micro-USD: 49.875 − 1.990005 − 33.450001');

  await legacyEvents(t, app, user.userId, agentId);
  await walletPrices(t, app, setPrices);

  await rebuildEqualsLive(t, app);
}

/** Events stored before prices were finer (micro-USD integers): the read models show them as they meant. */
async function legacyEvents(t: Test, app: TestApp, userId: string, agentId: string) {
  await appendFacts(app, 'market-prices', [{ type: 'MarketPricesSet', data: { prices: { OLD: 1_500_000, OLDPEPE: 12 }, at: new Date().toISOString() } }]);
  const list = (await api(app, 'PUT', '/api/admin/market/prices', { token: (await signIn(app, ADMIN)).accessToken, body: { prices: { DUST: 0.00000002 } } }))
    .body.data.prices as Array<{ symbol: string; priceUsd: number }>;
  t.match(
    Object.fromEntries(list.map((p) => [p.symbol, p.priceUsd])),
    { OLD: 1.5, OLDPEPE: 0.000012, DUST: 0.00000002 },
    'an old micro-USD price event reads as it meant',
  );
  const at = new Date().toISOString();
  const tradeId = 'legacy-trade-1';
  const poolId = `${userId}.${agentId}.virtual`;
  await appendFacts(app, `trade-${tradeId}`, [
    {
      type: 'TradeRequested',
      data: {
        tradeId,
        poolId,
        token: 'BTC',
        decimals: 8,
        side: 'long',
        leverage: 5,
        notionalMicro: 1_000_000_000,
        entry: { kind: 'zone', lowMicro: 49_500_000_000, highMicro: 50_500_000_000 },
        stopLossMicro: 48_000_000_000,
        targets: [{ tier: 1, priceMicro: 52_000_000_000, closeBps: 10_000, closesRest: true }],
        trailing: null,
        breakevenOnTarget: null,
        slippageBps: 50,
        feeBps: 10,
        expiresAt: '2099-01-01T00:00:00.000Z',
        at,
      },
    },
    { type: 'TradeFilled', data: { tradeId, priceMicro: 50_000_000_000, sizeUnits: '2000000', marginMicro: 200_000_000, feeMicro: 1_000_000, at } },
    { type: 'StopMoved', data: { tradeId, stopMicro: 49_000_000_000, kind: 'STOP_LOSS', at } },
    {
      type: 'TradeClosed',
      data: {
        tradeId,
        priceMicro: 51_000_000_000,
        closedUnits: '2000000',
        feeMicro: 1_020_000,
        realizedPnlMicro: 17_980_000,
        remainingUnits: '0',
        reason: 'USER',
        tier: null,
        totalRealizedPnlMicro: 17_980_000,
        at,
      },
    },
  ]);
  const items = (await api(app, 'GET', '/api/v1/trades', { token: (await signIn(app, 'prices-follower@example.test')).accessToken })).body.data.items as Array<
    Record<string, unknown>
  >;
  t.match(
    items.find((i) => i.id === tradeId),
    { entry: { kind: 'zone', low: 49_500, high: 50_500 }, averageFillPrice: 50_000, stopLoss: { price: 49_000 }, status: 'closed', realizedPnlUsd: 17.98 },
    'an old micro-USD trade reads as it meant',
  );
}
