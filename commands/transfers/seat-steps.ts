// A follow's beta seat as its transfer's first step and its last (the pool leg's reservation,
// domain/transfer/legs/pool.ts): the claim the plan names is taken among the agent's seat shards
// before the wallet pays, and given back once the transfer ends unless the pool opened with it or
// a debit still waits to open one (domain/agent/seat-claims.ts decides that on the streams).
import { agentDecider } from '../../domain/agent/index.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { DomainError, invariant, refuse } from '../../domain/shared/errors.ts';
import { endpointAt } from '../../domain/transfer/legs/leg.ts';
import type { TransferPlan } from '../../domain/transfer/plan.ts';
import type { TransferOutcome } from '../../domain/transfer/steps.ts';
import { takeSeatClaim } from '../subscriptions/beta-seats.ts';
import { releaseUnheldClaims } from '../subscriptions/release-orphan-seat.ts';
import type { Tools } from '../tools.ts';

type Step<T extends string> = Command<T, { transfer: TransferPlan }>;

/** The pool's seat claim, and whose it is. */
function seatOf(transfer: TransferPlan) {
  const { userId, agentId, follow } = endpointAt(transfer, 'to', 'pool');
  invariant(follow?.seatClaim !== undefined, `transfer ${transfer.transferId}: the pool opens without a seat claim`);
  return { userId, agentId, claimId: follow.seatClaim };
}

/** Takes the claim (a claim held already changes nothing); every seat taken refuses the transfer (BETA_FULL). */
export async function takeSeat({ data }: Step<'TakeSeat'>, tools: Tools): Promise<TransferOutcome> {
  const { userId, agentId, claimId } = seatOf(data.transfer);
  try {
    const { state: agent } = await tools.load(agentDecider, agentId);
    if (!agent.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
    await takeSeatClaim(tools, agent, userId, claimId);
    return { type: 'Reserved' };
  } catch (err) {
    if (err instanceof DomainError) return { type: 'ReserveRefused', error: err };
    throw err;
  }
}

/** Gives the claim back unless a pool opened with it or a debit waits to open one. */
export async function releaseSeat({ data }: Step<'ReleaseSeat'>, tools: Tools): Promise<TransferOutcome> {
  const { userId, agentId, claimId } = seatOf(data.transfer);
  await releaseUnheldClaims(tools, agentId, userId, [claimId]);
  return { type: 'Released' };
}
