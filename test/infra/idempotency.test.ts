// The Idempotency-Key records on real PostgreSQL (infra/idempotency.ts): claims, replays, a
// different request, a first request running, a lease that lapsed, retention and purge; and the
// simulated venue's swaps kept by id (infra/venues/swaps.ts).
import t from 'tap';
import { migrate } from '../../infra/db.ts';
import { createIdempotencyKeys, idempotencyMigrations } from '../../infra/idempotency.ts';
import { VenueConflictError, VenueRefusedError } from '../../infra/venues/errors.ts';
import { createInMemoryPrices } from '../../infra/venues/prices.ts';
import { createSimulatedSwaps, simulatedSwapMigrations } from '../../infra/venues/swaps.ts';
import { freshDatabase } from '../support/db.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const after = (ms: number) => new Date(t0.getTime() + ms);

t.test('idempotency keys', async (t) => {
  const db = await freshDatabase('idem');
  t.teardown(() => db.drop());
  await migrate(db.pool, [...idempotencyMigrations, ...simulatedSwapMigrations]);
  const keys = createIdempotencyKeys(db.pool, { ttlMs: 86_400_000, leaseMs: 60_000 });

  await t.test('the first claim runs; repeats see it running, then answered; another request is a mismatch', async (t) => {
    t.same(await keys.claim('u1', 'k1', 'r1', t0), { kind: 'run' });
    t.same(await keys.claim('u1', 'k1', 'r1', after(1_000)), { kind: 'in-flight' });
    t.same(await keys.claim('u1', 'k1', 'r2', after(1_000)), { kind: 'mismatch' });
    await keys.complete('u1', 'k1', 200, '{"success":true}');
    t.same(await keys.claim('u1', 'k1', 'r1', after(2_000)), { kind: 'replay', status: 200, body: '{"success":true}' });
    t.same(await keys.claim('u1', 'k1', 'r2', after(2_000)), { kind: 'mismatch' }, 'an answered key still refuses another request');
    t.same(await keys.claim('u2', 'k1', 'r2', after(2_000)), { kind: 'run' }, "keys are each user's own");
  });

  await t.test('a key whose first request died is taken over once its lease lapsed, by the same request only', async (t) => {
    t.same(await keys.claim('u1', 'k2', 'r1', t0), { kind: 'run' });
    t.same(await keys.claim('u1', 'k2', 'r1', after(59_999)), { kind: 'in-flight' });
    t.same(await keys.claim('u1', 'k2', 'r2', after(60_000)), { kind: 'mismatch' });
    const [a, b] = await Promise.all([keys.claim('u1', 'k2', 'r1', after(60_000)), keys.claim('u1', 'k2', 'r1', after(60_000))]);
    t.same([a.kind, b.kind].sort(), ['in-flight', 'run'], 'one repeat takes it over');
  });

  await t.test('a released key is free; past its retention a key is new; purge deletes the expired', async (t) => {
    t.same(await keys.claim('u1', 'k3', 'r1', t0), { kind: 'run' });
    await keys.release('u1', 'k3');
    t.same(await keys.claim('u1', 'k3', 'r2', t0), { kind: 'run' }, 'released: any request may use it');
    await keys.complete('u1', 'k3', 200, 'first');
    t.same(await keys.claim('u1', 'k3', 'r9', after(86_399_999)), { kind: 'mismatch' });
    t.same(await keys.claim('u1', 'k3', 'r9', after(86_400_000)), { kind: 'run' }, 'expired after 24 hours: a new key');
    const count = async () => Number((await db.pool.query('SELECT count(*) FROM idempotency_keys')).rows[0].count);
    const before = await count();
    t.ok((await keys.purge(after(86_400_000 + 1))) >= 1);
    t.ok((await count()) < before);
    t.same(await keys.claim('u1', 'k3', 'r9', after(86_400_001)), { kind: 'in-flight' }, 'a claim made after t0 stays until its own expiry');
  });

  await t.test('simulated swaps: executed once per id at the price, failures kept, conflicts refused', async (t) => {
    const prices = createInMemoryPrices({ SOL: 150_000_000n * 10n ** 12n });
    const swaps = createSimulatedSwaps({ pool: db.pool, prices, failSwap: (r) => (r.mint === 'BAD' ? 'ROUTE_NOT_FOUND' : null) });
    const buy = { swapId: 's1', userId: 'u1', walletContext: 'virtual' as const, side: 'buy' as const, mint: 'SOL', amount: 300_000_000 };
    const first = await swaps.swap(buy);
    t.match(first, { status: 'CONFIRMED', price: 150n * 10n ** 18n, units: 2_000_000, usdMicro: 300_000_000, txId: /^simtx-/ });
    prices.set('SOL', 1_000_000n * 10n ** 12n);
    t.same(await swaps.swap(buy), first, 'a repeat answers the swap made, at its price');
    t.same(await swaps.status('s1'), first);
    t.equal(await swaps.status('nope'), null);
    await t.rejects(swaps.swap({ ...buy, amount: 1 }), VenueConflictError);
    prices.set('SOL', 150_000_000n * 10n ** 12n);
    t.match(
      await swaps.swap({ ...buy, swapId: 's2', side: 'sell', amount: 1_500_000 }),
      { status: 'CONFIRMED', usdMicro: 225_000_000, units: 1_500_000 },
      '1.5 tokens at 150',
    );
    // A price finer than a micro-USD swaps exactly and reads back exactly from its row: 115 USD at
    // 0.0000115 buys 10^7 tokens; 3 units (3·10^-6 token) sell for 3.45·10^-11 USD, 0 micro-USD (down).
    prices.set('PEPE', 11_500_000_000_000n);
    const pepe = await swaps.swap({ ...buy, swapId: 's-pepe', mint: 'PEPE', amount: 115_000_000 });
    t.match(pepe, { status: 'CONFIRMED', price: 11_500_000_000_000n, units: 10_000_000_000_000, usdMicro: 115_000_000 });
    t.same(await swaps.status('s-pepe'), pepe, 'the row keeps the price to 10^-18');
    t.match(
      await swaps.swap({ ...buy, swapId: 's-pepe-sell', side: 'sell', mint: 'PEPE', amount: 3 }),
      { status: 'CONFIRMED', price: 11_500_000_000_000n, units: 3, usdMicro: 0 },
      'the proceeds round down, to nothing',
    );
    t.match(await swaps.swap({ ...buy, swapId: 's3', mint: 'NONE' }), { status: 'FAILED', reason: 'NO_PRICE', txId: null, units: 0 });
    t.match(await swaps.swap({ ...buy, swapId: 's4', mint: 'BAD' }), { status: 'FAILED', reason: 'ROUTE_NOT_FOUND' });
    t.match(await swaps.swap({ ...buy, swapId: 's5', amount: 1 }), { status: 'FAILED', reason: 'AMOUNT_TOO_SMALL' }, 'a buy of less than one unit');
    await t.rejects(swaps.swap({ ...buy, swapId: 's5b', amount: 0.5 }), VenueRefusedError, 'an amount that is no whole number is refused, nothing kept');
    t.equal(await swaps.status('s5b'), null);
    const sent = await swaps.swap({ ...buy, swapId: 's6', side: 'withdraw', mint: 'USDC', walletContext: 'real', amount: 5_000_000, destination: 'addr' });
    t.match(sent, { status: 'CONFIRMED', units: 5_000_000, usdMicro: 5_000_000, destination: 'addr' });
    await t.rejects(
      swaps.swap({ ...buy, swapId: 's6', side: 'withdraw', mint: 'USDC', walletContext: 'real', amount: 5_000_000, destination: 'other' }),
      VenueConflictError,
    );
    const [x, y] = await Promise.all([swaps.swap({ ...buy, swapId: 's7' }), swaps.swap({ ...buy, swapId: 's7' })]);
    t.same(x, y, 'two processes asking at once get one swap');
  });
});
