// Facts of the wallet stream `wallet-{userId}`. Money is integer micro-USD.
import { z } from 'zod';
import { microUsdSchema } from '../shared/money.ts';
import { transferPlanSchema, walletEndpointSchema } from '../transfer/plan.ts';
import { walletContextSchema } from './context.ts';

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

/** A debited transfer given back: its destination rejected the credit. */
export const walletRefundedSchema = z.object({
  transferId: z.string().min(1),
  walletContext: walletContextSchema,
  amountMicro: z.number().int().positive(),
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

export const walletEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('WalletOpened'), data: walletOpenedSchema }),
  z.object({ type: z.literal('WalletDebited'), data: walletDebitedSchema }),
  z.object({ type: z.literal('WalletRefunded'), data: walletRefundedSchema }),
  z.object({ type: z.literal('WalletDeposited'), data: walletDepositedSchema }),
  z.object({ type: z.literal('WalletCredited'), data: walletCreditedSchema }),
  z.object({ type: z.literal('WalletFrozen'), data: walletFrozenSchema }),
  z.object({ type: z.literal('WalletUnfrozen'), data: walletUnfrozenSchema }),
]);
export type WalletEvent = z.infer<typeof walletEventSchema>;
export const walletEventTypes: ReadonlySet<string> = new Set(walletEventSchema.options.map((o) => o.shape.type.value));
