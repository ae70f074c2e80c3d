// The agent routes' queries and answers, in one place.
import { z } from 'zod';
import { venueSchema } from '../../../domain/agent/index.ts';
import { paginationQuery } from '../../envelope.ts';

export const followableQuery = paginationQuery.extend({
  venue: venueSchema.optional(),
  betaStatus: z.enum(['beta', 'live']).optional(),
});

export const deleteAgentQuery = z.object({
  closeActiveTrades: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
});
export const deletedAgentAnswer = z.object({
  message: z.string(),
  agentId: z.string(),
  affectedBotCount: z.number().int(),
  activeTradesClosed: z.number().int(),
});

/** The answer of POST and DELETE /api/v1/agents/{id}/pin (the spec's unpin result). */
export const pinsAnswer = z.object({ pinnedAgentIds: z.array(z.string()), message: z.string() });
