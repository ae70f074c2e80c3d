import t from 'tap';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import type { WalletContext, WalletEvent } from '../../../domain/wallet/events.ts';
import type { WalletPaidPlan as TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const START = 10_000_000_000; // 10000 USD

const { given } = scenario(walletDecider);
const opened: WalletEvent = { type: 'WalletOpened', data: { virtualStartMicro: START, openedAt: now.toISOString() } };
const deposit = (depositId: string, amountMicro: number, virtualStartMicro = START): WalletCommand => ({
  type: 'DepositWallet',
  data: { depositId, amountMicro, virtualStartMicro },
  metadata: at(now, 'admin-id'),
});
const deposited = (depositId: string, amountMicro: number): WalletEvent => ({
  type: 'WalletDeposited',
  data: { depositId, walletContext: 'real', amountMicro, at: now.toISOString() },
});
const credit = (transferId: string, amountMicro: number, walletContext: WalletContext = 'virtual', from = 'pool:u.a.virtual'): WalletCommand => ({
  type: 'CreditWallet',
  data: { transferId, walletContext, amountMicro, from, virtualStartMicro: START },
  metadata: at(now),
});
const credited = (transferId: string, amountMicro: number, walletContext: WalletContext = 'virtual', from = 'pool:u.a.virtual'): WalletEvent => ({
  type: 'WalletCredited',
  data: { transferId, walletContext, amountMicro, from },
});
const plan = (transferId: string, amountMicro: number, walletContext: WalletContext): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'wallet', userId: 'u', walletContext },
  to: { kind: 'pool', userId: 'u', agentId: 'a', walletContext },
});

t.test('a deposit on a wallet never used opens it first, then credits the real context', async (t) => {
  const first = given([]).when(deposit('dep-1', 250_500_000));
  first.then(t, [opened, deposited('dep-1', 250_500_000)]);
  t.same(first.after().balances, { virtual: START, real: 250_500_000 }, 'the virtual start is untouched');
});

t.test('deposits add up in the real context of an opened wallet', async (t) => {
  const second = given([opened, deposited('dep-1', 100_000_000)]).when(deposit('dep-2', 1));
  second.then(t, [deposited('dep-2', 1)]);
  t.equal(second.after().balances.real, 100_000_001);
});

t.test('a repeated deposit id credits nothing again', async (t) => {
  given([opened, deposited('dep-1', 100_000_000)])
    .when(deposit('dep-1', 100_000_000))
    .then(t, []);
});

t.test('the same deposit id with another amount is refused: it is another deposit under a taken id', async (t) => {
  given([opened, deposited('dep-1', 100_000_000)])
    .when(deposit('dep-1', 100_000_001))
    .thenRefused(t, 'ALREADY_EXISTS', /another amount \(100 USD\)/);
});

t.test('a deposit must be a positive whole number of micro-USD', async (t) => {
  for (const amount of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
    given([opened])
      .when(deposit('dep-1', amount))
      .thenRefused(t, 'VALIDATION_FAILED', /must be positive/);
  }
});

t.test('a deposit that would take the balance past the exact integer range is refused', async (t) => {
  const big = Number.MAX_SAFE_INTEGER - 10;
  given([opened, deposited('dep-1', big)])
    .when(deposit('dep-2', 10))
    .then(t, [deposited('dep-2', 10)]);
  given([opened, deposited('dep-1', big)])
    .when(deposit('dep-2', 11))
    .thenRefused(t, 'VALIDATION_FAILED', /real balance would exceed/);
});

t.test('deposited money can be spent by a real-context debit', async (t) => {
  const debit: WalletCommand = { type: 'DebitWallet', data: { transfer: plan('tr-1', 100_000_000, 'real'), virtualStartMicro: START }, metadata: at(now) };
  given([opened, deposited('dep-1', 100_000_000)])
    .when(debit)
    .then(t, [{ type: 'WalletDebited', data: { transfer: plan('tr-1', 100_000_000, 'real') } }]);
});

t.test('a credit adds a transfer coming back to its wallet context', async (t) => {
  const back = given([opened]).when(credit('tr-back-1', 300_000_000));
  back.then(t, [credited('tr-back-1', 300_000_000)]);
  t.same(back.after().balances, { virtual: START + 300_000_000, real: 0 });
  t.same(back.after().credits.get('tr-back-1'), { walletContext: 'virtual', amountMicro: 300_000_000, from: 'pool:u.a.virtual' });
  given([opened])
    .when(credit('tr-back-2', 5, 'real', 'pool:u.a.real'))
    .then(t, [credited('tr-back-2', 5, 'real', 'pool:u.a.real')]);
});

t.test('a credit on a wallet never used opens it first, so the opening cannot erase it later', async (t) => {
  given([])
    .when(credit('tr-back-1', 300_000_000))
    .then(t, [opened, credited('tr-back-1', 300_000_000)]);
});

t.test('a repeated credit adds nothing; the same id with another amount, context or source is refused', async (t) => {
  const history = [opened, credited('tr-back-1', 300_000_000)];
  given(history).when(credit('tr-back-1', 300_000_000)).then(t, []);
  given(history)
    .when(credit('tr-back-1', 300_000_001))
    .thenRefused(t, 'ALREADY_EXISTS', /another amount, context or source/);
  given(history)
    .when(credit('tr-back-1', 300_000_000, 'real'))
    .thenRefused(t, 'ALREADY_EXISTS');
  given(history)
    .when(credit('tr-back-1', 300_000_000, 'virtual', 'pool:u.b.virtual'))
    .thenRefused(t, 'ALREADY_EXISTS');
});

t.test('a credit must be a positive whole number of micro-USD', async (t) => {
  given([opened])
    .when(credit('tr-back-1', 0))
    .thenRefused(t, 'VALIDATION_FAILED', /must be positive/);
});

t.test('debits, credits and deposits are tracked by id apart: the same id in each counts once in each', async (t) => {
  const debit: WalletCommand = { type: 'DebitWallet', data: { transfer: plan('x', 1_000_000, 'virtual'), virtualStartMicro: START }, metadata: at(now) };
  const history = [opened, deposited('x', 2_000_000), credited('x', 3_000_000)];
  const after = given(history).when(debit).after();
  t.same(after.balances, { virtual: START + 3_000_000 - 1_000_000, real: 2_000_000 });
  t.same([after.debits.size, after.credits.size, after.deposits.size], [1, 1, 1]);
  t.same(
    [...after.debits.entries()],
    [['x', { walletContext: 'virtual', amountMicro: 1_000_000, to: 'pool:u.a.virtual', refunded: false }]],
    'the debits hold the debit only',
  );
});
