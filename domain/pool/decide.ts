import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { refuse } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { PoolEndpoint, TransferPlan } from '../transfer/plan.ts';
import type { WalletContext } from '../wallet/events.ts';
import { walletModeOf, type AgentTerms, type BridgeStatus, type FollowSettings, type PoolEvent } from './events.ts';
import { currentBalanceUsd, ledgerTermsOf, MIN_WITHDRAWAL_MICRO, pendingSuccessFeeUsd, poolFigures, splitFee, type ReconciliationStatus } from './ledger.ts';
import { followed } from './queries.ts';
import { sameSettings } from './settings.ts';
import { evolve, initialState, poolId, poolStream, type FollowedPool, type PoolState } from './state.ts';
import { closeTrade, markTrade, openTrade, type CloseTrade, type MarkTrade, type OpenTrade } from './trades.ts';

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

/**
 * Pay a transfer out of the pool (the source step of a withdrawal or of stop following), once per
 * transferId. A withdrawal takes at most withdrawableUsd; a close (`transfer.from.close`) settles
 * the pending fees, pays out everything and closes the pool. Real context: reserved until the
 * venue confirms.
 */
export type DebitPool = Command<'DebitPool', { transfer: TransferPlan }>;

/** The venue's answer for a pending add or withdrawal (the reconciliation worker sends it). */
export type SettleAllocation = Command<
  'SettleAllocation',
  { transferId: string; outcome: 'confirmed' | 'failed'; amountMicro: MicroUsd; reason?: string }
>;

/** Where a real perp pool's bridge transfer stands, as the bridge reports it. */
export type RecordBridgeStatus = Command<'RecordBridgeStatus', { transferId: string; status: BridgeStatus; bridgeTransactionId: string | null }>;

/** The reconciliation worker's reading of the venue for this pool. */
export type ObserveVenue = Command<
  'ObserveVenue',
  { status: ReconciliationStatus; venueEquityMicro: MicroUsd | null; venueFreeMarginMicro: MicroUsd | null; gapMicro: MicroUsd | null }
>;

export type PoolCommand = FollowAgent | CreditPool | DebitPool | SettleAllocation | RecordBridgeStatus | OpenTrade | MarkTrade | CloseTrade | ObserveVenue;

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
function ensureNoLegInFlight(state: PoolState): void {
  if (Object.keys(state.pending).length > 0) {
    throw refuse('ALLOCATION_PENDING', 'an add or withdrawal of this pool is waiting for the venue; retry once it settles');
  }
}

function follow({ data, metadata }: FollowAgent, state: PoolState): PoolEvent[] {
  if (data.topsUp !== undefined && !sameOpening(state, data.topsUp)) throw refuse('SUBSCRIPTION_NOT_FOUND', STOPPED_MEANWHILE);
  if (!state.followed) {
    ensureNoLegInFlight(state);
    return [agentFollowed(data, metadata.now)];
  }
  // Following again updates the same pool: one row per user, agent and wallet context.
  if (sameSettings(state.settings, data.settings)) return [];
  return [{ type: 'FollowSettingsUpdated', data: { ...data.settings, updatedAt: metadata.now.toISOString() } }];
}

/** A real perp pool's leg goes through the bridge: it starts PENDING_BRIDGE (docs/domain.md, Bridge lifecycle). */
function bridging(walletContext: WalletContext, terms: AgentTerms, transferId: string, at: string): PoolEvent[] {
  if (walletContext !== 'real' || terms.venue !== 'PERP_VENUE') return [];
  return [{ type: 'BridgeStatusChanged', data: { transferId, status: 'PENDING_BRIDGE', bridgeTransactionId: null, at } }];
}

