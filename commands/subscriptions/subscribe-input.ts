// The follow body (POST /api/v1/users/me/subscriptions) and its cross-field rules; each broken
// rule is one message of the refusal.
import { z } from 'zod';
import type { FollowChoices } from '../../domain/pool/allocation.ts';
import {
  allocationModeSchema,
  tradeModeSchema,
  walletModeSchema,
  type AllocationMode,
  type AllocationSettings,
  type TradeMode,
  type WalletMode,
} from '../../domain/pool/events.ts';
import { toUnits, usdToMicro } from '../../domain/shared/money.ts';
import { walletContextSchema, type WalletContext } from '../../domain/wallet/events.ts';

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

export const subscribeInput = z
  .object({
    agentId: z.string({ message: 'agentId is required' }).trim().min(1, 'agentId is required').max(200),
    tradeMode: tradeModeSchema.optional(),
    /** deprecated alias of tradeMode */
    subscriptionType: tradeModeSchema.optional(),
    walletContext: walletContextSchema.optional(),
    /** deprecated alias of walletContext */
    walletMode: walletModeSchema.optional(),
    allocationMode: allocationModeSchema.optional(),
    allocationPercentageMin: z.number().gt(0, 'allocationPercentageMin must be above 0').max(100, 'allocationPercentageMin must be at most 100').optional(),
    allocationPercentageMax: z.number().gt(0, 'allocationPercentageMax must be above 0').max(100, 'allocationPercentageMax must be at most 100').optional(),
    allocationAmountUsd: z.number().gt(0, 'allocationAmountUsd must be positive').max(1_000_000_000, 'allocationAmountUsd is too large').optional(),
    allocationAmountSol: z.number().gt(0, 'allocationAmountSol must be positive').max(1_000_000, 'allocationAmountSol is too large').optional(),
    goLiveUponConfirmation: z.boolean().optional(),
    isPaused: z.boolean().optional(),
  })
  .superRefine(subscribeRules);
export type SubscribeInput = z.infer<typeof subscribeInput>;

/** The allocation the body asks for, in the domain's units; undefined when it names none. */
export function allocationOf(input: SubscribeInput): AllocationSettings | undefined {
  const { allocationPercentageMin: pMin, allocationPercentageMax: pMax, allocationAmountUsd: usd, allocationAmountSol: sol } = input;
  const mode =
    input.allocationMode ??
    (usd !== undefined ? 'USD_AMOUNT' : sol !== undefined ? 'SOL_AMOUNT' : pMin !== undefined || pMax !== undefined ? 'PERCENTAGE_RANGE' : undefined);
  if (!mode) return undefined;
  return {
    allocationMode: mode,
    allocationPercentageMin: mode === 'PERCENTAGE_RANGE' ? (pMin ?? null) : null,
    allocationPercentageMax: mode === 'PERCENTAGE_RANGE' ? (pMax ?? null) : null,
    allocationAmountUsd: mode === 'USD_AMOUNT' && usd !== undefined ? usdToMicro(usd) : null,
    allocationAmountSol: mode === 'SOL_AMOUNT' && sol !== undefined ? Number(toUnits(sol, 9)) : null,
  };
}

export const choicesOf = (input: SubscribeInput): FollowChoices => ({
  tradeMode: input.tradeMode ?? input.subscriptionType,
  allocation: allocationOf(input),
  goLiveUponConfirmation: input.goLiveUponConfirmation,
  isPaused: input.isPaused,
});
