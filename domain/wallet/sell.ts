// What a manual sell means, decided once for the REST route (api/routes/wallet) and the MCP tool
// (api/mcp/tools/trade-money.ts): selling the spend stablecoin (or naming no mint) is a withdrawal
// of that many USD of the real wallet context to an address on chain; any other mint sells manual
// lots. And the one transfer id of a manual buy, sell or withdrawal.
import { refuse } from '../shared/errors.ts';
import { chainAddressSchema } from '../transfer/plan.ts';
import type { WalletContext } from './context.ts';
import { transferIds } from '../transfer/ids.ts';

export type SellMeaning = { kind: 'withdraw' | 'sell'; mint: string };

/** A sell of `mint` (the spend stablecoin when left out): a withdrawal when it is the spend stablecoin, else a sell of lots. */
export function sellMeaning(mint: string | undefined, spendMint: string): SellMeaning {
  const sold = mint ?? spendMint;
  return { kind: sold === spendMint ? 'withdraw' : 'sell', mint: sold };
}

/** The address a withdrawal goes to, refused when it is missing or not a chain address. */
export function withdrawalDestination(destination: unknown): string {
  const parsed = chainAddressSchema.safeParse(destination);
  if (!parsed.success)
    throw refuse('VALIDATION_FAILED', 'destination (a base58 address of 32 to 44 characters) is required to sell (withdraw) the spend stablecoin');
  return parsed.data;
}

/** Only the real context's cash can leave for an address: virtual money stays paper. */
export function ensureWithdrawable(walletContext: WalletContext): asserts walletContext is 'real' {
  if (walletContext !== 'real') throw refuse('VALIDATION_FAILED', 'only the real wallet context can withdraw the spend stablecoin: virtual money stays paper');
}

/**
 * The transfer id of a manual buy, sell or withdrawal, from the move's own stable id (an MCP
 * confirmation's, one derived from the user's Idempotency-Key, or a fresh one), so a repeat finds
 * the transfer already made.
 */
export function manualTransferId(moveId: string): string {
  return transferIds.manual(moveId);
}
