import t from 'tap';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import type { WalletContext, WalletEvent } from '../../../domain/wallet/events.ts';
import type { WalletPaidPlan as TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';
import { settings, terms } from '../pool/fixtures.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const START = 10_000_000_000; // 10000 USD

const { given } = scenario(walletDecider);
const plan = (transferId: string, amountMicro: number, walletContext: WalletContext = 'virtual'): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'wallet', userId: 'u', walletContext },
  to: { kind: 'pool', userId: 'u', agentId: 'a', walletContext },
});
const debit = (transfer: TransferPlan, virtualStartMicro = START): WalletCommand => ({
  type: 'DebitWallet',
  data: { transfer, virtualStartMicro },
  metadata: at(now),
});
const refund = (transferId: string): WalletCommand => ({ type: 'RefundWallet', data: { transferId }, metadata: at(now) });
const opened: WalletEvent = { type: 'WalletOpened', data: { virtualStartMicro: START, openedAt: now.toISOString() } };
const debited = (transferId: string, amountMicro: number): WalletEvent => ({ type: 'WalletDebited', data: { transfer: plan(transferId, amountMicro) } });

t.test('first use opens the virtual wallet at its start and debits the transfer', async (t) => {
  const first = given([]).when(debit(plan('tr-1', 300_000_000)));
  first.then(t, [opened, debited('tr-1', 300_000_000)]);
  t.same(first.after().balances, { virtual: START - 300_000_000, real: 0 });
});

t.test('an opened wallet ignores a different start in later commands', async (t) => {
  given([opened, debited('tr-1', 300_000_000)])
    .when(debit(plan('tr-2', 9_700_000_000), 50_000_000_000))
    .then(t, [debited('tr-2', 9_700_000_000)]);
});

t.test('spending one micro-USD more than the balance is refused, naming what is available', async (t) => {
  const refused = given([opened, debited('tr-1', 300_000_000)])
    .when(debit(plan('tr-2', 9_700_000_001)))
    .thenRefused(t, 'INSUFFICIENT_FUNDS', /9700 USD available/);
  t.same(refused?.details, { availableUsd: 9700, requestedUsd: 9700.000001 });
});

t.test('a transfer id already debited debits nothing again, whatever the amount asked', async (t) => {
  given([opened, debited('tr-1', 300_000_000)])
    .when(debit(plan('tr-1', 999)))
    .then(t, []);
});

t.test('the real wallet starts empty: debiting it names the missing funds', async (t) => {
  const refused = given([])
    .when(debit(plan('tr-1', 1, 'real')))
    .thenRefused(t, 'INSUFFICIENT_FUNDS', /real wallet has no funds/);
  t.same(refused?.details, { availableUsd: 0, requestedUsd: 0.000001 });
  // An opened wallet's real context is empty too: same answer, the virtual start does not leak into it.
  given([opened])
    .when(debit(plan('tr-1', 1, 'real')))
    .thenRefused(t, 'INSUFFICIENT_FUNDS', /real wallet has no funds/);
});

t.test('the debit records the whole plan, its follow included, so the recovery can finish the transfer from it alone', async (t) => {
  const base = plan('tr-1', 300_000_000);
  const transfer: TransferPlan = { ...base, to: { kind: 'pool', userId: 'u1', agentId: 'a1', walletContext: 'virtual', follow: { settings, terms } } };
  given([opened])
    .when(debit(transfer))
    .then(t, [{ type: 'WalletDebited', data: { transfer } }]);
});

t.test('a non-positive amount is refused', async (t) => {
  given([])
    .when(debit(plan('tr-1', 0)))
    .thenRefused(t, 'VALIDATION_FAILED', /must be positive/);
});

t.test('a refund gives a debited transfer back once', async (t) => {
  const refunding = given([opened, debited('tr-1', 300_000_000)]).when(refund('tr-1'));
  refunding.then(t, [{ type: 'WalletRefunded', data: { transferId: 'tr-1', walletContext: 'virtual', amountMicro: 300_000_000 } }]);
  t.equal(refunding.after().balances.virtual, START, 'the balance is whole again');
  t.same(refunding.after().debits.get('tr-1'), { walletContext: 'virtual', amountMicro: 300_000_000, to: 'pool:u.a.virtual', refunded: true });
  given([opened, debited('tr-1', 300_000_000), ...refunding.events()])
    .when(refund('tr-1'))
    .then(t, [], 'a second refund gives nothing');
  given([opened, debited('tr-1', 300_000_000), ...refunding.events()])
    .when(debit(plan('tr-1', 300_000_000)))
    .then(t, [], 'nor does a retried debit take it again');
});

t.test('a refund of a transfer this wallet never paid is refused', async (t) => {
  given([opened]).when(refund('tr-9')).thenRefused(t, 'TRANSFER_NOT_FOUND');
});

t.test('a transfer id already debited for another pool is refused: it would credit a pool the money never left for', async (t) => {
  const other: TransferPlan = { ...plan('tr-1', 300_000_000), to: { kind: 'pool', userId: 'u', agentId: 'another-agent', walletContext: 'virtual' } };
  given([opened, debited('tr-1', 300_000_000)])
    .when(debit(other))
    .thenRefused(t, 'ALREADY_EXISTS', /another destination/);
});
