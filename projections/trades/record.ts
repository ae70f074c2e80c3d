// The trade record `GET /api/v1/trades` answers, built from the domain's fold of the trade stream
// (domain/trade/state.ts) and the times its events carry. Money and prices are USD numbers (money
// through microToUsd, prices through priceToNumber: the price's own decimal text, see
// docs/decisions.md "Prices finer than a micro-USD"), sizes the token's base units as decimal text.
import { z } from 'zod';
import type { PriceEntry } from '../../domain/trade/commands.ts';
import { closeReasonSchema, sideSchema, stopKindSchema, type CloseReason } from '../../domain/trade/events.ts';
import { marginFor } from '../../domain/trade/maths.ts';
import type { Trade } from '../../domain/trade/state.ts';
import { poolEndpointOf } from '../../domain/transfer/plan.ts';
import { microToUsd } from '../../domain/shared/money.ts';
import { priceToNumber } from '../../domain/shared/price.ts';
import { walletContextSchema } from '../../domain/wallet/context.ts';

/** Every status a trade of the list may have; `rejected` is a request refused when its margin arrived. */
export const tradeStatuses = ['pending', 'open', 'closed', 'cancelled', 'expired', 'rejected'] as const;
export const tradeStatusSchema = z.enum(tradeStatuses);
export type TradeListStatus = z.infer<typeof tradeStatusSchema>;

const usd = z.number();

const entryRecordSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('market') }),
  z.object({ kind: z.literal('zone'), low: usd, high: usd }),
  z.object({ kind: z.literal('breakout'), direction: z.enum(['above', 'below']), price: usd }),
]);

export const tradeRecordSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  walletContext: walletContextSchema,
  token: z.string(),
  /** the token's decimals: `sizeUnits` / 10^decimals is the size in whole tokens */
  decimals: z.number(),
  side: sideSchema,
  leverage: z.number(),
  status: tradeStatusSchema,
  /** the entry as requested */
  entry: entryRecordSchema,
  notionalUsd: usd,
  /** the margin the trade holds from its pool while it lives: notional / leverage, rounded up */
  marginUsd: usd,
  /** null until filled */
  averageFillPrice: usd.nullable(),
  /** the size filled, in the token's base units ("0" until filled) */
  sizeUnits: z.string(),
  /** what remains open, in base units */
  remainingUnits: z.string(),
  stopLoss: z.object({ price: usd, kind: stopKindSchema }).nullable(),
  /** the targets not hit yet; closePercent is a percent of the filled size */
  targets: z.array(z.object({ tier: z.number(), price: usd, closePercent: z.number() })),
  trailing: z.object({ activationPercent: z.number(), callbackPercent: z.number(), armedAtPrice: usd.nullable() }).nullable(),
  /** the exits' PnL so far, each net of its fees */
  realizedPnlUsd: usd,
  /** the open size's PnL at the last mark, net of the entry fee it carries; null before a mark and once not open */
  unrealizedPnlUsd: usd.nullable(),
  /** every venue fee paid: entry and exits */
  feesPaidUsd: usd,
  closeReason: closeReasonSchema.nullable(),
  /** the pending entry's deadline */
  expiresAt: z.string(),
  /** when the trade was requested */
  openedAt: z.string(),
  filledAt: z.string().nullable(),
  /** when it ended: closed, cancelled or expired */
  closedAt: z.string().nullable(),
  updatedAt: z.string(),
});
export type TradeRecord = z.infer<typeof tradeRecordSchema>;

/** What the projector keeps of a trade: the domain's fold and the times of its events. */
export interface TradeView {
  trade: Trade;
  closeReason: CloseReason | null;
  openedAt: string;
  filledAt: string | null;
  closedAt: string | null;
  updatedAt: string;
}

function entryRecord(entry: PriceEntry): z.infer<typeof entryRecordSchema> {
  switch (entry.kind) {
    case 'market':
      return { kind: 'market' };
    case 'zone':
      return { kind: 'zone', low: priceToNumber(entry.low), high: priceToNumber(entry.high) };
    case 'breakout':
      return { kind: 'breakout', direction: entry.direction, price: priceToNumber(entry.price) };
  }
}

const percentOfBps = (bps: number) => bps / 100;

export function tradeRecordOf({ trade: t, closeReason, openedAt, filledAt, closedAt, updatedAt }: TradeView): TradeRecord {
  const pool = poolEndpointOf(t.poolId);
  return {
    id: t.tradeId,
    agentId: pool.agentId,
    walletContext: pool.walletContext,
    token: t.token,
    decimals: t.decimals,
    side: t.side,
    leverage: t.leverage,
    status: t.status,
    entry: entryRecord(t.entry),
    notionalUsd: microToUsd(t.notionalMicro),
    marginUsd: microToUsd(marginFor(t.notionalMicro, t.leverage)),
    averageFillPrice: t.averageFill === null ? null : priceToNumber(t.averageFill),
    sizeUnits: t.filledUnits.toString(),
    remainingUnits: t.remainingUnits.toString(),
    stopLoss: t.stop && { price: priceToNumber(t.stop.price), kind: t.stop.kind },
    targets: t.targets.map((target) => ({ tier: target.tier, price: priceToNumber(target.price), closePercent: percentOfBps(target.closeBps) })),
    trailing: t.trailing && {
      activationPercent: percentOfBps(t.trailing.activationBps),
      callbackPercent: percentOfBps(t.trailing.callbackBps),
      armedAtPrice: t.trailing.armedAt === null ? null : priceToNumber(t.trailing.armedAt),
    },
    realizedPnlUsd: microToUsd(t.realizedPnlMicro),
    unrealizedPnlUsd: t.status === 'open' && t.markedPnlMicro !== null ? microToUsd(t.markedPnlMicro) : null,
    feesPaidUsd: microToUsd(t.feesPaidMicro),
    closeReason,
    expiresAt: t.expiresAt,
    openedAt,
    filledAt,
    closedAt,
    updatedAt,
  };
}

/** The record as the list sends it: parsed by its schema, then JSON (the bytes the serializer would write). */
export const renderedTrade = (view: TradeView): string => JSON.stringify(tradeRecordSchema.parse(tradeRecordOf(view)));
