// A transfer moves money from one stream to another under a stable id: the source records the
// debit (carrying this plan, so a crash loses nothing), the destination records the credit or its
// refusal, and a refused credit is given back to the source. Endpoints today: a wallet context
// pays a pool (follow, add). Withdrawals, bridges, trades and sells add endpoints here.
import { z } from 'zod';
import { followOpeningSchema } from '../pool/events.ts';
import { walletContextSchema } from '../wallet/context.ts';

export const walletEndpointSchema = z.object({
  kind: z.literal('wallet'),
  userId: z.string().min(1),
  walletContext: walletContextSchema,
});

export const poolEndpointSchema = z.object({
  kind: z.literal('pool'),
  userId: z.string().min(1),
  agentId: z.string().min(1),
  walletContext: walletContextSchema,
  /**
   * A follow's settings and the agent terms it accepted: they open the pool when it does not exist
   * yet, and a request (not the recovery) applies the settings to an existing one. Without them the
   * credit goes only to an open pool.
   */
  follow: followOpeningSchema.optional(),
});

export const transferPlanSchema = z.object({
  transferId: z.string().min(1),
  /** micro-USD, as the source records it */
  amountMicro: z.number().int().positive(),
  from: walletEndpointSchema,
  to: poolEndpointSchema,
});
export type TransferPlan = z.infer<typeof transferPlanSchema>;
export type WalletEndpoint = z.infer<typeof walletEndpointSchema>;
export type PoolEndpoint = z.infer<typeof poolEndpointSchema>;
