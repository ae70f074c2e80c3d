import t from 'tap';
import { walletDecider, type WalletCommand } from '../../../domain/wallet/decide.ts';
import type { WalletEvent } from '../../../domain/wallet/events.ts';
import type { WalletPaidPlan as TransferPlan } from '../../../domain/transfer/plan.ts';
import { at, scenario } from '../../support/given-when-then.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const later = new Date('2025-01-03T00:00:00.000Z');
const START = 10_000_000_000; // 10000 USD

const { given } = scenario(walletDecider);
const opened: WalletEvent = { type: 'WalletOpened', data: { virtualStartMicro: START, openedAt: now.toISOString() } };
const freeze = (reason?: string, when = now): WalletCommand => ({
  type: 'FreezeWallet',
  data: { ...(reason === undefined ? {} : { reason }), virtualStartMicro: START },
  metadata: at(when, 'admin-id'),
});
const unfreeze = (when = now): WalletCommand => ({ type: 'UnfreezeWallet', data: {}, metadata: at(when, 'admin-id') });
const frozen = (reason?: string): WalletEvent => ({ type: 'WalletFrozen', data: { ...(reason === undefined ? {} : { reason }), at: now.toISOString() } });
const unfrozen: WalletEvent = { type: 'WalletUnfrozen', data: { at: now.toISOString() } };
const plan = (transferId: string, amountMicro: number): TransferPlan => ({
  transferId,
  amountMicro,
  from: { kind: 'wallet', userId: 'u', walletContext: 'virtual' },
  to: { kind: 'pool', userId: 'u', agentId: 'a', walletContext: 'virtual' },
});
const debit = (transferId: string, amountMicro: number): WalletCommand => ({
  type: 'DebitWallet',
  data: { transfer: plan(transferId, amountMicro), virtualStartMicro: START },
  metadata: at(now),
});
const debited = (transferId: string, amountMicro: number): WalletEvent => ({ type: 'WalletDebited', data: { transfer: plan(transferId, amountMicro) } });

t.test('freezing an opened wallet records the freeze with its reason', async (t) => {
  const freezing = given([opened]).when(freeze('chargeback under review'));
  freezing.then(t, [frozen('chargeback under review')]);
  t.equal(freezing.after().frozen, true);
  t.same(freezing.after().freeze, { reason: 'chargeback under review', at: now.toISOString() });
});

t.test('freezing a wallet never used opens it with the freeze, so the read model has its row', async (t) => {
  const freezing = given([]).when(freeze());
  freezing.then(t, [opened, frozen()]);
  t.same(freezing.after().balances, { virtual: START, real: 0 });
});

t.test('freezing a frozen wallet records nothing, whatever the new reason', async (t) => {
  given([opened, frozen('first')])
    .when(freeze('second', later))
    .then(t, []);
});

t.test('unfreezing records the unfreeze once; a wallet not frozen records nothing', async (t) => {
  const unfreezing = given([opened, frozen()]).when(unfreeze());
  unfreezing.then(t, [unfrozen]);
  t.equal(unfreezing.after().frozen, false);
  t.equal(unfreezing.after().freeze, null);
  given([opened, frozen(), unfrozen]).when(unfreeze(later)).then(t, [], 'a repeat');
  given([]).when(unfreeze()).then(t, [], 'a wallet never used opens on no unfreeze');
});

t.test('a frozen wallet refuses a debit with WALLET_FROZEN; unfrozen, it pays again', async (t) => {
  given([opened, frozen()]).when(debit('tr-1', 1)).thenRefused(t, 'WALLET_FROZEN');
  given([opened, frozen(), unfrozen])
    .when(debit('tr-1', 1))
    .then(t, [debited('tr-1', 1)]);
});

t.test('a retried debit of a transfer paid before the freeze answers as before, moving nothing', async (t) => {
  // The transfer was paid already: its recovery must be able to finish it.
  given([opened, debited('tr-1', 5), frozen()])
    .when(debit('tr-1', 5))
    .then(t, []);
});

t.test('money coming home is taken while frozen: deposits, credits and refunds', async (t) => {
  const base = [opened, debited('tr-1', 300_000_000), frozen()];
  given(base)
    .when({ type: 'DepositWallet', data: { depositId: 'dep-1', amountMicro: 5_000_000, virtualStartMicro: START }, metadata: at(now, 'admin-id') })
    .then(t, [{ type: 'WalletDeposited', data: { depositId: 'dep-1', walletContext: 'real', amountMicro: 5_000_000, at: now.toISOString() } }]);
  given(base)
    .when({
      type: 'CreditWallet',
      data: { transferId: 'tr-9', walletContext: 'virtual', amountMicro: 7, from: 'pool:u.a.virtual', virtualStartMicro: START },
      metadata: at(now),
    })
    .then(t, [{ type: 'WalletCredited', data: { transferId: 'tr-9', walletContext: 'virtual', amountMicro: 7, from: 'pool:u.a.virtual' } }]);
  given(base)
    .when({ type: 'RefundWallet', data: { transferId: 'tr-1' }, metadata: at(now) })
    .then(t, [{ type: 'WalletRefunded', data: { transferId: 'tr-1', walletContext: 'virtual', amountMicro: 300_000_000 } }]);
});
