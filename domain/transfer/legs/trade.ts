// An agent trade, whose money is its pool's margin. The pool pays it the margin (its pool's decision
// on the trade, LockMargin, taken for every trade of a signal together, is the debit, with the
// plan; OpenTradeEntry requests the trade, or records why it cannot; ReleaseMargin gives a margin
// back to the pool). A trade that ended pays its pool back the margin and its PnL (DebitTrade
// reports its settlement; TradeSettled carries what the plan needs; ReturnMargin closes it in the
// pool). Those pool steps are this leg's `counterpart`: they exist only for a trade. The margin
// moves under the trade's id (ids.ts).
import { poolDecider } from '../../pool/decide.ts';
import { poolEventSchema } from '../../pool/events.ts';
import { refuse } from '../../shared/errors.ts';
import { parseEvent } from '../../shared/parse-once.ts';
import { tradeDecider } from '../../trade/decide.ts';
import { tradeEventSchema } from '../../trade/events.ts';
import { marginFor } from '../../trade/maths.ts';
import { transferIds } from '../ids.ts';
import { endpointIdentity, tradeReturnPlan, type TransferPlan } from '../plan.ts';
import { aggregateStep, carry, endpointAt, type Leg } from './leg.ts';
import { poolOn } from './pool.ts';

const planOfMargin = (event: { type: string; data: unknown }) => {
  const parsed = parseEvent(poolEventSchema, event.type, event.data);
  return parsed.type === 'TradeOpened' ? (parsed.data.transfer ?? null) : null;
};

const planOfReturn = (event: { type: string; data: unknown }) => {
  const parsed = parseEvent(tradeEventSchema, event.type, event.data);
  return parsed.type === 'TradeSettled' ? tradeReturnPlan(parsed.data) : null;
};

const byTrade = (status: 'failed' | 'completed' | 'rejected') => (data: unknown) => ({
  status,
  transferId: transferIds.tradeMargin((data as { tradeId: string }).tradeId),
});

