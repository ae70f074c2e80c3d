// Completes a follow that stopped between its wallet debit and its pool credit. The transfer
// recovery worker dispatches it; the amount is the one the wallet recorded, and the decision to
// credit is the pool's (idempotent on transferId), so running it twice credits once.
import { agentFolder, agentStream } from '../../domain/agent/index.ts';
import { resolveSettings, termsOf } from '../../domain/pool/allocation.ts';
import { decide as decidePool } from '../../domain/pool/decide.ts';
import type { FollowOpening } from '../../domain/pool/events.ts';
import { poolFolder, poolStream } from '../../domain/pool/state.ts';
import { notFound } from '../../domain/shared/errors.ts';
import type { MicroUsd } from '../../domain/shared/money.ts';
import { virtualFundsAllocatedSchema, type VirtualFundsAllocated, type WalletContext } from '../../domain/wallet/events.ts';
import { walletStream } from '../../domain/wallet/state.ts';
import type { EventMetadata, EventStore } from '../../infra/eventstore/port.ts';
import { handle, load, type CommandContext } from '../handle.ts';

export interface WalletDebit {
  id: string;
  data: VirtualFundsAllocated;
  metadata: EventMetadata;
}

/** Every debit of the user's wallet into a pool, in order. */
export async function walletDebits(store: EventStore, userId: string): Promise<WalletDebit[]> {
  const events = await store.readStream(walletStream(userId));
  return events
    .filter((e) => e.type === 'VirtualFundsAllocated')
    .map((e) => ({ id: e.id, metadata: e.metadata, data: virtualFundsAllocatedSchema.parse(e.data) }));
}

/** `{userId}.{agentId}.{walletContext}`: user ids hold no dot and the context is the last part. */
function agentIdOf(poolId: string, userId: string, walletContext: WalletContext): string {
  return poolId.slice(userId.length + 1, poolId.length - walletContext.length - 1);
}

/**
 * A debit without its follow (a top-up, whose pool exists, or a debit recorded before debits
 * carried their follow): the agent's current terms and a first follow's defaults for the amount.
 */
async function openingFromAgent(store: EventStore, agentId: string, amountMicro: MicroUsd): Promise<FollowOpening> {
  const { state: agent } = await load(store, agentStream(agentId), agentFolder);
  if (!agent.exists) throw notFound(`agent ${agentId} not found`);
  const terms = termsOf(agent);
  const allocation = {
    allocationMode: 'USD_AMOUNT' as const,
    allocationPercentageMin: null,
    allocationPercentageMax: null,
    allocationAmountUsd: amountMicro,
    allocationAmountSol: null,
  };
  return { agentId, terms, settings: resolveSettings({ allocation }, null, terms) };
}

export async function completeTransfer(store: EventStore, userId: string, transferId: string, ctx: CommandContext) {
  const debit = (await walletDebits(store, userId)).find((d) => d.data.transferId === transferId);
  if (!debit) throw notFound(`no wallet debit ${transferId}`);
  const { poolId, walletContext, amountMicro } = debit.data;
  const opening = debit.data.follow ?? (await openingFromAgent(store, agentIdOf(poolId, userId, walletContext), amountMicro));
  const data = { poolId, userId, walletContext, transfer: { transferId, amountMicro }, opening, now: ctx.now };
  // The recovery's events belong to the interrupted request: its correlation id, caused by the debit.
  const recovery = { ...ctx, correlationId: debit.metadata.correlationId, causationId: debit.id };
  return handle(store, poolStream(poolId), poolFolder, (state) => decidePool({ type: 'CompleteTransfer', data }, state), recovery);
}
