// Facts of the wallet stream `wallet-{userId}`. Money is integer micro-USD.
import { z } from 'zod';
import type { DomainEvent } from '../shared/decider.ts';

export const walletContexts = ['virtual', 'real'] as const;
export const walletContextSchema = z.enum(walletContexts);
export type WalletContext = z.infer<typeof walletContextSchema>;

const microUsd = z.number().int().min(0);

/** First use of the wallet: the virtual context receives its paper-trading start; the real one starts at 0. */
export const walletOpenedSchema = z.object({ virtualStartMicro: microUsd, openedAt: z.string() });
export type WalletOpened = z.infer<typeof walletOpenedSchema>;

/**
 * Funds moved from a wallet context into an agent pool. `transferId` is the same id the pool's
 * `AllocationAdded` carries, so each step can be retried without moving the money twice.
 * (The name predates real funding; `walletContext` says which balance was debited.)
 */
export const virtualFundsAllocatedSchema = z.object({
  transferId: z.string().min(1),
  poolId: z.string().min(1),
  walletContext: walletContextSchema,
  amountMicro: z.number().int().positive(),
});
export type VirtualFundsAllocated = z.infer<typeof virtualFundsAllocatedSchema>;

export type WalletEvent =
  | DomainEvent<'WalletOpened', WalletOpened>
  | DomainEvent<'VirtualFundsAllocated', VirtualFundsAllocated>;

export const walletEventSchemas = {
  WalletOpened: walletOpenedSchema,
  VirtualFundsAllocated: virtualFundsAllocatedSchema,
} as const;
