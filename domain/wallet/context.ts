// The wallet contexts, apart from the wallet's events so that pool schemas can use them while the
// wallet's debit event carries pool schemas (no import cycle).
import { z } from 'zod';

export const walletContexts = ['virtual', 'real'] as const;
export const walletContextSchema = z.enum(walletContexts);
export type WalletContext = z.infer<typeof walletContextSchema>;

/**
 * The user's current wallet context, the one a request naming none uses: the one the user chose
 * (`virtualWalletMode`), and virtual for a user not registered yet, as every user starts.
 */
export function currentWalletContextOf(user: { status?: string; virtualWalletMode?: boolean } | null | undefined): WalletContext {
  return user?.virtualWalletMode === false ? 'real' : 'virtual';
}

/** The context a request names: `walletContext`, else its deprecated alias `walletMode`; undefined when it names none. */
export function requestedWalletContext(request: { walletContext?: WalletContext; walletMode?: 'REAL' | 'VIRTUAL' }): WalletContext | undefined {
  if (request.walletContext) return request.walletContext;
  if (request.walletMode) return request.walletMode === 'REAL' ? 'real' : 'virtual';
  return undefined;
}
