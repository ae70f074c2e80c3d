// The signal inbox routes' params, queries and bodies, in one place.
import { z } from 'zod';
import { inboxOutcomeSchema } from '../../../projections/signals/record.ts';
import { paginationQuery } from '../../envelope.ts';

export const signalInboxQuery = paginationQuery.extend({ outcome: inboxOutcomeSchema.optional() });

export const signalParams = z.object({ id: z.string().min(1).max(100), signalId: z.string().min(1).max(200) });

// Only the dry run exists so far: `dryRun=false` (execution) is refused until it is built.
const onlyDryRun = 'only dryRun=true is available';
export const replayQuery = z.object({ dryRun: z.literal('true', { message: onlyDryRun }).optional() });
export const replayBody = z.strictObject({ dryRun: z.literal(true, { message: onlyDryRun }).optional() }).nullish();
