// An administrator freezes or unfreezes a user's wallet (the administrator is the command's actor,
// so the events' metadata names them). A repeat records nothing and answers the freeze in force.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { WalletState } from '../../domain/wallet/state.ts';
import type { Tools } from '../tools.ts';
import type { FreezeWalletData, WalletFreezeResult } from './commands.ts';

async function ensureUser(tools: Tools, userId: string): Promise<void> {
  const { state: user } = await tools.load(userDecider, userId);
  if (user.status !== 'registered') throw refuse('USER_NOT_FOUND', 'user not found');
}

function resultOf(userId: string, state: WalletState): WalletFreezeResult {
  const { freeze } = state;
  if (!freeze) return { userId, frozen: false };
  return { userId, frozen: true, frozenAt: freeze.at, ...(freeze.reason === undefined ? {} : { reason: freeze.reason }) };
}

/** USER_NOT_FOUND for an unknown user; a wallet never used opens frozen. */
export async function freezeWallet({ data }: Command<'FreezeWallet', FreezeWalletData>, tools: Tools): Promise<WalletFreezeResult> {
  await ensureUser(tools, data.userId);
  const { state } = await tools.execute(walletDecider, data.userId, {
    type: 'FreezeWallet',
    data: { ...(data.reason === undefined ? {} : { reason: data.reason }), virtualStartMicro: usdToMicro(tools.deps.config.VIRTUAL_START_USD) },
  });
  return resultOf(data.userId, state);
}

/** USER_NOT_FOUND for an unknown user. */
export async function unfreezeWallet({ data }: Command<'UnfreezeWallet', { userId: string }>, tools: Tools): Promise<WalletFreezeResult> {
  await ensureUser(tools, data.userId);
  const { state } = await tools.execute(walletDecider, data.userId, { type: 'UnfreezeWallet', data: {} });
  return resultOf(data.userId, state);
}