const poolTo = (transfer: TransferPlan): PoolEndpoint => {
  if (transfer.to.kind !== 'pool') throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId} is not paid to a pool`);
  return transfer.to;
};

function credit({ data, metadata }: CreditPool, state: PoolState): PoolEvent[] {
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
    const opening = agentFollowed({ agentId, userId, walletContext, settings, terms, ...(seatClaim !== undefined ? { seatClaim } : {}) }, metadata.now);
    return [opening, added, ...bridging(to.walletContext, terms, transferId, at)];
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
  const changes = follow({ type: 'FollowAgent', data: { agentId: to.agentId, userId: to.userId, walletContext: to.walletContext, settings, terms, topsUp }, metadata }, state);
  return [...changes, added, ...bridging(state.walletContext, state.terms, transferId, at)];
}

const figuresOf = (pool: FollowedPool) => poolFigures(pool.ledger, ledgerTermsOf(pool));

/**
 * The pool's pending success fee moved to the creator and the platform; real pools only, and only
 * when due. Never more than is free: the fee owed is net of open losses, so it can grow back once
 * a trade recovers after a withdrawal took what was free then; the margin of open trades and the
 * withdrawals on their way out stay covered, and what is not free now is settled next time.
 */
function settleFees(pool: FollowedPool, at: string): PoolEvent[] {
  if (pool.walletContext !== 'real') return [];
  const { successFeePercent } = pool.terms;
  const { ledger } = pool;
  const free = currentBalanceUsd(ledger) - ledger.locked - ledger.pendingOut;
  const fee = Math.min(pendingSuccessFeeUsd(ledger, successFeePercent), free);
  if (fee <= 0) return [];
  const { platform, creator } = splitFee(fee);
  return [
    {
      type: 'FeesSettled',
      data: {
        settlementId: `${pool.poolId}#fees-${pool.settlements + 1}`,
        feeMicro: fee,
        platformMicro: platform,
        creatorMicro: creator,
        realizedMicro: pool.ledger.realized,
        unrealizedMicro: pool.ledger.unrealized,
        feesChargedBeforeMicro: pool.ledger.feesCharged,
        successFeePercent,
        at,
      },
    },
  ];
}

const hasOpenTrades = (pool: FollowedPool): boolean => Object.keys(pool.openTrades).length > 0;

function debit({ data, metadata }: DebitPool, state: PoolState): PoolEvent[] {
  const { transfer } = data;
  if (transfer.from.kind !== 'pool') throw refuse('VALIDATION_FAILED', `transfer ${transfer.transferId} is not paid by a pool`);
  if (state.transfers.has(transfer.transferId)) return [];
  const pool = followed(state);
  const at = metadata.now.toISOString();
  const pending = pool.walletContext === 'real';
  if (transfer.from.close) {
    if (hasOpenTrades(pool)) {
      throw refuse('ALLOCATION_FUNDS_IN_USE', 'this pool has open trades: close them before you stop following', { openTrades: Object.keys(pool.openTrades).length });
    }
    ensureNoLegInFlight(pool);
    const fees = settleFees(pool, at);
    const settled = fees.reduce(evolve, pool as PoolState) as FollowedPool;
    const { currentBalanceUsd } = figuresOf(settled);
    const out: PoolEvent[] =
      currentBalanceUsd > 0
        ? [
            { type: 'WithdrawalRequested', data: { transfer: { ...transfer, amountMicro: currentBalanceUsd }, pending, at } },
            ...bridging(pool.walletContext, pool.terms, transfer.transferId, at),
          ]
        : [];
    return [...fees, ...out, { type: 'PoolClosed', data: { at, transferId: transfer.transferId } }];
  }
  const figures = figuresOf(pool);
  if (transfer.amountMicro > figures.withdrawableUsd) {
    const details = { withdrawableUsd: microToUsd(figures.withdrawableUsd), requestedUsd: microToUsd(transfer.amountMicro) };
    if (hasOpenTrades(pool)) {
      throw refuse(
        'ALLOCATION_FUNDS_IN_USE',
        `open trades of this agent lock part of the pool: ${microToUsd(figures.withdrawableUsd)} USD can be withdrawn now`,
        details,
      );
    }
    throw refuse('EXCEEDS_WITHDRAWABLE', `at most ${microToUsd(figures.withdrawableUsd)} USD can be withdrawn from this pool`, details);
  }
  return [{ type: 'WithdrawalRequested', data: { transfer, pending, at } }, ...bridging(pool.walletContext, pool.terms, transfer.transferId, at)];
}

