// An administrator's deposit to a user's real wallet context, as a confirmed on-chain deposit
// would credit it. Simulated venue only; once per depositId.
import type { Command } from '../../domain/shared/decider.ts';
import { refuse } from '../../domain/shared/errors.ts';
import { usdToMicro } from '../../domain/shared/money.ts';
import { userDecider } from '../../domain/user/decide.ts';
import { walletDecider } from '../../domain/wallet/decide.ts';
import type { Tools } from '../tools.ts';
import { requireSimulatedVenue } from '../simulated-venue.ts';
import type { DepositWalletData } from './commands.ts';

/** USER_NOT_FOUND for an unknown user; `deposited` is false for a deposit id already credited. */
export async function depositWallet({ data }: Command<'DepositWallet', DepositWalletData>, tools: Tools): Promise<{ deposited: boolean }> {
  requireSimulatedVenue(tools.deps.config, 'a deposit by an administrator');
  const { state: user } = await tools.load(userDecider, data.userId);
  if (user.status !== 'registered') throw refuse('USER_NOT_FOUND', 'user not found');
  const { events } = await tools.execute(walletDecider, data.userId, {
    type: 'DepositWallet',
    data: { depositId: data.depositId, amountMicro: data.amountMicro, virtualStartMicro: usdToMicro(tools.deps.config.VIRTUAL_START_USD) },
  });
  return { deposited: events.length > 0 };
}
