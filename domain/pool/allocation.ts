// What a follow asks for: the settings it leaves on the pool and the capital it wants there.
import type { ListedAgent } from '../agent/state.ts';
import { refuse } from '../shared/errors.ts';
import { LAMPORTS_PER_SOL, microToUsd, mulDiv, percentFraction, type MicroUsd } from '../shared/money.ts';
import type { AgentTerms, AllocationSettings, FollowSettings, TradeMode } from './events.ts';
import { allocatedUsd } from './ledger.ts';
import type { PoolState } from './state.ts';
import { ensureFunds, ensureNotFrozen } from '../wallet/guards.ts';
import type { WalletContext } from '../wallet/events.ts';
import { balanceOf, type WalletState } from '../wallet/state.ts';

/** The follower's explicit choices; an absent one keeps the pool's current value (or the default on a first follow). */
export interface FollowChoices {
  tradeMode?: TradeMode;
  allocation?: AllocationSettings;
  goLiveUponConfirmation?: boolean;
  isPaused?: boolean;
}

/**
 * Merges the choices over the current settings. A first follow without an allocation asks for the
 * agent's minimum in USD: the least capital the agent accepts, never more than the user chose.
 */
export function resolveSettings(choices: FollowChoices, current: FollowSettings | null, terms: AgentTerms): FollowSettings {
  const tradeMode = choices.tradeMode ?? current?.tradeMode ?? 'AUTO_TRADING';
  const allocation: AllocationSettings = choices.allocation ??
    (current && {
      allocationMode: current.allocationMode,
      allocationPercentageMin: current.allocationPercentageMin,
      allocationPercentageMax: current.allocationPercentageMax,
      allocationAmountUsd: current.allocationAmountUsd,
      allocationAmountSol: current.allocationAmountSol,
    }) ?? {
      allocationMode: 'USD_AMOUNT',
      allocationPercentageMin: null,
      allocationPercentageMax: null,
      allocationAmountUsd: terms.minAllocationUsd,
      allocationAmountSol: null,
    };
  return {
    ...allocation,
    tradeMode,
    subscriptionType: tradeMode,
    goLiveUponConfirmation: choices.goLiveUponConfirmation ?? current?.goLiveUponConfirmation ?? true,
    isPaused: choices.isPaused ?? current?.isPaused ?? false,
  };
}

/**
 * The capital the settings ask for, in micro-USD, floored. A percentage range takes its maximum
 * (its minimum when no maximum is given) of the wallet context's current balance.
 */
export function targetAllocationMicro(a: AllocationSettings, walletBalanceMicro: MicroUsd, solPriceMicro: MicroUsd): MicroUsd {
  switch (a.allocationMode) {
    case 'USD_AMOUNT':
      return a.allocationAmountUsd ?? 0;
    case 'SOL_AMOUNT':
      return mulDiv(solPriceMicro, BigInt(a.allocationAmountSol ?? 0), LAMPORTS_PER_SOL);
    case 'PERCENTAGE_RANGE': {
      const percent = a.allocationPercentageMax ?? a.allocationPercentageMin ?? 0;
      return mulDiv(Math.max(0, walletBalanceMicro), ...percentFraction(percent));
    }
  }
}

/**
 * How much to add so the pool holds the target. A follow never withdraws: a target below what is
 * allocated adds nothing. The pool must end at or above the agent's minimum. Capital on its way
 * (a pending add or withdrawal in the real context) counts as arrived, so a repeated follow does
 * not add it twice.
 */
export function topUpMicro(state: PoolState, targetMicro: MicroUsd, minAllocationMicro: MicroUsd): MicroUsd {
  const allocated = state.followed ? Math.max(0, allocatedUsd(state.ledger) + state.ledger.pendingIn - state.ledger.pendingOut) : 0;
  if (Math.max(allocated, targetMicro) < minAllocationMicro) {
    throw refuse(
      'BELOW_MIN_ALLOCATION',
      `the allocation of ${microToUsd(targetMicro)} USD is below the agent's minimum allocation of ${microToUsd(minAllocationMicro)} USD`,
      { minAllocationUsd: microToUsd(minAllocationMicro) },
    );
  }
  return Math.max(0, targetMicro - allocated);
}

/** The agent's terms a first follow keeps (limits in micro-USD; leverage 1 on the spot venue). */
export function termsOf(agent: ListedAgent): AgentTerms {
  return {
    agentName: agent.name,
    agentImageUrl: agent.avatarUrl ?? null,
    venue: agent.venue,
    maxLeverage: agent.maxLeverage ?? 1,
    successFeePercent: agent.successFeePercent,
    minAllocationUsd: agent.minAllocationMicroUsd,
    minTradeUsd: agent.minTradeMicroUsd,
    minPerTradePercent: agent.minPerTradePercent,
    recommendedPerTradePercent: agent.recommendedPerTradePercent,
    maxConcurrentPositions: agent.maxConcurrentPositions,
    maxEntriesPerTrade: agent.maxEntriesPerTrade,
  };
}

/** What one follow request does to its pool: the settings it leaves, the terms it keeps, what it adds. */
export interface FollowPlan {
  settings: FollowSettings;
  terms: AgentTerms;
  /** micro-USD to move from the wallet context into the pool (0: settings only) */
  topUpMicro: MicroUsd;
}

export interface FollowFacts {
  pool: PoolState;
  wallet: WalletState;
  walletContext: WalletContext;
  /** the agent's terms now: a first follow keeps them, an existing pool keeps its own */
  agentTerms: AgentTerms;
  choices: FollowChoices;
  virtualStartMicro: MicroUsd;
  solPriceMicro: MicroUsd;
}

/**
 * Plans a follow on the pool and wallet as they are. Refuses below the agent's minimum, and when
 * the wallet cannot pay, before anything is taken (a beta seat) or moved; the debit re-checks the
 * funds under the wallet's expected revision.
 */
export function planFollow(f: FollowFacts): FollowPlan {
  const terms = f.pool.followed ? f.pool.terms : f.agentTerms;
  const settings = resolveSettings(f.choices, f.pool.followed ? f.pool.settings : null, terms);
  const balance = balanceOf(f.wallet, f.walletContext, f.virtualStartMicro);
  const topUp = topUpMicro(f.pool, targetAllocationMicro(settings, balance, f.solPriceMicro), terms.minAllocationUsd);
  // A frozen wallet may still change a pool's settings: only moving money out of it is refused.
  if (topUp > 0) ensureNotFrozen(f.wallet);
  ensureFunds(f.wallet, f.walletContext, topUp, f.virtualStartMicro);
  return { settings, terms, topUpMicro: topUp };
}
