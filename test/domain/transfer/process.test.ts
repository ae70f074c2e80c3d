// The transfer process in Given / When / Then form: given the outcomes its steps reported so far,
// when it decides, then the next step (or none, and how the transfer ended).
import t from 'tap';
import { refuse } from '../../../domain/shared/errors.ts';
import type { TransferPlan } from '../../../domain/transfer/plan.ts';
import { decide, isFinished, planned, resumed } from '../../../domain/transfer/process.ts';
import { givenTransfer } from '../../support/given-when-then.ts';

const plan: TransferPlan = {
  transferId: 'u1.a1.virtual#add-1',
  amountMicro: 250_000_000,
  from: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
  to: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'virtual' },
};

t.test('a planned transfer starts with the debit of its source', async (t) => {
  givenTransfer(planned(plan)).thenStep(t, { type: 'DebitWallet', data: { transfer: plan } });
});

t.test('once debited, the destination is credited the amount the source recorded', async (t) => {
  givenTransfer(planned(plan), { type: 'Debited', amountMicro: 250_000_000 }).thenStep(t, { type: 'CreditPool', data: { transfer: plan, resumed: false } });
  const retried = givenTransfer(planned(plan), { type: 'Debited', amountMicro: 100_000_000 });
  retried.thenStep(
    t,
    { type: 'CreditPool', data: { transfer: { ...plan, amountMicro: 100_000_000 }, resumed: false } },
    'a debit found from an earlier request sets the amount',
  );
});

t.test('a refused debit ends the transfer with nothing moved, keeping the refusal', async (t) => {
  const refusal = refuse('INSUFFICIENT_FUNDS', 'insufficient virtual wallet funds');
  const failed = givenTransfer(planned(plan), { type: 'DebitRefused', error: refusal });
  failed.thenStep(t, null);
  t.equal(failed.state.status, 'failed');
  t.equal(failed.state.refusal, refusal);
  t.ok(isFinished(failed.state));
});

t.test('a credited transfer is complete', async (t) => {
  const done = givenTransfer(planned(plan), { type: 'Debited', amountMicro: plan.amountMicro }, { type: 'Credited' });
  done.thenStep(t, null);
  t.equal(done.state.status, 'completed');
});

t.test('a credit the destination rejects is given back to the source, then the transfer is compensated', async (t) => {
  const rejected = givenTransfer(planned(plan), { type: 'Debited', amountMicro: plan.amountMicro }, { type: 'CreditRejected', reason: 'the pool is not open' });
  rejected.thenStep(t, { type: 'RefundWallet', data: { userId: 'u1', transferId: plan.transferId, reason: 'the pool is not open' } }, 'the refund says why');
  t.equal(rejected.state.rejection, 'the pool is not open');
  const compensated = givenTransfer(rejected.state, { type: 'Refunded' });
  compensated.thenStep(t, null);
  t.equal(compensated.state.status, 'compensated');
  t.equal(compensated.state.rejection, 'the pool is not open', 'why it was given back stays known');
});

t.test('a retried transfer that was already given back is compensated without another step', async (t) => {
  const again = givenTransfer(planned(plan), { type: 'Refunded' });
  again.thenStep(t, null);
  t.equal(again.state.status, 'compensated');
});

t.test('a resumed transfer (recovery, settlement) asks its source what it recorded, then credits marked resumed', async (t) => {
  givenTransfer(resumed(plan)).thenStep(t, { type: 'DebitWallet', data: { transfer: plan } }, 'the debit step only reports the recorded debit');
  givenTransfer(resumed(plan), { type: 'Debited', amountMicro: plan.amountMicro }).thenStep(t, { type: 'CreditPool', data: { transfer: plan, resumed: true } });
  givenTransfer(resumed(plan), { type: 'Debited', amountMicro: plan.amountMicro }, { type: 'CreditRejected', reason: 'closed' }).thenStep(t, {
    type: 'RefundWallet',
    data: { userId: 'u1', transferId: plan.transferId, reason: 'closed' },
  });
});

