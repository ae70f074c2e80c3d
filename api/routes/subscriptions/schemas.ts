// The pool routes' params and bodies, in one place: our routes and the conventional baseline
// (bench/conventional/app.ts) declare the same ones.
import { z } from 'zod';
import { microToUsd, usdToMicro } from '../../../domain/shared/money.ts';
import { walletContextSchema } from '../../../domain/wallet/events.ts';

/** A USD amount of at least 0.01 with at most 6 decimals (micro-USD), as the withdraw row of the spec says. */
export const amountUsd = z
  .number({ message: 'amountUsd must be a number' })
  .min(0.01, 'amountUsd must be at least 0.01')
  .max(1_000_000_000, 'amountUsd is too large')
  // Guarded: zod runs every check, and a huge number must fail the range check above, not throw here.
  .refine((v) => Math.abs(v) <= 1_000_000_000 && microToUsd(usdToMicro(v)) === v, 'amountUsd has at most 6 decimals');

export const amountBody = z.object({ amountUsd, walletContext: walletContextSchema.optional() });
export const agentParams = z.object({ agentId: z.string().trim().min(1).max(200) });
export const contextQuery = z.object({ walletContext: walletContextSchema.optional() });
