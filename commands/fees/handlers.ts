// The fee account's handlers, one per command of fees/commands.ts.
import type { Handlers } from '../tools.ts';
import { claimFees } from './claim.ts';
import type { FeeCommands } from './commands.ts';

export const feeHandlers: Handlers<FeeCommands> = {
  ClaimFees: claimFees,
};
