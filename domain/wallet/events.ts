// Facts of the wallet stream `wallet-{userId}`. Money is integer micro-USD; a price per whole token
// is decimal USD text (domain/shared/price.ts). Events stored before held prices as micro-USD
// integers under `…Micro` names: `walletEventSchema` and the state read them upcast (upcast.ts).
import { z } from 'zod';
import { microUsdSchema } from '../shared/money.ts';
import { priceTextSchema } from '../shared/price.ts';
import { lotsEndpointSchema, transferPlanSchema, walletEndpointSchema } from '../transfer/plan.ts';
import { walletContextSchema } from './context.ts';
import { lotLevelTextSchema, mintSchema, reductionSchema } from './lots.ts';
import { upcastWalletEvent } from './upcast.ts';

export { walletContexts, walletContextSchema, type WalletContext } from './context.ts';

/** First use of the wallet: the virtual context receives its paper-trading start; the real one starts at 0. */
export const walletOpenedSchema = z.object({ virtualStartMicro: microUsdSchema, openedAt: z.string() });
export type WalletOpened = z.infer<typeof walletOpenedSchema>;

/**
 * The debit of a transfer out of a wallet context (`transfer.from`). It carries the whole plan, so
 * the recovery can finish the transfer from this event alone if the request stops here.
 */
/** A wallet's debit: the plan of a transfer whose source is this wallet. */
export const walletDebitedSchema = z.object({ transfer: transferPlanSchema.extend({ from: walletEndpointSchema }) });
export type WalletDebited = z.infer<typeof walletDebitedSchema>;

/** A debited transfer given back: its destination rejected the credit (`reason`: why, when it said). */
export const walletRefundedSchema = z.object({
  transferId: z.string().min(1),
  walletContext: walletContextSchema,
  amountMicro: z.number().int().positive(),
  reason: z.string().min(1).optional(),
});
export type WalletRefunded = z.infer<typeof walletRefundedSchema>;

/**
 * Money that arrived in the real context from outside, as a confirmed on-chain deposit: on the
 * simulated venue an administrator's deposit. Once per `depositId`.
 */
export const walletDepositedSchema = z.object({
  depositId: z.string().min(1),
  walletContext: z.literal('real'),
  amountMicro: z.number().int().positive(),
  at: z.string(),
});
export type WalletDeposited = z.infer<typeof walletDepositedSchema>;

/**
 * The destination step of a transfer coming back to the wallet (a withdrawal, a stop): once per
 * `transferId`. `from` names the source, e.g. `pool:<poolId>`.
 */
export const walletCreditedSchema = z.object({
  transferId: z.string().min(1),
  walletContext: walletContextSchema,
  amountMicro: z.number().int().positive(),
  from: z.string().min(1),
});
export type WalletCredited = z.infer<typeof walletCreditedSchema>;

/**
 * An administrator froze the wallet (the actor of the event's metadata): it pays nothing out
 * until unfrozen; money coming back into it is still taken. `reason` is the administrator's note.
 */
export const walletFrozenSchema = z.object({ reason: z.string().min(1).max(500).optional(), at: z.string() });
export type WalletFrozen = z.infer<typeof walletFrozenSchema>;

/** An administrator unfroze the wallet. */
export const walletUnfrozenSchema = z.object({ at: z.string() });
export type WalletUnfrozen = z.infer<typeof walletUnfrozenSchema>;

/** What a venue's swap did: its transaction, the price per whole token (decimal USD text), the token units and the micro-USD it moved. */
const swapSchema = z.object({
  txId: z.string().min(1),
  price: priceTextSchema,
  units: z.number().int().positive(),
  usdMicro: z.number().int().min(0),
});

/**
 * A manual buy's credit: the swap paid for with the wallet's debit (the transfer `transferId`, which
 * is the lot's id) is final, and the lot opens with its levels as prices. Releases the trade lock.
 */
