// The signals area's handlers, one per command of signals/commands.ts.
import type { Handlers } from '../tools.ts';
import type { SignalCommands } from './commands.ts';
import { executeSignal } from './execute.ts';
import { receiveSignal } from './receive.ts';
import { replaySignal } from './replay.ts';

export const signalsHandlers: Handlers<SignalCommands> = {
  ReceiveSignal: receiveSignal,
  ReplaySignal: replaySignal,
  ExecuteSignal: executeSignal,
};
