// The wallet decider's guards, shared by its transfers and its manual trades.
import { refuse } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { WalletContext, WalletEvent } from './events.ts';
import { balanceOf, type WalletState } from './state.ts';

/** TRADE_IN_PROGRESS while another manual buy or sell of this wallet runs. */
export function ensureUnlocked(state: WalletState): void {
  if (state.lock !== null) throw refuse('TRADE_IN_PROGRESS', 'another buy or sell of this wallet is running: retry once it ends', { transferId: state.lock });
}

/**
 * WALLET_FROZEN when an administrator froze the wallet: only money leaving it is refused;
 * deposits, credits and refunds coming back are taken, so money can always come home.
 */
export function ensureNotFrozen(state: Pick<WalletState, 'frozen'>): void {
  if (state.frozen) throw refuse('WALLET_FROZEN', 'an administrator froze this wallet: nothing can be paid out of it');
}

/** The wallet's first event, when this decision is its first use. */
export function opening(state: WalletState, virtualStartMicro: MicroUsd, now: Date): WalletEvent[] {
  return state.opened ? [] : [{ type: 'WalletOpened', data: { virtualStartMicro, openedAt: now.toISOString() } }];
}

export function ensurePositive(amountMicro: MicroUsd, what: string): void {
  if (!Number.isSafeInteger(amountMicro) || amountMicro <= 0) throw refuse('VALIDATION_FAILED', `${what} must be positive`);
}

/** Balances stay exact integers: a credit that would take one past 2^53 − 1 micro-USD is refused. */
export function ensureRoom(state: WalletState, context: WalletContext, amountMicro: MicroUsd, virtualStartMicro: MicroUsd): void {
  if (balanceOf(state, context, virtualStartMicro) + amountMicro > Number.MAX_SAFE_INTEGER) {
    throw refuse('VALIDATION_FAILED', `the ${context} balance would exceed ${microToUsd(Number.MAX_SAFE_INTEGER)} USD`);
  }
}

/** Refuses (INSUFFICIENT_FUNDS, naming the available balance) when the context cannot pay `amountMicro`. */
export function ensureFunds(state: Pick<WalletState, 'opened' | 'balances'>, context: WalletContext, amountMicro: MicroUsd, virtualStartMicro: MicroUsd): void {
  const available = balanceOf(state, context, virtualStartMicro);
  if (amountMicro <= available) return;
  const details = { availableUsd: microToUsd(available), requestedUsd: microToUsd(amountMicro) };
  if (context === 'real' && available === 0) {
    throw refuse('INSUFFICIENT_FUNDS', 'the real wallet has no funds: deposit to the real wallet before following in the real context', details);
  }
  throw refuse(
    'INSUFFICIENT_FUNDS',
    `insufficient ${context} wallet funds: ${microToUsd(available)} USD available, ${microToUsd(amountMicro)} USD requested`,
    details,
  );
}
