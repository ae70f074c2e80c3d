import t from 'tap';
import { marketStream, MARKET_PRICES } from '../../domain/market/decide.ts';
import { createReadModelPriceSource } from '../../projections/market/queries.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn } from '../support/auth.ts';

const ADMIN = 'admin@example.test';
const PATH = '/api/admin/market/prices';
const MINT = 'So11111111111111111111111111111111111111112';
/** micro-USD as the price source's attodollars */
const micro = (n: number) => BigInt(n) * 10n ** 12n;

t.test('an administrator sets the simulated venue’s mark prices', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN } });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  const put = (body: unknown, token = admin.accessToken) => api(app, 'PUT', PATH, { token, body });
  const prices = createReadModelPriceSource(app.deps.pool);

  await t.test('401 without a token, 403 for a user', async (t) => {
    t.equal((await api(app, 'PUT', PATH, { body: { prices: { SOL: 1 } } })).status, 401);
    const user = await signIn(app, 'user@example.test');
    const res = await put({ prices: { SOL: 1 } }, user.accessToken);
    t.equal(res.status, 403);
    t.equal(res.body.error.reason, 'ADMIN_REQUIRED');
    t.equal(await prices.priceOf('SOL'), null, 'nothing was set');
  });

  await t.test('prices set by symbol or mint answer the whole list, and the price source reads them exactly', async (t) => {
    const res = await put({ prices: { SOL: 150.25, [MINT]: 150.25, BONK: 0.000021 } });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data.prices, [
      { symbol: 'BONK', priceUsd: 0.000021, updatedAt: String },
      { symbol: 'SOL', priceUsd: 150.25 },
      { symbol: MINT, priceUsd: 150.25 },
    ]);
    t.equal(await prices.priceOf('SOL'), micro(150_250_000));
    t.equal(await prices.priceOf(MINT), micro(150_250_000));
    t.equal(await prices.priceOf('BONK'), micro(21));
    t.equal(await prices.priceOf('sol'), null, 'symbols are case-sensitive');
    t.equal(await prices.priceOf('UNKNOWN'), null);
  });

  await t.test('symbols not named keep their price; setting the same prices again records nothing', async (t) => {
    const before = (await api(app, 'PUT', PATH, { token: admin.accessToken, body: { prices: { SOL: 150.25 } } })).body.data.prices;
    const revision = (await app.deps.store.readStream(marketStream(MARKET_PRICES))).length;
    const res = await put({ prices: { SOL: 151, 'JUP/USDC': 0.9 } });
    t.equal(res.status, 200);
    const list = res.body.data.prices as Array<{ symbol: string; priceUsd: number; updatedAt: string }>;
    t.same(
      list.map((p) => [p.symbol, p.priceUsd]),
      [
        ['BONK', 0.000021],
        ['JUP/USDC', 0.9],
        ['SOL', 151],
        [MINT, 150.25],
      ],
    );
    t.equal(list.find((p) => p.symbol === MINT)!.updatedAt, before.find((p: any) => p.symbol === MINT).updatedAt, 'an untouched price keeps its time');
    t.equal(await prices.priceOf('SOL'), micro(151_000_000));
    const repeated = await put({ prices: { SOL: 151, 'JUP/USDC': 0.9 } });
    t.same(repeated.body.data, res.body.data);
    t.equal((await app.deps.store.readStream(marketStream(MARKET_PRICES))).length, revision + 1, 'one event for the change, none for the repeat');
  });

  await t.test('prices finer than a micro-USD are set and answered exactly: 0.0000115, 1e-8, 100000, 18 decimals', async (t) => {
    // biome-ignore lint/correctness/noPrecisionLoss: a client's 18 decimals, as JSON carries them (the server reads the text)
    const res = await put({ prices: { PEPE: 0.0000115, DUST: 0.00000001, BIG: 100_000, FINE: 0.123456789012345678 } });
    t.equal(res.status, 200, JSON.stringify(res.body));
    const list = res.body.data.prices as Array<{ symbol: string; priceUsd: number }>;
    const shown = (symbol: string) => list.find((p) => p.symbol === symbol)!.priceUsd;
    t.equal(shown('PEPE'), 0.0000115);
    t.equal(shown('DUST'), 0.00000001);
    t.equal(shown('BIG'), 100_000);
    t.equal(await prices.priceOf('PEPE'), 11_500_000_000_000n, 'the price source holds every digit');
    t.equal(await prices.priceOf('DUST'), 10_000_000_000n);
    t.equal(await prices.priceOf('BIG'), 100_000n * 10n ** 18n);
    t.equal(await prices.priceOf('FINE'), 123_456_789_012_345_680n, 'a JSON number is read through its shortest text (0.12345678901234568)');
  });

  await t.test('bad prices and symbols get a 400 naming the problem, never a 500', async (t) => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /prices/],
      [{ prices: {} }, /give 1 to 500 prices/],
      [{ prices: Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`T${i}`, 1])) }, /give 1 to 500 prices/],
      [{ prices: { 'SO L': 1 } }, /symbol or mint/],
      [{ prices: { ['x'.repeat(65)]: 1 } }, /symbol or mint/],
      [{ prices: { '': 1 } }, /symbol or mint/],
      [{ prices: { SOL: 0 } }, /price must be positive/],
      [{ prices: { SOL: -1 } }, /price must be positive/],
      [{ prices: { SOL: '10' } }, /price must be a number/],
      [{ prices: { SOL: 1e-19 } }, /more than 18 decimals/],
      [{ prices: { SOL: null } }, /price must be a number/],
      [{ prices: [1, 2] }, /prices/],
      [{ prices: { SOL: 1 }, extra: true }, /extra/],
    ];
    for (const [body, message] of cases) {
      const res = await put(body);
      t.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      t.match(res.body, { success: false, error: { code: 'BAD_REQUEST', reason: 'VALIDATION_FAILED', message } }, JSON.stringify(body).slice(0, 80));
    }
    const huge = await api(app, 'PUT', PATH, { token: admin.accessToken, rawBody: '{"prices":{"SOL":1e300}}' });
    t.equal(huge.status, 400);
    t.match(huge.body.error.message, /at most 1000000000/);
    const poisoned = await api(app, 'PUT', PATH, { token: admin.accessToken, rawBody: '{"prices":{"__proto__":1}}' });
    t.equal(poisoned.status, 400);
    t.equal(await prices.priceOf('SOL'), micro(151_000_000), 'nothing changed');
  });
});

