import { assertNever, type Aggregate, type Command } from '../shared/decider.ts';
import { invariant, refuse } from '../shared/errors.ts';
import { microToUsd, type MicroUsd } from '../shared/money.ts';
import type { TransferPlan } from '../transfer/plan.ts';
import type { BridgeStatus, PoolEvent } from './events.ts';
import { bridging, credit, ensureNoLegInFlight, follow, type CreditPool, type FollowAgent } from './follow.ts';
import { currentBalanceUsd, ledgerTermsOf, MIN_WITHDRAWAL_MICRO, pendingSuccessFeeUsd, poolFigures, splitFee, type ReconciliationStatus } from './ledger.ts';
import { followed } from './queries.ts';
import { evolve, initialState, poolStream, type FollowedPool, type PoolState } from './state.ts';
import { closeTrade, markTrade, openTrade, type CloseTrade, type MarkTrade, type OpenTrade } from './trades.ts';

/**
 * Pay a transfer out of the pool (the source step of a withdrawal or of stop following), once per
 * transferId. A withdrawal takes at most withdrawableUsd; a close (`transfer.from.close`) settles
 * the pending fees, pays out everything and closes the pool. Real context: reserved until the
 * venue confirms.
 */
export type DebitPool = Command<'DebitPool', { transfer: TransferPlan }>;

/** The venue's answer for a pending add or withdrawal (the reconciliation worker sends it). */
export type SettleAllocation = Command<'SettleAllocation', { transferId: string; outcome: 'confirmed' | 'failed'; amountMicro: MicroUsd; reason?: string }>;

/** Where a real perp pool's bridge transfer stands, as the bridge reports it. */
export type RecordBridgeStatus = Command<'RecordBridgeStatus', { transferId: string; status: BridgeStatus; bridgeTransactionId: string | null }>;

/** The reconciliation worker's reading of the venue for this pool. */
export type ObserveVenue = Command<
  'ObserveVenue',
  { status: ReconciliationStatus; venueEquityMicro: MicroUsd | null; venueFreeMarginMicro: MicroUsd | null; gapMicro: MicroUsd | null }
>;

export type PoolCommand = FollowAgent | CreditPool | DebitPool | SettleAllocation | RecordBridgeStatus | OpenTrade | MarkTrade | CloseTrade | ObserveVenue;

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
  invariant(transfer.from.kind === 'pool', `transfer ${transfer.transferId} is not paid by a pool`);
  if (state.transfers.has(transfer.transferId)) return [];
  const pool = followed(state);
  const at = metadata.now.toISOString();
  const pending = pool.walletContext === 'real';
  if (transfer.from.close) {
    if (hasOpenTrades(pool)) {
      throw refuse('ALLOCATION_FUNDS_IN_USE', 'this pool has open trades: close them before you stop following', {
        openTrades: Object.keys(pool.openTrades).length,
      });
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
  const events: PoolEvent[] = [
    {
      type: 'AllocationSettled',
      data: {
        transferId,
        direction: leg.direction,
        outcome,
        amountMicro,
        ...(reason ? { reason } : nothingPaid ? { reason: 'the venue paid nothing out' } : {}),
        at,
      },
    },
  ];
  if (state.followed && state.bridge?.transferId === transferId) {
    const status = outcome === 'confirmed' ? 'CONFIRMED' : 'FAILED';
    events.push({ type: 'BridgeStatusChanged', data: { transferId, status, bridgeTransactionId: state.bridge.transactionId, at } });
  }
  // Fees are settled when a withdrawal confirms (docs/domain-rules.md, Pool ledger).
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
