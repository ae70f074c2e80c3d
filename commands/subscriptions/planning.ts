// What the pool commands (follow, add, withdraw, stop) plan on before their steps decide.
import { userDecider } from '../../domain/user/decide.ts';
import { currentWalletContextOf, type WalletContext } from '../../domain/wallet/context.ts';
import type { Tools } from '../tools.ts';

/**
 * How stale the states a plan is made on may be: this process's own writes keep them current, and
 * every decision the plan leads to is taken again on fresh state under the stream's expected
 * revision. Only another process's change within this bound can make the plan itself stale: an
 * agent delisted or a wallet context switched elsewhere that recently (docs/decisions.md).
 */
export const PLAN_STALENESS_MS = 1_000;

/** The user's current wallet context (domain/wallet/context.ts), from their stream. */
export async function currentWalletContext(tools: Tools, userId: string, options: { maxStaleMs?: number }): Promise<WalletContext> {
  return currentWalletContextOf((await tools.load(userDecider, userId, options)).state);
}