t.test('with VENUE=external the simulated venue’s admin routes are refused, and the start says so', async (t) => {
  const app = await startTestApp({ config: { ADMIN_EMAILS: ADMIN, VENUE: 'external' }, captureLogs: true });
  t.teardown(() => app.close());
  t.ok(
    app.logs.some((line) => /"level":40/.test(line) && /VENUE=external: a real venue is configured/.test(line)),
    'one warning at start names VENUE and the refused routes',
  );
  const admin = await signIn(app, ADMIN);
  const user = await signIn(app, 'user@example.test');
  const deposit = await api(app, 'POST', `/api/admin/wallets/${user.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 10 } });
  t.equal(deposit.status, 409);
  t.match(deposit.body, { success: false, error: { code: 'CONFLICT', reason: 'VENUE_NOT_SIMULATED', message: /simulated venue/ } });
  const prices = await api(app, 'PUT', PATH, { token: admin.accessToken, body: { prices: { SOL: 150 } } });
  t.equal(prices.status, 409);
  t.equal(prices.body.error.reason, 'VENUE_NOT_SIMULATED');
  t.equal((await api(app, 'PUT', PATH, { token: user.accessToken, body: { prices: { SOL: 150 } } })).status, 403, 'a user is still told 403 first');
  const wallet = await api(app, 'GET', '/api/v1/wallet', { token: user.accessToken });
  t.equal(wallet.status, 200);
  t.same(
    wallet.body.data.wallets,
    [
      { walletContext: 'virtual', balanceUsd: 10000 },
      { walletContext: 'real', balanceUsd: 0 },
    ],
    'nothing was deposited',
  );
  t.equal(await createReadModelPriceSource(app.deps.pool).priceOf('SOL'), null);
});
