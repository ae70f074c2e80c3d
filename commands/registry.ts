// The public registry: every public command's handler, joined from the areas' handler tables
// (<area>/handlers.ts). The dispatcher runs these and nothing else; the transfer steps have a
// registry of their own that only the transfer runner reads (transfers/steps-registry.ts).
import { agentsHandlers } from './agents/handlers.ts';
import { apiKeyHandlers } from './apikeys/handlers.ts';
import type { CommandMap } from './command-map.ts';
import { feeHandlers } from './fees/handlers.ts';
import { marketHandlers } from './market/handlers.ts';
import { signalsHandlers } from './signals/handlers.ts';
import { subscriptionsHandlers } from './subscriptions/handlers.ts';
import type { Handlers } from './tools.ts';
import { tradesHandlers } from './trades/handlers.ts';
import { transfersHandlers } from './transfers/handlers.ts';
import { usersHandlers } from './users/handlers.ts';
import { walletHandlers } from './wallet/handlers.ts';

export const handlers: Handlers<CommandMap> = {
  ...usersHandlers,
  ...agentsHandlers,
  ...subscriptionsHandlers,
  ...transfersHandlers,
  ...walletHandlers,
  ...marketHandlers,
  ...signalsHandlers,
  ...tradesHandlers,
  ...apiKeyHandlers,
  ...feeHandlers,
};
