import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { WalletContext } from '../wallet/events.ts';
import { walletModeOf, type AgentTerms, type FollowSettings, type PoolEvent } from './events.ts';
import { evolve, initialState, poolId, poolStream, type PoolState } from './state.ts';

/** Follow an agent without moving money (nothing to add), or follow it again with new settings. */
export type FollowAgent = Command<
  'FollowAgent',
  {
    agentId: string;
    userId: string;
    walletContext: WalletContext;
    /** fully resolved (see resolveSettings) */
    settings: FollowSettings;
    /** the agent's terms now; kept only by a first follow */
    terms: AgentTerms;
  }
>;

/**
 * Credit a transfer (the destination step of domain/transfer/process.ts), once per transferId. A
 * pool that does not exist opens with the transfer's follow; without one, the credit is rejected
 * for good (TransferRejected) so the source may give the money back. A request (not `resumed`)
 * also applies its follow's settings to an existing pool.
 */
export type CreditPool = Command<'CreditPool', { transfer: TransferPlan; resumed: boolean }>;

export type PoolCommand = FollowAgent | CreditPool;

const settingKeys = [
  'tradeMode',
  'subscriptionType',
  'allocationMode',
  'allocationPercentageMin',
  'allocationPercentageMax',
  'allocationAmountUsd',
  'allocationAmountSol',
  'goLiveUponConfirmation',
  'isPaused',
] as const satisfies ReadonlyArray<keyof FollowSettings>;

export const sameSettings = (a: FollowSettings, b: FollowSettings): boolean => settingKeys.every((k) => a[k] === b[k]);

function agentFollowed(data: FollowAgent['data'], now: Date): PoolEvent {
  const { agentId, userId, walletContext, settings, terms } = data;
  return {
    type: 'AgentFollowed',
    data: {
      ...settings,
      poolId: poolId(userId, agentId, walletContext),
      agentId,
      userId,
      walletContext,
      walletMode: walletModeOf(walletContext),
      terms,
      subscribedAt: now.toISOString(),
    },
  };
}

function follow({ data, metadata }: FollowAgent, state: PoolState): PoolEvent[] {
  if (!state.followed) return [agentFollowed(data, metadata.now)];
  // Following again updates the same pool: one row per user, agent and wallet context.
  if (sameSettings(state.settings, data.settings)) return [];
  return [{ type: 'FollowSettingsUpdated', data: { ...data.settings, updatedAt: metadata.now.toISOString() } }];
}

function credit({ data, metadata }: CreditPool, state: PoolState): PoolEvent[] {
  const { transfer, resumed } = data;
  const { transferId, amountMicro, to } = transfer;
  if (Object.hasOwn(state.transfers, transferId)) return [];
  const added: PoolEvent = { type: 'AllocationAdded', data: { transferId, amountMicro, confirmed: true } };
  if (!state.followed) {
    if (!to.follow) return [{ type: 'TransferRejected', data: { transferId, reason: 'the pool is not open and the transfer carries no follow to open it' } }];
    const { agentId, userId, walletContext } = to;
    return [agentFollowed({ agentId, userId, walletContext, ...to.follow }, metadata.now), added];
  }
  const events = resumed || !to.follow ? [] : follow({ type: 'FollowAgent', data: { ...to, ...to.follow }, metadata }, state);
  return [...events, added];
}

export function decide(command: PoolCommand, state: PoolState): PoolEvent[] {
  switch (command.type) {
    case 'FollowAgent':
      return follow(command, state);
    case 'CreditPool':
      return credit(command, state);
    default:
      return assertNever(command);
  }
}

export const poolDecider: Aggregate<PoolCommand, PoolState, PoolEvent> = { streamOf: poolStream, initialState, evolve, decide };