t.test('a manual buy: the wallet pays, BuyLot swaps and opens the lot, a failed swap is given back', async (t) => {
  const buy: TransferPlan = {
    transferId: 'manual-1',
    amountMicro: 250_000_000,
    from: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
    to: { kind: 'lots', userId: 'u1', walletContext: 'virtual', mint: 'SOL' },
  };
  givenTransfer(planned(buy)).thenStep(t, { type: 'DebitWallet', data: { transfer: buy } });
  givenTransfer(planned(buy), { type: 'Debited', amountMicro: buy.amountMicro }).thenStep(t, { type: 'BuyLot', data: { transfer: buy } });
  t.equal(givenTransfer(planned(buy), { type: 'Debited', amountMicro: buy.amountMicro }, { type: 'Credited' }).state.status, 'completed');
  const failed = givenTransfer(planned(buy), { type: 'Debited', amountMicro: buy.amountMicro }, { type: 'CreditRejected', reason: 'NO_PRICE' });
  failed.thenStep(t, { type: 'RefundWallet', data: { userId: 'u1', transferId: 'manual-1', reason: 'NO_PRICE' } });
  t.equal(givenTransfer(failed.state, { type: 'Refunded' }).state.status, 'compensated');
});

t.test('a manual sell: SellLots records it and swaps (the debit), SettleSell reduces the lots; a refused or failed swap ends it', async (t) => {
  const sell: TransferPlan = {
    transferId: 'manual-2',
    amountMicro: 0,
    from: { kind: 'lots', userId: 'u1', walletContext: 'virtual', mint: 'SOL', units: 1_500_000 },
    to: { kind: 'wallet', userId: 'u1', walletContext: 'virtual' },
  };
  givenTransfer(planned(sell)).thenStep(t, { type: 'SellLots', data: { transfer: sell } });
  const swapped = givenTransfer(planned(sell), { type: 'Debited', amountMicro: 225_000_000 });
  swapped.thenStep(t, { type: 'SettleSell', data: { transfer: { ...sell, amountMicro: 225_000_000 } } }, 'the credit is what the swap fetched');
  t.equal(givenTransfer(swapped.state, { type: 'Credited' }).state.status, 'completed');
  const dust = givenTransfer(planned(sell), { type: 'Debited', amountMicro: 0 });
  t.equal(dust.state.status, 'debited', 'a sell that fetched nothing still reduces its lots');
  const refused = givenTransfer(planned(sell), { type: 'DebitRefused', error: refuse('SELL_EXCEEDS_MANUAL_POSITION', 'too much') });
  refused.thenStep(t, null);
  t.equal(refused.state.status, 'failed');
});

const withdrawal: TransferPlan = {
  transferId: 'u1.a1.real#withdraw-1',
  amountMicro: 40_000_000,
  from: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'real' },
  to: { kind: 'wallet', userId: 'u1', walletContext: 'real' },
};

t.test('a withdrawal debits the pool, then credits the wallet the amount the pool paid out', async (t) => {
  givenTransfer(planned(withdrawal)).thenStep(t, { type: 'DebitPool', data: { transfer: withdrawal } });
  const partial = givenTransfer(planned(withdrawal), { type: 'Debited', amountMicro: 25_000_000 });
  partial.thenStep(t, { type: 'CreditWallet', data: { transfer: { ...withdrawal, amountMicro: 25_000_000 } } }, 'a reclaim may pay out less than asked');
  const done = givenTransfer(partial.state, { type: 'Credited' });
  done.thenStep(t, null);
  t.equal(done.state.status, 'completed');
});

t.test('a leg at the venue waits: no step until the settlement resumes the transfer', async (t) => {
  const out = givenTransfer(planned(withdrawal), { type: 'DebitPending' });
  out.thenStep(t, null);
  t.equal(out.state.status, 'pending');
  t.notOk(isFinished(out.state), 'pending is not over');
  const add = givenTransfer(planned(plan), { type: 'Debited', amountMicro: plan.amountMicro }, { type: 'CreditPending' });
  add.thenStep(t, null);
  t.equal(add.state.status, 'pending');
  t.throws(() => givenTransfer(out.state, { type: 'Credited' }), /cannot follow pending/, 'a pending transfer moves only by being resumed');
});

t.test('a withdrawal the venue failed ends with nothing moved; a close with nothing to pay out is complete at once', async (t) => {
  const failed = givenTransfer(resumed(withdrawal), { type: 'DebitRefused', error: refuse('VENUE_FAILED', 'bridge failed') });
  t.equal(failed.state.status, 'failed');
  const close: TransferPlan = { ...withdrawal, amountMicro: 0, from: { ...withdrawal.from, close: true } as TransferPlan['from'] };
  const empty = givenTransfer(planned(close), { type: 'Debited', amountMicro: 0 });
  empty.thenStep(t, null);
  t.equal(empty.state.status, 'completed');
});

