// Facts of the wallet stream `wallet-{userId}`. Money is integer micro-USD.
import { z } from 'zod';
import { followOpeningSchema } from '../pool/events.ts';
import type { DomainEvent } from '../shared/decider.ts';
import { microUsdSchema } from '../shared/money.ts';
import { walletContextSchema } from './context.ts';

export { walletContexts, walletContextSchema, type WalletContext } from './context.ts';

/** First use of the wallet: the virtual context receives its paper-trading start; the real one starts at 0. */
export const walletOpenedSchema = z.object({ virtualStartMicro: microUsdSchema, openedAt: z.string() });
export type WalletOpened = z.infer<typeof walletOpenedSchema>;

/**
 * Funds moved from a wallet context into an agent pool. `transferId` is the same id the pool's
 * `AllocationAdded` carries, so each step can be retried without moving the money twice.
 * (The name predates real funding; `walletContext` says which balance was debited.)
 * `follow` is set when the debit pays for the pool's first follow: what opens the pool if the
 * request stops before its second step (the transfer recovery reads it). Absent on a top-up of
 * an existing pool, and on debits recorded before it existed.
 */
export const virtualFundsAllocatedSchema = z.object({
  transferId: z.string().min(1),
  poolId: z.string().min(1),
  walletContext: walletContextSchema,
  amountMicro: z.number().int().positive(),
  follow: followOpeningSchema.optional(),
});
export type VirtualFundsAllocated = z.infer<typeof virtualFundsAllocatedSchema>;

export type WalletEvent =
  | DomainEvent<'WalletOpened', WalletOpened>
  | DomainEvent<'VirtualFundsAllocated', VirtualFundsAllocated>;

export const walletEventSchemas = {
  WalletOpened: walletOpenedSchema,
  VirtualFundsAllocated: virtualFundsAllocatedSchema,
} as const;
