// The apikeys area's handlers, one per command of apikeys/commands.ts.
import type { Handlers } from '../tools.ts';
import type { ApiKeyCommands } from './commands.ts';
import { createApiKey, revokeApiKey } from './keys.ts';

export const apiKeyHandlers: Handlers<ApiKeyCommands> = {
  CreateApiKey: createApiKey,
  RevokeApiKey: revokeApiKey,
};
