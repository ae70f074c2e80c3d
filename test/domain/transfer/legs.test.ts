// The legs (domain/transfer/legs/) in Given / When / Then form. Steps: given a transfer between two
// endpoints, planned, debited or rejected, when the process decides, then the step its legs name.
// Facts: given the event an endpoint's aggregate recorded, then the fact the projector reads and,
// for a debit, the plan the recovery reads back. Ids: one module, the same strings as ever.
import t, { type Test } from 'tap';
import { feeAccountStream } from '../../../domain/fees/state.ts';
import { nextTransferId } from '../../../domain/pool/queries.ts';
import { initialState as initialPoolState } from '../../../domain/pool/state.ts';
import { tradeReturnId } from '../../../domain/trade/state.ts';
import { planIn, transferFactOf } from '../../../domain/transfer/facts.ts';
import { transferIds } from '../../../domain/transfer/ids.ts';
import { aggregateSteps, legs } from '../../../domain/transfer/legs/index.ts';
import { endpointKey, ownerOf, type Endpoint, type TransferPlan } from '../../../domain/transfer/plan.ts';
import { planned, resumed } from '../../../domain/transfer/process.ts';
import { statusOfProgress, transferProgress } from '../../../domain/transfer/status.ts';
import type { TransferStep } from '../../../domain/transfer/steps.ts';
import { exitTransferId } from '../../../domain/wallet/exits.ts';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import { manualTransferId } from '../../../domain/wallet/sell.ts';
import { at, givenTransfer, scenario } from '../../support/given-when-then.ts';