function settle({ data, metadata }: SettleAllocation, state: PoolState): PoolEvent[] {
  const { transferId, reason } = data;
  const leg = state.pending[transferId];
  if (!leg) {
    if (state.transfers.has(transferId)) return [];
    throw refuse('TRANSFER_NOT_FOUND', `no transfer ${transferId} is pending in this pool`);
  }
  // A payout the venue confirms for nothing moved nothing: it is a failure (the reservation goes back).
  const nothingPaid = data.outcome === 'confirmed' && leg.direction === 'out' && data.amountMicro === 0;
  const outcome = nothingPaid ? 'failed' : data.outcome;
  const amountMicro = outcome === 'confirmed' ? data.amountMicro : 0;
  if (!Number.isSafeInteger(amountMicro) || amountMicro < 0 || amountMicro > leg.amountMicro) {
    throw refuse('VALIDATION_FAILED', `a settlement moves between 0 and ${leg.amountMicro} micro-USD`);
  }
  // The wallet paid the whole add: a part confirmed would leave the rest in no ledger. A deposit
  // reaches the venue in full (only a reclaim may move less than asked).
  if (leg.direction === 'in' && outcome === 'confirmed' && amountMicro !== leg.amountMicro) {
    throw refuse('VALIDATION_FAILED', `an add is confirmed in full (${leg.amountMicro} micro-USD) or fails`);
  }
  const at = metadata.now.toISOString();
  const events: PoolEvent[] = [{ type: 'AllocationSettled', data: { transferId, direction: leg.direction, outcome, amountMicro, ...(reason ? { reason } : nothingPaid ? { reason: 'the venue paid nothing out' } : {}), at } }];
  if (state.followed && state.bridge?.transferId === transferId) {
    const status = outcome === 'confirmed' ? 'CONFIRMED' : 'FAILED';
    events.push({ type: 'BridgeStatusChanged', data: { transferId, status, bridgeTransactionId: state.bridge.transactionId, at } });
  }
  // Fees are settled when a withdrawal confirms (docs/domain.md, Pool ledger).
  if (state.followed && leg.direction === 'out' && outcome === 'confirmed') {
    const after = events.reduce(evolve, state as PoolState) as FollowedPool;
    events.push(...settleFees(after, at));
  }
  return events;
}

function bridgeStatus({ data, metadata }: RecordBridgeStatus, state: PoolState): PoolEvent[] {
  if (!state.followed || !Object.hasOwn(state.pending, data.transferId)) return [];
  const { bridge } = state;
  if (bridge?.transferId === data.transferId && bridge.status === data.status && bridge.transactionId === data.bridgeTransactionId) return [];
  return [{ type: 'BridgeStatusChanged', data: { ...data, at: metadata.now.toISOString() } }];
}

/** A reading is recorded when the status changes or a venue figure moves by a cent or more. */
function observe({ data, metadata }: ObserveVenue, state: PoolState): PoolEvent[] {
  if (!state.followed) return [];
  const last = state.reconciliation;
  const moved = (a: number | null, b: number | null) => (a === null) !== (b === null) || Math.abs((a ?? 0) - (b ?? 0)) >= MIN_WITHDRAWAL_MICRO;
  if (
    last &&
    last.status === data.status &&
    !moved(last.venueEquityMicro, data.venueEquityMicro) &&
    !moved(last.venueFreeMarginMicro, data.venueFreeMarginMicro) &&
    !moved(last.gapMicro, data.gapMicro)
  ) {
    return [];
  }
  return [{ type: 'ReconciliationObserved', data: { ...data, at: metadata.now.toISOString() } }];
}

export function decide(command: PoolCommand, state: PoolState): PoolEvent[] {
  switch (command.type) {
    case 'FollowAgent':
      return follow(command, state);
    case 'CreditPool':
      return credit(command, state);
    case 'DebitPool':
      return debit(command, state);
    case 'SettleAllocation':
      return settle(command, state);
    case 'RecordBridgeStatus':
      return bridgeStatus(command, state);
    case 'OpenTrade':
      return openTrade(command, state);
    case 'MarkTrade':
      return markTrade(command, state);
    case 'CloseTrade':
      return closeTrade(command, state);
    case 'ObserveVenue':
      return observe(command, state);
    default:
      return assertNever(command);
  }
}

export const poolDecider: Aggregate<PoolCommand, PoolState, PoolEvent> = { streamOf: poolStream, initialState, evolve, decide };
