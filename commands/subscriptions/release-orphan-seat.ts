// Frees a beta seat whose holder neither follows the agent nor has a debit waiting to open one of
// its pools: a follow refused after taking its seat, or one a crash stopped before any debit (the
// recovery worker sends it after a grace period). Decided on the streams, never a read model.
import { agentDecider } from '../../domain/agent/index.ts';
import { poolDecider } from '../../domain/pool/decide.ts';
import { poolId } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { walletContexts } from '../../domain/wallet/events.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import { destinationOf } from '../../domain/wallet/state.ts';
import type { Tools } from '../dispatch.ts';
import { releaseBetaSeat } from './beta-seats.ts';

export async function releaseOrphanSeat(
  { data }: Command<'ReleaseOrphanSeat', { agentId: string; userId: string }>,
  tools: Tools,
): Promise<{ released: boolean }> {
  const { agentId, userId } = data;
  const ids = walletContexts.map((context) => poolId(userId, agentId, context));
  const pools = await Promise.all(ids.map((id) => tools.load(poolDecider, id)));
  if (pools.some((p) => p.state.followed)) return { released: false };
  // None of the pools is open, so a debit for one of them that was neither given back nor decided
  // by the pool (a stopped pool decided its earlier adds) waits to open it.
  const { state: wallet } = await tools.load(walletDecider, userId);
  const destinations = walletContexts.map((walletContext) => destinationOf({ kind: 'pool', userId, agentId, walletContext }));
  const decided = (transferId: string) => pools.some((p) => p.state.transfers.has(transferId));
  const waiting = [...wallet.debits.entries()].some(([id, t]) => !t.refunded && destinations.includes(t.to) && !decided(id));
  if (waiting) return { released: false };
  const { state: agent } = await tools.load(agentDecider, agentId);
  return { released: agent.exists && (await releaseBetaSeat(tools, agent, userId)) };
}
