// The signal inbox routes' params, queries and bodies, in one place.
import { z } from 'zod';
import { inboxOutcomeSchema } from '../../../projections/signals/record.ts';
import { paginationQuery } from '../../envelope.ts';

export const signalInboxQuery = paginationQuery.extend({ outcome: inboxOutcomeSchema.optional() });

export const signalParams = z.object({ id: z.string().min(1).max(100), signalId: z.string().min(1).max(200) });

// A dry run unless `dryRun=false` is given (query or body): executing is an explicit choice.
export const replayQuery = z.object({ dryRun: z.enum(['true', 'false']).optional() });
export const replayBody = z.strictObject({ dryRun: z.boolean().optional() }).nullish();
