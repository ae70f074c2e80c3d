// The follow and the credit that opens or tops up a pool (the pool decider's FollowAgent and
// CreditPool): a follow's money lands only on the pool as the follow found it, and a refusal that
// says the pool was stopped or opened meanwhile is a lost race the follow plans again.
import type { Command } from '../shared/decider.ts';
import { invariant, refuse } from '../shared/errors.ts';
import type { PoolEndpoint, TransferPlan } from '../transfer/plan.ts';
import type { WalletContext } from '../wallet/events.ts';
import { walletModeOf, type AgentTerms, type FollowSettings, type PoolEvent } from './events.ts';
import { sameSettings } from './settings.ts';
import { poolId, type PoolState } from './state.ts';

/**
 * Follow an agent without moving money (nothing to add), or follow it again with new settings.
 * `topsUp`: the follow found the pool followed in this opening and only changes its settings, so it
 * is refused once that opening stopped (the request plans again); absent, it opens a pool not
 * followed (with `seatClaim` for a beta agent).
 */
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
    topsUp?: number;
    seatClaim?: string;
  }
>;

/**
 * Credit a transfer (the destination step of domain/transfer/process.ts), once per transferId. A
 * pool that does not exist opens with the transfer's follow; without one, the credit is rejected
 * for good (TransferRejected) so the source may give the money back. A request (not `resumed`)
 * also applies its follow's settings to an existing pool. In the real context the credit is
 * pending until the venue confirms it (SettleAllocation).
 */
export type CreditPool = Command<'CreditPool', { transfer: TransferPlan; resumed: boolean }>;

function agentFollowed(data: Omit<FollowAgent['data'], 'topsUp'>, now: Date): PoolEvent {
  const { agentId, userId, walletContext, settings, terms, seatClaim } = data;
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
      ...(seatClaim !== undefined ? { seatClaim } : {}),
    },
  };
}

/**
 * A pool opened by a follow: AgentFollowed, then GoLiveDeferred when the follower asked not to go
 * live upon this configuration (docs/decisions.md, "Trade modes and going live").
 */
function opening(data: Omit<FollowAgent['data'], 'topsUp'>, now: Date): PoolEvent[] {
  const followed = agentFollowed(data, now);
  return data.settings.goLiveUponConfirmation ? [followed] : [followed, { type: 'GoLiveDeferred', data: { at: now.toISOString() } }];
}

const STOPPED_MEANWHILE = 'the user stopped following this pool while the follow was in flight; the follow plans again';
const OPENED_MEANWHILE = 'another follow opened this pool while the follow was in flight; the follow plans again';

/**
 * Whether a follow's refusal (its settings refused, or its credit rejected with this reason) says
 * only that the pool was stopped or opened by another request while the follow was in flight: a
 * lost race, which the follow plans again, never a refusal to answer.
 */
export const lostOpeningRace = (reason: string): boolean => reason === STOPPED_MEANWHILE || reason === OPENED_MEANWHILE;

/** A follow planned on an opening of the pool finds that opening still open. */
const sameOpening = (state: PoolState, topsUp: number): boolean => state.followed && (state.openings ?? 0) === topsUp;

/** A pool that stopped with a withdrawal still at the venue opens again only once it settles. */
export function ensureNoLegInFlight(state: PoolState): void {
  if (Object.keys(state.pending).length > 0) {
    throw refuse('ALLOCATION_PENDING', 'an add or withdrawal of this pool is waiting for the venue; retry once it settles');
  }
}

export function follow({ data, metadata }: FollowAgent, state: PoolState): PoolEvent[] {
  if (data.topsUp !== undefined && !sameOpening(state, data.topsUp)) throw refuse('SUBSCRIPTION_NOT_FOUND', STOPPED_MEANWHILE);
  if (!state.followed) {
    ensureNoLegInFlight(state);
    return opening(data, metadata.now);
  }
  // Following again updates the same pool: one row per user, agent and wallet context. A pool
  // awaiting its go-live goes live with a follow asking for it; a live pool stays live (pausing is
  // what stops it).
  const at = metadata.now.toISOString();
  const events: PoolEvent[] = sameSettings(state.settings, data.settings) ? [] : [{ type: 'FollowSettingsUpdated', data: { ...data.settings, updatedAt: at } }];
  if (state.awaitingGoLive && data.settings.goLiveUponConfirmation) events.push({ type: 'PoolWentLive', data: { at } });
  return events;
}

