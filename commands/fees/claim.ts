// POST /api/v1/developers/agents/{id}/fees/claim: the agent's developer takes the creator fees its
// pools settled (docs/domain-rules.md, "Developer dashboard") to their real wallet. The fee account
// first accrues what the pool streams hold (each pool's total, read from its FeesSettled events),
// then pays the claim as a transfer: its debit, on the account's stream, decides the amount; the
// wallet's credit follows; the recovery worker finishes what a crash interrupted.
import { agentDecider } from '../../domain/agent/index.ts';
import { feeAccountDecider } from '../../domain/fees/decide.ts';
import { claimableOf } from '../../domain/fees/state.ts';
import { feesSettledSchema } from '../../domain/pool/events.ts';
import { poolStream } from '../../domain/pool/state.ts';
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import { planned } from '../../domain/transfer/process.ts';
import type { Tools } from '../tools.ts';
import type { ClaimFeesData, ClaimFeesResult } from './commands.ts';
import { runTransfer } from '../transfers/run.ts';
import { transferIds } from '../../domain/transfer/ids.ts';

/** The creator's share of every fee the pool stream settled, across its openings. */
async function earnedBy(tools: Tools, poolId: string): Promise<{ poolId: string; earnedMicro: MicroUsd }> {
  const events = await tools.deps.store.readStream(poolStream(poolId));
  const earnedMicro = events.filter((e) => e.type === 'FeesSettled').reduce((sum, e) => sum + feesSettledSchema.parse(e.data).creatorMicro, 0);
  return { poolId, earnedMicro };
}

/** Only the agent's developer claims: refused on the agent's stream, never on a read model. */
async function ownAgent(tools: Tools, agentId: string, developerId: string): Promise<void> {
  const { state } = await tools.load(agentDecider, agentId);
  if (!state.exists) throw refuse('AGENT_NOT_FOUND', 'agent not found');
  if (state.developerId !== developerId) throw refuse('NOT_AGENT_OWNER', "only the agent's developer can claim its fees");
}

export async function claimFees({ data }: Command<'ClaimFees', ClaimFeesData>, tools: Tools): Promise<ClaimFeesResult> {
  const { agentId, developerId, amountMicro } = data;
  await ownAgent(tools, agentId, developerId);
  const pools = [...new Set(data.poolIds)].filter((id) => id.includes(`.${agentId}.`));
  const earned = await Promise.all(pools.map((id) => earnedBy(tools, id)));
  if (earned.some((e) => e.earnedMicro > 0)) await tools.execute(feeAccountDecider, agentId, { type: 'AccrueFees', data: { earned } });
  const transfer = await runTransfer(
    tools,
    planned({
      transferId: transferIds.claim(agentId, data.moveId ?? tools.deps.ids.uuid()),
      amountMicro: amountMicro ?? 0,
      from: { kind: 'fees', agentId, developerId, ...(amountMicro === undefined ? { all: true as const } : {}) },
      to: { kind: 'wallet', userId: developerId, walletContext: 'real' },
    }),
  );
  if (transfer.status === 'failed') throw transfer.refusal!;
  const { state } = await tools.load(feeAccountDecider, agentId, { answer: true });
  return {
    agentId,
    transferId: transfer.plan.transferId,
    status: transfer.status,
    claimedMicro: transfer.plan.amountMicro,
    earnedMicro: state.earnedMicro,
    claimedTotalMicro: state.claimedMicro,
    claimableMicro: claimableOf(state),
  };
}
