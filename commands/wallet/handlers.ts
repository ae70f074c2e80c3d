// The wallet area's handlers, one per command of wallet/commands.ts.
import type { Handlers } from '../tools.ts';
import type { WalletCommands } from './commands.ts';
import { depositWallet } from './deposit.ts';
import { freezeWallet, unfreezeWallet } from './freeze.ts';
import { exitLot, manualBuy, manualSell, manualWithdraw } from './manual-trade.ts';

export const walletHandlers: Handlers<WalletCommands> = {
  ManualWithdraw: manualWithdraw,
  ManualBuy: manualBuy,
  ManualSell: manualSell,
  ExitLot: exitLot,
  DepositWallet: depositWallet,
  FreezeWallet: freezeWallet,
  UnfreezeWallet: unfreezeWallet,
};
