import t from 'tap';
import { emptyLedger, equityUsd, poolFigures, splitFee, type LedgerInputs, type LedgerTerms } from '../../../domain/pool/ledger.ts';
import { usdToMicro } from '../../../domain/shared/money.ts';

/** Ledger inputs given in USD for readability; the ledger itself sees micro-USD. */
const inputs = (usd: Partial<Record<keyof LedgerInputs, number>>): LedgerInputs => {
  const l = emptyLedger();
  for (const [k, v] of Object.entries(usd)) l[k as keyof LedgerInputs] = usdToMicro(v);
  return l;
};
const spotVirtual: LedgerTerms = { walletContext: 'virtual', venue: 'SPOT_VENUE', maxLeverage: 1, successFeePercent: 20 };
const m = usdToMicro;

t.test('a fresh virtual spot pool: everything allocated is available and withdrawable', async (t) => {
  const f = poolFigures(inputs({ confirmedIn: 1000 }), spotVirtual);
  t.match(f, {
    allocatedUsd: m(1000),
    depositedUsd: m(1000),
    currentBalanceUsd: m(1000),
    inUseUsd: 0,
    feeBufferUsd: 0,
    availableUsd: m(1000),
    ledgerAvailableUsd: m(1000),
    withdrawableUsd: m(1000),
    pendingDeltaUsd: 0,
    netRealizedProfitUsd: 0,
    estimatedSuccessFeeUsd: 0,
    pendingPlatformFeeUsd: 0,
    pendingCreatorFeeUsd: 0,
    netUserPayoutUsd: m(1000),
    dustUsd: 0,
    reconciliationStatus: 'IN_SYNC',
  });
});

t.test('a real perp pool in profit with open trades, a pending withdrawal and a fee already settled', async (t) => {
  const l = inputs({ confirmedIn: 1000, confirmedOut: 200, realized: 150, unrealized: 50, locked: 300, pendingOut: 20, feesCharged: 10 });
  const f = poolFigures(l, { walletContext: 'real', venue: 'PERP_VENUE', maxLeverage: 10, successFeePercent: 20 });
  t.same(f, {
    allocatedUsd: m(800), // 1000 − 200
    depositedUsd: m(800),
    currentBalanceUsd: m(940), // 1000 − 200 + 150 − 10
    inUseUsd: m(300),
    inTradesUsd: m(300),
    lockedInPositionsUsd: m(300),
    lockedMarginUsd: m(300),
    feeBufferUsd: m(4), // 0.0005 × 10 × 800
    availableUsd: m(640), // 940 − 300
    ledgerAvailableUsd: m(636), // 940 − 300 − 4
    withdrawableUsd: m(596), // 636 − 20 − (4 + 16)
    pendingDeltaUsd: m(-20),
    realizedPnlUsd: m(150),
    unrealizedPnlUsd: m(50),
    netRealizedProfitUsd: m(150),
    estimatedSuccessFeeUsd: m(30), // 20% × (150 + 50) − 10
    estimatedPlatformFeeUsd: m(6),
    estimatedCreatorFeeUsd: m(24), // floor(30 × 0.8)
    pendingPlatformFeeUsd: m(4), // 20% × 150 − 10 = 20, split 4 / 16
    pendingCreatorFeeUsd: m(16),
    netUserPayoutUsd: m(960), // 940 + 50 − 30
    dustUsd: 0,
    reconciliationStatus: 'UNKNOWN',
  });
});

t.test('a pool at a loss owes no fee and pays out its equity', async (t) => {
  const l = inputs({ confirmedIn: 500, realized: -120, unrealized: -30 });
  const f = poolFigures(l, { ...spotVirtual, successFeePercent: 10 });
  t.equal(f.allocatedUsd, m(500), 'principal is unchanged by losses');
  t.equal(f.currentBalanceUsd, m(380));
  t.equal(f.netRealizedProfitUsd, 0);
  t.equal(f.estimatedSuccessFeeUsd, 0);
  t.equal(f.pendingPlatformFeeUsd + f.pendingCreatorFeeUsd, 0);
  t.equal(f.netUserPayoutUsd, m(350)); // 380 − 30
  t.equal(f.withdrawableUsd, m(380));
});

t.test('the success fee is a high-water mark over cumulative realized PnL', async (t) => {
  const terms = spotVirtual; // 20%
  // 40 was charged when realized PnL peaked at 200; the pool then lost 50.
  const afterLoss = poolFigures(inputs({ confirmedIn: 1000, realized: 150, feesCharged: 40 }), terms);
  t.equal(afterLoss.pendingPlatformFeeUsd + afterLoss.pendingCreatorFeeUsd, 0, 'nothing due below the previous peak');
  t.equal(afterLoss.estimatedSuccessFeeUsd, 0);

  const newPeak = poolFigures(inputs({ confirmedIn: 1000, realized: 250, feesCharged: 40 }), terms);
  t.equal(newPeak.pendingCreatorFeeUsd, m(8), 'only the profit above the peak: 20% × 250 − 40 = 10, creator 8');
  t.equal(newPeak.pendingPlatformFeeUsd, m(2));

  const openLoss = poolFigures(inputs({ confirmedIn: 1000, realized: 250, unrealized: -100, feesCharged: 40 }), terms);
  t.equal(openLoss.pendingPlatformFeeUsd + openLoss.pendingCreatorFeeUsd, 0, 'open losses net against realized profit');
  t.equal(openLoss.estimatedSuccessFeeUsd, 0);

  const openGain = poolFigures(inputs({ confirmedIn: 1000, realized: 250, unrealized: 100, feesCharged: 40 }), terms);
  t.equal(openGain.pendingPlatformFeeUsd + openGain.pendingCreatorFeeUsd, m(10), 'unrealized gains are never owed');
  t.equal(openGain.estimatedSuccessFeeUsd, m(30), 'but count in the fee due on a full exit: 20% × 350 − 40');
  t.equal(openGain.netUserPayoutUsd, m(1000 + 250 - 40 + 100 - 30));
});

