// An agent trade, whose money is its pool's margin. The pool pays it the margin (its pool's decision
// on the trade, LockMargin, taken for every trade of a signal together, is the debit, with the
// plan; OpenTradeEntry requests the trade, or records why it cannot; ReleaseMargin gives a margin
// back to the pool). A trade that ended pays its pool back the margin and its PnL (DebitTrade
// reports its settlement; TradeSettled carries what the plan needs; ReturnMargin closes it in the
// pool). Those pool steps are this leg's `counterpart`: they exist only for a trade. The margin
// moves under the trade's id (ids.ts).
import { poolEventSchema } from '../../pool/events.ts';
import { tradeEventSchema } from '../../trade/events.ts';
import { transferIds } from '../ids.ts';
import { endpointIdentity, tradeReturnPlan } from '../plan.ts';
import { carry, type Leg } from './leg.ts';

const planOfMargin = (event: { type: string; data: unknown }) => {
  const parsed = poolEventSchema.parse(event);
  return parsed.type === 'TradeOpened' ? (parsed.data.transfer ?? null) : null;
};

const planOfReturn = (event: { type: string; data: unknown }) => {
  const parsed = tradeEventSchema.parse(event);
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
        const e = poolEventSchema.parse({ type: 'TradeClosed', data });
        if (e.type !== 'TradeClosed') throw new Error('unreachable');
        const { transferId, released, tradeId } = e.data;
        return { status: released ? 'compensated' : 'completed', transferId: transferId ?? transferIds.tradeMargin(tradeId) };
      },
    },
  },
};
