import type { Test } from 'tap';
import { api, type TestApp } from '../../support/app.ts';
import { appendFacts } from '../../support/facts.ts';
import { signIn } from '../../support/auth.ts';
import { until } from '../../support/until.ts';

interface LotJson {
  lotId: string;
  amount: number;
  averagePriceUsd: number;
  costUsd: number;
  stopLossUsd?: number;
  takeProfitUsd?: number;
}

/**
 * The manual wallet at both ends of the price range, through HTTP (docs/decisions.md, "Manual
 * wallet at exact prices"): PEPE bought at 0.0000115 USD with a stop 10 % below, the lot shows the
 * exact price and stop; half sold at 0.0000123456789, the proceeds rounded down against the seller
 * and the PnL exact in micro-USD; a token at 100,000 USD bought with a fine take-profit and sold; a
 * wallet's events stored in micro-USD before are read as they meant. `setPrices` is the admin
 * route. The caller's rebuild covers the wallets and wallet_lots read models.
 */
export async function walletPrices(t: Test, app: TestApp, setPrices: (prices: Record<string, number>) => Promise<unknown>) {
  const user = await signIn(app, 'prices-wallet@example.test');
  const post = (path: string, body: Record<string, unknown>) =>
    api(app, 'POST', path, { token: user.accessToken, body: { walletContext: 'virtual', ...body } });
  const lotsOf = async (token: string, mint: string): Promise<LotJson[]> => {
    const wallet = (await api(app, 'GET', '/api/v1/wallet', { token })).body.data as { positions: Array<{ mint: string; lots: LotJson[] }> };
    return wallet.positions.find((p) => p.mint === mint)?.lots ?? [];
  };
  await setPrices({ PEPE: 0.0000115, WBIG: 100_000 });

  // 115 USD at 0.0000115 buys exactly 10,000,000 PEPE; a stop 10 % below the average: 0.00001035.
  const bought = await post('/api/v1/wallet/buy', { mint: 'PEPE', amountUsd: 115, stopLoss: { percent: 10 } });
  t.equal(bought.status, 200, JSON.stringify(bought.body));
  t.match(bought.body.data, {
    side: 'buy',
    amount: 10_000_000,
    priceUsd: 0.0000115,
    amountUsd: 115,
    message: 'Bought 10000000 PEPE for 115 USD at 0.0000115 USD each',
  });
  let lots: LotJson[] = [];
  await until('the PEPE lot to be listed', async () => (lots = await lotsOf(user.accessToken, 'PEPE')).length === 1);
  t.match(lots[0], { amount: 10_000_000, averagePriceUsd: 0.0000115, costUsd: 115, stopLossUsd: 0.00001035 }, 'the lot shows the exact price and stop');

  // Half sold at 0.0000123456789: 5,000,000 × 0.0000123456789 = 61.7283945 USD, 61.728394 to the
  // seller (down); PnL 61.728394 − 57.5 (half the cost) = 4.228394. The lot left keeps its stop.
  await setPrices({ PEPE: 0.0000123456789 });
  const sold = await post('/api/v1/wallet/sell', { mint: 'PEPE', amount: 5_000_000 });
  t.equal(sold.status, 200, JSON.stringify(sold.body));
  t.match(sold.body.data, { side: 'sell', amount: 5_000_000, priceUsd: 0.0000123456789, amountUsd: 61.728394, realizedPnlUsd: 4.228394 });
  await until('the PEPE lot to be halved', async () => (lots = await lotsOf(user.accessToken, 'PEPE'))[0]?.amount === 5_000_000);
  t.match(lots[0], { amount: 5_000_000, averagePriceUsd: 0.0000115, costUsd: 57.5, stopLossUsd: 0.00001035 });

  // 250 USD at 100,000 buys 0.0025 token, a take-profit at 120000.123456789 kept exactly; sold at
  // 99,999.99: 249.999975 USD, a loss of 0.000025.
  const big = await post('/api/v1/wallet/buy', { mint: 'WBIG', amountUsd: 250, takeProfit: { price: 120_000.123456789 } });
  t.equal(big.status, 200, JSON.stringify(big.body));
  t.match(big.body.data, { amount: 0.0025, priceUsd: 100_000, amountUsd: 250 });
  await until('the WBIG lot to be listed', async () => (lots = await lotsOf(user.accessToken, 'WBIG')).length === 1);
  t.match(lots[0], { amount: 0.0025, averagePriceUsd: 100_000, costUsd: 250, takeProfitUsd: 120_000.123456789 });
  await setPrices({ WBIG: 99_999.99 });
  const bigSold = await post('/api/v1/wallet/sell', { mint: 'WBIG', amount: 0.0025 });
  t.equal(bigSold.status, 200, JSON.stringify(bigSold.body));
  t.match(bigSold.body.data, { priceUsd: 99_999.99, amountUsd: 249.999975, realizedPnlUsd: -0.000025 });

  // A level finer than 10^-18 USD is refused (400) before anything moves.
  const fine = await post('/api/v1/wallet/buy', { mint: 'PEPE', amountUsd: 1, stopLoss: { price: 0.0000000000000000001 } });
  t.equal(fine.status, 400, JSON.stringify(fine.body));

  // A wallet's events stored before (micro-USD integers): its lot reads as it meant.
  const legacy = await signIn(app, 'prices-wallet-legacy@example.test');
  const at = new Date().toISOString();
  const plan = {
    transferId: 'legacy-buy',
    amountMicro: 300_000_000,
    from: { kind: 'wallet', userId: legacy.userId, walletContext: 'virtual' },
    to: { kind: 'lots', userId: legacy.userId, walletContext: 'virtual', mint: 'SOL', levels: { stopLoss: { priceMicro: 120_000_000 } } },
  };
  await appendFacts(app, `wallet-${legacy.userId}`, [
    { type: 'WalletOpened', data: { virtualStartMicro: 10_000_000_000, openedAt: at } },
    { type: 'WalletDebited', data: { transfer: plan } },
    {
      type: 'LotOpened',
      data: {
        transferId: 'legacy-buy',
        walletContext: 'virtual',
        mint: 'SOL',
        txId: 'tx-legacy',
        priceMicro: 150_000_000,
        units: 2_000_000,
        usdMicro: 300_000_000,
        costMicro: 300_000_000,
        openedAt: at,
        stopLossMicro: 120_000_000,
        takeProfitMicro: 180_000_001,
      },
    },
  ]);
  await until('the legacy lot to be listed', async () => (lots = await lotsOf(legacy.accessToken, 'SOL')).length === 1);
  t.match(
    lots[0],
    { lotId: 'legacy-buy', amount: 2, averagePriceUsd: 150, costUsd: 300, stopLossUsd: 120, takeProfitUsd: 180.000001 },
    'an old micro-USD lot reads as it meant',
  );
}