t.test('a fractional success fee percent is exact', async (t) => {
  const f = poolFigures(inputs({ confirmedIn: 100, realized: 80 }), { ...spotVirtual, successFeePercent: 12.5 });
  t.equal(f.estimatedSuccessFeeUsd, m(10));
  t.equal(f.estimatedCreatorFeeUsd, m(8));
  t.equal(f.estimatedPlatformFeeUsd, m(2));
});

t.test('the creator share is floored to the micro-USD and the platform takes the remainder', async (t) => {
  t.same(splitFee(1), { creator: 0, platform: 1 });
  t.same(splitFee(7), { creator: 5, platform: 2 }); // floor(5.6)
  t.same(splitFee(0), { creator: 0, platform: 0 });
  t.same(splitFee(1_000_001), { creator: 800_000, platform: 200_001 });
});

t.test('the perp fee buffer is floored and reduces the ledger available amount', async (t) => {
  const perp: LedgerTerms = { walletContext: 'virtual', venue: 'PERP_VENUE', maxLeverage: 3, successFeePercent: 0 };
  const f = poolFigures({ ...emptyLedger(), confirmedIn: 333_333_333 }, perp);
  t.equal(f.feeBufferUsd, 499_999, '0.0015 × 333.333333 = 0.4999999995 USD, floored');
  t.equal(f.ledgerAvailableUsd, 333_333_333 - 499_999);
  t.equal(f.availableUsd, 333_333_333, 'availableUsd does not deduct the buffer');

  const drained = poolFigures(inputs({ confirmedIn: 1000, realized: -990, locked: 5 }), { ...perp, maxLeverage: 50 });
  t.equal(drained.feeBufferUsd, m(25), 'buffer on the allocation: 0.0005 × 50 × 1000');
  t.equal(drained.ledgerAvailableUsd, 0, 'never negative');
  t.equal(drained.withdrawableUsd, 0);

  t.equal(poolFigures(inputs({ confirmedIn: 1000 }), { ...perp, venue: 'SPOT_VENUE', maxLeverage: 50 }).feeBufferUsd, 0, 'spot venue: 0');
});

t.test('withdrawable below 0.01 USD is dust', async (t) => {
  const dusty = poolFigures(inputs({ confirmedIn: 1, realized: -0.995 }), spotVirtual);
  t.equal(dusty.withdrawableUsd, 5_000);
  t.equal(dusty.dustUsd, 5_000);
  const atMinimum = poolFigures(inputs({ confirmedIn: 1, realized: -0.99 }), spotVirtual);
  t.equal(atMinimum.withdrawableUsd, 10_000);
  t.equal(atMinimum.dustUsd, 0, 'exactly the minimum withdrawal is not dust');
});

t.test('profits withdrawn beyond the principal leave no negative allocation', async (t) => {
  const f = poolFigures(inputs({ confirmedIn: 100, confirmedOut: 150, realized: 80 }), spotVirtual);
  t.equal(f.allocatedUsd, 0);
  t.equal(f.currentBalanceUsd, m(30));
});

t.test('reconciliation: virtual pools are in sync, real pools unknown until checked', async (t) => {
  const l = inputs({ confirmedIn: 10 });
  t.equal(poolFigures(l, spotVirtual).reconciliationStatus, 'IN_SYNC');
  t.equal(poolFigures(l, { ...spotVirtual, walletContext: 'real' }).reconciliationStatus, 'UNKNOWN');
  t.equal(poolFigures(l, { ...spotVirtual, walletContext: 'real', reconciliationStatus: 'GAP' }).reconciliationStatus, 'GAP');
});

t.test('a pending add shows as a positive pending delta and is not allocated', async (t) => {
  const f = poolFigures(inputs({ confirmedIn: 100, pendingIn: 50 }), spotVirtual);
  t.equal(f.pendingDeltaUsd, m(50));
  t.equal(f.allocatedUsd, m(100));
});

t.test("equity is the pool's value with its open trades marked: principal, realized and unrealized PnL, net of settled fees", async (t) => {
  const l = inputs({ confirmedIn: 1000, confirmedOut: 200, realized: 150, unrealized: -50, locked: 300, pendingOut: 20, feesCharged: 10 });
  t.equal(equityUsd(l), m(890), '1000 − 200 + 150 − 10 − 50: a withdrawal still reserved is still in it');
  t.equal(equityUsd(l), poolFigures(l, spotVirtual).currentBalanceUsd + l.unrealized);
});
