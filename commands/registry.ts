// Every command the dispatcher knows: its data, its result, its handler. Routes, workers and
// scripts send these; the transfer runner sends the step commands.
import type { Command } from '../domain/shared/decider.ts';
import type { TransferPlan } from '../domain/transfer/plan.ts';
import type { TransferOutcome, TransferStatus } from '../domain/transfer/process.ts';
import type { AgentState } from '../domain/agent/index.ts';
import type { Tools } from './dispatch.ts';
import { listAgent, type ListAgentInput, type ListedAgentResult } from './agents/list-agent.ts';
import { reviewAgent, type ReviewAgentData } from './agents/review-agent.ts';
import { updateAgent, type UpdateAgentData } from './agents/update-agent.ts';
import { deleteAgent, type DeleteAgentData, type DeleteAgentResult } from './agents/delete-agent.ts';
import { followAgent, type FollowAgentData, type FollowAgentResult } from './subscriptions/follow.ts';
import { releaseOrphanSeat, type ReleaseOrphanSeatData } from './subscriptions/release-orphan-seat.ts';
import { resumeTransfer, settleTransfer, type ResumeTransferData, type SettleTransferData } from './transfers/resume.ts';
import { creditPool, creditWallet, debitFees, debitPool, debitTrade, debitWallet, lockMargin, openTradeEntry, refundWallet, releaseMargin, returnMargin } from './transfers/steps.ts';
import { addAllocation, recordPoolFact, stopFollowing, withdrawAllocation, type PoolFact, type PoolMoveResult, type PoolRequest } from './subscriptions/ledger.ts';
import type { PoolState } from '../domain/pool/state.ts';
import type { MicroUsd } from '../domain/shared/money.ts';
import { setMarketPrices, type SetMarketPricesData } from './market/set-prices.ts';
import { lookup, type LookupData, type LookupResult } from './users/lookup.ts';
import { grantRole, setTier, type GrantRoleData } from './users/roles.ts';
import type { Tier } from '../domain/user/events.ts';
import { endAllSessions, refreshSession, signOut, type RefreshData } from './users/sessions.ts';
import { verifyCode, type SignInOutcome, type StartedSession, type VerifyCodeData } from './users/sign-in.ts';
import { startSocialLogin, verifySocialLogin, type SocialLoginStart, type SocialSignIn, type StartSocialLoginData, type VerifySocialLoginData } from './users/social.ts';
import { completeMfaSignIn, confirmMfa, disableMfa, enrolMfa, replaceRecoveryCodes, resetMfa, type CompleteMfaData, type MfaEnrolment, type RecoveryCodes } from './users/mfa.ts';
import { updateProfile, type ProfileChanges } from './users/update-profile.ts';
import { chooseGuideAgent, pinAgent, replaceInterests, unpinAgent, type PinData, type PinsResult } from './users/profile.ts';
import { buyLot, sellLots, sendOut, settleSell } from './transfers/swap-steps.ts';
import { exitLot, manualBuy, manualSell, manualWithdraw, type ManualWithdrawData, type ExitLotData, type ExitLotResult, type ManualBuyData, type ManualSellData, type ManualTradeResult } from './wallet/manual-trade.ts';
import { depositWallet, type DepositWalletData } from './wallet/deposit.ts';
import { freezeWallet, unfreezeWallet, type FreezeWalletData, type WalletFreezeResult } from './wallet/freeze.ts';
import { executeSignal, type ExecuteSignalData } from './signals/execute.ts';
import { receiveSignal, type ReceiveSignalData, type ReceivedSignal } from './signals/receive.ts';
import { replaySignal, type ReplaySignalData } from './signals/replay.ts';
import type { SignalExecuted } from '../domain/signal/events.ts';
import { closeTradeByUser, markTradePrice, type CloseTradeData, type MarkTradeData } from './trades/manage.ts';
import type { Trade } from '../domain/trade/decide.ts';
import { claimFees, type ClaimFeesData, type ClaimFeesResult } from './fees/claim.ts';

import { createApiKey, revokeApiKey, type CreateApiKeyData, type CreatedApiKey } from './apikeys/keys.ts';

type Nothing = Record<string, never>;

