// Facts of the wallet stream `wallet-{userId}`. Money is integer micro-USD.
import { z } from 'zod';
import { microUsdSchema } from '../shared/money.ts';
import { transferPlanSchema } from '../transfer/plan.ts';
import { walletContextSchema } from './context.ts';

export { walletContexts, walletContextSchema, type WalletContext } from './context.ts';

/** First use of the wallet: the virtual context receives its paper-trading start; the real one starts at 0. */
export const walletOpenedSchema = z.object({ virtualStartMicro: microUsdSchema, openedAt: z.string() });
export type WalletOpened = z.infer<typeof walletOpenedSchema>;

/**
 * The debit of a transfer out of a wallet context (`transfer.from`). It carries the whole plan, so
 * the recovery can finish the transfer from this event alone if the request stops here.
 */
export const walletDebitedSchema = z.object({ transfer: transferPlanSchema });
export type WalletDebited = z.infer<typeof walletDebitedSchema>;

/** A debited transfer given back: its destination rejected the credit. */
export const walletRefundedSchema = z.object({
  transferId: z.string().min(1),
  walletContext: walletContextSchema,
  amountMicro: z.number().int().positive(),
});
export type WalletRefunded = z.infer<typeof walletRefundedSchema>;

export const walletEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('WalletOpened'), data: walletOpenedSchema }),
  z.object({ type: z.literal('WalletDebited'), data: walletDebitedSchema }),
  z.object({ type: z.literal('WalletRefunded'), data: walletRefundedSchema }),
]);
export type WalletEvent = z.infer<typeof walletEventSchema>;
