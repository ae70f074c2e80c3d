// Every public command, by name: its data and its result, joined from the areas' command files
// (<area>/commands.ts). Types only, no handler: routes, workers and tests name a command here
// without importing the registry. The transfer steps are not here (transfers/steps-registry.ts).
import type { Command } from '../domain/shared/decider.ts';
import type { AgentCommands } from './agents/commands.ts';
import type { FeeCommands } from './fees/commands.ts';
import type { ApiKeyCommands } from './apikeys/commands.ts';
import type { MarketCommands } from './market/commands.ts';
import type { SignalCommands } from './signals/commands.ts';
import type { SubscriptionCommands } from './subscriptions/commands.ts';
import type { TradeCommands } from './trades/commands.ts';
import type { TransferCommands } from './transfers/commands.ts';
import type { UserCommands } from './users/commands.ts';
import type { WalletCommands } from './wallet/commands.ts';

export interface CommandMap
  extends UserCommands,
    AgentCommands,
    SubscriptionCommands,
    TransferCommands,
    WalletCommands,
    MarketCommands,
    SignalCommands,
    TradeCommands,
    ApiKeyCommands,
    FeeCommands {}

export type CommandType = keyof CommandMap;

export type CommandOf<T extends CommandType> = Command<T, CommandMap[T]['data']>;
