// The price watcher's exits: a lot whose stop-loss or take-profit the mark crossed is sold whole,
// each try a sell of its own transfer id (`{lotId}.exit.{n}`). A try whose swap failed is followed by
// another, after a wait that doubles with each failure (30 s, 1 min, 2 min, … at most an hour): a
// stop keeps protecting the user while the venue refuses, without two events on every tick.
import { levelReached, type Price } from '../shared/price.ts';
import type { WalletState } from './state.ts';
import { transferIds } from '../transfer/ids.ts';

/** The level of a manual lot (a long) the mark crossed: its stop-loss first, then its take-profit; null for none. */
export function crossedLevel(lot: { stopLoss?: Price | null; takeProfit?: Price | null }, price: Price): 'stop-loss' | 'take-profit' | null {
  if (lot.stopLoss !== undefined && lot.stopLoss !== null && levelReached(true, 'stop', price, lot.stopLoss)) return 'stop-loss';
  if (lot.takeProfit !== undefined && lot.takeProfit !== null && levelReached(true, 'target', price, lot.takeProfit)) return 'take-profit';
  return null;
}

export const EXIT_RETRY = { firstMs: 30_000, maxMs: 3_600_000 } as const;

export const exitTransferId = (lotId: string, attempt: number): string => transferIds.exit(lotId, attempt);

/** The wait after `failures` failed tries in a row (none after none). */
export const exitRetryWaitMs = (failures: number): number => (failures === 0 ? 0 : Math.min(EXIT_RETRY.firstMs * 2 ** (failures - 1), EXIT_RETRY.maxMs));

/**
 * The exit try to make for a lot at `now`: the first not failed (a try still running is found
 * again by its id), or the time to wait for when the last one failed too recently.
 */
export function nextExit(manual: WalletState['manual'], lotId: string, now: Date): { attempt: number } | { retryAt: Date } {
  let failures = 0;
  let lastEndedAt: string | undefined;
  for (let tried = manual.get(exitTransferId(lotId, 1)); tried?.status === 'failed'; tried = manual.get(exitTransferId(lotId, failures + 1))) {
    failures += 1;
    lastEndedAt = tried.endedAt;
  }
  if (lastEndedAt === undefined || manual.get(exitTransferId(lotId, failures + 1))) return { attempt: failures + 1 };
  const retryAt = new Date(Date.parse(lastEndedAt) + exitRetryWaitMs(failures));
  return now < retryAt ? { retryAt } : { attempt: failures + 1 };
}
