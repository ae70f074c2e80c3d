// The transfers area's handlers, one per command of transfers/commands.ts.
import type { Handlers } from '../tools.ts';
import type { TransferCommands } from './commands.ts';
import { resumeTransfer, settleTransfer } from './resume.ts';

export const transfersHandlers: Handlers<TransferCommands> = {
  ResumeTransfer: resumeTransfer,
  SettleTransfer: settleTransfer,
};