const wallet: Endpoint = { kind: 'wallet', userId: 'u1', walletContext: 'real' };
const pool: Endpoint = { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'real' };
const trade: Endpoint = { kind: 'trade', tradeId: 'tr-1', poolId: 'u1.a1.real' };
const lots: Endpoint = { kind: 'lots', userId: 'u1', walletContext: 'real', mint: 'SOL', units: 1_000 };
const address: Endpoint = { kind: 'address', userId: 'u1', walletContext: 'real', mint: 'USDC', destination: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' };
const fees: Endpoint = { kind: 'fees', agentId: 'a1', developerId: 'dev' };

const planOf = (transferId: string, from: Endpoint, to: Endpoint): TransferPlan => ({ transferId, amountMicro: 5_000_000, from, to });
const carrying = (type: TransferStep['type'], plan: TransferPlan) => ({ type, data: { transfer: plan } }) as TransferStep;

/** Every money movement: the debit, the credit and the refund (null: none) its legs name. */
const movements: Array<{ name: string; plan: TransferPlan; debit: TransferStep['type']; credit: TransferStep['type']; refund: TransferStep['type'] | null }> = [
  { name: 'a follow or an add (wallet → pool)', plan: planOf('p#add-1', wallet, pool), debit: 'DebitWallet', credit: 'CreditPool', refund: 'RefundWallet' },
  { name: 'a withdrawal (pool → wallet)', plan: planOf('p#withdraw-1', pool, wallet), debit: 'DebitPool', credit: 'CreditWallet', refund: null },
  { name: "a trade's margin (pool → trade)", plan: planOf('tr-1', pool, trade), debit: 'LockMargin', credit: 'OpenTradeEntry', refund: 'ReleaseMargin' },
  { name: 'a trade paying back (trade → pool)', plan: planOf('tr-1.return', trade, pool), debit: 'DebitTrade', credit: 'ReturnMargin', refund: null },
  { name: 'a manual buy (wallet → lots)', plan: planOf('manual-1', wallet, lots), debit: 'DebitWallet', credit: 'BuyLot', refund: 'RefundWallet' },
  { name: 'a manual sell (lots → wallet)', plan: planOf('manual-2', lots, wallet), debit: 'SellLots', credit: 'SettleSell', refund: null },
  {
    name: 'a withdrawal to an address (wallet → address)',
    plan: planOf('manual-3', wallet, address),
    debit: 'DebitWallet',
    credit: 'SendOut',
    refund: 'RefundWallet',
  },
  { name: 'a fee claim (fees → wallet)', plan: planOf('fees-a1#claim-1', fees, wallet), debit: 'DebitFees', credit: 'CreditWallet', refund: null },
];

for (const m of movements) {
  t.test(`${m.name}: the legs name its debit, credit and refund`, async (t) => {
    const { plan } = m;
    givenTransfer(planned(plan)).thenStep(t, carrying(m.debit, plan), `planned: ${m.debit}`);
    const debited = givenTransfer(planned(plan), { type: 'Debited', amountMicro: plan.amountMicro });
    const credit = m.credit === 'CreditPool' ? { type: 'CreditPool' as const, data: { transfer: plan, resumed: false } } : carrying(m.credit, plan);
    debited.thenStep(t, credit, `debited: ${m.credit}`);
    const rejected = { ...debited.state, status: 'rejected' as const, rejection: 'why' };
    if (m.refund === null) t.throws(() => givenTransfer(rejected).thenStep(t, null), /no refund step/, 'no destination rejects it: no refund');
    else if (m.refund === 'RefundWallet') {
      givenTransfer(rejected).thenStep(
        t,
        { type: 'RefundWallet', data: { userId: 'u1', transferId: plan.transferId, reason: 'why' } },
        'rejected: RefundWallet',
      );
    } else givenTransfer(rejected).thenStep(t, carrying(m.refund, plan), `rejected: ${m.refund}`);
  });
}

t.test('a pool credited by a resumed transfer is told so (the credit moves the money and nothing else)', async (t) => {
  const plan = planOf('p#add-1', wallet, pool);
  givenTransfer(resumed(plan), { type: 'Debited', amountMicro: plan.amountMicro }).thenStep(t, { type: 'CreditPool', data: { transfer: plan, resumed: true } });
});

t.test('what a leg lacks is never asked for: an address never pays, a fee account is never credited', async (t) => {
  t.notOk(legs.address.debit, 'an address has no debit');
  t.notOk(legs.fees.credit, 'a fee account has no credit');
  t.throws(() => givenTransfer(planned(planOf('x', address, wallet))).thenStep(t, null), /address endpoint never pays/);
  const toFees = givenTransfer(planned(planOf('y', wallet, fees)), { type: 'Debited', amountMicro: 1 });
  t.throws(() => toFees.thenStep(t, null), /never by a transfer/);
});

t.test('only a pool ends a transfer at a debit of nothing (a close that found nothing to pay out)', async (t) => {
  const close = givenTransfer(planned(planOf('p#stop-1', pool, wallet)), { type: 'Debited', amountMicro: 0 });
  close.thenStep(t, null);
  t.equal(close.state.status, 'completed');
  for (const from of [wallet, lots, fees, trade]) {
    const nothing = givenTransfer(planned(planOf('z', from, from === wallet ? pool : wallet)), { type: 'Debited', amountMicro: 0 });
    t.equal(nothing.state.status, 'debited', `a ${from.kind} debit of 0 still goes to the credit`);
  }
});

t.test("each leg names its endpoint's key and owner", async (t) => {
  const expected: Array<[Endpoint, string, string]> = [
    [wallet, 'wallet:u1.real', 'u1'],
    [pool, 'pool:u1.a1.real', 'u1'],
    [trade, 'trade:tr-1', 'u1'],
    [lots, 'lots:u1.real.SOL', 'u1'],
    [address, 'address:u1.9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', 'u1'],
    [fees, 'fees:a1', 'dev'],
  ];
  for (const [endpoint, key, owner] of expected) {
    const leg = legs[endpoint.kind] as { key(e: Endpoint): string; owner(e: Endpoint): string };
    t.equal(leg.key(endpoint), key, `${endpoint.kind}: key`);
    t.equal(endpointKey(endpoint), key);
    t.equal(leg.owner(endpoint), owner, `${endpoint.kind}: owner`);
    t.equal(ownerOf(endpoint), owner);
  }
});

// ---- aggregate steps: given the aggregate's events, when the leg's command is decided, then the outcome its state says ----

const env = { virtualStartMicro: 1_000_000_000 };
const NOW = at('2026-01-01T00:00:00.000Z');

t.test('every step is one aggregate decision described by one leg, or has a handler of its own (the venue)', async (t) => {
  t.same(Object.keys(aggregateSteps).sort(), [
    'CreditWallet',
    'DebitFees',
    'DebitPool',
    'DebitTrade',
    'DebitWallet',
    'LockMargin',
    'RefundWallet',
    'ReleaseMargin',
    'ReturnMargin',
  ]);
});

t.test(
  "the wallet leg's steps: a debit reads what the wallet recorded (a retry the same, a refund as given back), a refusal is the debit refused",
  async (t) => {
    const step = aggregateSteps.DebitWallet;
    const plan = planOf('p#add-1', { ...wallet, walletContext: 'virtual' } as Endpoint, { ...pool, walletContext: 'virtual' } as Endpoint);
    const data = { transfer: plan };
    t.equal(step.id(data), 'u1', "the owner's wallet");
    t.ok(step.refusable, 'a wallet may refuse to pay');
    const { given } = scenario(walletDecider);
    const first = given([]).when({ ...step.command!(data, env), metadata: NOW } as WalletCommand);
    t.same(step.outcomeFor(first.after(), data), { type: 'Debited', amountMicro: 5_000_000 });
    const debited = first.events();
    const again = given(debited).when({ ...step.command!(data, env), metadata: NOW } as WalletCommand);
    t.same(step.outcomeFor(again.after(), data), { type: 'Debited', amountMicro: 5_000_000 }, 'a retry reads the first debit');
    const refund = aggregateSteps.RefundWallet;
    const back = { userId: 'u1', transferId: 'p#add-1', reason: 'closed' };
    const refunded = given(debited).when({ ...refund.command!(back, env), metadata: NOW } as WalletCommand);
    t.same(refund.outcomeFor(refunded.after(), back), { type: 'Refunded' });
    t.same(step.outcomeFor(refunded.after(), data), { type: 'Refunded' }, 'a debit asked again after its refund reads the refund');
    const real = { transfer: planOf('p#add-2', wallet, pool) };
    given([])
      .when({ ...step.command!(real, env), metadata: NOW } as WalletCommand)
      .thenRefused(t, 'INSUFFICIENT_FUNDS');
    const credit = aggregateSteps.CreditWallet;
    const payout = { transfer: planOf('p#withdraw-1', pool, wallet) };
    t.same(credit.command!(payout, env), {
      type: 'CreditWallet',
      data: { transferId: 'p#withdraw-1', walletContext: 'real', amountMicro: 5_000_000, from: 'pool:u1.a1.real', virtualStartMicro: env.virtualStartMicro },
    });
    t.throws(() => credit.id({ transfer: planOf('x', wallet, pool) }), /the to endpoint is not a wallet/, 'a step of another kind is a bug');
  },
);

t.test("the trade leg's steps: the pool's decision on the trade is the margin's debit; a trade that has not ended pays nothing back yet", async (t) => {
  const lock = aggregateSteps.LockMargin;
  const data = { transfer: planOf('tr-1', pool, trade) };
  t.equal(lock.id(data), 'u1.a1.real');
  t.notOk(lock.command, 'a read: the pool decided the trades of the signal together, before');
  const decided = (fate?: 'open' | 'closed' | 'refused') => ({ trades: new Map(fate ? [['tr-1', fate]] : []) }) as never;
  t.same(lock.outcomeFor(decided('open'), data), { type: 'Debited', amountMicro: 5_000_000 });
  t.same(lock.outcomeFor(decided('closed'), data), { type: 'Debited', amountMicro: 5_000_000 }, 'closed since: it was locked');
  t.match(lock.outcomeFor(decided('refused'), data), { type: 'DebitRefused', error: { reason: 'TRADE_SKIPPED' } });
  t.throws(() => lock.outcomeFor(decided(), data), /has not decided trade tr-1/, 'undecided: nothing to report yet');
  const debit = aggregateSteps.DebitTrade;
  const back = { transfer: planOf('tr-1.return', trade, pool) };
  t.equal(debit.id(back), 'tr-1');
  t.throws(() => debit.outcomeFor({ status: 'none' } as never, back), /trade tr-1 has not ended/);
  t.same(debit.outcomeFor({ status: 'closed', notionalMicro: 40_000_000, leverage: 4, realizedPnlMicro: -2_000_000 } as never, back), {
    type: 'Debited',
    amountMicro: 8_000_000,
  });
  const ret = aggregateSteps.ReturnMargin;
  t.equal(ret.id(back), 'u1.a1.real', 'the pool the trade pays back');
  const withOpen = (marginMicro?: number) => ({ followed: true, openTrades: marginMicro ? { 'tr-1': { marginMicro } } : {} }) as never;
  t.same(
    ret.commandOn!(withOpen(6_000_000), back),
    {
      type: 'CloseTrade',
      data: { tradeId: 'tr-1', realizedPnlMicro: -1_000_000, transferId: 'tr-1.return' },
    },
    'the PnL realized: what came back minus the margin locked',
  );
  t.equal(ret.commandOn!(withOpen(), back), null, 'a trade no longer open was closed by an earlier run: nothing to decide');
  t.same(ret.outcomeFor(withOpen(), back), { type: 'Credited' });
  t.same(aggregateSteps.ReleaseMargin.command!(data, env), {
    type: 'CloseTrade',
    data: { tradeId: 'tr-1', realizedPnlMicro: 0, released: true, transferId: 'tr-1' },
  });
});

// ---- facts: given what an aggregate recorded, then the fact ----

const AT = '2026-01-01T00:00:00.000Z';
const givenRecorded = (streamName: string, type: string, data: unknown) => ({
  thenFact(t: Test, expected: unknown, message?: string) {
    t.same(transferFactOf({ streamName, type, data }), expected, message ?? `${type} on ${streamName}`);
  },
  thenPlan(t: Test, transferId: string, expected: TransferPlan | null, message?: string) {
    t.same(planIn({ streamName, type, data }, transferId), expected, message ?? `${type}: the plan of ${transferId}`);
  },
});

t.test("the wallet leg's facts: its debit carries the plan, a refund compensates, a credit completes", async (t) => {
  const plan = planOf('p#add-1', wallet, pool);
  const debit = givenRecorded('wallet-u1', 'WalletDebited', { transfer: plan });
  debit.thenFact(t, { status: 'debited', transfer: plan });
  debit.thenPlan(t, 'p#add-1', plan);
  debit.thenPlan(t, 'p#add-2', null, 'another transfer id: no plan');
  givenRecorded('wallet-u1', 'WalletRefunded', { transferId: 'p#add-1', amountMicro: 1, walletContext: 'real', at: AT }).thenFact(t, {
    status: 'compensated',
    transferId: 'p#add-1',
  });
  givenRecorded('wallet-u1', 'WalletCredited', { transferId: 'p#w-1' }).thenFact(t, { status: 'completed', transferId: 'p#w-1' });
  givenRecorded('pool-u1.a1.real', 'WalletCredited', { transferId: 'p#w-1' }).thenFact(t, null, "another aggregate's event of the name is no fact");
});

t.test("the pool leg's facts: a payout paid out or at the venue, an add completed or pending, the venue's answer, a rejection", async (t) => {
  const out = planOf('p#withdraw-1', pool, wallet);
  const stream = 'pool-u1.a1.real';
  givenRecorded(stream, 'WithdrawalRequested', { transfer: out, pending: false, at: AT }).thenFact(t, { status: 'paid-out', transfer: out });
  const atVenue = givenRecorded(stream, 'WithdrawalRequested', { transfer: out, pending: true, at: AT });
  atVenue.thenFact(t, { status: 'pending', transfer: out, leg: { poolId: 'u1.a1.real', direction: 'out', amountMicro: 5_000_000 } });
  atVenue.thenPlan(t, 'p#withdraw-1', out);
  givenRecorded(stream, 'AllocationAdded', { transferId: 'p#add-1' }).thenFact(t, { status: 'completed', transferId: 'p#add-1' });
  givenRecorded(stream, 'AllocationPending', { transferId: 'p#add-1', amountMicro: 7 }).thenFact(t, {
    status: 'pending',
    transferId: 'p#add-1',
    leg: { poolId: 'u1.a1.real', direction: 'in', amountMicro: 7 },
  });
  const settled = (direction: 'in' | 'out', outcome: 'confirmed' | 'failed') =>
    givenRecorded(stream, 'AllocationSettled', { transferId: 'x', direction, outcome, amountMicro: 0, at: AT });
  settled('in', 'confirmed').thenFact(t, { status: 'completed', transferId: 'x' }, 'an add confirmed is complete');
  settled('in', 'failed').thenFact(t, { status: 'rejected', transferId: 'x' }, 'an add failed is to be refunded');
  settled('out', 'confirmed').thenFact(t, { status: 'paid-out', transferId: 'x' }, 'a payout confirmed waits for the credit');
  settled('out', 'failed').thenFact(t, { status: 'failed', transferId: 'x' }, 'a payout failed moved nothing');
  givenRecorded(stream, 'TransferRejected', { transferId: 'p#add-1', reason: 'closed' }).thenFact(t, { status: 'rejected', transferId: 'p#add-1' });
});

t.test("the trade leg's facts: the pool's lock and release, the trade's request, rejection and settlement", async (t) => {
  const margin = planOf('tr-1', pool, trade);
  const lock = givenRecorded('pool-u1.a1.real', 'TradeOpened', { tradeId: 'tr-1', marginMicro: 5_000_000, at: AT, transfer: margin });
  lock.thenFact(t, { status: 'debited', transfer: margin });
  lock.thenPlan(t, 'tr-1', margin);
  const older = givenRecorded('pool-u1.a1.real', 'TradeOpened', { tradeId: 'tr-0', marginMicro: 5_000_000, at: AT });
  older.thenFact(t, { status: 'completed', transferId: 'tr-0' }, 'a trade opened before plans were recorded is over');
  older.thenPlan(t, 'tr-0', null);
  givenRecorded('pool-u1.a1.real', 'TradeRefused', { tradeId: 'tr-1' }).thenFact(t, { status: 'failed', transferId: 'tr-1' });
  givenRecorded('trade-tr-1', 'TradeRequested', { tradeId: 'tr-1' }).thenFact(t, { status: 'completed', transferId: 'tr-1' });
  givenRecorded('trade-tr-1', 'TradeRejected', { tradeId: 'tr-1' }).thenFact(t, { status: 'rejected', transferId: 'tr-1' });
  const settledData = {
    tradeId: 'tr-1',
    poolId: 'u1.a1.real',
    transferId: 'tr-1.return',
    marginMicro: 5_000_000,
    realizedPnlMicro: -1,
    returnedMicro: 4_999_999,
    at: AT,
  };
  const back = { transferId: 'tr-1.return', amountMicro: 4_999_999, from: { kind: 'trade', tradeId: 'tr-1', poolId: 'u1.a1.real' }, to: pool } as TransferPlan;
  const settled = givenRecorded('trade-tr-1', 'TradeSettled', settledData);
  settled.thenFact(t, { status: 'debited', transfer: back }, 'a trade that ended records the plan of its return');
  settled.thenPlan(t, 'tr-1.return', back);
  const closed = (data: object) => givenRecorded('pool-u1.a1.real', 'TradeClosed', { tradeId: 'tr-1', realizedPnlMicro: 0, at: AT, ...data });
  closed({ transferId: 'tr-1.return' }).thenFact(t, { status: 'completed', transferId: 'tr-1.return' }, 'the return credited');
  closed({ transferId: 'tr-1', released: true }).thenFact(t, { status: 'compensated', transferId: 'tr-1' }, 'the margin released');
  closed({}).thenFact(t, { status: 'completed', transferId: 'tr-1' }, 'a close before transfer ids were recorded names the trade');
});

t.test("the lots leg's facts: a sell's request carries the plan, its lots sold or its swap failed end it; a bought lot completes a buy", async (t) => {
  const sell = planOf('manual-2', lots, wallet);
  const requested = givenRecorded('wallet-u1', 'SellRequested', { transfer: sell, at: AT });
  requested.thenFact(t, { status: 'debited', transfer: sell });
  requested.thenPlan(t, 'manual-2', sell);
  givenRecorded('wallet-u1', 'LotsSold', { transferId: 'manual-2' }).thenFact(t, { status: 'completed', transferId: 'manual-2' });
  givenRecorded('wallet-u1', 'SellFailed', { transferId: 'manual-2' }).thenFact(t, { status: 'failed', transferId: 'manual-2' });
  givenRecorded('wallet-u1', 'LotOpened', { transferId: 'manual-1' }).thenFact(t, { status: 'completed', transferId: 'manual-1' });
});

t.test("the address leg's fact: the wallet's record of the chain transfer completes it", async (t) => {
  givenRecorded('wallet-u1', 'WalletWithdrawn', { transferId: 'manual-3' }).thenFact(t, { status: 'completed', transferId: 'manual-3' });
});

t.test("the fee account leg's fact: a claim carries the plan", async (t) => {
  const claim = planOf('fees-a1#claim-1', fees, wallet);
  const claimed = givenRecorded('fees-a1', 'FeesClaimed', { transfer: claim, parts: [{ poolId: 'u1.a1.real', amountMicro: 5_000_000 }], at: AT });
  claimed.thenFact(t, { status: 'debited', transfer: claim });
  claimed.thenPlan(t, 'fees-a1#claim-1', claim);
  givenRecorded('wallet-dev', 'FeesClaimed', { transfer: claim }).thenPlan(t, 'fees-a1#claim-1', null, 'only a fee account records a claim');
});

t.test('no two legs read the same event, and every event read is a known one', async (t) => {
  const seen = new Map<string, string>();
  for (const leg of Object.values(legs)) {
    for (const type of Object.keys(leg.facts)) {
      t.notOk(seen.has(type), `${type} read by ${leg.kind} only`);
      seen.set(type, leg.kind);
    }
  }
  t.equal(seen.size, 20, 'the twenty facts of a transfer');
});

// ---- one transfer-id module, the ids stored so far ----

t.test('one module derives every transfer id, each one as it was always written', async (t) => {
  t.equal(transferIds.add('u1.a1.real', 1), 'u1.a1.real#add-1');
  t.equal(transferIds.add('u1.a1.real', 'm'), 'u1.a1.real#add-m');
  t.equal(transferIds.withdraw('u1.a1.real', 'm'), 'u1.a1.real#withdraw-m');
  t.equal(transferIds.stop('u1.a1.real', 'm'), 'u1.a1.real#stop-m');
  t.equal(nextTransferId('u1.a1.real', initialPoolState()), transferIds.add('u1.a1.real', 1), "a follow's first transfer");
  t.equal(nextTransferId('u1.a1.real', initialPoolState(), 'withdraw'), 'u1.a1.real#withdraw-1');
  t.equal(transferIds.manual('m-1'), 'manual-m-1');
  t.equal(manualTransferId('m-1'), transferIds.manual('m-1'));
  t.equal(transferIds.exit('lot-1', 2), 'lot-1.exit.2');
  t.equal(exitTransferId('lot-1', 2), transferIds.exit('lot-1', 2));
  t.equal(transferIds.tradeMargin('tr-1'), 'tr-1', "a trade's margin moves under the trade's id");
  t.equal(transferIds.tradeReturn('tr-1'), 'tr-1.return');
  t.equal(tradeReturnId('tr-1'), transferIds.tradeReturn('tr-1'));
  t.equal(transferIds.claim('a1', 'm'), `${feeAccountStream('a1')}#claim-m`, "a claim is named by its fee account's stream");
});

// ---- one status vocabulary ----

t.test("the projector's progress is the process's statuses and paid-out, mapped once", async (t) => {
  t.same(Object.keys(transferProgress).sort(), ['compensated', 'completed', 'debited', 'failed', 'paid-out', 'pending', 'rejected']);
  t.equal(statusOfProgress('paid-out'), 'debited', 'paid out by the pool, the credit still to come');
  for (const p of ['debited', 'pending', 'rejected', 'completed', 'compensated', 'failed'] as const) t.equal(statusOfProgress(p), p);
});
