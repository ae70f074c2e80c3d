// Gives back the beta seat claims of a user on an agent that no pool holds and none will
// (domain/agent/seat-claims.ts): a stop's spent claim, a follow's own claim it did not open the
// pool with, and (the recovery worker sends it after a grace period) a claim whose follow died
// before any debit. The user's seat goes with their last claim. Decided on the streams, never a
// read model.
import { agentDecider } from '../../domain/agent/index.ts';
import { claimsToRelease } from '../../domain/agent/seat-claims.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { walletContexts } from '../../domain/wallet/events.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { destinationOf } from '../../domain/wallet/state.ts';
import type { Tools } from '../tools.ts';
import { claimsHeld, releaseClaims } from './beta-seats.ts';
import type { ReleaseOrphanSeatData } from './commands.ts';

export async function releaseOrphanSeat({ data }: Command<'ReleaseOrphanSeat', ReleaseOrphanSeatData>, tools: Tools): Promise<{ released: boolean }> {
  return { released: await releaseUnheldClaims(tools, data.agentId, data.userId, data.claims ?? []) };
}

/**
 * Gives back the user's claims on the agent that no pool holds and none will, `own` among them
 * (claims the caller took and no longer uses); whether any went back. The follow's transfer runs
 * it as its seat's release step (commands/transfers/seat-steps.ts).
 */
export async function releaseUnheldClaims(tools: Tools, agentId: string, userId: string, own: readonly string[]): Promise<boolean> {
  const { state: agent } = await tools.load(agentDecider, agentId);
  if (!agent.exists) return false;
  const held = await claimsHeld(tools, agent, userId);
  if (held.length === 0) return false;
  const [pools, { state: wallet }] = await Promise.all([
    Promise.all(
      walletContexts.map(async (walletContext) => ({
        key: destinationOf({ kind: 'pool', userId, agentId, walletContext }),
        state: (await tools.load(poolDecider, poolId(userId, agentId, walletContext))).state,
      })),
    ),
    tools.load(walletDecider, userId),
  ]);
  const graceEndsBefore = tools.metadata.now.getTime() - tools.deps.config.TRANSFER_RECOVERY_GRACE_MS;
  const facts = { pools, wallet, own, graceEndsBefore };
  let released = false;
  for (const { k, claims } of held) {
    const going = claimsToRelease(claims, facts);
    await releaseClaims(tools, agentId, userId, k, going);
    released ||= going.length > 0;
  }
  return released;
}