t.test('a fee claim: the fee account pays (DebitFees decides the amount), then the developer’s wallet is credited it', async (t) => {
  const claim: TransferPlan = {
    transferId: 'fees-a1#claim-1',
    amountMicro: 0,
    from: { kind: 'fees', agentId: 'a1', developerId: 'dev', all: true },
    to: { kind: 'wallet', userId: 'dev', walletContext: 'real' },
  };
  givenTransfer(planned(claim)).thenStep(t, { type: 'DebitFees', data: { transfer: claim } });
  givenTransfer(planned(claim), { type: 'Debited', amountMicro: 12_000_000 }).thenStep(t, {
    type: 'CreditWallet',
    data: { transfer: { ...claim, amountMicro: 12_000_000 } },
  });
  const nothing = givenTransfer(planned(claim), { type: 'DebitRefused', error: refuse('EXCEEDS_CLAIMABLE', 'nothing to claim') });
  nothing.thenStep(t, null);
  t.equal(nothing.state.status, 'failed');
  const resumedClaim = givenTransfer(resumed(claim), { type: 'Debited', amountMicro: 12_000_000 }, { type: 'Credited' });
  t.equal(resumedClaim.state.status, 'completed', 'the recovery finishes it from the debit');
  t.throws(
    () => decide({ ...planned(plan), status: 'debited', plan: { ...plan, to: claim.from } }),
    /never by a transfer/,
    'a fee account is never credited by a transfer',
  );
});

t.test('an outcome that cannot follow the state is a bug, never taken silently', async (t) => {
  t.throws(() => givenTransfer(planned(plan), { type: 'Credited' }), /Credited cannot follow planned/);
  t.throws(() => givenTransfer(planned(plan), { type: 'Debited', amountMicro: 1 }, { type: 'Debited', amountMicro: 1 }), /cannot follow debited/);
  t.throws(() => givenTransfer(planned(plan), { type: 'Debited', amountMicro: 1 }, { type: 'Credited' }, { type: 'Refunded' }), /cannot follow completed/);
});

const opening: TransferPlan = {
  ...plan,
  to: {
    ...(plan.to as Extract<TransferPlan['to'], { kind: 'pool' }>),
    follow: { settings: {} as never, terms: {} as never, seatClaim: `${plan.transferId}@n1` },
  },
};

t.test('a follow opening a beta pool takes its seat claim before the wallet pays', async (t) => {
  givenTransfer(planned(opening)).thenStep(t, { type: 'TakeSeat', data: { transfer: opening } }, 'the seat first');
  givenTransfer(planned(opening), { type: 'Reserved' }).thenStep(t, { type: 'DebitWallet', data: { transfer: opening } }, 'then the debit');
  givenTransfer(planned(plan)).thenStep(t, { type: 'DebitWallet', data: { transfer: plan } }, 'a pool opened without a claim reserves nothing');
  givenTransfer(resumed(opening)).thenStep(t, { type: 'DebitWallet', data: { transfer: opening } }, 'a resumed transfer took its seat before its debit');
});

t.test('a full beta refuses the transfer with nothing moved and nothing to give back', async (t) => {
  const full = givenTransfer(planned(opening), { type: 'ReserveRefused', error: refuse('BETA_FULL', 'all seats taken') });
  full.thenStep(t, null);
  t.equal(full.state.status, 'failed');
  t.equal(full.state.refusal?.reason, 'BETA_FULL');
});

t.test('the seat is given back (unless kept) once the transfer ends, however it ends', async (t) => {
  const reserved = [{ type: 'Reserved' }, { type: 'Debited', amountMicro: opening.amountMicro }] as const;
  const release = { type: 'ReleaseSeat', data: { transfer: opening } } as const;
  const completed = givenTransfer(planned(opening), ...reserved, { type: 'Credited' });
  completed.thenStep(t, release, 'completed: the release keeps the claim the pool opened with');
  const compensated = givenTransfer(planned(opening), ...reserved, { type: 'CreditRejected', reason: 'closed' }, { type: 'Refunded' });
  compensated.thenStep(t, release, 'compensated');
  const refused = givenTransfer(planned(opening), { type: 'Reserved' }, { type: 'DebitRefused', error: refuse('INSUFFICIENT_FUNDS', 'no') });
  refused.thenStep(t, release, 'the debit refused');
  const released = givenTransfer(completed.state, { type: 'Released' });
  released.thenStep(t, null, 'once released, nothing more');
  t.equal(released.state.status, 'completed', 'the release does not change how the transfer ended');
  givenTransfer(planned(opening), ...reserved, { type: 'CreditPending' }).thenStep(t, null, 'pending: the seat stays with the pool waiting for the venue');
  t.throws(() => givenTransfer(released.state, { type: 'Released' }), /cannot follow/, 'released once');
  t.throws(() => givenTransfer(planned(opening), { type: 'Reserved' }, { type: 'Reserved' }), /cannot follow/, 'reserved once');
});