export interface CommandMap {
  Lookup: { data: LookupData; result: LookupResult };
  VerifyCode: { data: VerifyCodeData; result: SignInOutcome };
  StartSocialLogin: { data: StartSocialLoginData; result: SocialLoginStart };
  VerifySocialLogin: { data: VerifySocialLoginData; result: SocialSignIn };
  EnrolMfa: { data: { userId: string; sessionId: string }; result: MfaEnrolment };
  ConfirmMfa: { data: { userId: string; code: string }; result: RecoveryCodes };
  DisableMfa: { data: { userId: string; code: string }; result: Nothing };
  ReplaceRecoveryCodes: { data: { userId: string; code: string }; result: RecoveryCodes };
  ResetMfa: { data: { userId: string }; result: { userId: string; mfaEnabled: false } };
  CompleteMfaSignIn: { data: CompleteMfaData; result: StartedSession };
  RefreshSession: { data: RefreshData; result: StartedSession | null };
  SignOut: { data: { refreshToken: string }; result: Nothing };
  EndAllSessions: { data: { userId: string }; result: { userId: string; sessionsEnded: number } };
  UpdateProfile: { data: { userId: string; changes: ProfileChanges }; result: Nothing };
  ChooseGuideAgent: { data: { userId: string; guideAgentId: string }; result: Nothing };
  ReplaceInterests: { data: { userId: string; interests: string[] }; result: Nothing };
  PinAgent: { data: PinData; result: PinsResult };
  UnpinAgent: { data: PinData; result: PinsResult };
  GrantRole: { data: GrantRoleData; result: { granted: boolean } };
  SetTier: { data: { userId: string; tier: Tier }; result: { userId: string; tier: Tier } };
  ListAgent: { data: { developerId: string; input: ListAgentInput }; result: ListedAgentResult };
  ReviewAgent: { data: ReviewAgentData; result: { agent: AgentState } };
  UpdateAgent: { data: UpdateAgentData; result: { agent: AgentState } };
  FollowAgent: { data: FollowAgentData; result: FollowAgentResult };
  ReleaseOrphanSeat: { data: ReleaseOrphanSeatData; result: { released: boolean } };
  AddAllocation: { data: PoolRequest & { amountMicro: MicroUsd }; result: PoolMoveResult };
  WithdrawAllocation: { data: PoolRequest & { amountMicro: MicroUsd }; result: PoolMoveResult };
  StopFollowing: { data: PoolRequest; result: PoolMoveResult };
  RecordPoolFact: { data: { poolId: string; fact: PoolFact }; result: { pool: PoolState } };
  DebitWallet: { data: { transfer: TransferPlan }; result: TransferOutcome };
  DebitPool: { data: { transfer: TransferPlan }; result: TransferOutcome };
  CreditPool: { data: { transfer: TransferPlan; resumed: boolean }; result: TransferOutcome };
  CreditWallet: { data: { transfer: TransferPlan }; result: TransferOutcome };
  RefundWallet: { data: { userId: string; transferId: string; reason?: string }; result: TransferOutcome };
  BuyLot: { data: { transfer: TransferPlan }; result: TransferOutcome };
  SellLots: { data: { transfer: TransferPlan }; result: TransferOutcome };
  SettleSell: { data: { transfer: TransferPlan }; result: TransferOutcome };
  SendOut: { data: { transfer: TransferPlan }; result: TransferOutcome };
  DebitFees: { data: { transfer: TransferPlan }; result: TransferOutcome };
  ClaimFees: { data: ClaimFeesData; result: ClaimFeesResult };
  ManualWithdraw: { data: ManualWithdrawData; result: ManualTradeResult };
  ManualBuy: { data: ManualBuyData; result: ManualTradeResult };
  ManualSell: { data: ManualSellData; result: ManualTradeResult };
  ExitLot: { data: ExitLotData; result: ExitLotResult };
  LockMargin: { data: { transfer: TransferPlan }; result: TransferOutcome };
  OpenTradeEntry: { data: { transfer: TransferPlan }; result: TransferOutcome };
  ReleaseMargin: { data: { transfer: TransferPlan }; result: TransferOutcome };
  DebitTrade: { data: { transfer: TransferPlan }; result: TransferOutcome };
  ReturnMargin: { data: { transfer: TransferPlan }; result: TransferOutcome };
  ResumeTransfer: { data: ResumeTransferData; result: { status: TransferStatus } };
  SettleTransfer: { data: SettleTransferData; result: { status: TransferStatus } };
  DepositWallet: { data: DepositWalletData; result: { deposited: boolean } };
  FreezeWallet: { data: FreezeWalletData; result: WalletFreezeResult };
  UnfreezeWallet: { data: { userId: string }; result: WalletFreezeResult };
  SetMarketPrices: { data: SetMarketPricesData; result: { changed: number } };
  ReceiveSignal: { data: ReceiveSignalData; result: ReceivedSignal };
  ReplaySignal: { data: ReplaySignalData; result: ReceivedSignal };
  ExecuteSignal: { data: ExecuteSignalData; result: { executed: SignalExecuted } };
  MarkTradePrice: { data: MarkTradeData; result: { status: Trade['status'] } };
  CloseUserTrade: { data: CloseTradeData; result: { trade: Trade } };
  DeleteAgent: { data: DeleteAgentData; result: DeleteAgentResult };
  CreateApiKey: { data: CreateApiKeyData; result: CreatedApiKey };
  RevokeApiKey: { data: { keyId: string; ownerId: string }; result: { revokedAt: string } };
}

