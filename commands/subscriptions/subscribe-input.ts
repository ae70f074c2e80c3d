// Cross-field rules of the follow body; each broken rule is one message of the 400.
import type { z } from 'zod';
import type { AllocationMode, TradeMode, WalletMode } from '../../domain/pool/events.ts';
import type { WalletContext } from '../../domain/wallet/events.ts';

interface Body {
  tradeMode?: TradeMode;
  subscriptionType?: TradeMode;
  walletContext?: WalletContext;
  walletMode?: WalletMode;
  allocationMode?: AllocationMode;
  allocationPercentageMin?: number;
  allocationPercentageMax?: number;
  allocationAmountUsd?: number;
  allocationAmountSol?: number;
}

const requiredField: Record<AllocationMode, (b: Body) => string | null> = {
  USD_AMOUNT: (b) => (b.allocationAmountUsd === undefined ? 'allocationAmountUsd is required when allocationMode is USD_AMOUNT' : null),
  SOL_AMOUNT: (b) => (b.allocationAmountSol === undefined ? 'allocationAmountSol is required when allocationMode is SOL_AMOUNT' : null),
  PERCENTAGE_RANGE: (b) =>
    b.allocationPercentageMin === undefined && b.allocationPercentageMax === undefined
      ? 'allocationPercentageMin or allocationPercentageMax is required when allocationMode is PERCENTAGE_RANGE'
      : null,
};

export function subscribeRules(b: Body, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (b.tradeMode && b.subscriptionType && b.tradeMode !== b.subscriptionType) {
    issue('subscriptionType', 'subscriptionType (deprecated alias of tradeMode) differs from tradeMode');
  }
  if (b.walletContext && b.walletMode && b.walletMode !== (b.walletContext === 'virtual' ? 'VIRTUAL' : 'REAL')) {
    issue('walletMode', 'walletMode (deprecated alias of walletContext) differs from walletContext');
  }
  if (b.allocationMode) {
    const missing = requiredField[b.allocationMode](b);
    if (missing) issue('allocationMode', missing);
  } else {
    const kinds = [
      b.allocationAmountUsd !== undefined,
      b.allocationAmountSol !== undefined,
      b.allocationPercentageMin !== undefined || b.allocationPercentageMax !== undefined,
    ].filter(Boolean).length;
    if (kinds > 1) issue('allocationMode', 'allocationMode is required when amounts of more than one allocation mode are given');
  }
  const { allocationPercentageMin: min, allocationPercentageMax: max } = b;
  if (min !== undefined && max !== undefined && min > max) {
    issue('allocationPercentageMin', 'allocationPercentageMin must not exceed allocationPercentageMax');
  }
}
