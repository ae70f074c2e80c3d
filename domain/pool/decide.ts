import { assertNever } from '../shared/decider.ts';
import { badRequest } from '../shared/errors.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { WalletContext } from '../wallet/events.ts';
import { walletModeOf, type AgentTerms, type FollowSettings, type PoolEvent } from './events.ts';
import type { PoolState } from './state.ts';

/** Follow an agent, or follow it again with new settings; optionally credit a wallet transfer. */
export interface FollowAgent {
  type: 'FollowAgent';
  data: {
    poolId: string;
    agentId: string;
    userId: string;
    walletContext: WalletContext;
    /** fully resolved (see resolveSettings) */
    settings: FollowSettings;
    /** the agent's terms now; kept only by a first follow */
    terms: AgentTerms;
    /** a wallet debit already made for this pool, credited once per transferId */
    transfer?: { transferId: string; amountMicro: MicroUsd };
    now: Date;
  };
}

export type PoolCommand = FollowAgent;

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

const sameSettings = (a: FollowSettings, b: FollowSettings): boolean => settingKeys.every((k) => a[k] === b[k]);

function followAgent(command: FollowAgent['data'], state: PoolState): PoolEvent[] {
  const { poolId, agentId, userId, walletContext, settings, terms, transfer, now } = command;
  const at = now.toISOString();
  const events: PoolEvent[] = [];
  if (!state.followed) {
    events.push({
      type: 'AgentFollowed',
      data: { ...settings, poolId, agentId, userId, walletContext, walletMode: walletModeOf(walletContext), terms, subscribedAt: at },
    });
  } else if (!sameSettings(state.settings, settings)) {
    // Following again updates the same pool: one row per user, agent and wallet context.
    events.push({ type: 'FollowSettingsUpdated', data: { ...settings, updatedAt: at } });
  }
  if (transfer && !(state.followed && Object.hasOwn(state.transfers, transfer.transferId))) {
    if (!Number.isSafeInteger(transfer.amountMicro) || transfer.amountMicro <= 0) {
      throw badRequest('the amount to allocate must be positive');
    }
    events.push({ type: 'AllocationAdded', data: { transferId: transfer.transferId, amountMicro: transfer.amountMicro, confirmed: true } });
  }
  return events;
}

export function decide(command: PoolCommand, state: PoolState): PoolEvent[] {
  switch (command.type) {
    case 'FollowAgent':
      return followAgent(command.data, state);
    default:
      return assertNever(command.type);
  }
}