export const lotOpenedSchema = swapSchema.extend({
  transferId: z.string().min(1),
  walletContext: walletContextSchema,
  mint: mintSchema,
  /** what the debit paid: the lot's cost */
  costMicro: z.number().int().positive(),
  openedAt: z.string(),
  /** the levels as prices per whole token */
  stopLoss: lotLevelTextSchema.optional(),
  takeProfit: lotLevelTextSchema.optional(),
});
export type LotOpened = z.infer<typeof lotOpenedSchema>;

/**
 * A manual sell asked for: its plan (the debit of the transfer lots → wallet), the wallet's trade
 * lock held until it ends. Nothing moved yet: the lots shrink once the venue's swap is final.
 */
export const sellRequestedSchema = z.object({ transfer: transferPlanSchema.extend({ from: lotsEndpointSchema }), at: z.string() });
export type SellRequested = z.infer<typeof sellRequestedSchema>;

/**
 * A sell's swap is final: the lots it took (oldest first) leave, the proceeds (`usdMicro`) reach
 * the wallet context, `realizedPnlMicro` = proceeds − the cost taken. The levels asked for go on
 * the one lot left. Releases the trade lock.
 */
export const lotsSoldSchema = swapSchema.extend({
  transferId: z.string().min(1),
  walletContext: walletContextSchema,
  mint: mintSchema,
  reductions: z.array(reductionSchema).min(1),
  realizedPnlMicro: z.number().int(),
  at: z.string(),
  stopLoss: lotLevelTextSchema.optional(),
  takeProfit: lotLevelTextSchema.optional(),
});
export type LotsSold = z.infer<typeof lotsSoldSchema>;

/** A sell's swap failed at the venue: the lots stay as they were; the trade lock is released. */
export const sellFailedSchema = z.object({ transferId: z.string().min(1), reason: z.string().min(1), at: z.string() });
export type SellFailed = z.infer<typeof sellFailedSchema>;

/**
 * A withdrawal's credit: the chain transfer of the spend stablecoin to `destination` is final (the
 * real context's debit paid it). Releases the trade lock.
 */
export const walletWithdrawnSchema = z.object({
  transferId: z.string().min(1),
  walletContext: z.literal('real'),
  amountMicro: z.number().int().positive(),
  destination: z.string().min(1),
  txId: z.string().min(1),
  at: z.string(),
});
export type WalletWithdrawn = z.infer<typeof walletWithdrawnSchema>;

export const currentWalletEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('WalletOpened'), data: walletOpenedSchema }),
  z.object({ type: z.literal('WalletDebited'), data: walletDebitedSchema }),
  z.object({ type: z.literal('WalletRefunded'), data: walletRefundedSchema }),
  z.object({ type: z.literal('WalletDeposited'), data: walletDepositedSchema }),
  z.object({ type: z.literal('WalletCredited'), data: walletCreditedSchema }),
  z.object({ type: z.literal('WalletFrozen'), data: walletFrozenSchema }),
  z.object({ type: z.literal('WalletUnfrozen'), data: walletUnfrozenSchema }),
  z.object({ type: z.literal('LotOpened'), data: lotOpenedSchema }),
  z.object({ type: z.literal('SellRequested'), data: sellRequestedSchema }),
  z.object({ type: z.literal('LotsSold'), data: lotsSoldSchema }),
  z.object({ type: z.literal('SellFailed'), data: sellFailedSchema }),
  z.object({ type: z.literal('WalletWithdrawn'), data: walletWithdrawnSchema }),
]);
export type WalletEvent = z.infer<typeof currentWalletEventSchema>;

const isEvent = (raw: unknown): raw is { type: string; data: unknown } => raw !== null && typeof raw === 'object' && 'type' in raw;

/** Parses a stored wallet event, upcasting an old one first. */
export const walletEventSchema = z.preprocess((raw) => (isEvent(raw) ? upcastWalletEvent(raw) : raw), currentWalletEventSchema);
export const walletEventTypes: ReadonlySet<string> = new Set(currentWalletEventSchema.options.map((o) => o.shape.type.value));
