// Facts of an agent's fee account, stream `fees-{agentId}`: the creator's share of the success fees
// the agent's pools settled (docs/domain-rules.md, "Pool ledger"), and what its developer claimed
// of it. Money is integer micro-USD.
import { z } from 'zod';
import { microUsdSchema } from '../shared/money.ts';
import { feesEndpointSchema, transferPlanSchema } from '../transfer/plan.ts';

/**
 * A pool's settled creator fees reached the account: `earnedMicro` is the creator's share of every
 * `FeesSettled` the pool stream holds (every opening), `creatorMicro` what it adds to the account.
 */
export const feesAccruedSchema = z.object({
  poolId: z.string().min(1),
  creatorMicro: z.number().int().positive(),
  earnedMicro: microUsdSchema,
  at: z.string(),
});
export type FeesAccrued = z.infer<typeof feesAccruedSchema>;

/** What one claim took from one pool's fees. */
export const claimPartSchema = z.object({ poolId: z.string().min(1), amountMicro: z.number().int().positive() });
export type ClaimPart = z.infer<typeof claimPartSchema>;

/**
 * A claim: the debit of a transfer out of the account (`transfer.from`) to the developer's wallet.
 * It carries the whole plan, with the amount the account decided, so the recovery can finish the
 * transfer from this event alone; `parts` says which pools' fees it took (oldest accrual first).
 */
export const feesClaimedSchema = z.object({
  transfer: transferPlanSchema.extend({ from: feesEndpointSchema }),
  parts: z.array(claimPartSchema).min(1),
  at: z.string(),
});
export type FeesClaimed = z.infer<typeof feesClaimedSchema>;

export const feeEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('FeesAccrued'), data: feesAccruedSchema }),
  z.object({ type: z.literal('FeesClaimed'), data: feesClaimedSchema }),
]);
export type FeeEvent = z.infer<typeof feeEventSchema>;