/** A real perp pool's leg goes through the bridge: it starts PENDING_BRIDGE (docs/domain-rules.md, Bridge lifecycle). */
export function bridging(walletContext: WalletContext, terms: AgentTerms, transferId: string, at: string): PoolEvent[] {
  if (walletContext !== 'real' || terms.venue !== 'PERP_VENUE') return [];
  return [{ type: 'BridgeStatusChanged', data: { transferId, status: 'PENDING_BRIDGE', bridgeTransactionId: null, at } }];
}

const poolTo = (transfer: TransferPlan): PoolEndpoint => {
  invariant(transfer.to.kind === 'pool', `transfer ${transfer.transferId} is not paid to a pool`);
  return transfer.to;
};

export function credit({ data, metadata }: CreditPool, state: PoolState): PoolEvent[] {
  const { transfer, resumed } = data;
  const { transferId, amountMicro } = transfer;
  const to = poolTo(transfer);
  if (state.transfers.has(transferId)) return [];
  const at = metadata.now.toISOString();
  // Real context: the capital is on its way to the venue; it counts once the venue confirms it.
  const added: PoolEvent =
    to.walletContext === 'real'
      ? { type: 'AllocationPending', data: { transferId, amountMicro, at } }
      : { type: 'AllocationAdded', data: { transferId, amountMicro, confirmed: true, at } };
  const rejected = (reason: string): PoolEvent[] => [{ type: 'TransferRejected', data: { transferId, reason } }];
  if (!state.followed) {
    if (!to.follow) return rejected('the pool is not open and the transfer carries no follow to open it');
    // A follow planned on the open pool tops that opening up: it never reopens the pool stopped
    // meanwhile (without the seat an opening holds, with less than its settings ask for).
    if (to.follow.topsUp !== undefined) return rejected(STOPPED_MEANWHILE);
    // A top-up finished by the recovery or a settlement never reopens a pool the user stopped
    // meanwhile: the money goes back to the wallet (a live follow request may reopen it).
    if (resumed && state.closedAt !== null) return rejected('the user stopped following this pool while the transfer was in flight');
    if (Object.keys(state.pending).length > 0) return rejected('the pool stopped with a withdrawal still at the venue; follow again once it settles');
    const { agentId, userId, walletContext } = to;
    const { settings, terms, seatClaim } = to.follow;
    const opened = opening({ agentId, userId, walletContext, settings, terms, ...(seatClaim !== undefined ? { seatClaim } : {}) }, metadata.now);
    return [...opened, added, ...bridging(to.walletContext, terms, transferId, at)];
  }
  if (!to.follow) return [added, ...bridging(state.walletContext, state.terms, transferId, at)];
  // A follow's amount was planned for the pool as it found it, so whoever credits it (the request
  // or the recovery) it lands on that pool only: an opening finds an empty pool that another
  // follow opened meanwhile, a top-up an opening that stopped (the pool opened anew since, that
  // opening paid out). The money goes back to the wallet; the request plans again.
  const { settings, terms, topsUp } = to.follow;
  if (topsUp === undefined) return rejected(OPENED_MEANWHILE);
  if (!sameOpening(state, topsUp)) return rejected(STOPPED_MEANWHILE);
  if (resumed) return [added, ...bridging(state.walletContext, state.terms, transferId, at)];
  const changes = follow(
    { type: 'FollowAgent', data: { agentId: to.agentId, userId: to.userId, walletContext: to.walletContext, settings, terms, topsUp }, metadata },
    state,
  );
  return [...changes, added, ...bridging(state.walletContext, state.terms, transferId, at)];
}
