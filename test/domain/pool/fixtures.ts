import type { OpenTrade } from '../../../domain/pool/trades.ts';
import type { AgentTerms, FollowSettings } from '../../../domain/pool/events.ts';
import type { TradeLimits } from '../../../domain/pool/limits.ts';

// The agent terms and follow settings the pool decider tests start from.
export const terms: AgentTerms = {
  agentName: 'Trend Rider',
  agentImageUrl: null,
  venue: 'SPOT_VENUE',
  maxLeverage: 1,
  successFeePercent: 20,
  minAllocationUsd: 100_000_000,
  minTradeUsd: 10_000_000,
  minPerTradePercent: 1,
  recommendedPerTradePercent: 5,
  maxConcurrentPositions: 3,
  maxEntriesPerTrade: 2,
};

export const settings: FollowSettings = {
  tradeMode: 'AUTO_TRADING',
  subscriptionType: 'AUTO_TRADING',
  allocationMode: 'USD_AMOUNT',
  allocationPercentageMin: null,
  allocationPercentageMax: null,
  allocationAmountUsd: 500_000_000,
  allocationAmountSol: null,
  goLiveUponConfirmation: true,
  isPaused: false,
};

/** Free capital only: no limit of an agent's. */
export const noLimits: TradeLimits = {
  maxOpenPositions: null,
  maxTradesPerDay: null,
  cooldownSeconds: null,
  maxDailyLossPct: null,
  maxPositionPct: null,
  tokenWhitelist: [],
  tokenBlacklist: [],
  minTradeMicro: 0,
};

/** A group of one long trade of a fixed margin, checked against free capital only: a trade as the tests (and benches) enter it. */
export const oneTrade = (tradeId: string, marginMicro: number, token = 'SOL'): OpenTrade['data'] => ({
  limits: noLimits,
  trades: [{ tradeId, size: { marginMicro }, token, side: 'long', signalId: null }],
});
