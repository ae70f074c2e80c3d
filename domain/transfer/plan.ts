// A transfer moves money from one stream to another under a stable id: the source records the
// debit (carrying this plan, so a crash loses nothing), the destination records the credit or its
// refusal, and a refused credit is given back to the source. Endpoints: a wallet context pays a
// pool (follow, add), a pool pays a wallet context (withdraw, stop following). In the real context
// the pool's side waits for the venue (chain transfer or bridge): its step is pending until the
// reconciliation worker settles it. Trades and sells add endpoints here.
import { z } from 'zod';
import { followOpeningSchema } from '../pool/settings.ts';
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
   * A follow's settings and the agent terms it accepted (destination only): they open the pool
   * when it does not exist yet, and a request (not the recovery) applies the settings to an
   * existing one. Without them the credit goes only to an open pool.
   */
  follow: followOpeningSchema.optional(),
  /**
   * Stop following (source only): the pool settles its pending fees, pays out everything it holds
   * and closes; the amount is the pool's to decide, the plan's is what the request expected.
   */
  close: z.literal(true).optional(),
});

export const endpointSchema = z.discriminatedUnion('kind', [walletEndpointSchema, poolEndpointSchema]);

export const transferPlanSchema = z.object({
  transferId: z.string().min(1),
  /** micro-USD, as the source records it (a close plans 0: the pool decides what it pays out) */
  amountMicro: z.number().int().min(0),
  from: endpointSchema,
  to: endpointSchema,
});
export type TransferPlan = z.infer<typeof transferPlanSchema>;
export type WalletEndpoint = z.infer<typeof walletEndpointSchema>;
export type PoolEndpoint = z.infer<typeof poolEndpointSchema>;
export type Endpoint = z.infer<typeof endpointSchema>;

/** An endpoint as one string: a retried debit must name the same destination as the recorded one. */
export const endpointKey = (e: Endpoint): string =>
  e.kind === 'wallet' ? `wallet:${e.userId}.${e.walletContext}` : `pool:${e.userId}.${e.agentId}.${e.walletContext}`;
