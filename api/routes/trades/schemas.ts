// The trade routes' query, in one place.
import { z } from 'zod';
import { tradeStatusSchema } from '../../../projections/trades/record.ts';
import { walletContextSchema } from '../../../domain/wallet/context.ts';
import { paginationQuery } from '../../envelope.ts';

export const tradeListQuery = paginationQuery.extend({
  agentId: z.string().trim().min(1).max(200).optional(),
  status: tradeStatusSchema.optional(),
  walletContext: walletContextSchema.optional(),
});

export const tradeIdParams = z.object({ id: z.string().min(1).max(100) });
