// Why a pool did not open a trade: its own file, so the pool's events name the reasons without
// importing the limits (which read the pool's state).
import { z } from 'zod';

/**
 * Why a pool did not open a trade, in the order the checks run (POOL_CLOSED: the pool is not
 * followed; AWAITING_GO_LIVE: followed with `goLiveUponConfirmation: false` and not live yet).
 */
export const skipReasons = [
  'POOL_CLOSED',
  'AWAITING_GO_LIVE',
  'ALERTS_ONLY',
  'POOL_PAUSED',
  'TOKEN_NOT_ALLOWED',
  'DAILY_LOSS_LIMIT',
  'MAX_OPEN_POSITIONS',
  'MAX_TRADES_PER_DAY',
  'COOLDOWN',
  'BELOW_MIN_TRADE',
  'INSUFFICIENT_CAPITAL',
] as const;
export const skipReasonSchema = z.enum(skipReasons);
export type SkipReason = z.infer<typeof skipReasonSchema>;
