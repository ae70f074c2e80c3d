// Manual buys and sells through the wallet: the spec's eight sell rules, each through
// HTTP, the buy that opens a lot, the Idempotency-Key, and the stop-loss / take-profit fields.
import t from 'tap';
import { tradeStream } from '../../domain/trade/state.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import { api, startTestApp } from '../support/app.ts';
import { signIn, type SignedIn } from '../support/auth.ts';
import { appendFacts } from '../support/facts.ts';
import { until } from '../support/until.ts';
import { history, pb, request, usd } from '../domain/trade/fixtures.ts';

const ADMIN = 'admin@example.test';
const AGENT = '11111111-1111-4111-8111-111111111111';
const ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const DEAD_ADDRESS = 'DeadDeadDeadDeadDeadDeadDeadDeadDeadDeadDead';

t.test('manual buys and sells', async (t) => {
  const app = await startTestApp({
    // The price watcher sells lots whose levels the mark crossed (the last subtests wait for it).
    config: { ADMIN_EMAILS: ADMIN, PRICE_WATCH_INTERVAL_MS: '500' },
    failSwap: (r) =>
      (r.mint === 'FLAKY' || r.mint === 'STUCK') && r.side === 'sell'
        ? 'SLIPPAGE_EXCEEDED'
        : r.mint === 'BROKEN'
          ? 'ROUTE_NOT_FOUND'
          : r.destination === DEAD_ADDRESS
            ? 'TRANSACTION_EXPIRED'
            : null,
  });
  t.teardown(() => app.close());
  const admin = await signIn(app, ADMIN);
  let users = 0;
  const newUser = () => signIn(app, `trader${++users}@example.test`);
  const prices = (p: Record<string, number>) => api(app, 'PUT', '/api/admin/market/prices', { token: admin.accessToken, body: { prices: p } });
  const buy = (u: SignedIn, body: unknown, key?: string) =>
    api(app, 'POST', '/api/v1/wallet/buy', { token: u.accessToken, body, ...(key ? { headers: { 'idempotency-key': key } } : {}) });
  const sell = (u: SignedIn, body: unknown, key?: string) =>
    api(app, 'POST', '/api/v1/wallet/sell', { token: u.accessToken, body, ...(key ? { headers: { 'idempotency-key': key } } : {}) });
  const wallet = async (u: SignedIn) => (await api(app, 'GET', '/api/v1/wallet', { token: u.accessToken })).body.data;
  const swaps = async (u: SignedIn) =>
    (await app.deps.pool.query('SELECT side, mint, amount, status FROM simulated_swaps WHERE user_id = $1 ORDER BY created_at', [u.userId])).rows;
  const cash = async (u: SignedIn) => (await wallet(u)).wallets[0].balanceUsd;
  /**
   * Holds every new swap at the venue (a lock on its table: reads pass, inserts wait) while `during`
   * runs: a buy or sell that got that far keeps the wallet's trade lock meanwhile.
   */
  const holdingSwaps = async <T>(during: () => Promise<T>): Promise<T> => {
    const gate = await app.deps.pool.connect();
    try {
      await gate.query('BEGIN');
      await gate.query('LOCK TABLE simulated_swaps IN EXCLUSIVE MODE');
      return await during();
    } finally {
      await gate.query('COMMIT');
      gate.release();
    }
  };
  /** Sends all requests; releases the held swaps once all but `running` answered; resolves every answer. */
  const concurrently = async (requests: Array<() => Promise<{ status: number; body: any }>>, running = 1) => {
    let answered = 0;
    const pending: Array<Promise<{ status: number; body: any }>> = [];
    await holdingSwaps(async () => {
      for (const send of requests)
        pending.push(
          send().then((a) => {
            answered += 1;
            return a;
          }),
        );
      await until('every request but the running ones to answer', async () => answered >= requests.length - running);
    });
    return Promise.all(pending);
  };
  t.equal((await prices({ SOL: 100, BONK: 0.00002, FLAKY: 10, BROKEN: 5 })).status, 200);

  await t.test('a buy opens a lot at the venue price; GET /api/v1/wallet lists it per mint', async (t) => {
    const u = await newUser();
    const res = await buy(u, { mint: 'SOL', amountUsd: 250 });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data, {
      success: true,
      transactionId: /^simtx-/,
      amount: 2.5,
      tokenSymbol: 'SOL',
      side: 'buy',
      walletContext: 'virtual',
      mint: 'SOL',
      priceUsd: 100,
      amountUsd: 250,
      tradeId: /^manual-/,
      openTradeUpdatePending: false,
    });
    t.ok(Date.parse(res.body.data.timestamp));
    const w = await wallet(u);
    t.same(w.wallets[0], { walletContext: 'virtual', balanceUsd: 9750 });
    t.match(w.positions, [
      {
        walletContext: 'virtual',
        mint: 'SOL',
        amount: 2.5,
        averagePriceUsd: 100,
        costUsd: 250,
        lots: [{ lotId: res.body.data.tradeId, amount: 2.5, averagePriceUsd: 100, costUsd: 250 }],
      },
    ]);
    t.notOk('stopLossUsd' in w.positions[0].lots[0], 'no levels unless asked for');
  });

  await t.test("rule 1: a sell reduces only the caller's own lots, oldest first, once the swap is final; PnL is realized", async (t) => {
    const [u, other] = [await newUser(), await newUser()];
    await buy(u, { mint: 'SOL', amountUsd: 100 }); // 1 SOL at 100
    await prices({ SOL: 200 });
    await buy(u, { mint: 'SOL', amountUsd: 400 }); // 2 SOL at 200
    await buy(other, { mint: 'SOL', amountUsd: 200 }); // 1 SOL at 200
    await prices({ SOL: 150 });
    const res = await sell(u, { mint: 'SOL', amount: 1.5 });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data, {
      success: true,
      side: 'sell',
      amount: 1.5,
      tokenSymbol: 'SOL',
      amountUsd: 225,
      priceUsd: 150,
      transactionId: /^simtx-/,
      openTradeUpdatePending: false,
    });
    // 1 SOL of the first lot (cost 100) + 0.5 of the second (cost 100): 225 − 200 = 25.
    t.equal(res.body.data.realizedPnlUsd, 25);
    const w = await wallet(u);
    t.same(
      w.positions.map((p: any) => [p.mint, p.amount, p.costUsd, p.lots.length]),
      [['SOL', 1.5, 300, 1]],
      'the oldest lot left, the second reduced',
    );
    t.equal(w.positions[0].lots[0].averagePriceUsd, 200);
    t.equal(w.wallets[0].balanceUsd, 10_000 - 500 + 225);
    t.match((await wallet(other)).positions, [{ mint: 'SOL', amount: 1, costUsd: 200 }], "another user's lot is untouched");
  });

  await t.test('rule 2: agent positions are never sold by the wallet, nor counted as manual lots', async (t) => {
    const u = await newUser();
    const tradeId = `agent-trade-${u.userId}`;
    await appendFacts(
      app,
      tradeStream(tradeId),
      history(
        request({
          tradeId,
          poolId: `${u.userId}.${AGENT}.virtual`,
          token: 'SOL',
          decimals: 9,
          markPrice: pb(usd(150)),
          stopLoss: pb(usd(1)),
          takeProfits: [{ price: pb(usd(10_000)) }],
        }),
      ),
    );
    const refused = await sell(u, { mint: 'SOL', amount: 0.1 });
    t.equal(refused.status, 409, JSON.stringify(refused.body));
    t.equal(refused.body.error.code, 'SELL_EXCEEDS_MANUAL_POSITION');
    await buy(u, { mint: 'SOL', amountUsd: 150 });
    t.equal((await sell(u, { mint: 'SOL', amount: 1 })).status, 200);
    const trades = await api(app, 'GET', '/api/v1/trades', { token: u.accessToken });
    t.match(trades.body.data.items, [{ id: tradeId, status: 'open', token: 'SOL' }], 'the agent trade is as it was');
    const events = await app.deps.store.readStream(tradeStream(tradeId));
    t.same(
      events.filter((e) => e.metadata.actor === u.userId).map((e) => e.type),
      [],
      'its stream got nothing of the sells (only the price watcher marks it)',
    );
  });

  await t.test('rule 3: a sell beyond the manual lots is refused before any swap', async (t) => {
    const u = await newUser();
    await buy(u, { mint: 'SOL', amountUsd: 150 }); // 1 SOL
    const before = { wallet: await wallet(u), swaps: await swaps(u) };
    const res = await sell(u, { mint: 'SOL', amount: 1.000001 });
    t.equal(res.status, 409);
    t.match(res.body.error, {
      code: 'SELL_EXCEEDS_MANUAL_POSITION',
      reason: 'SELL_EXCEEDS_MANUAL_POSITION',
      requestedAmount: 1.000001,
      manualPositionAmount: 1,
    });
    t.same({ wallet: await wallet(u), swaps: await swaps(u) }, before, 'no swap was made, nothing changed');
    t.equal((await sell(u, { mint: 'BONK', amount: 1 })).body.error.code, 'SELL_EXCEEDS_MANUAL_POSITION', 'a mint never bought');
  });

  await t.test('rule 4: a failed swap leaves the lots unchanged and releases the lock', async (t) => {
    const u = await newUser();
    await buy(u, { mint: 'FLAKY', amountUsd: 100 }); // 10 FLAKY
    const before = await wallet(u);
    const res = await sell(u, { mint: 'FLAKY', amount: 4 });
    t.equal(res.status, 422, JSON.stringify(res.body));
    t.match(res.body.error, { reason: 'SWAP_FAILED', swapReason: 'SLIPPAGE_EXCEEDED' });
    t.same(await wallet(u), before, 'lots and balance as they were');
    t.match(await swaps(u), [
      { side: 'buy', status: 'CONFIRMED' },
      { side: 'sell', status: 'FAILED' },
    ]);
    t.equal((await buy(u, { mint: 'SOL', amountUsd: 10 })).status, 200, 'the lock was released');

    const failedBuy = await buy(u, { mint: 'BROKEN', amountUsd: 50 });
    t.equal(failedBuy.status, 422);
    t.match(failedBuy.body.error, { reason: 'SWAP_FAILED', swapReason: 'ROUTE_NOT_FOUND' });
    t.equal(await cash(u), 10_000 - 100 - 10, 'a failed buy gives the money back');
    t.notOk((await wallet(u)).positions.some((p: any) => p.mint === 'BROKEN'));
  });

  await t.test('a buy of a mint the venue has no price for is refused before any debit', async (t) => {
    const u = await newUser();
    await buy(u, { mint: 'SOL', amountUsd: 10 });
    const before = { wallet: await wallet(u), swaps: await swaps(u) };
    const res = await buy(u, { mint: 'UNPRICED', amountUsd: 50 });
    t.equal(res.status, 409, JSON.stringify(res.body));
    t.match(res.body.error, { code: 'CONFLICT', reason: 'NO_MARK_PRICE', message: /no price for UNPRICED/ });
    t.same({ wallet: await wallet(u), swaps: await swaps(u) }, before, 'the venue was not asked, nothing changed');
    const facts = (await app.deps.store.readStream(walletStream(u.userId))).map((e) => e.type);
    t.same(
      facts.filter((type) => type === 'WalletDebited' || type === 'WalletRefunded'),
      ['WalletDebited'],
      'only the SOL buy debited; nothing was refunded',
    );
    t.equal((await buy(u, { mint: 'SOL', amountUsd: 10 })).status, 200, 'no lock left behind');
  });

  await t.test('rule 5: a concurrent buy or sell gets TRADE_IN_PROGRESS, with or without a key', async (t) => {
    const u = await newUser();
    await buy(u, { mint: 'SOL', amountUsd: 1000 }); // 10 SOL at 150
    // The first to take the wallet's lock is held at the venue until the 19 others answered.
    const answers = await concurrently([
      ...Array.from({ length: 8 }, (_, i) => () => sell(u, { mint: 'SOL', amount: 1 }, `key-${i}`)),
      ...Array.from({ length: 6 }, () => () => sell(u, { mint: 'SOL', amount: 1 })),
      ...Array.from({ length: 6 }, () => () => buy(u, { mint: 'SOL', amountUsd: 10 })),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    t.same(statuses, [200, ...Array(19).fill(409)], JSON.stringify(answers.map((a) => a.body.error?.reason ?? 'ok')));
    for (const a of answers.filter((a) => a.status === 409)) t.equal(a.body.error.code, 'TRADE_IN_PROGRESS');
    t.equal((await swaps(u)).length, 2, 'one buy, one more swap');
  });

  await t.test('rule 6: a frozen wallet refuses buys and sells with WALLET_FROZEN (403)', async (t) => {
    const u = await newUser();
    await buy(u, { mint: 'SOL', amountUsd: 300 });
    t.equal((await api(app, 'POST', `/api/admin/wallets/${u.userId}/freeze`, { token: admin.accessToken })).status, 200);
    const before = { wallet: await wallet(u), swaps: await swaps(u) };
    for (const res of [
      await sell(u, { mint: 'SOL', amount: 1 }),
      await buy(u, { mint: 'SOL', amountUsd: 10 }),
      await sell(u, { mint: 'SOL', amount: 1 }, 'frozen-key'),
    ]) {
      t.equal(res.status, 403);
      t.match(res.body.error, { code: 'WALLET_FROZEN', reason: 'WALLET_FROZEN' });
    }
    t.same({ wallet: await wallet(u), swaps: await swaps(u) }, before);
    await api(app, 'POST', `/api/admin/wallets/${u.userId}/unfreeze`, { token: admin.accessToken });
    t.equal((await sell(u, { mint: 'SOL', amount: 1 }, 'frozen-key')).status, 200, 'a refusal before anything ran does not keep the key');
  });

  await t.test('rule 7: replaying an Idempotency-Key answers the first response without a second sell', async (t) => {
    const u = await newUser();
    await buy(u, { mint: 'SOL', amountUsd: 600 }); // 4 SOL
    const first = await sell(u, { mint: 'SOL', amount: 1 }, 'sell-once');
    t.equal(first.status, 200);
    t.equal(first.headers.get('idempotent-replayed'), null);
    const again = await sell(u, { mint: 'SOL', amount: 1 }, 'sell-once');
    t.equal(again.status, 200);
    t.same(again.body, first.body, 'the same envelope');
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.equal(await cash(u), 10_000 - 600 + 150, 'sold once');
    t.equal((await swaps(u)).length, 2);
    const quoted = await sell(u, { mint: 'SOL', amount: 1 }, '"sell-once"');
    t.same(quoted.body, first.body, 'a structured-field string names the same key');

    const other = await sell(u, { mint: 'SOL', amount: 2 }, 'sell-once');
    t.equal(other.status, 422);
    t.equal(other.body.error.reason, 'IDEMPOTENCY_KEY_REUSED');
    const otherPath = await buy(u, { mint: 'SOL', amountUsd: 1 }, 'sell-once');
    t.equal(otherPath.body.error.reason, 'IDEMPOTENCY_KEY_REUSED', 'another route is another request');

    const v = await newUser();
    await buy(v, { mint: 'SOL', amountUsd: 150 });
    t.equal((await sell(v, { mint: 'SOL', amount: 1 }, 'sell-once')).body.data.amountUsd, 150, "keys are the user's own");

    let slow: Promise<{ status: number; body: any }> | undefined;
    const waiting = await holdingSwaps(async () => {
      slow = sell(u, { mint: 'SOL', amount: 1 }, 'slow');
      await until(
        'the first request to claim the key',
        async () => (await app.deps.pool.query("SELECT 1 FROM idempotency_keys WHERE user_id = $1 AND status = 'running'", [u.userId])).rowCount! > 0,
      );
      return sell(u, { mint: 'SOL', amount: 1 }, 'slow');
    });
    const running = await slow!;
    t.equal(running.status, 200);
    t.equal(waiting.status, 409, 'the first request with the key is still running');
    t.equal(waiting.body.error.code, 'TRADE_IN_PROGRESS');
    t.same((await sell(u, { mint: 'SOL', amount: 1 }, 'slow')).body, running.body, 'and once it answered, the repeat gets its answer');

    for (const key of ['', 'x'.repeat(256), 'tab\tkey']) {
      const bad = await sell(u, { mint: 'SOL', amount: 1 }, key || ' ');
      t.equal(bad.status, 400, `key ${JSON.stringify(key)}`);
    }
    const events = await app.deps.store.readStream(walletStream(u.userId));
    t.equal(events.filter((e) => e.type === 'LotsSold').length, 2, 'two sells in all: sell-once and slow');
  });

  await t.test('rule 8: a stop-loss or take-profit needs exactly one open manual BUY of the mint', async (t) => {
    const u = await newUser();
    const first = await buy(u, { mint: 'SOL', amountUsd: 300, stopLoss: { percent: 10 }, takeProfit: { price: 200 } });
    t.equal(first.status, 200, JSON.stringify(first.body));
    t.match((await wallet(u)).positions[0].lots[0], { amount: 2, averagePriceUsd: 150, stopLossUsd: 135, takeProfitUsd: 200 });

    const withLevels = await sell(u, { mint: 'SOL', amount: 0.5, stopLoss: { price: 140 } });
    t.equal(withLevels.status, 200, JSON.stringify(withLevels.body));
    t.match((await wallet(u)).positions[0].lots[0], { amount: 1.5, stopLossUsd: 140, takeProfitUsd: 200 }, 'the new stop on the lot left, the target kept');
    const closing = await sell(u, { mint: 'SOL', amount: 1.5, takeProfit: { percent: 50 } });
    t.equal(closing.status, 409);
    t.equal(closing.body.error.reason, 'LEVELS_NEED_ONE_LOT', 'a sell that closes the lot leaves nothing to protect');

    t.equal((await buy(u, { mint: 'SOL', amountUsd: 150 })).status, 200, 'a second lot without levels');
    const two = await sell(u, { mint: 'SOL', amount: 0.1, stopLoss: { percent: 5 } });
    t.equal(two.status, 409);
    t.equal(two.body.error.reason, 'LEVELS_NEED_ONE_LOT');
    const buyTwo = await buy(u, { mint: 'SOL', amountUsd: 150, takeProfit: { percent: 20 } });
    t.equal(buyTwo.body.error.reason, 'LEVELS_NEED_ONE_LOT', 'nor may a buy add levels next to an open lot');

    for (const body of [
      { mint: 'BONK', amountUsd: 10, stopLoss: { price: 1 } },
      { mint: 'BONK', amountUsd: 10, takeProfit: { price: 0.00001 } },
      { mint: 'BONK', amountUsd: 10, stopLoss: { price: 0.00001, percent: 5 } },
      { mint: 'BONK', amountUsd: 10, stopLoss: {} },
      { mint: 'BONK', amountUsd: 10, stopLoss: { percent: 100 } },
    ]) {
      const res = await buy(u, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.ok(['VALIDATION_FAILED', 'INVALID_LEVELS'].includes(res.body.error.reason), res.body.error.reason);
    }
  });

  await t.test('the price watcher sells a lot whose stop-loss or take-profit the mark crossed, once, through the sell path', async (t) => {
    await prices({ WATCHED: 10, TARGETED: 10, FINE: 0.0000115 });
    const [u, v, w] = [await newUser(), await newUser(), await newUser()];
    // A stop finer than a micro-USD: 10,000,000 FINE, its stop 10 % below 0.0000115 = 0.00001035.
    t.equal((await buy(w, { mint: 'FINE', amountUsd: 115, stopLoss: { percent: 10 } })).status, 200);
    const stopped = await buy(u, { mint: 'WATCHED', amountUsd: 100, stopLoss: { percent: 10 } }); // 10 WATCHED, stop at 9
    const targeted = await buy(v, { mint: 'TARGETED', amountUsd: 50, takeProfit: { price: 12 } }); // 5 TARGETED, target 12
    await buy(v, { mint: 'TARGETED', amountUsd: 20 }); // a newer lot without levels: not sold
    t.equal(stopped.status, 200);
    await prices({ WATCHED: 9.5, TARGETED: 11.99, FINE: 0.00001036 });
    await new Promise((r) => setTimeout(r, 1_500));
    t.equal((await wallet(u)).positions.length, 1, 'not crossed yet: nothing sold');
    t.equal((await wallet(w)).positions.length, 1, 'a mark 10^-11 USD above the fine stop: not crossed');
    await prices({ WATCHED: 8.8, TARGETED: 12.5, FINE: 0.00001034 });
    await until(
      'the exits',
      async () => (await wallet(u)).positions.length === 0 && (await wallet(v)).positions[0]?.lots.length === 1 && (await wallet(w)).positions.length === 0,
    );
    t.equal(await cash(u), 10_000 - 100 + 88, 'sold at the mark after the stop');
    t.equal(await cash(w), 10_000 - 115 + 103.4, 'the fine stop crossed: 10,000,000 sold at 0.00001034');
    t.match((await wallet(v)).positions, [{ mint: 'TARGETED', amount: 2, costUsd: 20 }], 'the target sold its lot only');
    await new Promise((r) => setTimeout(r, 1_500));
    for (const [user, lotId] of [
      [u, stopped.body.data.tradeId],
      [v, targeted.body.data.tradeId],
    ] as const) {
      const sold = (await app.deps.store.readStream(walletStream(user.userId))).filter((e) => e.type === 'LotsSold');
      t.equal(sold.length, 1, 'sold exactly once');
      t.match(sold[0], { data: { transferId: `${lotId}.exit.1` }, metadata: { actor: 'system:price-watch' } });
    }
  });

  await t.test('a failed exit is tried again only after a wait that doubles, not on every tick of the watcher', async (t) => {
    await prices({ STUCK: 10 });
    const u = await newUser();
    const bought = await buy(u, { mint: 'STUCK', amountUsd: 100, stopLoss: { price: 9 } });
    const lotId: string = bought.body.data.tradeId;
    const failedTries = async () =>
      (await app.deps.store.readStream(walletStream(u.userId)))
        .filter((e) => e.type === 'SellFailed')
        .map((e) => (e.data as { transferId: string }).transferId);
    await prices({ STUCK: 8 });
    await until('the first exit to fail at the venue', async () => (await failedTries()).length === 1);
    await new Promise((r) => setTimeout(r, 2_000)); // four ticks of the watcher
    t.same(await failedTries(), [`${lotId}.exit.1`], 'one try while the wait runs');
    /** ExitLot as the watcher sends it, at a time of the test's choosing. */
    const exitAt = (afterMs: number) =>
      app.deps.dispatch({
        type: 'ExitLot',
        data: { userId: u.userId, lotId, price: 8_000_000n * 10n ** 12n },
        metadata: { now: new Date(Date.now() + afterMs), actor: 'system:price-watch', correlationId: `test-exit-${afterMs}` },
      });
    const second = await exitAt(31_000).catch((err: { reason?: string }) => err);
    t.match(second, { reason: 'SWAP_FAILED' }, '30 s later the second try goes to the venue (and fails there again)');
    t.same(await failedTries(), [`${lotId}.exit.1`, `${lotId}.exit.2`]);
    const third = await exitAt(31_000 + 59_000);
    t.match(third.result, { sold: false, why: 'retry-later' }, 'after two failures the wait is a minute');
    t.equal((await failedTries()).length, 2, 'nothing written while waiting');
    t.equal((await wallet(u)).positions[0]?.lots[0]?.lotId, lotId, 'the lot is untouched');
  });

  await t.test('selling the spend stablecoin (no mint) withdraws real cash to `destination`, under the same lock and key rules', async (t) => {
    const u = await newUser();
    t.equal((await api(app, 'POST', `/api/admin/wallets/${u.userId}/deposit`, { token: admin.accessToken, body: { amountUsd: 500 } })).status, 200);
    const real = async () => (await wallet(u)).wallets[1].balanceUsd;
    const refused = [
      [{ amount: 10, walletContext: 'real' }, 'VALIDATION_FAILED', 'no destination'],
      [{ amount: 10, walletContext: 'real', destination: 'not-an-address' }, 'VALIDATION_FAILED', 'a malformed destination'],
      [{ amount: 10, destination: ADDRESS }, 'VALIDATION_FAILED', "the virtual context (the user's current one) holds paper money"],
      [{ amount: 500.01, walletContext: 'real', destination: ADDRESS }, 'INSUFFICIENT_FUNDS', 'more than the balance'],
    ] as const;
    for (const [body, reason, what] of refused) {
      const res = await sell(u, body);
      t.equal(res.status, 400, what);
      t.equal(res.body.error.reason, reason, what);
    }
    t.equal(await real(), 500, 'nothing moved');
    const sent = await sell(u, { amount: 120.5, walletContext: 'real', destination: ADDRESS }, 'withdraw-1');
    t.equal(sent.status, 200, JSON.stringify(sent.body));
    t.match(sent.body.data, {
      success: true,
      side: 'withdraw',
      amount: 120.5,
      tokenSymbol: 'USDC',
      amountUsd: 120.5,
      destination: ADDRESS,
      walletContext: 'real',
      transactionId: /^simtx-/,
    });
    t.same((await sell(u, { amount: 120.5, walletContext: 'real', destination: ADDRESS }, 'withdraw-1')).body, sent.body, 'a replay sends nothing again');
    t.equal(await real(), 379.5);
    const failed = await sell(u, { amount: 50, walletContext: 'real', destination: DEAD_ADDRESS });
    t.equal(failed.status, 422);
    t.match(failed.body.error, { reason: 'SWAP_FAILED', swapReason: 'TRANSACTION_EXPIRED' });
    t.equal(await real(), 379.5, 'a failed chain transfer gives the money back');
    t.match(await swaps(u), [
      { side: 'withdraw', status: 'CONFIRMED' },
      { side: 'withdraw', status: 'FAILED' },
    ]);
  });

  await t.test('bad input is a 400 in the envelope', async (t) => {
    const u = await newUser();
    for (const body of [
      {},
      { amount: -1, mint: 'SOL' },
      { amount: 1.0000001, mint: 'SOL' },
      { amount: 1, mint: 'bad mint!' },
      { amount: 1, mint: 'SOL', extra: 1 },
    ]) {
      const res = await sell(u, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.equal(res.body.success, false);
    }
    for (const body of [{ mint: 'SOL' }, { mint: 'SOL', amountUsd: 0 }, { amountUsd: 5 }]) t.equal((await buy(u, body)).status, 400, JSON.stringify(body));
    const broke = await buy(u, { mint: 'SOL', amountUsd: 20_000 });
    t.equal(broke.status, 400);
    t.equal(broke.body.error.reason, 'INSUFFICIENT_FUNDS');
    t.equal((await api(app, 'POST', '/api/v1/wallet/sell', { body: { mint: 'SOL', amount: 1 } })).status, 401);
  });
});
