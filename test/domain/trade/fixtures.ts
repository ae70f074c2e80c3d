// One BTC trade's figures, chosen to divide evenly: 1000 USD at 50,000 USD buys 0.02 BTC (2,000,000
// base units at 8 decimals); a 10 bps fee on 1000 USD is 1 USD; leverage 5 locks 200 USD.
import { tradeDecider, type TradeCommand, type TradeEvent } from '../../../domain/trade/decide.ts';
import type { RequestTrade } from '../../../domain/trade/commands.ts';
import { at } from '../../support/given-when-then.ts';
import { priceFromMicro, priceText } from '../../../domain/shared/price.ts';

export const now = new Date('2025-03-01T12:00:00.000Z');
export const later = new Date('2025-03-01T13:00:00.000Z');
export const expiresAt = '2025-03-02T12:00:00.000Z';
export const afterExpiry = new Date('2025-03-02T12:00:00.000Z');
export const at1 = now.toISOString();
export const at2 = later.toISOString();

/** micro-USD of a USD figure (prices per whole token too, then through pt / pb) */
export const usd = (n: number): number => Math.round(n * 1_000_000);
/** A price given in micro-USD, as an event writes it (decimal USD text). */
export const pt = (micro: number): string => priceText(priceFromMicro(micro));
/** A price given in micro-USD, as a command carries it (attodollars). */
export const pb = (micro: number): bigint => priceFromMicro(micro);

export const requestData = (over: Partial<RequestTrade['data']> = {}): RequestTrade['data'] => ({
  tradeId: 't1',
  poolId: 'u1.a1.virtual',
  token: 'BTC',
  decimals: 8,
  side: 'long',
  leverage: 5,
  notionalMicro: usd(1000),
  entry: { kind: 'market' },
  stopLoss: pb(usd(48_000)),
  takeProfits: [{ price: pb(usd(52_000)) }, { price: pb(usd(54_000)) }],
  slippageBps: 50,
  feeBps: 10,
  expiresAt,
  markPrice: pb(usd(50_000)),
  ...over,
});

export const request = (over: Partial<RequestTrade['data']> = {}, when = now): TradeCommand => ({
  type: 'RequestTrade',
  data: requestData(over),
  metadata: at(when),
});
export const mark = (priceUsd: number, when = later): TradeCommand => ({ type: 'MarkPrice', data: { price: pb(usd(priceUsd)) }, metadata: at(when) });
export const moveStop = (data: { to: 'breakeven' } | { price: bigint }, when = later): TradeCommand => ({ type: 'MoveStop', data, metadata: at(when) });
export const setTargets = (takeProfits: { price: bigint; closePercent?: number }[], when = later): TradeCommand => ({
  type: 'SetTargets',
  data: { takeProfits },
  metadata: at(when),
});
export const cancel = (when = later): TradeCommand => ({ type: 'CancelEntry', data: {}, metadata: at(when) });
export const close = (closePercent: number, priceUsd: number, reason: 'SIGNAL' | 'USER' | 'AGENT_DELETED' = 'USER', when = later): TradeCommand => ({
  type: 'ClosePosition',
  data: { closePercent, price: pb(usd(priceUsd)), reason },
  metadata: at(when),
});

/** The events a sequence of commands decides, each on the state the ones before left. */
export function history(...commands: TradeCommand[]): TradeEvent[] {
  let state = tradeDecider.initialState();
  const events: TradeEvent[] = [];
  for (const command of commands) {
    const decided = tradeDecider.decide(command, state);
    state = decided.reduce(tradeDecider.evolve, state);
    events.push(...decided);
  }
  return events;
}

/** The market long of requestData, filled at 50,000. */
export const filledAt50k: TradeEvent = {
  type: 'TradeFilled',
  data: { tradeId: 't1', price: pt(usd(50_000)), sizeUnits: '2000000', marginMicro: usd(200), feeMicro: usd(1), at: at1 },
};

/** The settlement with the pool a trade records when it ends: its 200 USD margin and the PnL it realized come back. */
export const settled = (realizedPnlMicro: number, when: string, marginMicro = usd(200)): TradeEvent => ({
  type: 'TradeSettled',
  data: {
    tradeId: 't1',
    poolId: 'u1.a1.virtual',
    transferId: 't1.return',
    marginMicro,
    realizedPnlMicro,
    returnedMicro: marginMicro + realizedPnlMicro,
    at: when,
  },
});