export const tradeLeg: Leg<'trade'> = {
  kind: 'trade',
  debit: (plan) => ({ type: 'DebitTrade', data: carry(plan) }),
  credit: (plan) => ({ type: 'OpenTradeEntry', data: carry(plan) }),
  counterpart: {
    debit: (plan) => ({ type: 'LockMargin', data: carry(plan) }),
    refund: (plan) => ({ type: 'ReleaseMargin', data: carry(plan) }),
    credit: (plan) => ({ type: 'ReturnMargin', data: carry(plan) }),
  },
  ...endpointIdentity.trade,
  steps: {
    // The pool's decision on the trade, taken for every trade of the signal together before their
    // transfers run (both or neither: the group transfer, domain/transfer/group.ts): open (or closed since) is the
    // margin it locked, refused is recorded for good.
    LockMargin: aggregateStep('LockMargin', {
      aggregate: poolDecider,
      id: ({ transfer }) => poolOn(transfer, 'from'),
      outcomeFor: (state, { transfer }) => {
        const { tradeId } = endpointAt(transfer, 'to', 'trade');
        switch (state.trades.get(tradeId)) {
          case 'open':
          case 'closed':
            return { type: 'Debited', amountMicro: transfer.amountMicro };
          case 'refused':
            return { type: 'DebitRefused', error: refuse('TRADE_SKIPPED', `the pool refused trade ${tradeId}`) };
          default:
            throw refuse('TRANSFER_NOT_FOUND', `the pool has not decided trade ${tradeId}`);
        }
      },
    }),
    // The pool takes back the margin of a trade that could not open.
    ReleaseMargin: aggregateStep('ReleaseMargin', {
      aggregate: poolDecider,
      id: ({ transfer }) => poolOn(transfer, 'from'),
      command: ({ transfer }) => ({
        type: 'CloseTrade' as const,
        data: { tradeId: endpointAt(transfer, 'to', 'trade').tradeId, realizedPnlMicro: 0, released: true as const, transferId: transfer.transferId },
      }),
      outcomeFor: () => ({ type: 'Refunded' }),
    }),
    // The pool releases the trade's margin and realizes its PnL: what came back minus the margin it
    // locked; a trade no longer open there was closed by an earlier run of this step.
    ReturnMargin: aggregateStep('ReturnMargin', {
      aggregate: poolDecider,
      id: ({ transfer }) => poolOn(transfer, 'to'),
      commandOn: (state, { transfer }) => {
        const { tradeId } = endpointAt(transfer, 'from', 'trade');
        const open = state.followed ? state.openTrades[tradeId] : undefined;
        if (!open) return null;
        return { type: 'CloseTrade' as const, data: { tradeId, realizedPnlMicro: transfer.amountMicro - open.marginMicro, transferId: transfer.transferId } };
      },
      outcomeFor: () => ({ type: 'Credited' }),
    }),
    // What the trade recorded it pays back when it ended: its margin and the PnL it realized.
    DebitTrade: aggregateStep('DebitTrade', {
      aggregate: tradeDecider,
      id: ({ transfer }) => endpointAt(transfer, 'from', 'trade').tradeId,
      outcomeFor: (state, { transfer }) => {
        if (state.status !== 'closed' && state.status !== 'cancelled' && state.status !== 'expired') {
          throw refuse('TRANSFER_NOT_FOUND', `trade ${endpointAt(transfer, 'from', 'trade').tradeId} has not ended: it pays nothing back yet`);
        }
        return { type: 'Debited', amountMicro: marginFor(state.notionalMicro, state.leverage) + state.realizedPnlMicro };
      },
    }),
  },
  facts: {
    // The pool's lock (the debit, with the plan); a trade the pool opened before plans were recorded is over.
    TradeOpened: {
      stream: 'pool-',
      plan: planOfMargin,
      read: (data) => {
        const transfer = planOfMargin({ type: 'TradeOpened', data });
        return transfer ? { status: 'debited', transfer } : { status: 'completed', transferId: transferIds.tradeMargin((data as { tradeId: string }).tradeId) };
      },
    },
    TradeRefused: { stream: 'pool-', read: byTrade('failed') },
    TradeRequested: { stream: 'trade-', read: byTrade('completed') },
    TradeRejected: { stream: 'trade-', read: byTrade('rejected') },
    TradeSettled: {
      stream: 'trade-',
      plan: planOfReturn,
      read: (data) => ({ status: 'debited', transfer: planOfReturn({ type: 'TradeSettled', data })! }),
    },
    // The pool's close: the credit of a return, or the release of a margin whose trade never opened.
    TradeClosed: {
      stream: 'pool-',
      read: (data) => {
        const e = parseEvent(poolEventSchema, 'TradeClosed', data);
        if (e.type !== 'TradeClosed') throw new Error('unreachable');
        const { transferId, released, tradeId } = e.data;
        return { status: released ? 'compensated' : 'completed', transferId: transferId ?? transferIds.tradeMargin(tradeId) };
      },
    },
  },
};

/**
 * The group a trade's margin transfer belongs to (domain/transfer/group.ts): the plans of every
 * trade its pool opened for the same signal, in the order recorded (one OpenTrade decided them
 * together), from the pool's events; a trade opened without a signal is a group of its own. Null
 * when `transferId` is no margin transfer recorded there.
 */
export function marginGroupIn(events: ReadonlyArray<{ type: string; data: unknown }>, transferId: string): TransferPlan[] | null {
  const opened = events.flatMap((e) => {
    if (e.type !== 'TradeOpened') return [];
    const parsed = parseEvent(poolEventSchema, e.type, e.data);
    return parsed.type === 'TradeOpened' && parsed.data.transfer ? [{ signalId: parsed.data.signalId ?? null, plan: parsed.data.transfer }] : [];
  });
  const own = opened.find((o) => o.plan.transferId === transferId);
  if (!own) return null;
  if (own.signalId === null) return [own.plan];
  return opened.filter((o) => o.signalId === own.signalId).map((o) => o.plan);
}
