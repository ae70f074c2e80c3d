// A transfer moves money from one stream to another under a stable id: the source records the
// debit (carrying this plan, so a crash loses nothing), the destination records the credit or its
// refusal, and a refused credit is given back to the source. Endpoints: a wallet context pays a
// pool (follow, add), a pool pays a wallet context (withdraw, stop following). In the real context
// the pool's side waits for the venue (chain transfer or bridge): its step is pending until the
// reconciliation worker settles it. A pool pays a trade its margin (an agent trade opens), a trade
// pays its pool back the margin and its PnL (it closed). A wallet context buys a manual lot (the
// swap at the venue is the credit), manual lots pay a wallet context what a sell fetched (the swap
// is the debit's: the lots shrink only once it is final). A real wallet context pays a chain address
// (a withdrawal of the spend stablecoin). An agent's fee account pays its developer's real wallet
// context the creator's fees (a claim).
import { z } from 'zod';
import { followOpeningSchema } from '../pool/settings.ts';
import { storedTradeRequestSchema, type StoredTradeRequest } from '../trade/commands.ts';
import { walletContextSchema } from '../wallet/context.ts';
import { lotLevelsSchema, mintSchema } from '../wallet/lots.ts';

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

/**
 * The trade as the signal asked for it: its notional is the margin the pool locked × leverage, its
 * mark the venue's at the credit. Prices as decimal USD text (domain/trade/commands.ts).
 */
export const tradeRequestSchema = storedTradeRequestSchema;
export type TradeRequest = StoredTradeRequest;

export const tradeEndpointSchema = z.object({
  kind: z.literal('trade'),
  tradeId: z.string().min(1),
  /** the pool whose margin the trade holds */
  poolId: z.string().min(1),
  /** destination only: the trade to open with the margin credited */
  request: tradeRequestSchema.optional(),
});

/** A user's manual BUY lots of one mint in one wallet context (domain/wallet/lots.ts). */
export const lotsEndpointSchema = z.object({
  kind: z.literal('lots'),
  userId: z.string().min(1),
  walletContext: walletContextSchema,
  mint: mintSchema,
  /** source only (a sell): the token units to sell, oldest lots first */
  units: z.number().int().positive().optional(),
  /** the stop-loss / take-profit for the lot a buy opens, or for the one lot a sell leaves */
  levels: lotLevelsSchema.optional(),
});

/** A Solana address: base58, 32 to 44 characters. */
export const chainAddressSchema = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'destination must be a base58 address of 32 to 44 characters');

/** A chain address outside the service: a withdrawal of the spend stablecoin from the real context (a sell without a mint). */
export const addressEndpointSchema = z.object({
  kind: z.literal('address'),
  userId: z.string().min(1),
  walletContext: z.literal('real'),
  /** the spend stablecoin's mint: what is sent */
  mint: mintSchema,
  destination: chainAddressSchema,
});

/**
 * An agent's fee account (domain/fees): the creator's share of the success fees its pools settled,
 * paid to the agent's developer (source only).
 */
export const feesEndpointSchema = z.object({
  kind: z.literal('fees'),
  agentId: z.string().min(1),
  /** the agent's developer: whose money the claim moves */
  developerId: z.string().min(1),
  /** claim everything claimable: the amount is the account's to decide, the plan's is 0 */
  all: z.literal(true).optional(),
});

export const endpointSchema = z.discriminatedUnion('kind', [
  walletEndpointSchema,
  poolEndpointSchema,
  tradeEndpointSchema,
  lotsEndpointSchema,
  addressEndpointSchema,
  feesEndpointSchema,
]);

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
/** A transfer a wallet pays (follow, add): what a wallet's debit records. */
export type WalletPaidPlan = TransferPlan & { from: WalletEndpoint };
export type TradeEndpoint = z.infer<typeof tradeEndpointSchema>;
export type LotsEndpoint = z.infer<typeof lotsEndpointSchema>;
export type FeesEndpoint = z.infer<typeof feesEndpointSchema>;
export type Endpoint = z.infer<typeof endpointSchema>;

type EndpointOfKind<K extends Endpoint['kind']> = Extract<Endpoint, { kind: K }>;

/**
 * Each endpoint kind's identity, beside its schema (the aggregates' events record destination keys,
 * so this sits below them; each leg, legs/, names its kind's): `key`, the endpoint as one string (a
 * retried debit must name the same destination as the recorded one); `owner`, the user whose money
 * a transfer moves (a pool id starts with its user's id).
 */
export const endpointIdentity: { [K in Endpoint['kind']]: { key(e: EndpointOfKind<K>): string; owner(e: EndpointOfKind<K>): string } } = {
  wallet: { key: (e) => `wallet:${e.userId}.${e.walletContext}`, owner: (e) => e.userId },
  pool: { key: (e) => `pool:${e.userId}.${e.agentId}.${e.walletContext}`, owner: (e) => e.userId },
  trade: { key: (e) => `trade:${e.tradeId}`, owner: (e) => poolEndpointOf(e.poolId).userId },
  lots: { key: (e) => `lots:${e.userId}.${e.walletContext}.${e.mint}`, owner: (e) => e.userId },
  address: { key: (e) => `address:${e.userId}.${e.destination}`, owner: (e) => e.userId },
  fees: { key: (e) => `fees:${e.agentId}`, owner: (e) => e.developerId },
};

/** An endpoint as one string: a retried debit must name the same destination as the recorded one. */
export const endpointKey = (e: Endpoint): string => (endpointIdentity[e.kind].key as (e: Endpoint) => string)(e);

/** The user whose money a transfer moves. */
export const ownerOf = (e: Endpoint): string => (endpointIdentity[e.kind].owner as (e: Endpoint) => string)(e);

/** A pool's endpoint from its id `{userId}.{agentId}.{walletContext}` (user ids hold no dot; the context is the last part). */
export function poolEndpointOf(poolId: string): PoolEndpoint {
  const first = poolId.indexOf('.');
  const last = poolId.lastIndexOf('.');
  const walletContext = walletContextSchema.parse(poolId.slice(last + 1));
  return { kind: 'pool', userId: poolId.slice(0, first), agentId: poolId.slice(first + 1, last), walletContext };
}

/** The transfer a trade that ended records (TradeSettled): it pays its pool back what it returns. */
export const tradeReturnPlan = (settled: { tradeId: string; poolId: string; transferId: string; returnedMicro: number }): TransferPlan => ({
  transferId: settled.transferId,
  amountMicro: settled.returnedMicro,
  from: { kind: 'trade', tradeId: settled.tradeId, poolId: settled.poolId },
  to: poolEndpointOf(settled.poolId),
});
