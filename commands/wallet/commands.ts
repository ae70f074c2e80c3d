// The wallet area's commands (manual trades, deposits, freezing): their data and results. No handler here.
import type { MicroUsd } from '../../domain/shared/money.ts';
import type { WalletContext } from '../../domain/wallet/context.ts';
import type { LotLevels } from '../../domain/wallet/lots.ts';
import type { ManualTrade } from '../../domain/wallet/state.ts';
import type { Price } from '../../domain/shared/price.ts';

export interface ManualTradeData {
  userId: string;
  /** the transfer's id: derived from the Idempotency-Key, else fresh */
  transferId: string;
  mint: string;
  /** the request's context, else the user's current one */
  walletContext?: WalletContext;
  levels?: LotLevels;
}

export type ManualBuyData = ManualTradeData & { amountMicro: MicroUsd };

export type ManualSellData = ManualTradeData & { units: number };

/** What a finished buy or sell did, from the wallet's record (the same for a repeat). */
export interface ManualTradeResult extends ManualTrade {
  transferId: string;
}

export interface ManualWithdrawData {
  userId: string;
  transferId: string;
  /** the spend stablecoin's mint */
  mint: string;
  amountMicro: MicroUsd;
  destination: string;
  /** the request's context, else the user's current one: only the real one can withdraw */
  walletContext?: WalletContext;
}

export interface ExitLotData {
  userId: string;
  lotId: string;
  /** the mark the price watcher saw, per whole token */
  price: Price;
}

export type ExitLotResult =
  | { sold: false; why: 'no-lot' | 'not-crossed' }
  | { sold: false; why: 'retry-later'; retryAt: string }
  | { sold: true; trigger: 'stop-loss' | 'take-profit'; trade: ManualTradeResult };

export interface DepositWalletData {
  userId: string;
  depositId: string;
  amountMicro: MicroUsd;
}

export interface FreezeWalletData {
  userId: string;
  reason?: string;
}

/** The wallet's freeze after the command: `frozenAt` and `reason` only while frozen. */
export interface WalletFreezeResult {
  userId: string;
  frozen: boolean;
  frozenAt?: string;
  reason?: string;
}

/** The wallet area's commands: each one's data and result. */
export interface WalletCommands {
  ManualWithdraw: { data: ManualWithdrawData; result: ManualTradeResult };
  ManualBuy: { data: ManualBuyData; result: ManualTradeResult };
  ManualSell: { data: ManualSellData; result: ManualTradeResult };
  ExitLot: { data: ExitLotData; result: ExitLotResult };
  DepositWallet: { data: DepositWalletData; result: { deposited: boolean } };
  FreezeWallet: { data: FreezeWalletData; result: WalletFreezeResult };
  UnfreezeWallet: { data: { userId: string }; result: WalletFreezeResult };
}
