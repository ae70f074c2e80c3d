// What commands and workers read of a pool's state: the open trades a follow-up can name, the id
// of its next transfer, what it recorded for a transfer it pays, and the followed pool a command needs.
import { refuse } from '../shared/errors.ts';
import type { TransferOutcome } from '../transfer/steps.ts';
import type { Side } from '../trade/events.ts';
import type { FollowedPool, PoolState } from './state.ts';
import { transferIds } from '../transfer/ids.ts';

/** An open trade as a follow-up looks for it (domain/signal/resolve.ts resolveTarget). */
export interface PoolTradeRef {
  tradeId: string;
  token: string;
  side: Side;
  /** absent when no signal opened it */
  signalId?: string;
}

/** The pool's open trades that a follow-up can find: those opened with a token and a side. */
export function openTradeRefs(pool: PoolState): PoolTradeRef[] {
  if (!pool.followed) return [];
  const refs: PoolTradeRef[] = [];
  for (const tradeId in pool.openTrades) {
    const { token, side, signalId } = pool.openTrades[tradeId]!;
    // Trades recorded before signals opened them (or states stored before then) carry neither.
    if (token == null || side == null) continue;
    refs.push(signalId == null ? { tradeId, token, side } : { tradeId, token, side, signalId });
  }
  return refs;
}

/**
 * The id of the pool's next transfer of `kind`: one more than the transfers the pool has decided.
 * Derived from the pool's own history, not drawn at random, so a request retried after a crash
 * between the debit and the credit finds the debit already made under this id and finishes it
 * instead of paying again; once the pool decided it, the next transfer gets a new id.
 */
export const nextTransferId = (id: string, state: PoolState, kind: 'add' | 'withdraw' = 'add'): string => transferIds[kind](id, state.transfers.size + 1);

/**
 * What the pool recorded for a transfer it pays, as the transfer process reads it: paid (how much),
 * still at the venue, or failed there; a close with nothing to pay out recorded no withdrawal.
 */
export function payoutOutcome(state: PoolState, transferId: string): TransferOutcome {
  switch (state.transfers.get(transferId)) {
    case 'paid':
      return { type: 'Debited', amountMicro: state.payouts.get(transferId) ?? 0 };
    case 'pending':
      return { type: 'DebitPending' };
    case 'failed':
      return { type: 'DebitRefused', error: refuse('VENUE_FAILED', 'the venue did not pay the withdrawal out; the funds stay in the pool') };
    default:
      return { type: 'Debited', amountMicro: 0 };
  }
}

/** The pool a command acts on: it must be followed. */
export function followed(state: PoolState): FollowedPool {
  if (!state.followed) throw refuse('SUBSCRIPTION_NOT_FOUND', 'you do not follow this agent in this wallet context');
  return state;
}
