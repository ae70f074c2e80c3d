import { assertNever } from '../shared/decider.ts';
import { badRequest } from '../shared/errors.ts';
import type { MicroUsd } from '../shared/money.ts';
import type { WalletContext } from '../wallet/events.ts';
import { walletModeOf, type AgentTerms, type FollowOpening, type FollowSettings, type PoolEvent } from './events.ts';
import type { PoolState } from './state.ts';

/** A wallet debit for this pool: its id and the amount the wallet recorded. */
type Transfer = { transferId: string; amountMicro: MicroUsd };

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
    transfer?: Transfer;
    now: Date;
  };
}

/**
 * Finish a follow that stopped after its wallet debit (the transfer recovery sends it): credit the
 * debit's exact amount once, opening the pool with the interrupted follow's settings and terms when
 * it was the first. An existing pool's settings are never touched: a later follow may have changed them.
 */
export interface CompleteTransfer {
  type: 'CompleteTransfer';
  data: {
    poolId: string;
    userId: string;
    walletContext: WalletContext;
    transfer: Transfer;
    /** the interrupted follow's settings and terms (from the debit); used only to open the pool */
    opening: FollowOpening;
    now: Date;
  };
}

export type PoolCommand = FollowAgent | CompleteTransfer;

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

function agentFollowed(data: Omit<FollowAgent['data'], 'transfer'>): PoolEvent {
  const { poolId, agentId, userId, walletContext, settings, terms, now } = data;
  return {
    type: 'AgentFollowed',
    data: { ...settings, poolId, agentId, userId, walletContext, walletMode: walletModeOf(walletContext), terms, subscribedAt: now.toISOString() },
  };
}

/** The credit of a wallet debit, once per transferId. */
function credit(transfer: Transfer, state: PoolState): PoolEvent[] {
  if (state.followed && Object.hasOwn(state.transfers, transfer.transferId)) return [];
  if (!Number.isSafeInteger(transfer.amountMicro) || transfer.amountMicro <= 0) {
    throw badRequest('the amount to allocate must be positive');
  }
  return [{ type: 'AllocationAdded', data: { transferId: transfer.transferId, amountMicro: transfer.amountMicro, confirmed: true } }];
}

function followAgent(command: FollowAgent['data'], state: PoolState): PoolEvent[] {
  const { settings, transfer, now } = command;
  const events: PoolEvent[] = [];
  if (!state.followed) {
    events.push(agentFollowed(command));
  } else if (!sameSettings(state.settings, settings)) {
    // Following again updates the same pool: one row per user, agent and wallet context.
    events.push({ type: 'FollowSettingsUpdated', data: { ...settings, updatedAt: now.toISOString() } });
  }
  if (transfer) events.push(...credit(transfer, state));
  return events;
}

function completeTransfer(command: CompleteTransfer['data'], state: PoolState): PoolEvent[] {
  const credited = credit(command.transfer, state);
  if (credited.length === 0 || state.followed) return credited;
  const { poolId, userId, walletContext, opening, now } = command;
  return [agentFollowed({ poolId, userId, walletContext, now, ...opening }), ...credited];
}

export function decide(command: PoolCommand, state: PoolState): PoolEvent[] {
  switch (command.type) {
    case 'FollowAgent':
      return followAgent(command.data, state);
    case 'CompleteTransfer':
      return completeTransfer(command.data, state);
    default:
      return assertNever(command);
  }
}
