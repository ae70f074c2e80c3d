// The pool routes' params and bodies, in one place: our routes and the conventional baseline
// (bench/conventional/app.ts) declare the same ones.
import { z } from 'zod';
import { isoDateTime } from '../../../domain/shared/time.ts';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import type { FeeReceipt } from '../../../domain/pool/receipts.ts';
import { walletContextSchema } from '../../../domain/wallet/events.ts';

/** A USD amount of at least 0.01 with at most 6 decimals (micro-USD), as the withdraw row of the spec says. */
export const amountUsd = z
  .number({ message: 'amountUsd must be a number' })
  .min(0.01, 'amountUsd must be at least 0.01')
  .max(1_000_000_000, 'amountUsd is too large')
  // Guarded: zod runs every check, and a huge number must fail the range check above, not throw here.
  .refine((v) => Math.abs(v) <= 1_000_000_000 && microToUsd(usdToMicro(v)) === v, 'amountUsd has at most 6 decimals');

export const amountBody = z.object({ amountUsd, walletContext: walletContextSchema.optional() });
export const agentParams = z.object({ agentId: z.string().trim().min(1).max(200) });
export const contextQuery = z.object({ walletContext: walletContextSchema.optional() });

const usd = z.number();
/** One success-fee settlement as the follower checks it (domain/pool/receipts.ts); USD as every `...Usd` field. */
export const feeReceiptSchema = z.object({
  /** the FeesSettled event's place in the pool's ledger, from 1 */
  sequence: z.number(),
  eventId: z.string(),
  /** the event's place in the store's global log; null where the store gave none */
  globalPosition: z.object({ commit: z.string(), prepare: z.string() }).nullable(),
  settlementId: z.string(),
  settledAt: z.string(),
  trigger: z.enum(['withdrawal', 'stop', 'unknown']),
  triggerTransferId: z.string().nullable(),
  successFeePercent: z.number(),
  realizedPnlUsd: usd,
  unrealizedPnlUsd: usd,
  /** realized PnL net of open losses: what the fee is measured on */
  chargeableProfitUsd: usd,
  highWaterMarkBeforeUsd: usd,
  highWaterMarkAfterUsd: usd,
  feesChargedBeforeUsd: usd,
  feesChargedAfterUsd: usd,
  /** successFeePercent % of chargeableProfitUsd, floored, minus feesChargedBeforeUsd */
  feeDueUsd: usd,
  /** what left the pool: feeDueUsd, or less when less was free */
  feeUsd: usd,
  creatorFeeUsd: usd,
  platformFeeUsd: usd,
});

export function feeReceiptJson(r: FeeReceipt): z.infer<typeof feeReceiptSchema> {
  return {
    sequence: r.sequence,
    eventId: r.eventId,
    globalPosition: r.position,
    settlementId: r.settlementId,
    settledAt: r.settledAt,
    trigger: r.trigger,
    triggerTransferId: r.triggerTransferId,
    successFeePercent: r.successFeePercent,
    realizedPnlUsd: microToUsd(r.realizedPnl),
    unrealizedPnlUsd: microToUsd(r.unrealizedPnl),
    chargeableProfitUsd: microToUsd(r.chargeableProfit),
    highWaterMarkBeforeUsd: microToUsd(r.highWaterMarkBefore),
    highWaterMarkAfterUsd: microToUsd(r.highWaterMarkAfter),
    feesChargedBeforeUsd: microToUsd(r.feesChargedBefore),
    feesChargedAfterUsd: microToUsd(r.feesChargedAfter),
    feeDueUsd: microToUsd(r.feeDue),
    feeUsd: microToUsd(r.fee),
    creatorFeeUsd: microToUsd(r.creatorFee),
    platformFeeUsd: microToUsd(r.platformFee),
  };
}

const exportTime = (name: string) => isoDateTime(name).optional();
/** An export's format and time range (rows of events at `from` or later and before `to`); the admin exports take the same. */
export const exportRangeQuery = z.object({
  format: z.enum(['csv', 'jsonl'], { message: 'format is csv or jsonl' }).default('csv'),
  from: exportTime('from'),
  to: exportTime('to'),
});
/**
 * An export's answer: the file's text (CSV or JSONL, as `format` asks), streamed; its errors are
 * the envelope's, before the first byte.
 */
export const exportFile = z.string().describe('the CSV (text/csv) or JSONL (application/x-ndjson) file, ending with its trailer line');

/** The query refused unless `from` is before `to` (when both are given). */
export const fromBeforeTo = <S extends z.ZodType<{ from?: string | undefined; to?: string | undefined }>>(schema: S) =>
  schema.refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) < Date.parse(q.to), {
    message: 'from must be before to',
    path: ['to'],
  });
export const ledgerExportQuery = fromBeforeTo(exportRangeQuery.extend({ walletContext: walletContextSchema.optional() }));