export type CommandType = keyof CommandMap;

export const handlers: { [T in CommandType]: (command: Command<T, CommandMap[T]['data']>, tools: Tools) => Promise<CommandMap[T]['result']> } = {
  Lookup: lookup,
  VerifyCode: verifyCode,
  StartSocialLogin: startSocialLogin,
  VerifySocialLogin: verifySocialLogin,
  EnrolMfa: enrolMfa,
  ConfirmMfa: confirmMfa,
  DisableMfa: disableMfa,
  ReplaceRecoveryCodes: replaceRecoveryCodes,
  ResetMfa: resetMfa,
  CompleteMfaSignIn: completeMfaSignIn,
  RefreshSession: refreshSession,
  SignOut: signOut,
  EndAllSessions: endAllSessions,
  UpdateProfile: updateProfile,
  ChooseGuideAgent: chooseGuideAgent,
  ReplaceInterests: replaceInterests,
  PinAgent: pinAgent,
  UnpinAgent: unpinAgent,
  GrantRole: grantRole,
  SetTier: setTier,
  ListAgent: listAgent,
  ReviewAgent: reviewAgent,
  UpdateAgent: updateAgent,
  FollowAgent: followAgent,
  ReleaseOrphanSeat: releaseOrphanSeat,
  AddAllocation: addAllocation,
  WithdrawAllocation: withdrawAllocation,
  StopFollowing: stopFollowing,
  RecordPoolFact: recordPoolFact,
  DebitWallet: debitWallet,
  DebitPool: debitPool,
  CreditPool: creditPool,
  CreditWallet: creditWallet,
  RefundWallet: refundWallet,
  LockMargin: lockMargin,
  OpenTradeEntry: openTradeEntry,
  ReleaseMargin: releaseMargin,
  DebitTrade: debitTrade,
  ReturnMargin: returnMargin,
  BuyLot: buyLot,
  SellLots: sellLots,
  SettleSell: settleSell,
  SendOut: sendOut,
  DebitFees: debitFees,
  ClaimFees: claimFees,
  ManualWithdraw: manualWithdraw,
  ManualBuy: manualBuy,
  ManualSell: manualSell,
  ExitLot: exitLot,
  ResumeTransfer: resumeTransfer,
  SettleTransfer: settleTransfer,
  DepositWallet: depositWallet,
  FreezeWallet: freezeWallet,
  UnfreezeWallet: unfreezeWallet,
  SetMarketPrices: setMarketPrices,
  ReceiveSignal: receiveSignal,
  ReplaySignal: replaySignal,
  ExecuteSignal: executeSignal,
  MarkTradePrice: markTradePrice,
  CloseUserTrade: closeTradeByUser,
  DeleteAgent: deleteAgent,
  CreateApiKey: createApiKey,
  RevokeApiKey: revokeApiKey,
};
